"""`ToolApproval`: hold chosen tool calls until a human approves, denies or edits them.

The gate is a Wrap handler on ExecuteToolStage that calls ``context.interrupt()`` *before*
``next_fn``. The first time, that raises `InterruptException`: the run stops with
``stop_reason == "interrupt"`` and ``result.interrupts`` lists one interrupt per gated call. The
caller resumes with one ``interruptResponse`` per interrupt; on that pass the same
``interrupt()`` call returns the answer and the gate acts on it:

* **approve**: ``"approve"``, ``True`` or ``{"decision": "approve"}``. The tool runs as asked.
* **deny**: ``"deny"``, ``False`` or ``{"decision": "deny", "message": "why"}``. The tool does
  not run; the model reads an error result saying a human denied the call (and why, if given),
  so it can explain or try something else.
* **edit**: ``{"decision": "edit", "input": {...}}``. The tool runs with ``input`` instead of the
  model's arguments (the model's ``toolUse`` in the history keeps what it asked for; the result
  it reads comes from the edited call).
* **anything else is refused at resume.** ``"yes"``, ``"ok"``, ``"approved"``, ``1`` and
  ``{"approved": True}`` are not approvals: the resume raises `InterruptResumeError` quoting the
  answer and listing the accepted ones, before anything runs, and the run stays paused, its
  interrupts owed and still answerable with a correct answer. Strings are matched ignoring case
  and surrounding spaces; a decision object with keys beyond the ones above (a typo such as
  ``"mesage"``) is refused rather than half-understood.

Why not accept ``"yes"`` or ``"ok"``: an approval lets a tool act for the user, so only an
answer that can mean nothing else approves. A program that sends ``"yes"`` may as well mean "yes,
deny it", ``"ok"`` may acknowledge a question without answering it, and a forgiving list of
synonyms invites the next one (``"y"``, ``"sure"``, ``"no problem"``) that is not on it. Refusing
loudly, at the call that sent the answer, costs a developer one fix; guessing costs a user a
deleted file.

Every host refuses alike: the reference agent and the strands bridge when the agent is called
with the answers, the OpenAI Agents bridge in ``OpenAIAgentsMiddleware.resume``, the pydantic-ai
bridge in ``resume_results(..., middleware=capability)`` and the LangChain bridge in
``resume_command(..., middleware=bridge)``. Where an answer is not checked at resume (those two
functions called without ``middleware=``; a ``name`` function after the run was restored into a
new process, since the gate knows a function's names only once it has asked), the gate still
fails closed when it reads it: the tool does not run, the model reads an error result quoting
the answer and listing the accepted ones, and a warning is logged.

Why the rules are what they are:

* **Before next_fn.** Once a tool has run, pausing means the resume runs it again, so the gate
  asks first. It never catches `InterruptException` (nor cancellation).
* **One decision per tool call.** The interrupt id is
  ``v1:middleware_execute_tool:<toolUseId>:<uuid5(name)>``: the ``toolUseId`` scopes it to one
  call, so the same ``name`` can (and should) be used for every call, and two calls in one turn
  get two interrupts. The name must be stable across resumes: it is how the resumed ``interrupt()``
  finds its answer. A name function must therefore be deterministic (derive it from the tool
  name, never from a clock or a counter).
* **One name per gate.** Two gates asking under one name on the same call would share one
  interrupt id, so one answer would approve both. That is an error (`InterruptMisuseError`, the
  call ends with an error result and the tool does not run), not a shared approval: give each
  gate on a tool its own ``name``, e.g. ``ToolApproval(name="security-review")``.
* **Fails closed around it too.** If a handler around the gate catches its
  `InterruptException` (a broad ``except Exception``), the host does not run the tool and says
  why; the gate never has to trust the handlers around it.
* **A tool round is a cycle.** A tool answer lives for its tool round only, so a later model turn
  that calls the tool again is asked again; an approval is never inherited.
* **Persistable.** The default ``reason`` is the call itself (``toolUseId``, ``name``, ``input``),
  JSON-ready, so ``agent.interrupt_state.to_dict()`` and ``agent.messages`` round-trip through
  JSON and the run resumes in another process. A custom ``reason`` should stay JSON-ready too.

Selection is by the call, not by the agent's tool list: a call to a tool the agent does not have
is gated too when it matches (a mock registered inside the gate may answer it).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncGenerator, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from ..engine._handlers import MiddlewareNext
from ..engine._stage import Middleware
from ..events import ToolResultEvent, TypedEvent
from ..host._mixin import MiddlewareHostMixin
from ..interrupts import EXECUTE_TOOL_INTERRUPT_PREFIX, Interrupt, execute_tool_interrupt_id
from ..stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ._base import CatalogMiddleware

__all__ = ["ACCEPTED_ANSWERS", "AllTools", "ToolApproval"]

_logger = logging.getLogger("strands_middleware")

AllTools: TypeAlias = Callable[[Iterable[object]], bool]
"""The type of the builtin ``all``, which as ``tools=all`` (the default) holds every call.

It sits beside the context predicate in the ``tools`` union, both at the top level: with two
callables side by side, a lambda passed as ``tools=`` is inferred against the predicate
(pyright) or left unannotated (mypy), never against ``Iterable[object]``.
"""

ACCEPTED_ANSWERS = (
    '"approve" or true; "deny" or false; {"decision": "approve"}; '
    '{"decision": "deny", "message": "<why>"}; {"decision": "edit", "input": {<new arguments>}}'
)
"""The answers a `ToolApproval` understands, as quoted in the error result for any other."""

_SHOWN_LENGTH = 200
_ASKED_NAMES = 1024
_DECISION_KEYS: dict[str, frozenset[str]] = {
    "approve": frozenset({"decision"}),
    "deny": frozenset({"decision", "message"}),
    "edit": frozenset({"decision", "input"}),
}


@dataclass(frozen=True)
class _Decision:
    kind: Literal["approve", "deny", "edit"]
    message: str | None = None
    new_input: dict[str, Any] | None = None


class ToolApproval(CatalogMiddleware):
    """Holds chosen tool calls for a human: approve, deny (with a message) or edit the input.

    Only ``"approve"``/``True``, ``"deny"``/``False`` and the ``{"decision": ...}`` objects
    (`ACCEPTED_ANSWERS`) are answers; ``"yes"``, ``"ok"`` and anything else are refused when the
    run is resumed with them (`InterruptResumeError`, the run still paused; see the module
    docstring for why).

    Example:
        ```python
        gate = ToolApproval(tools=["delete_file"])
        agent = Agent(model=model, tools=[delete_file], middleware=[gate])
        paused = agent("Delete the report")                    # stop_reason == "interrupt"
        done = agent([
            {"interruptResponse": {"interruptId": i.id, "response": "approve"}}
            for i in paused.interrupts
        ])
        ```

    Args:
        tools: Which calls to hold: the builtin ``all`` (the default) holds every call; a
            collection of tool names holds calls to those tools; a predicate on the
            `ExecuteToolContext` holds the calls it returns True for.
        name: The interrupt name, or a function of the context returning it. Two gates may not
            share a name for the same tools (refused at registration). The name must be
            the same every time the same call is asked (see the module docstring); the id adds
            the ``toolUseId``, so one name serves every call. A second gate on the same tools
            needs a name of its own.
        reason: A function of the context returning what the human is shown. The default is
            ``{"toolUseId": ..., "name": ..., "input": ...}`` of the call.
    """

    def __init__(
        self,
        *,
        tools: AllTools | Collection[str] | Callable[[ExecuteToolContext], bool] = all,
        name: str | Callable[[ExecuteToolContext], str] = "approve-tool-call",
        reason: Callable[[ExecuteToolContext], Any] | None = None,
    ) -> None:
        self._tool_names: frozenset[str] | None = None
        self._predicate: Callable[[ExecuteToolContext], bool] | None = None
        given = cast(object, tools)  # checked at run time: callers need not be type-checked
        if given is any:
            raise TypeError(
                "ToolApproval(tools=any) is not a tool selection; use tools=all (the default) "
                "to hold every call, a collection of tool names, or a predicate on the context"
            )
        if given is not all:
            if isinstance(given, (str, bytes)):
                raise TypeError(
                    f"ToolApproval(tools=...) takes a collection of tool names, not a single "
                    f"string; write tools=[{given!r}]"
                )
            if callable(given):
                self._predicate = cast("Callable[[ExecuteToolContext], bool]", given)
            elif isinstance(given, Collection):
                names = list(cast("Collection[object]", given))
                if not all(isinstance(item, str) and item for item in names):
                    raise TypeError(
                        "ToolApproval(tools=...) takes tool names as non-empty strings, got "
                        f"{tools!r}"
                    )
                self._tool_names = frozenset(cast("list[str]", names))
            else:
                raise TypeError(
                    "ToolApproval(tools=...) takes all, a collection of tool names or a predicate "
                    f"on the context, got {tools!r}"
                )
        given_name = cast(object, name)
        if isinstance(given_name, str):
            if not given_name:
                raise ValueError("ToolApproval(name=...) must be a non-empty string")
        elif not callable(given_name):
            raise TypeError(
                "ToolApproval(name=...) takes a string or a function of the context returning "
                f"one, got {name!r}"
            )
        if reason is not None and not callable(cast(object, reason)):
            raise TypeError(
                "ToolApproval(reason=...) takes a function of the context returning what the "
                f"human is shown, got {reason!r}"
            )
        self.tools = tools
        self.name = name
        self.reason = reason
        self._asked: dict[str, None] = {}

    def check_registration(self, host: MiddlewareHostMixin, earlier: Sequence[object]) -> None:
        """Refuse a second gate asking under this gate's name for some of the same tools.

        Two such gates would share one interrupt id per call, so one answer would approve both;
        at run time that is found only once the first gate is answered. Names given as functions
        cannot be compared before a call, and are checked then.

        Raises:
            ValueError: an earlier gate on ``host`` has the same name and may hold the same
                calls. Nothing is registered.
        """
        if not isinstance(self.name, str):
            return
        for other in earlier:
            if not isinstance(other, ToolApproval) or other.name != self.name:
                continue
            shared = self._shared_tools(other)
            if shared is None:
                continue
            raise ValueError(
                f"two ToolApproval gates ask under the name {self.name!r} for {shared}: they "
                "would share one interrupt per call, so one answer would approve both. Give this "
                'gate a name of its own, e.g. ToolApproval(name="security-review").'
            )

    def check_answer(self, interrupt: Interrupt, response: object) -> str | None:
        """What is wrong with ``response`` as an answer to one of this gate's interrupts.

        The host asks at resume, before anything runs: an answer the gate would not accept is
        refused there (the run stays paused and answerable) rather than failing the call.
        None for an accepted answer and for interrupts this gate did not ask.
        """
        if not interrupt.id.startswith(EXECUTE_TOOL_INTERRUPT_PREFIX):
            return None
        mine = False
        if isinstance(self.name, str):
            # By the id too: a host that restored the run may know the id but not the name.
            tool_use_id = interrupt.id[len(EXECUTE_TOOL_INTERRUPT_PREFIX) :].rpartition(":")[0]
            mine = interrupt.name == self.name or interrupt.id == execute_tool_interrupt_id(
                tool_use_id, self.name
            )
        if not (mine or interrupt.name in self._asked):
            return None
        decision = _decide(response)
        if isinstance(decision, str):
            asked = self.name if mine and isinstance(self.name, str) else interrupt.name
            return f"ToolApproval {asked!r}: {decision} Accepted: {ACCEPTED_ANSWERS}."
        return None

    def _shared_tools(self, other: ToolApproval) -> str | None:
        """Which calls both gates may hold, in words, or None when they hold different tools."""
        mine, theirs = self._tool_names, other._tool_names
        if mine is not None and theirs is not None:
            both = sorted(mine & theirs)
            return f"the tool(s) {', '.join(both)}" if both else None
        return "the same calls" if mine is None and theirs is None else "some of the same calls"

    def selects(self, context: ExecuteToolContext) -> bool:
        """Whether this gate holds the call ``context`` describes."""
        if self._predicate is not None:
            return bool(self._predicate(context))
        if self._tool_names is not None:
            return context.tool_use["name"] in self._tool_names
        return True

    def interrupt_name(self, context: ExecuteToolContext) -> str:
        """The name the call is asked under (the id adds its ``toolUseId``)."""
        if isinstance(self.name, str):
            return self.name
        chosen = cast(object, self.name(context))
        if not isinstance(chosen, str) or not chosen:
            raise TypeError(
                f"ToolApproval(name=...) returned {chosen!r} for tool call "
                f"{context.tool_use['toolUseId']!r}; it must return a non-empty string"
            )
        # Remembered so `check_answer` knows its own interrupts at resume (bounded: the names a
        # function gives are few, but nothing says so).
        self._asked[chosen] = None
        while len(self._asked) > _ASKED_NAMES:
            del self._asked[next(iter(self._asked))]
        return chosen

    def _reason_for(self, context: ExecuteToolContext) -> Any:
        if self.reason is not None:
            return self.reason(context)
        tool_use = context.tool_use
        return {
            "toolUseId": tool_use["toolUseId"],
            "name": tool_use["name"],
            "input": tool_use["input"],
        }

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        async def approval(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            if not self.selects(context):
                async for event in next_fn(context):
                    yield event
                return
            # Before next_fn, and never inside a try: the first call raises InterruptException,
            # which must reach the executor so the run pauses.
            answer = context.interrupt(
                self.interrupt_name(context), reason=self._reason_for(context)
            )
            decision = _decide(answer.response)
            tool_use = context.tool_use
            if isinstance(decision, str):
                _logger.warning(
                    "ToolApproval: tool call %r (%s) not run: %s",
                    tool_use["toolUseId"],
                    tool_use["name"],
                    decision,
                )
                yield ToolResultEvent.error(
                    tool_use["toolUseId"], f"Not run: {decision} Accepted: {ACCEPTED_ANSWERS}."
                )
                return
            if decision.kind == "deny":
                text = f"A human denied this call to {tool_use['name']!r}."
                if decision.message:
                    text = f"{text} Their message: {decision.message}"
                yield ToolResultEvent.error(tool_use["toolUseId"], text)
                return
            if decision.kind == "edit":
                context = context.replace(tool_use={**tool_use, "input": decision.new_input})
            async for event in next_fn(context):
                yield event

        approval.__qualname__ = f"ToolApproval[{ExecuteToolStage.name}]"
        return [ExecuteToolStage.wrap(approval)]


def _decide(answer: object) -> _Decision | str:
    """The decision an answer carries, or what is wrong with it (a sentence)."""
    if answer is True:
        return _Decision("approve")
    if answer is False:
        return _Decision("deny")
    if isinstance(answer, str):
        word = answer.strip().lower()
        if word in ("approve", "deny"):
            return _Decision("approve" if word == "approve" else "deny")
        return f"the answer {_shorten(answer)} is not an approval decision."
    if not isinstance(answer, Mapping):
        return f"the answer {_shorten(answer)} is not an approval decision."
    fields = cast("Mapping[object, object]", answer)
    given = fields.get("decision")
    kind = given.strip().lower() if isinstance(given, str) else None
    if kind is None or kind not in _DECISION_KEYS:
        return f"the answer {_shorten(fields)} has no valid 'decision' (approve, deny or edit)."
    unexpected = sorted(str(key) for key in fields if key not in _DECISION_KEYS[kind])
    if unexpected:
        return f"the {kind} answer {_shorten(fields)} has unexpected key(s) {unexpected}."
    if kind == "approve":
        return _Decision("approve")
    if kind == "deny":
        message = fields.get("message")
        if message is not None and not isinstance(message, str):
            return f"the deny answer {_shorten(fields)} has a 'message' that is not a string."
        return _Decision("deny", message=message)
    new_input = fields.get("input")
    if not isinstance(new_input, Mapping):
        return (
            f"the edit answer {_shorten(fields)} needs an 'input' object holding the new arguments."
        )
    # A copy: the answer lives in the interrupt state, and the tool may change what it is given.
    return _Decision("edit", new_input=copy.deepcopy(dict(cast("Mapping[str, Any]", new_input))))


def _shorten(value: object) -> str:
    text = repr(value)
    if len(text) <= _SHOWN_LENGTH:
        return text
    return f"{text[:_SHOWN_LENGTH]}..."
