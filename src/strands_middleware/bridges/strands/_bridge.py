"""`StrandsBridge`: this library's registry, running at a ``strands.Agent``'s stage points.

The bridge registers, through strands' public ``Agent.add_middleware``, one strands Wrap handler
per stage that has handlers here (none for a stage without any, so an unused stage costs
nothing). That handler builds this library's context from strands', runs this library's chain,
and uses strands' own ``next_fn`` as the chain's terminal: strands still does the model calls,
tool calls, hooks, sessions and interrupts it always does. The contexts are built, the chains
run and what handlers changed is found by the adapter layer's stage points (`ModelStagePoint`,
`ToolStagePoint`, `AgentPassPoint`); the bridge translates strands' data to and from them.

At the boundary (`_translate`, `_stream`, `_converse`, `_tools`) handlers see only this
library's types and Converse data; what they leave unchanged goes back as strands' own objects,
what they change goes back with every field they set. Interrupts are asked through the strands
context's own ``interrupt()``, so strands resolves and registers them as its own, for background
tool calls too.

strands-agents (1.62) appends an AgentStreamStage pass's input inside its terminal, from the
context that reaches it, as the reference agent does: a short-circuiting agent-stream handler
leaves the input out of history, and a list a handler puts in place of ``context.messages`` is
handed to strands' terminal, which appends it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from strands.interrupt import InterruptException as HostInterruptException
from strands.middleware import ExecuteToolStage as HostExecuteToolStage
from strands.middleware import InvokeModelStage as HostInvokeModelStage

from ...engine._stage import MiddlewareStage
from ...events import TypedEvent
from ...host._agent_pass import AgentPassPoint
from ...host._mixin import AnswerCheck, MiddlewareHostMixin
from ...host._model_call import ModelStagePoint
from ...host._token_projection import project_input_tokens
from ...host._tool_call import ToolStagePoint
from ...interrupts import MiddlewareInterruptResult, execute_tool_interrupt_id
from ...stages._agent_stream import AgentStreamContext, AgentStreamStage
from ...stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ...stages._invoke_model import InvokeModelContext, InvokeModelStage
from . import _seams as seams
from ._converse import (
    MESSAGE_KEYS,
    TOOL_SPEC_KEYS,
    converse_items,
    converse_system_prompt,
    host_items,
    host_system_prompt,
)
from ._crossing import Crossing
from ._interrupts import answers_to, interrupt_exception_in
from ._stream import events_in, events_out
from ._tools import tool_in, tool_out
from ._translate import MODEL_OUTBOUND, OUTBOUND

__all__ = ["StrandsBridge"]

_HostNext = Callable[[Any], AsyncIterator[Any]]


# The model-call fields strands' context carries under the same name and in the same form.
_MODEL_FIELDS = frozenset(("tool_choice", "invocation_state", "model"))


def _set(sent: dict[str, Any], name: str, value: Any, host: Any) -> None:
    """Send ``value`` for ``name`` unless it is strands' own ``host`` (then send nothing)."""
    if value is host:
        sent.pop(name, None)
    else:
        sent[name] = value


def _ask(host_context: Any, name: str, reason: Any, response: Any) -> MiddlewareInterruptResult:
    """A handler's ``interrupt()``, answered by the strands context's own ``interrupt()``."""
    try:
        answer = host_context.interrupt(name, reason=reason, response=response)
    except HostInterruptException as error:
        raise interrupt_exception_in(error) from None
    return MiddlewareInterruptResult(answer.response)


@dataclass
class _ToolCallContext(ExecuteToolContext):
    """The tool-call context on strands: ``interrupt()`` is strands' own (see `_ask`)."""

    _host: Any = field(default=None, repr=False)

    def interrupt(
        self, name: str, *, reason: Any = None, response: Any = None
    ) -> MiddlewareInterruptResult:
        host = self._host
        if self.tool_use is not host.tool_use:  # the id is scoped to the call being asked about
            host = host.replace(tool_use=self.tool_use)
        # strands answers, the ledger records: gates fail closed here as on every host.
        interrupt_id = execute_tool_interrupt_id(self.tool_use["toolUseId"], name)
        return self._ledger.resolve(
            {},
            interrupt_id,
            name,
            reason,
            response,
            answer=lambda: _ask(host, name, reason, response),
        )


@dataclass
class _PassContext(AgentStreamContext):
    """The agent-pass context on strands: ``interrupt()`` is strands' own (see `_ask`)."""

    _host: Any = field(default=None, repr=False)

    def interrupt(
        self, name: str, *, reason: Any = None, response: Any = None
    ) -> MiddlewareInterruptResult:
        return _ask(self._host, name, reason, response)


class StrandsBridge(MiddlewareHostMixin):
    """Gives a ``strands.Agent`` this library's ``use()`` and typed ``add_middleware()``.

    Get the one bridge of an agent with `StrandsBridge.of` (it is created on first use), then
    register middleware on it as on any host; run the agent as usual. Resuming a paused agent
    with an answer the item that asked does not accept (``"yes"`` to a `ToolApproval`) raises
    `InterruptResumeError` before strands reads it, as on the reference agent: the agent stays
    paused and takes corrected answers.

    Example:
        ```python
        from strands import Agent
        from strands_middleware.bridges.strands import StrandsBridge

        agent = Agent(model=model, tools=[delete_file])
        StrandsBridge.of(agent).use(timing, ToolApproval(tools={"delete_file"}))
        result = agent("Delete the report")
        ```
    """

    _ATTRIBUTE = "_strands_middleware_bridge"

    # Every bridged agent holds one: slots keep it to the few references it needs.
    __slots__ = ("_checked_items", "_checks_answers", "_installed", "_middleware_registry", "agent")

    def __init__(self, agent: Any) -> None:
        if not hasattr(agent, "add_middleware"):
            raise TypeError(
                f"StrandsBridge needs a strands.Agent (strands-agents >= 1.62.0), got {agent!r}"
            )
        self.agent = agent
        self._middleware_registry = None
        self._checked_items = None
        # The stages whose layer is registered on the agent (a tuple: at most three).
        self._installed: tuple[MiddlewareStage[Any, Any, Any], ...] = ()
        self._checks_answers = False

    @classmethod
    def of(cls, agent: Any) -> StrandsBridge:
        """The agent's bridge, created and attached on first use."""
        bridge = getattr(agent, cls._ATTRIBUTE, None)
        if isinstance(bridge, StrandsBridge):
            return bridge
        bridge = cls(agent)
        setattr(agent, cls._ATTRIBUTE, bridge)
        return bridge

    def _middleware_registered(self) -> None:
        if not self._checks_answers and any(
            isinstance(item, AnswerCheck) for item in self._checked_items or ()
        ):
            self._check_answers_at_resume()
        registry = self.middleware_registry
        for stage, host_stage, layer in (
            (InvokeModelStage, HostInvokeModelStage, self._model_layer),
            (ExecuteToolStage, HostExecuteToolStage, self._tool_layer),
            (AgentStreamStage, seams.AgentStreamStage, self._pass_layer),
        ):
            if stage in self._installed or not registry.has_handlers(stage):
                continue
            self.agent.add_middleware(host_stage, layer)
            self._installed += (stage,)

    def _check_answers_at_resume(self) -> None:
        """Check a resume's answers before strands reads them (see `check_answers`).

        strands applies a resume's answers to its interrupt state as its stream starts, before
        any hook or middleware runs, and has no public seam ahead of that. So the agent's own
        ``stream_async`` (through which ``agent(...)`` and ``invoke_async`` run too) is
        replaced, on this agent only, by one that refuses an answer the item that asked does
        not accept, then hands the call to strands unchanged. Nothing has started when it
        refuses: the agent is still paused and takes corrected answers.
        """
        agent = self.agent
        host_stream = agent.stream_async

        def stream_async(prompt: Any = None, *args: Any, **kwargs: Any) -> Any:
            self.check_answers(answers_to(agent, prompt))
            return host_stream(prompt, *args, **kwargs)

        agent.stream_async = stream_async
        self._checks_answers = True

    # The layers are the strands Wrap handlers. Each returns the generator of `_run` rather than
    # being a generator itself, which saves a generator hop on every event: strands only
    # iterates and closes what its handler returns.

    def _model_layer(self, host_context: Any, host_next: _HostNext) -> AsyncGenerator[Any, None]:
        host_messages = host_context.messages
        host_specs = host_context.tool_specs
        host_prompt = host_context.system_prompt
        messages = converse_items(host_messages, MESSAGE_KEYS)
        tool_specs = converse_items(host_specs, TOOL_SPEC_KEYS)
        system_prompt = converse_system_prompt(host_prompt)
        # strands computes the same estimate as host.project_input_tokens: read, not redone. It
        # has none when its model cannot count tokens (a model of this library handed to
        # strands); the figure is then made here from strands' own history, whose messages
        # carry the usage metadata the translation to Converse leaves out.
        projected = getattr(host_context, "projected_input_tokens", None)
        if projected is None:
            projected = project_input_tokens(
                host_messages, system_prompt=system_prompt, tool_specs=tool_specs
            )
        point = ModelStagePoint(
            self.middleware_registry,
            agent=host_context.agent,
            messages=messages,
            system_prompt=system_prompt,
            tool_specs=tool_specs,
            tool_choice=host_context.tool_choice,
            invocation_state=host_context.invocation_state,
            model=host_context.model,
            projected_input_tokens=projected,
        )
        # What the lists held when handed out: a view in them may be changed in place.
        shown_messages = tuple(messages) if messages is not host_messages else ()
        shown_specs = tuple(tool_specs) if tool_specs is not host_specs else ()
        crossing = Crossing(host_context.agent, host_context.invocation_state)

        def terminal(ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
            changes = point.changed(ours)
            sent: dict[str, Any] = {}
            for name, value in changes.items():
                if name in _MODEL_FIELDS:
                    sent[name] = value
            if "messages" in changes or shown_messages:
                back = host_items(
                    ours.messages, messages, shown_messages or messages, host_messages, MESSAGE_KEYS
                )
                _set(sent, "messages", back, host_messages)
            if "tool_specs" in changes or shown_specs:
                shown = shown_specs or tool_specs
                back = host_items(ours.tool_specs, tool_specs, shown, host_specs, TOOL_SPEC_KEYS)
                _set(sent, "tool_specs", back, host_specs)
            if "system_prompt" in changes:
                sent["system_prompt"] = host_system_prompt(
                    ours.system_prompt, system_prompt, host_prompt
                )
            replaced = host_context.replace(**sent) if sent else host_context
            return events_in(host_next(replaced), crossing, model_call=True)

        return events_out(point.open(terminal), MODEL_OUTBOUND, crossing, point.missing)

    def _tool_layer(self, host_context: Any, host_next: _HostNext) -> AsyncGenerator[Any, None]:
        tool = tool_in(host_context.tool)
        point = ToolStagePoint(
            self.middleware_registry,
            agent=host_context.agent,
            tool=tool,
            tool_use=host_context.tool_use,
            invocation_state=host_context.invocation_state,
            cancel_signal=host_context.cancel_signal,
            context_type=_ToolCallContext,
            _host=host_context,
        )
        crossing = Crossing(host_context.agent, host_context.invocation_state)

        def terminal(ours: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
            # cancel_signal is executor-owned: strands keeps its own, whatever the context says.
            # What the handlers left as it was goes back as strands' own.
            changes = point.changed(ours)
            sent: dict[str, Any] = {}
            if "tool" in changes:
                sent["tool"] = tool_out(ours.tool, tool)
            if "tool_use" in changes:
                sent["tool_use"] = ours.tool_use
            if "invocation_state" in changes:
                sent["invocation_state"] = ours.invocation_state
            replaced = host_context.replace(**sent) if sent else host_context
            return events_in(host_next(replaced), crossing)

        # The tool-call rules every host keeps; the stream is closed on leaving the block.
        return events_out(point.open(terminal), OUTBOUND, crossing)

    def _pass_layer(self, host_context: Any, host_next: _HostNext) -> AsyncGenerator[Any, None]:
        host_messages = host_context.messages
        messages = converse_items(host_messages, MESSAGE_KEYS)
        point = AgentPassPoint(
            self.middleware_registry,
            agent=host_context.agent,
            messages=messages,
            invocation_state=host_context.invocation_state,
            context_type=_PassContext,
            # strands' terminal appends the list the context it is given holds.
            replaceable_input=True,
            _host=host_context,
        )
        shown = tuple(messages)
        crossing = Crossing(host_context.agent, host_context.invocation_state)
        crossing.begin_pass()

        def terminal(ours: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
            sent: dict[str, Any] = {}
            if ours.messages is not messages:
                # A list put in place: strands' terminal appends the one its context holds.
                sent["messages"] = list(
                    host_items(ours.messages, messages, shown, host_messages, MESSAGE_KEYS)
                )
            elif messages is not host_messages:
                # The input is appended by strands' terminal: edits made to the views (a
                # message's content replaced, say) belong in the dicts it appends.
                for mine, host in zip(messages, host_messages, strict=True):
                    if mine is not host:
                        host.update(mine)
            if ours.invocation_state is not host_context.invocation_state:
                sent["invocation_state"] = ours.invocation_state
            replaced = dataclasses.replace(host_context, **sent) if sent else host_context
            return events_in(host_next(replaced), crossing)

        return events_out(point.open(terminal), OUTBOUND, crossing, point.missing)
