"""`ToolSelector`: offer each model call only the tools it is likely to need.

An agent with dozens of tools pays for every tool spec on every model call, and models pick
worse among many similar tools. The selector narrows ``tool_specs`` on each model call (an
InvokeModelStage Input handler), in one of two ways:

* **a predicate** ``select(spec, context) -> bool``, called for each tool on each model call
  (route by the user's words, the invocation state, the time of day...);
* **a model** (``model=``, usually a small, fast one) that reads the tool names and descriptions
  with the latest user prompt and answers with the names it expects to need. It is asked for
  structured output: it is offered one tool, ``select_tools``, whose input schema lists the tool
  names it may pick from (an ``enum``), and made to call it; a model without tool support that
  answers in text is read as a list of names instead. It is asked once per prompt: its choice is
  kept (by a digest of the prompt's text and of the tools offered) for every model call of that
  turn and for a later identical request. A chooser that fails or answers nothing usable leaves
  every tool offered, with a warning logged: an agent with too many tools still works, one with too
  few may not. ``NONE`` offers only ``always``.

The rules either way:

* ``always`` names tools offered on every call, chosen or not. A name the call does not offer at
  all (a typo, a tool the agent lacks) is a `ValueError` on the first model call, naming it and the
  tools there are, rather than a tool that silently never comes. ``max_tools`` caps how many chosen
  tools are offered besides those.
* A tool the call's ``tool_choice`` forces (``{"tool": {"name": ...}}``) is always offered, and
  a call that must use some tool (``{"any": {}}``) left with none is offered every tool: a
  provider rejects either request otherwise.
* **Only the offer changes.** The agent's tools are untouched, and a tool call for a tool that
  was not offered (the model remembered it from earlier in the conversation) still runs
  through ExecuteToolStage as usual.
* The tools are offered in the agent's own order, whatever order the chooser named them in,
  so a provider's prompt cache sees the same prefix for the same choice.

The chooser model is asked on the side: its ``stream`` is called directly, so no hooks fire
and no middleware runs for it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Any, TypeAlias, cast

from ..content import ToolSpec
from ..engine._stage import Middleware
from ..exceptions import CONTROL_FLOW_EXCEPTIONS
from ..models import Model
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._ask import ask_for_input
from ._base import CatalogMiddleware, check_function, check_whole_number
from ._transcript import message_text
from ._turns import is_prompt

__all__ = ["ToolPredicate", "ToolSelector"]

_logger = logging.getLogger("strands_middleware")

ToolPredicate: TypeAlias = Callable[[ToolSpec, InvokeModelContext], bool]
"""Whether to offer one tool (its spec) on one model call (its context)."""

_CHOOSER_PROMPT = """You choose which tools an AI assistant is offered for a user's request. \
Call select_tools with the names of the tools it is likely to need, most useful first{limit}, \
or with an empty list if it needs none of them. If you cannot call it, answer with the names, \
one per line, or NONE."""

_SELECT_TOOLS = "select_tools"

_NAME_SEPARATORS = re.compile(r"[\n,]+")


class ToolSelector(CatalogMiddleware):
    """Limits the tools offered on each model call, by a predicate or by a small model's choice.

    Example:
        ```python
        agent.use(ToolSelector(lambda spec, context: spec["name"].startswith("calendar_")))
        agent.use(ToolSelector(model=small_model, always=["search"], max_tools=5))
        ```

    Args:
        select: A predicate ``(spec, context) -> bool`` deciding each tool on each call.
        model: A model choosing from the tool specs instead (give one of ``select`` and this).
        always: Tool names offered on every call whatever the choice.
        max_tools: The most chosen tools offered on a call (those in ``always`` not counted).
        cache_size: How many of the model's choices are kept (one per distinct prompt).
    """

    def __init__(
        self,
        select: ToolPredicate | None = None,
        *,
        model: Model | None = None,
        always: Collection[str] = (),
        max_tools: int | None = None,
        cache_size: int = 256,
    ) -> None:
        if (select is None) == (model is None):
            raise ValueError(
                "ToolSelector needs exactly one of select=... (a predicate of a tool spec and "
                "the call's context) and model=... (a model choosing tools)"
            )
        if select is not None:
            check_function(
                "ToolSelector", "select", select, takes="a predicate (spec, context) -> bool"
            )
        if model is not None and not callable(getattr(model, "stream", None)):
            raise TypeError(
                f"ToolSelector(model=...) takes a model (with a stream method), got {model!r}"
            )
        given = cast(object, always)  # checked at run time: callers need not be type-checked
        if isinstance(given, (str, bytes)) or not isinstance(given, Collection):
            raise TypeError(
                f"ToolSelector(always=...) takes a collection of tool names, got {always!r}; "
                'write always=["search"]'
            )
        names = list(cast("Collection[object]", given))
        for name in names:
            if not isinstance(name, str) or not name:
                raise TypeError(
                    f"ToolSelector(always=...) names must be non-empty strings, got {name!r}"
                )
        if max_tools is not None:
            check_whole_number("ToolSelector", "max_tools", max_tools, minimum=1, of="tools")
        check_whole_number("ToolSelector", "cache_size", cache_size, minimum=1, of="choices")
        self.select = select
        self.model = model
        self.always: frozenset[str] = frozenset(cast("list[str]", names))
        self.max_tools = max_tools
        self.cache_size = cache_size
        self._choices: OrderedDict[str, tuple[str, ...]] = OrderedDict()

    async def choose(self, context: InvokeModelContext) -> list[ToolSpec]:
        """The tool specs this call is offered, in the context's order."""
        specs = context.tool_specs
        if not specs:
            return specs
        if self.always:
            missing = self.always.difference(spec["name"] for spec in specs)
            if missing:
                raise ValueError(
                    f"ToolSelector(always=...) names {sorted(missing)}, which this model call "
                    f"does not offer (its tools: {sorted(spec['name'] for spec in specs)}); "
                    "name tools the agent has"
                )
        if self.select is not None:
            chosen = [spec["name"] for spec in specs if self.select(spec, context)]
        else:
            chosen_by_model = await self._model_choice(context)
            if chosen_by_model is None:
                return specs
            chosen = list(chosen_by_model)
        chosen = [name for name in chosen if name not in self.always]
        if self.max_tools is not None:
            chosen = chosen[: self.max_tools]
        offered = self.always.union(chosen)
        choice = context.tool_choice or {}
        forced = cast("dict[str, Any]", choice).get("tool")
        if isinstance(forced, dict):
            forced_name = cast("dict[str, object]", forced).get("name")
            if isinstance(forced_name, str):
                offered = offered | {forced_name}
        selected = [spec for spec in specs if spec["name"] in offered]
        if not selected and "any" in choice:
            return specs
        return selected

    async def _model_choice(self, context: InvokeModelContext) -> tuple[str, ...] | None:
        """The model's choice for the call's latest prompt, or None to offer every tool."""
        assert self.model is not None
        prompts = [message for message in context.messages if is_prompt(message)]
        request = message_text(prompts[-1]) if prompts else ""
        if not request.strip():
            return None
        names = [spec["name"] for spec in context.tool_specs]
        key = hashlib.sha256(json.dumps([request, names]).encode()).hexdigest()
        cached = self._choices.get(key)
        if cached is not None:
            self._choices.move_to_end(key)
            return cached
        catalog = "\n".join(
            f"- {spec['name']}: {' '.join(spec['description'].split())}"
            for spec in context.tool_specs
        )
        limit = "" if self.max_tools is None else f", at most {self.max_tools}"
        spec: ToolSpec = {
            "name": _SELECT_TOOLS,
            "description": "Choose the tools the assistant is offered for the request.",
            "inputSchema": {
                "json": {
                    "type": "object",
                    "properties": {
                        "tools": {
                            "type": "array",
                            "items": {"type": "string", "enum": names},
                            "description": "Tool names, most useful first; empty for none.",
                        }
                    },
                    "required": ["tools"],
                }
            },
        }
        try:
            answer = await ask_for_input(
                self.model,
                system_prompt=_CHOOSER_PROMPT.format(limit=limit),
                question=f"Tools:\n{catalog}\n\nRequest:\n{request}",
                spec=spec,
            )
        except CONTROL_FLOW_EXCEPTIONS:
            raise
        except Exception as error:
            _logger.warning(
                "ToolSelector: the chooser model failed with %r; offering every tool", error
            )
            return None
        chosen = _names_in(answer, names)
        if chosen is None:
            _logger.warning(
                "ToolSelector: the chooser's answer %r names no tool; offering every tool",
                str(answer)[:200],
            )
            return None
        self._choices[key] = chosen
        while len(self._choices) > self.cache_size:
            self._choices.popitem(last=False)
        return chosen

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        async def tool_selector(context: InvokeModelContext) -> InvokeModelContext:
            specs = await self.choose(context)
            return context if specs is context.tool_specs else context.replace(tool_specs=specs)

        tool_selector.__qualname__ = "ToolSelector[invokeModel.Input]"
        return [InvokeModelStage.input(tool_selector)]


def _names_in(answer: dict[str, Any] | str, names: list[str]) -> tuple[str, ...] | None:
    """The known tool names ``answer`` lists, in its order; ``()`` for none, None if unusable.

    ``answer`` is the ``select_tools`` input (``{"tools": [...]}``) or, from a model that
    answered in text, names one per line (or comma-separated), or ``NONE``.
    """
    known = set(names)
    if isinstance(answer, dict):
        listed = answer.get("tools")
        if not isinstance(listed, list):
            return None
        picked = [name for name in cast("list[object]", listed) if isinstance(name, str)]
        if len(picked) != len(cast("list[object]", listed)):
            return None
        return tuple(dict.fromkeys(name for name in picked if name in known)) or (
            () if not picked else None
        )
    chosen: list[str] = []
    for part in _NAME_SEPARATORS.split(answer):
        name = part.strip().strip("-*`'\". ")
        if name in known and name not in chosen:
            chosen.append(name)
    if chosen:
        return tuple(chosen)
    return () if answer.strip().strip(".").upper() == "NONE" else None
