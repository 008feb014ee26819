"""`StrandsBridge`: this library's registry, running at a ``strands.Agent``'s stage points.

The bridge registers, through strands' public ``Agent.add_middleware``, one strands Wrap handler
per stage that has handlers here (none for a stage without any, so an unused stage costs
nothing). That handler builds this library's context from strands', runs this library's chain,
and uses strands' own ``next_fn`` as the chain's terminal: strands still does the model calls,
tool calls, hooks, sessions and interrupts it always does. A stage whose one strands handler is
the bridge's is run by the bridge directly (`_seams.DirectRegistry`), without the two generators
strands puts around a handler that only pass its events on.

At the boundary (`translate`, `_converse`, `_tools`) handlers see only this library's types and
Converse data; what they leave unchanged goes back as strands' own objects, what they change
goes back with every field they set. Interrupts are asked through the strands context's own
``interrupt()``, so strands resolves and registers them as its own, for background tool calls
too.

Divergence by design (strands-agents 1.62): strands appends an AgentStreamStage pass's input
inside its terminal, not before the chain, so on this host a short-circuiting agent-stream
handler leaves the input out of history. Replacing ``context.messages`` is refused on both hosts
(`ReplacedMessagesError`), so a handler written for one behaves the same on the other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from strands.interrupt import InterruptException as HostInterruptException
from strands.middleware import ExecuteToolStage as HostExecuteToolStage
from strands.middleware import InvokeModelStage as HostInvokeModelStage

from ...engine._chain import OpenedChain
from ...engine._stage import MiddlewareStage
from ...events import TypedEvent
from ...exceptions import ReplacedMessagesError
from ...host._mixin import MiddlewareHostMixin
from ...host._tool_call import copy_tool_use, run_tool_stage
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
from ._tools import tool_in, tool_out
from .translate import (
    MODEL_OUTBOUND,
    OUTBOUND,
    Crossing,
    Translate,
    events_in,
    events_out,
    interrupt_exception_in,
)

__all__ = ["StrandsBridge"]

_HostNext = Callable[[Any], AsyncIterator[Any]]


def _changed(host_context: Any, **fields: Any) -> Any:
    """strands' context with ``fields``: itself when each is the one it holds, else a copy.

    Handlers mostly pass the context on as they got it, and strands' ``replace()`` (a dataclass
    copy) costs more than the rest of the bridge's work on a call; what strands then sees is
    the same either way.
    """
    for name, value in fields.items():
        if getattr(host_context, name) is not value:
            return host_context.replace(**fields)
    return host_context


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
    register middleware on it as on any host; run the agent as usual.

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

    def __init__(self, agent: Any) -> None:
        if not hasattr(agent, "add_middleware"):
            raise TypeError(
                f"StrandsBridge needs a strands.Agent (strands-agents >= 1.62.0), got {agent!r}"
            )
        self.agent = agent
        self._installed: set[MiddlewareStage[Any, Any, Any]] = set()

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
        registry = self.middleware_registry
        for stage, host_stage, layer in (
            (InvokeModelStage, HostInvokeModelStage, self._model_layer),
            (ExecuteToolStage, HostExecuteToolStage, self._tool_layer),
            (AgentStreamStage, seams.AgentStreamStage, self._pass_layer),
        ):
            if stage in self._installed or not registry.has_handlers(stage):
                continue
            self.agent.add_middleware(host_stage, layer)
            self._installed.add(stage)
            direct = seams.DirectRegistry.of(self.agent)
            if direct is not None:
                direct.run_directly(host_stage, layer)

    # The layers are the strands Wrap handlers. Each returns the generator of `_run` rather than
    # being a generator itself, which saves a generator hop on every event: strands only
    # iterates and closes what its handler returns.

    def _model_layer(self, host_context: Any, host_next: _HostNext) -> AsyncGenerator[Any, None]:
        host_messages = host_context.messages
        host_specs = host_context.tool_specs
        host_prompt = host_context.system_prompt
        messages = converse_items(host_messages, MESSAGE_KEYS)
        tool_specs = converse_items(host_specs, TOOL_SPEC_KEYS)
        # What the lists held when handed out: a handler may change them in place.
        shown_messages = tuple(messages)
        shown_specs = tuple(tool_specs)
        system_prompt = converse_system_prompt(host_prompt)
        context = InvokeModelContext(
            agent=host_context.agent,
            messages=messages,
            system_prompt=system_prompt,
            tool_specs=tool_specs,
            tool_choice=host_context.tool_choice,
            invocation_state=host_context.invocation_state,
            model=host_context.model,
        )
        crossing = Crossing(host_context.agent, host_context.invocation_state)

        def terminal(ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
            replaced = _changed(
                host_context,
                messages=host_items(
                    ours.messages, messages, shown_messages, host_messages, MESSAGE_KEYS
                ),
                system_prompt=host_system_prompt(ours.system_prompt, system_prompt, host_prompt),
                tool_specs=host_items(
                    ours.tool_specs, tool_specs, shown_specs, host_specs, TOOL_SPEC_KEYS
                ),
                tool_choice=ours.tool_choice,
                invocation_state=ours.invocation_state,
                model=ours.model,
            )
            return events_in(host_next(replaced), crossing, model_call=True)

        return self._run(InvokeModelStage, context, terminal, crossing, MODEL_OUTBOUND)

    def _tool_layer(self, host_context: Any, host_next: _HostNext) -> AsyncGenerator[Any, None]:
        tool = tool_in(host_context.tool)
        context = _ToolCallContext(
            agent=host_context.agent,
            tool=tool,
            tool_use=copy_tool_use(host_context.tool_use),
            invocation_state=host_context.invocation_state,
            cancel_signal=host_context.cancel_signal,
            _host=host_context,
        )
        crossing = Crossing(host_context.agent, host_context.invocation_state)

        def terminal(ours: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
            # cancel_signal is executor-owned: strands keeps its own, whatever the context says.
            # The handlers saw a copy of the call; one they left as it was goes back as strands'
            # own dict.
            tool_use = ours.tool_use
            if tool_use == host_context.tool_use:
                tool_use = host_context.tool_use
            replaced = _changed(
                host_context,
                tool=tool_out(ours.tool, tool),
                tool_use=tool_use,
                invocation_state=ours.invocation_state,
            )
            return events_in(host_next(replaced), crossing)

        return self._run(ExecuteToolStage, context, terminal, crossing, OUTBOUND)

    def _pass_layer(self, host_context: Any, host_next: _HostNext) -> AsyncGenerator[Any, None]:
        host_messages = host_context.messages
        messages = converse_items(host_messages, MESSAGE_KEYS)
        context = _PassContext(
            agent=host_context.agent,
            messages=messages,
            invocation_state=host_context.invocation_state,
            _host=host_context,
        )
        crossing = Crossing(host_context.agent, host_context.invocation_state)
        crossing.begin_pass()

        def terminal(ours: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
            if ours.messages is not messages:
                raise ReplacedMessagesError
            if messages is not host_messages:
                # The input is appended by strands' terminal: edits made to the views (a
                # message's content replaced, say) belong in the dicts it appends.
                for mine, host in zip(messages, host_messages, strict=True):
                    if mine is not host:
                        host.update(mine)
            replaced = host_context
            if ours.invocation_state is not host_context.invocation_state:
                replaced = dataclasses.replace(host_context, invocation_state=ours.invocation_state)
            return events_in(host_next(replaced), crossing)

        return self._run(AgentStreamStage, context, terminal, crossing, OUTBOUND)

    def _run(
        self,
        stage: MiddlewareStage[Any, Any, Any],
        context: Any,
        terminal: Any,
        crossing: Crossing,
        table: dict[type, Translate],
    ) -> AsyncGenerator[Any, None]:
        """Run this library's chain; hand each event back to strands as strands' own.

        The chain is opened (`MiddlewareRegistry.open`), not invoked: `events_out` iterates the
        outermost handler itself and translates in line, so a streamed event crosses no driver
        generator and no translation call on its way to strands.
        """
        registry = self.middleware_registry
        if stage is ExecuteToolStage:
            # The tool-call rules every host keeps (a tool call streams few events); its stream
            # is closed on the chain's cleanup rules, as a terminal's would be.
            rules = partial(run_tool_stage, registry, terminal=terminal)
            return events_out(OpenedChain(stage, None, context, rules), table, crossing)
        return events_out(registry.open(stage, context, terminal), table, crossing)
