"""`StrandsBridge`: this library's registry, running at a ``strands.Agent``'s stage points.

The bridge registers, through strands' public ``Agent.add_middleware``, one strands Wrap handler
per stage that has handlers here (none for a stage without any, so an unused stage costs
nothing). That handler builds this library's context from strands', runs this library's chain,
and uses strands' own ``next_fn`` as the chain's terminal: strands still does the model calls,
tool calls, hooks, sessions and interrupts it always does. `translate` converts events and
interrupts at the boundary, both ways.

Divergence by design (strands-agents 1.62): strands appends an AgentStreamStage pass's input
inside its terminal, not before the chain, so on this host a short-circuiting agent-stream
handler leaves the input out of history. Replacing ``context.messages`` is refused on both hosts
(`ReplacedMessagesError`), so a handler written for one behaves the same on the other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from strands.interrupt import InterruptException as HostInterruptException
from strands.middleware import ExecuteToolStage as HostExecuteToolStage
from strands.middleware import InvokeModelStage as HostInvokeModelStage
from strands.middleware._agent_stream import AgentStreamStage as HostAgentStreamStage

from ...engine.stage import MiddlewareStage
from ...events import EventLoopStopEvent, TypedEvent
from ...exceptions import InterruptException, ReplacedMessagesError
from ...host.mixin import MiddlewareHostMixin
from ...host.tool_call import copy_tool_use, run_tool_stage
from ...stages.agent_stream import AgentStreamContext, AgentStreamStage
from ...stages.execute_tool import ExecuteToolContext, ExecuteToolStage
from ...stages.invoke_model import InvokeModelContext, InvokeModelStage
from .translate import HostInterrupts, from_host_interrupt, inbound, outbound, to_host_interrupt

__all__ = ["StrandsBridge"]

_HostNext = Callable[[Any], AsyncIterator[Any]]


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
            (AgentStreamStage, HostAgentStreamStage, self._pass_layer),
        ):
            if stage in self._installed or not registry.has_handlers(stage):
                continue
            self.agent.add_middleware(host_stage, layer)
            self._installed.add(stage)

    async def _run(
        self, stage: MiddlewareStage[Any, Any, Any], context: Any, terminal: Any
    ) -> AsyncGenerator[Any, None]:
        last_loop_stop: Any = None
        registry = self.middleware_registry
        stream = (
            run_tool_stage(registry, context, terminal)  # the tool-call rules every host keeps
            if stage is ExecuteToolStage
            else registry.invoke(stage, context, terminal)
        )
        try:
            async for event in stream:
                host = outbound(event, last_loop_stop)
                if isinstance(event, EventLoopStopEvent):
                    last_loop_stop = host
                yield host
        except InterruptException as error:
            raise to_host_interrupt(error) from error
        finally:
            await stream.aclose()

    async def _model_layer(
        self, host_context: Any, host_next: _HostNext
    ) -> AsyncGenerator[Any, None]:
        context = InvokeModelContext(
            agent=host_context.agent,
            messages=host_context.messages,
            system_prompt=host_context.system_prompt,
            tool_specs=host_context.tool_specs,
            tool_choice=host_context.tool_choice,
            invocation_state=host_context.invocation_state,
            model=host_context.model,
        )

        def terminal(ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
            replaced = host_context.replace(
                messages=ours.messages,
                system_prompt=ours.system_prompt,
                tool_specs=ours.tool_specs,
                tool_choice=ours.tool_choice,
                invocation_state=ours.invocation_state,
                model=ours.model,
            )
            return _translated(host_next(replaced))

        async for event in self._run(InvokeModelStage, context, terminal):
            yield event

    async def _tool_layer(
        self, host_context: Any, host_next: _HostNext
    ) -> AsyncGenerator[Any, None]:
        context = ExecuteToolContext(
            agent=host_context.agent,
            tool=host_context.tool,
            tool_use=copy_tool_use(host_context.tool_use),
            invocation_state=host_context.invocation_state,
            cancel_signal=host_context.cancel_signal,
            _interrupts=HostInterrupts(host_context._interrupt_state.interrupts),
        )

        def terminal(ours: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
            # cancel_signal is executor-owned: strands keeps its own, whatever the context says.
            replaced = host_context.replace(
                tool=ours.tool, tool_use=ours.tool_use, invocation_state=ours.invocation_state
            )
            return _translated(host_next(replaced))

        async for event in self._run(ExecuteToolStage, context, terminal):
            yield event

    async def _pass_layer(
        self, host_context: Any, host_next: _HostNext
    ) -> AsyncGenerator[Any, None]:
        messages = host_context.messages
        context = AgentStreamContext(
            agent=host_context.agent,
            messages=messages,
            invocation_state=host_context.invocation_state,
            _interrupts=HostInterrupts(host_context._interrupts),
        )

        def terminal(ours: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
            if ours.messages is not messages:
                raise ReplacedMessagesError
            replaced = dataclasses.replace(host_context, invocation_state=ours.invocation_state)
            return _translated(host_next(replaced))

        async for event in self._run(AgentStreamStage, context, terminal):
            yield event


async def _translated(stream: AsyncIterator[Any]) -> AsyncGenerator[TypedEvent, None]:
    """The strands terminal's events as this library's, its interrupts as ours."""
    try:
        async for event in stream:
            yield inbound(event)
    except HostInterruptException as error:
        raise from_host_interrupt(error) from error
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
