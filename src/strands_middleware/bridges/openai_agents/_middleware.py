"""`OpenAIAgentsMiddleware`: this library's registry on the OpenAI Agents SDK's agents and runs.

The SDK has no middleware of its own, so the bridge wraps what the SDK resolves: each agent's
``Model`` object and function tools (`wrap`, on a clone, recursing into handoffs), and the
``ModelProvider`` and ``RunConfig.model`` of a run (`run_config`). Interrupts pause through the
SDK's approvals (`interrupts`, `resume`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar, cast

from agents import Agent, FunctionTool, Model, RunConfig, RunState
from agents.items import ToolApprovalItem
from agents.models.multi_provider import MultiProvider

from ...engine._registry import MiddlewareSource
from ...exceptions import InterruptResponseFormatError, InterruptResumeError, UnsupportedStageError
from ...host._kept_by_identity import KeptByIdentity
from ...host._mixin import RUN_STATE, MiddlewareHostMixin
from ...host._resume_prompt import RESPONSE_SHAPE, parse_block, quote_ids
from ...interrupts import Interrupt
from ...stages._agent_stream import AgentStreamStage
from ...stores._protocols import SnapshotStore
from ._model import MiddlewareModel, MiddlewareModelProvider
from ._tools import ToolCalls, UnknownTools, call_prefix, wrap_tool

__all__ = ["OpenAIAgentsMiddleware", "UnsupportedStageError"]

TContext = TypeVar("TContext")

_WEEK = 7 * 24 * 3600.0

# How many SDK models and tools one middleware keeps wrapped copies of (the one used longest ago
# is let go first).
_KEPT = 256

# The fields `wrap_tool` sets on its copy; every other field is the tool's own.
_WRAPPED_FIELDS = frozenset({"on_invoke_tool", "needs_approval"})

_REFUSAL = (
    "AgentStreamStage is not supported on the OpenAI Agents SDK: its run loop has no pass a "
    "handler could wrap through the SDK's public API, so AgentStreamStage handlers would never "
    "run. Use InvokeModelStage or ExecuteToolStage handlers instead."
)


def _call_id(item: ToolApprovalItem) -> str:
    raw: object = item.raw_item
    if isinstance(raw, Mapping):
        return str(cast("Mapping[str, object]", raw).get("call_id"))
    return str(getattr(raw, "call_id", None))


class OpenAIAgentsMiddleware(MiddlewareHostMixin):
    """This library's middleware on OpenAI Agents SDK agents.

    Example:
        ```python
        from agents import Agent, Runner
        from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware

        middleware = OpenAIAgentsMiddleware(timing, ToolApproval())
        agent = middleware.wrap(Agent("assistant", model=model, tools=[delete_file]))
        result = await Runner.run(agent, "Clean up", run_config=middleware.run_config())
        ```

    Args:
        middleware: What to register, in order (as ``use()`` takes it).
        store: Where the calls a resumed run runs are recorded (a ``RedisStore``, shared by
            every process that resumes runs): a paused ``RunState`` resumed a second time, in
            any process using the same store, then runs none of its paused calls, and the run
            ends with the SDK's ``UserError`` whose cause is an `InterruptResumeError`. Without
            one, a second resume is recognised by this object only (see `resume`).
        store_ttl: How long, in seconds, the store remembers a resumed call (7 days by
            default): a second resume later than that is not recognised.

    Raises:
        TypeError: an argument is not middleware.
        UnsupportedStageError: it is an ``AgentStreamStage`` handler.
    """

    refused_stages = MappingProxyType({AgentStreamStage: _REFUSAL})
    lacks = MappingProxyType(
        {
            RUN_STATE: "the SDK tells a model or a tool invoker nothing of the run it belongs "
            "to through its public API, so each stage call gets an invocation_state of its own",
        }
    )

    def __init__(
        self,
        *middleware: MiddlewareSource,
        store: SnapshotStore | None = None,
        store_ttl: float = _WEEK,
    ) -> None:
        if store is not None and not isinstance(cast(object, store), SnapshotStore):
            raise TypeError(
                f"store must be a SnapshotStore (a RedisStore, say), got {type(store).__name__}"
            )
        if store_ttl <= 0:
            raise ValueError(f"store_ttl must be a number of seconds above 0, got {store_ttl!r}")
        self._store = store
        self._store_ttl = store_ttl
        self._calls: ToolCalls | None = None
        # What wrapping an agent makes, kept per SDK model and per tool: agents made per request
        # from the same model and tools share them, so each agent costs its clone alone.
        self._wrapped_models = KeptByIdentity[MiddlewareModel](_KEPT)
        self._wrapped_tools = KeptByIdentity[FunctionTool](_KEPT)
        self.use(*middleware)

    @property
    def _tool_calls(self) -> ToolCalls:
        if self._calls is None:
            self._calls = ToolCalls(self.middleware_registry, self, self._store, self._store_ttl)
        return self._calls

    # ---- wrapping ----------------------------------------------------------------------------

    def wrap(self, agent: Agent[TContext]) -> Agent[TContext]:
        """A clone of ``agent`` (and of its handoff agents) running this middleware.

        A ``Model`` object is wrapped as it is; a model name (or none) is left for the run's
        provider, which `run_config` wraps.

        Raises:
            TypeError: the agent's model is neither a ``Model``, a name nor ``None``.
        """
        return self._wrap(agent, {})

    def _wrap(self, agent: Agent[Any], done: dict[int, Agent[Any]]) -> Agent[Any]:
        if id(agent) in done:
            return done[id(agent)]
        model: Any = agent.model
        if isinstance(model, MiddlewareModel):
            wrapped_model: Any = model
        elif isinstance(model, Model):
            wrapped_model = self._wrapped_models.get(
                model,
                lambda: MiddlewareModel(model, self.middleware_registry, self, self._tool_calls),
            )
        elif model is None or isinstance(model, str):
            wrapped_model = model
        else:
            raise TypeError(
                f"agent {agent.name!r} has model {model!r}, which the OpenAI Agents SDK cannot "
                "run: give it an agents.Model, a model name, or None"
            )
        tools = [
            self._wrapped_tool(tool)
            if isinstance(tool, FunctionTool) and not _is_wrapped(tool)
            else tool
            for tool in agent.tools
        ]
        clone = agent.clone(model=wrapped_model, tools=tools)
        done[id(agent)] = clone
        handoffs: list[Any] = []
        for handoff in agent.handoffs:
            if isinstance(handoff, Agent):
                handoffs.append(self._wrap(handoff, done))
            else:
                handoffs.append(handoff)
        clone.handoffs = handoffs
        return clone

    def _wrapped_tool(self, tool: FunctionTool) -> FunctionTool:
        """``tool``'s copy running ExecuteToolStage: one per tool, made again for a tool whose
        fields changed since (a dataclass may be changed in place)."""
        kept = self._wrapped_tools.find(tool)
        # Compared by equality: the SDK makes the copy's JSON schema again.
        if kept is not None and all(
            getattr(kept, name) == value
            for name, value in vars(tool).items()
            if name not in _WRAPPED_FIELDS
        ):
            return kept
        made = wrap_tool(tool, self._tool_calls)
        self._wrapped_tools.keep(tool, made)
        return made

    def run_config(self, config: RunConfig | None = None) -> RunConfig:
        """``config`` (or a fresh ``RunConfig``) whose provider and model run this middleware.

        Pass it to ``Runner.run`` / ``Runner.run_streamed`` when an agent names its model (or
        names none): the SDK then resolves it through the provider. It also makes a call to a
        tool the agent does not have run through ``ExecuteToolStage`` (``context.tool`` is
        ``None``) and reach the model as the chain's result, as on every host, where the SDK
        would end the run with ``ModelBehaviorError``: it sets the SDK's
        ``tool_not_found_behavior="return_error_to_model"`` and a ``tool_error_formatter`` that
        runs the chain (and hands other errors to the config's own formatter). Set
        ``tool_not_found_behavior="raise_error"`` on the result to keep the SDK's error.
        """
        config = config if config is not None else RunConfig()
        calls = self._tool_calls
        provider: Any = config.model_provider
        if not isinstance(provider, MiddlewareModelProvider):
            provider = MiddlewareModelProvider(
                provider if provider is not None else MultiProvider(),
                self.middleware_registry,
                self,
                calls,
            )
        model: Any = config.model
        if isinstance(model, Model) and not isinstance(model, MiddlewareModel):
            model = MiddlewareModel(model, self.middleware_registry, self, calls)
        formatter: Any = config.tool_error_formatter
        if not (isinstance(formatter, UnknownTools) and formatter.calls is calls):
            formatter = UnknownTools(calls, formatter)
        return dataclasses.replace(
            config,
            model_provider=provider,
            model=model,
            tool_not_found_behavior="return_error_to_model",
            tool_error_formatter=formatter,
        )

    # ---- interrupts --------------------------------------------------------------------------

    def interrupts(self, paused: Any) -> list[Interrupt]:
        """This library's interrupts a paused run (a run result or a ``RunState``) waits on.

        Calls paused by the SDK itself (a tool's own ``needs_approval``) are not listed: answer
        them with the SDK's ``approve``/``reject``. They are what this middleware object saw
        pause: for a state loaded in another process (or by another object) the list is empty,
        since the SDK's ``RunState`` has no room for them; keep them (their ids, names and
        reasons) with the saved state to answer it there.
        """
        found: list[Interrupt] = []
        owed = self._tool_calls.owed
        for item in _interruptions(paused):
            found.extend(owed.get(_call_id(item), ()))
        return found

    def resume(
        self, state: RunState[Any], responses: Mapping[str, Any] | Sequence[Mapping[str, Any]]
    ) -> None:
        """Answer a paused run's interrupts; then run ``state`` again to go on.

        ``responses`` are answers by interrupt id, or the ``interruptResponse`` blocks every
        host of this library resumes with. Each call they answer is approved in ``state`` (the
        SDK then runs it, and the handler's ``interrupt()`` returns the answer). Nothing
        changes when they are refused, and the run can be resumed again with corrected answers.

        A state whose paused round already ran once resumed is refused, loaded again with
        ``RunState.from_json`` or not: running it again would run an approved tool twice. This
        middleware object remembers what it resumed in this process only (the last 1024
        calls): a resumed state loaded in another process is not recognised there by
        ``resume()``; give the middleware a ``store`` for the run itself to refuse it there
        (before the tool runs). A model
        call whose input holds a call still paused on this middleware's interrupts, without
        its result, is refused too (a new prompt sent with a paused run's history): the model
        is not asked. In another process the answers cannot be checked against the pause
        before the run: there, answers that answer nothing a resumed call's middleware asks
        (another run's) end the run before the call runs, with the SDK's ``UserError`` whose
        cause is an `InterruptResumeError`; the saved state stays answerable.

        Raises:
            InterruptResumeError: the state's paused round already ran once resumed (in this
                process), an answer names no call the state waits on, one of them is
                left unanswered, or an item that asked does not accept its answer (``"yes"`` to
                a `ToolApproval`; see `MiddlewareHostMixin.check_answers`).
            InterruptResponseFormatError: the blocks are not well-formed.
        """
        answers = _answers(responses)
        items = {_call_id(item): item for item in state.get_interruptions()}
        if not items:
            # As on every host: answers with nothing waiting for them mean the caller believes
            # in a pause that is over.
            raise InterruptResumeError(
                "the run is not paused on any interrupt (it ended, or this state was already "
                "resumed and run), so there is nothing to resume; send a new prompt instead",
                list(answers),
            )
        ran = [call for call in items if call in self._tool_calls.resumed]
        if ran:
            # Running the state again would run its paused round (an approved tool) twice.
            raise InterruptResumeError(
                f"this paused run was already resumed: its call {quote_ids(ran)} ran once "
                "answered, so there is nothing to resume and running the state again would run "
                "it twice; send a new prompt, or resume the RunState of the run's latest pause",
                list(answers),
            )
        by_call: dict[str, dict[str, Interrupt]] = {}
        unknown: list[str] = []
        for interrupt_id, answer in answers.items():
            call = next((c for c in items if interrupt_id.startswith(call_prefix(c))), None)
            if call is None:
                unknown.append(interrupt_id)
                continue
            known = {i.id: i for i in self._tool_calls.owed.get(call, ())}
            asked = known.get(interrupt_id)
            name = asked.name if asked is not None else ""
            reason = asked.reason if asked is not None else None
            by_call.setdefault(call, {})[interrupt_id] = Interrupt(
                interrupt_id, name, reason, answer
            )
        if unknown:
            raise InterruptResumeError(
                f"no paused call waits on interrupt {quote_ids(sorted(unknown))}; the run waits "
                f"on calls {quote_ids(sorted(items)) or 'none'}",
                sorted(unknown),
            )
        missing = [
            i.id
            for call in items
            for i in self._tool_calls.owed.get(call, ())
            if i.id not in answers
        ]
        if missing:
            raise InterruptResumeError(
                f"interrupt {quote_ids(missing)} is not answered: answer every interrupt of the "
                "paused run",
                missing,
            )
        # Before the state is touched: an answer the asker would refuse leaves it paused.
        self.check_answers(
            (interrupt, interrupt.response)
            for answered in by_call.values()
            for interrupt in answered.values()
        )
        for call, answered in by_call.items():
            self._tool_calls.answers[call] = answered
            state.approve(items[call])


def _is_wrapped(tool: FunctionTool) -> bool:
    return getattr(tool.on_invoke_tool, "__qualname__", "").startswith("wrap_tool.")


def _interruptions(paused: Any) -> list[ToolApprovalItem]:
    if isinstance(paused, RunState):
        return list(paused.get_interruptions())
    found: Any = getattr(paused, "interruptions", None)
    if found is None:
        raise TypeError(
            f"expected a run result or a RunState of the OpenAI Agents SDK, got {paused!r}"
        )
    return list(found)


def _answers(responses: object) -> dict[str, Any]:
    if isinstance(responses, Mapping):
        return dict(cast("Mapping[str, Any]", responses))
    if not isinstance(responses, (list, tuple)):
        raise InterruptResponseFormatError(
            f"answers must be a mapping of interrupt id to answer or {RESPONSE_SHAPE}, got "
            f"{type(responses).__name__}"
        )
    answers: dict[str, Any] = {}
    for block in cast("Sequence[object]", responses):
        parsed = parse_block(block)
        if isinstance(parsed, str):
            raise InterruptResponseFormatError(
                f"a resume block is malformed ({parsed}); expected {RESPONSE_SHAPE}"
            )
        interrupt_id, answer = parsed
        if interrupt_id in answers:
            raise InterruptResumeError(
                f"interrupt {interrupt_id!r} is answered twice", [interrupt_id]
            )
        answers[interrupt_id] = answer
    return answers
