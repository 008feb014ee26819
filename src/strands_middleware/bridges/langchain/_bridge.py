"""`LangChainBridge`: this library's registry, running inside a LangChain v1 ``create_agent``.

The bridge is one LangChain ``AgentMiddleware``: ``create_agent(..., middleware=[bridge])``.
Its ``awrap_model_call`` and ``awrap_tool_call`` build this library's context from LangChain's
request, run this library's chain, and use LangChain's own ``handler`` as the chain's terminal:
LangChain still binds tools, calls the model, runs the tools and checkpoints the run. A stage
without handlers here goes straight to the handler.

At the boundary (`_converse`) handlers see only this library's types and Converse data; what
they leave unchanged goes back as LangChain's own objects (the request, the `ModelResponse`, the
`ToolMessage` or `Command`), what they change goes back with every field they set. A tool-call
handler's ``context.interrupt()`` asks through LangGraph's ``interrupt()`` with this library's
deterministic id in its payload (see `_interrupts`), so a checkpointer keeps the paused run and
``Command(resume=...)`` (`resume_command`) resumes it, in this process or another. LangGraph
saves a new prompt on a paused thread, dropping the paused calls, before any middleware runs:
the bridge refuses it through the checkpointer (`guard_paused_threads`, `_paused_threads`), or,
without that guard, at its first model call, the prompt already saved (`_dropped_pauses`).

A model call no one but the agent watches (`_whole_call`: no callbacks on the run, no structured
output, no LangChain middleware inside the bridge) calls LangChain's handler from the chain's
terminal with the chat model itself, and handlers see the reply as one streamed chunk. Any other
call goes through the chain delta by delta
(`_streaming`, `_model_events`): LangChain calls a `RelayChatModel` around the model it would
call; the relay streams that model, the chain's terminal turns each chunk into this library's
events for Wrap handlers, and the deltas they let through are what LangChain streams and
aggregates into its reply. LangChain middleware registered inside the bridge sees the relay as
the request's model there.

What LangChain cannot carry is refused or stated: ``AgentStreamStage`` handlers are refused at
registration (LangChain has no hook around a whole agent pass); the agent runs through
``ainvoke``/``astream``: a synchronous ``invoke`` is refused with the fix (`SyncInvokeError`)
as soon as the model or tool call it reaches has handlers here.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphInterrupt
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt

from ...engine._chain import OpenedChain
from ...engine._registry import MiddlewareSource
from ...events import (
    ModelStopReason,
    ModelStreamEvent,
    TextDeltaEvent,
    ToolResultEvent,
    TypedEvent,
)
from ...exceptions import InterruptException, UnsupportedStageError
from ...host._cancel_signal import CancelSignal
from ...host._kept_by_identity import KeptByIdentity
from ...host._mixin import MiddlewareHostMixin
from ...host._model_call import ModelStagePoint
from ...host._tool_call import ToolStagePoint, copy_containers, make_tool_terminal
from ...interrupts import Interrupt, MiddlewareInterruptResult, execute_tool_interrupt_id
from ...models import Model
from ...stages._agent_stream import AgentStreamStage
from ...stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ...stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._converse import (
    HandlersRequest,
    converse_tool_choice,
    host_tool_choice,
    system_prompt_in,
    system_prompt_out,
    tool_use_of,
)
from ._dropped_pauses import DroppedPauses
from ._interrupts import interrupt_payload
from ._model_events import Started, relayed_call, response_of
from ._models import model_in, model_out
from ._paused_threads import PausedThreadGuard, PausedThreads
from ._streaming import Relay, RelayChatModel, calling_through, relay_model_of
from ._tool_answers import tool_answer_of, tool_call_of, tool_events
from ._tools import LangChainTool, tool_in
from ._whole_call import asked_whole, whole_call

__all__ = ["LangChainBridge", "SyncInvokeError", "UnsupportedStageError"]

TContext = TypeVar("TContext")
TResult = TypeVar("TResult")
TEvent = TypeVar("TEvent")
if TYPE_CHECKING:  # LangChain's request and response became generic in 1.2.x
    _ModelHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    _ToolHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]

# Where LangGraph keeps the run's runtime in a node's config (langgraph._internal._constants).
_RUNTIME_KEY = "__pregel_runtime"

# How many invocations' states the bridge keeps at once (invocations running concurrently on one
# agent); the oldest is let go first.
_INVOCATIONS_KEPT = 256

# How many chat models' relay models, and views, the bridge keeps (the agent's model,
# fallbacks, ...); the one used longest ago is let go first.
_MODELS_KEPT = 16


_SYNC_REFUSED = (
    "this agent's LangChainBridge runs {stage} middleware, which runs on LangChain's "
    "asynchronous path only: call `await agent.ainvoke(...)` or `agent.astream(...)` instead of "
    "`agent.invoke(...)`/`agent.stream(...)` (from synchronous code: "
    "`asyncio.run(agent.ainvoke(...))`)"
)


class SyncInvokeError(NotImplementedError):
    """A bridged agent run synchronously (``invoke``/``stream``) while handlers are registered."""


@dataclass
class _ToolCallContext(ExecuteToolContext):
    """The tool-call context on LangChain: ``interrupt()`` asks through LangGraph's own."""

    # Shared by every replace() of the context: the answers LangGraph gave on this call (asked
    # again by a retry, a gate gets the same answer) and the pauses it raised.
    _answers: dict[str, Any] = field(default_factory=lambda: {}, repr=False, compare=False)
    _pauses: dict[str, GraphInterrupt] = field(
        default_factory=lambda: {}, repr=False, compare=False
    )

    def interrupt(
        self, name: str, *, reason: Any = None, response: Any = None
    ) -> MiddlewareInterruptResult:
        interrupt_id = execute_tool_interrupt_id(self.tool_use["toolUseId"], name)
        return self._ledger.resolve(
            {},
            interrupt_id,
            name,
            reason,
            response,
            answer=lambda: self._ask(interrupt_id, name, reason, response),
        )

    def _ask(
        self, interrupt_id: str, name: str, reason: Any, response: Any
    ) -> MiddlewareInterruptResult:
        if interrupt_id in self._answers:
            return MiddlewareInterruptResult(self._answers[interrupt_id])
        if response is not None:  # answered in advance: nothing to ask
            return MiddlewareInterruptResult(response)
        try:
            answer = interrupt(interrupt_payload(interrupt_id, name, reason))
        except GraphInterrupt as paused:
            self._pauses[interrupt_id] = paused
            raise InterruptException(Interrupt(id=interrupt_id, name=name, reason=reason)) from None
        self._answers[interrupt_id] = answer
        return MiddlewareInterruptResult(answer)


class LangChainBridge(AgentMiddleware[Any, Any, Any], MiddlewareHostMixin):
    """This library's middleware as one LangChain ``AgentMiddleware``.

    Register middleware on the bridge (``use()``, ``add_middleware()``, or the constructor), then
    give the bridge to ``create_agent``; run the agent with ``ainvoke``/``astream``.

    Example:
        ```python
        from langchain.agents import create_agent
        from strands_middleware.bridges.langchain import LangChainBridge

        bridge = LangChainBridge(timing, ToolApproval(tools={"delete_file"}))
        agent = create_agent(model, tools=[delete_file], middleware=[bridge],
                             checkpointer=bridge.guard_paused_threads(checkpointer))
        result = await agent.ainvoke({"messages": [("user", "Delete the report")]}, config)
        ```

    Handlers' ``context.agent`` is the bridge: give each agent a bridge of its own, so that
    per-agent state (limits, budgets) is per agent.

    Raises:
        UnsupportedStageError: (from registration) a handler on ``AgentStreamStage``.
    """

    refused_stages = MappingProxyType(
        {
            AgentStreamStage: (
                "AgentStreamStage middleware ({names}) cannot run on LangChain: create_agent has "
                "no hook around a whole agent pass. Use InvokeModelStage or ExecuteToolStage "
                "handlers (or LangChain's own before_agent/after_agent hooks)."
            )
        }
    )

    def __init__(self, *middleware: MiddlewareSource) -> None:
        super().__init__()
        self._invocations: OrderedDict[int, tuple[object, dict[str, Any]]] = OrderedDict()
        self._relay_models = KeptByIdentity[RelayChatModel](_MODELS_KEPT)
        self._views = KeptByIdentity[Model](_MODELS_KEPT)
        self._lock = threading.Lock()
        self._paused_threads = PausedThreads()
        self._dropped_pauses = DroppedPauses()
        if middleware:
            self.use(*middleware)

    @property
    def name(self) -> str:
        """The name LangChain lists the middleware under."""
        return "strands_middleware"

    def _relay_model(self, inner: Any) -> RelayChatModel:
        """The relay chat model of ``inner``: one per chat model, kept by the bridge."""
        return self._relay_models.get(inner, lambda: relay_model_of(inner))

    def _view(self, host: Any) -> Model:
        """What handlers see of the chat model ``host`` (`model_in`): one per chat model, so
        ``context.model`` is the same object on every call to it (a handler may compare it, or
        hand it back to a later call)."""
        return self._views.get(host, lambda: model_in(host))

    def guard_paused_threads(
        self, checkpointer: BaseCheckpointSaver[Any]
    ) -> BaseCheckpointSaver[Any]:
        """``checkpointer``, refusing a new prompt on a thread paused on this bridge's interrupts.

        Give it to ``create_agent`` in place of the checkpointer (``checkpointer=
        bridge.guard_paused_threads(InMemorySaver())``). LangGraph takes a new prompt on a paused
        thread as a fresh start: it drops the paused tool calls and saves the prompt before any
        middleware runs. Through the guard, that save is refused, nothing else of the run is
        kept, and the bridge stops the run before its first model call: ``ainvoke`` raises
        `InterruptResponseFormatError` (an `InterruptResumeError`) naming the interrupts the
        thread is paused on, and the thread stays paused, answerable with `resume_command`.
        Every durability mode is covered. Everything else goes to ``checkpointer`` unchanged.

        Args:
            checkpointer: Any LangGraph checkpointer (``InMemorySaver``, the sqlite saver, ...).
        """
        return PausedThreadGuard(checkpointer, self._paused_threads)

    # ---- one dict per invocation -----------------------------------------------------------

    def _invocation_state(self, runtime: Any) -> dict[str, Any]:
        """The ``invocation_state`` of the run in progress: one dict per ``ainvoke``.

        LangGraph gives every run (a resume included) a run-control object of its own, which
        each node's ``runtime`` carries; the dict is kept by it. It starts with the entries of
        the run's context when that is a mapping (``ainvoke(..., context={"context_window":
        32_000})``), the way a strands caller gives values to a run.
        """
        run: object = getattr(runtime, "control", None) or runtime
        key = id(run)
        with self._lock:
            entry = self._invocations.get(key)
            if entry is not None and entry[0] is run:
                return entry[1]
            given: object = getattr(runtime, "context", None)
            state: dict[str, Any] = (
                dict(cast("Mapping[str, Any]", given)) if isinstance(given, Mapping) else {}
            )
            self._invocations[key] = (run, state)
            while len(self._invocations) > _INVOCATIONS_KEPT:
                self._invocations.popitem(last=False)
            return state

    # ---- the synchronous path ----------------------------------------------------------------

    def wrap_model_call(self, request: ModelRequest[Any], handler: Any) -> Any:
        """A synchronous ``invoke``/``stream``: refused with the fix while handlers are registered.

        The chain is asynchronous (its handlers are async generators), and LangChain's
        synchronous path gives it no event loop to run in; a stage without handlers passes
        the call on, so an agent whose bridge has nothing registered runs either way.

        Raises:
            SyncInvokeError: InvokeModelStage handlers are registered.
            InterruptResponseFormatError: The run began with a new prompt on a thread paused
                on this bridge's interrupts (see `guard_paused_threads`; `_dropped_pauses`).
        """
        self._refuse_a_prompt_on_a_paused_thread(request)
        self._dropped_pauses.check(request.runtime, request.messages)
        if not self.middleware_registry.has_handlers(InvokeModelStage):
            return handler(request)
        raise SyncInvokeError(_SYNC_REFUSED.format(stage="InvokeModelStage"))

    def wrap_tool_call(self, request: ToolCallRequest, handler: Any) -> Any:
        """A synchronous ``invoke``/``stream``: refused with the fix (see `wrap_model_call`).

        Raises:
            SyncInvokeError: ExecuteToolStage handlers are registered.
        """
        if not self.middleware_registry.has_handlers(ExecuteToolStage):
            return handler(request)
        raise SyncInvokeError(_SYNC_REFUSED.format(stage="ExecuteToolStage"))

    # ---- the model call ----------------------------------------------------------------------

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: _ModelHandler
    ) -> ModelResponse[Any] | AIMessage:
        """Run InvokeModelStage around LangChain's model call.

        Raises:
            InterruptResponseFormatError: The run began with a new prompt on a thread paused
                on this bridge's interrupts (see `guard_paused_threads`; `_dropped_pauses`).
        """
        self._refuse_a_prompt_on_a_paused_thread(request)
        if (dropped := self._dropped_pauses.acheck(request.runtime, request.messages)) is not None:
            await dropped
        return await self._model_call(request, handler)

    async def _model_call(
        self, request: ModelRequest[Any], handler: _ModelHandler
    ) -> ModelResponse[Any] | AIMessage:
        registry = self.middleware_registry
        if not registry.has_handlers(InvokeModelStage):
            return await handler(request)
        # The history and the tools are translated for handlers only when one reads them
        # (most never do): a field no handler read goes to LangChain as its own.
        handed = HandlersRequest(request.messages, request.tools)
        system_prompt = system_prompt_in(request.system_message)
        tool_choice = converse_tool_choice(request.tool_choice)
        shown_model = self._view(request.model)
        point = ModelStagePoint(
            registry,
            agent=self,
            messages=handed.messages,
            # Handlers get their own copy of a prompt of blocks: one edited in place is
            # compared with the prompt as it was.
            system_prompt=copy_containers(system_prompt)
            if isinstance(system_prompt, list)
            else system_prompt,
            tool_specs=handed.tool_specs,
            tool_choice=converse_tool_choice(request.tool_choice),
            invocation_state=self._invocation_state(request.runtime),
            model=shown_model,
            tracks_changes=False,  # each field is compared with its own translation below
        )

        def changes_of(ours: InvokeModelContext) -> dict[str, Any]:
            # What handlers changed of the request but the model, as LangChain's fields.
            changes: dict[str, Any] = {}
            if point.seen(ours, "messages"):
                sent = handed.messages_out(ours.messages)
                if sent is not request.messages:
                    changes["messages"] = sent
            system_message = system_prompt_out(
                ours.system_prompt, system_prompt, request.system_message
            )
            if system_message is not request.system_message:
                changes["system_message"] = system_message
            if point.seen(ours, "tool_specs"):
                tools = handed.tools_out(ours.tool_specs)
                if tools is not request.tools:
                    changes["tools"] = tools
            choice = host_tool_choice(ours.tool_choice, tool_choice, request.tool_choice)
            if choice is not request.tool_choice:
                changes["tool_choice"] = choice
            return changes

        if asked_whole(request, handler):

            def sent(ours: InvokeModelContext) -> ModelRequest[Any]:
                changes = changes_of(ours)
                model = model_out(ours.model, shown_model, request.model)
                if model is not request.model:
                    changes["model"] = model
                return request.override(**changes) if changes else request

            return await whole_call(point, handler, sent)

        produced: dict[int, tuple[ModelStopReason, ModelResponse[Any]]] = {}
        calls: list[tuple[list[ModelStopReason], asyncio.Future[ModelResponse[Any]]]] = []
        relays: list[Relay] = []

        def terminal(ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
            # The terminal's stream itself, not a generator around it: one hop fewer on every
            # event. LangChain's call starts when the stream is first read.
            return relayed_call(lambda: start(ours), produced)

        def start(ours: InvokeModelContext) -> Started:
            changes = changes_of(ours)
            relay = Relay()
            relays.append(relay)
            changes["model"] = self._relay_model(model_out(ours.model, shown_model, request.model))
            overridden = request.override(**changes)
            call = calling_through(relay, lambda: asyncio.ensure_future(handler(overridden)))
            call.add_done_callback(relay.call_done)
            stops: list[ModelStopReason] = []
            calls.append((stops, call))
            return relay, call, stops

        result = await _model_result(point.open(terminal), relays, calls, produced)
        if result is None:
            raise point.missing()
        return response_of(point.finished(result), produced)

    def _refuse_a_prompt_on_a_paused_thread(self, request: ModelRequest[Any]) -> None:
        # Known only through a checkpointer of guard_paused_threads: it read the thread paused.
        info: Any = getattr(request.runtime, "execution_info", None)  # None outside a graph
        thread_id: Any = getattr(info, "thread_id", None)
        self._paused_threads.check_model_call(
            None if thread_id is None else str(thread_id), request.messages
        )

    # ---- the tool call -----------------------------------------------------------------------

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: _ToolHandler
    ) -> ToolMessage | Command[Any]:
        """Run ExecuteToolStage around LangChain's tool call."""
        registry = self.middleware_registry
        if not registry.has_handlers(ExecuteToolStage):
            return await handler(request)
        # LangGraph's ToolRuntime is generic in a state type ToolCallRequest leaves open.
        runtime: Any = request.runtime  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        config: Any = runtime.config
        # LangGraph's interrupt() reads the run's config from a context variable, which
        # LangGraph cannot set for async nodes before Python 3.11: the tool's runtime has it.
        token = None if var_child_runnable_config.get() else var_child_runnable_config.set(config)
        try:
            return await self._tool_call(request, handler, config)
        finally:
            if token is not None:
                var_child_runnable_config.reset(token)

    async def _tool_call(
        self, request: ToolCallRequest, handler: _ToolHandler, config: Any
    ) -> ToolMessage | Command[Any]:
        registry = self.middleware_registry
        call = request.tool_call
        tool = tool_in(request.tool)
        cancel_signal = CancelSignal()
        point = ToolStagePoint(
            registry,
            agent=self,
            tool=tool,
            tool_use=tool_use_of(call),
            invocation_state=self._invocation_state(config["configurable"].get(_RUNTIME_KEY)),
            cancel_signal=cancel_signal,
            context_type=_ToolCallContext,
        )
        context = cast(_ToolCallContext, point.context)
        pauses = context._pauses  # pyright: ignore[reportPrivateUsage]
        produced: dict[int, tuple[ToolResultEvent, ToolMessage | Command[Any]]] = {}
        library_terminal = make_tool_terminal(cancel_signal)

        async def terminal(ours: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
            if ours.tool is not None and not isinstance(ours.tool, (LangChainTool, BaseTool)):
                # A tool of this library put in by a handler: it runs as on every host.
                async for event in library_terminal(ours):
                    yield event
                return
            tool_use_id = ours.tool_use["toolUseId"]
            if ours.tool is None:  # the spec's answer for a tool the agent does not have
                yield ToolResultEvent.error(tool_use_id, f"Unknown tool: {ours.tool_use['name']}")
                return
            changed = point.changed(ours)
            changes: dict[str, Any] = {}
            if "tool_use" in changed:
                changes["tool_call"] = tool_call_of(ours.tool_use)
            if "tool" in changed:
                changes["tool"] = getattr(ours.tool, "host", ours.tool)
            sent = request.override(**changes) if changes else request
            async for event in tool_events(handler, sent, tool_use_id, pauses, produced):
                yield event

        try:
            result = await point.result(terminal)
        except InterruptException as paused:
            self._dropped_pauses.note_pause(config)
            original = pauses.get(paused.interrupt.id)
            if original is not None:
                raise original from None
            # Raised by a handler or a tool of this library: LangGraph pauses on it the same way.
            interrupt(
                interrupt_payload(
                    paused.interrupt.id, paused.interrupt.name, paused.interrupt.reason
                )
            )
            raise RuntimeError(
                f"interrupt {paused.interrupt.id!r} was answered, but the code that raised it "
                "asked without context.interrupt(), so the answer cannot reach it"
            ) from paused
        return tool_answer_of(result, produced, call["name"])


async def _model_result(
    chain: OpenedChain[TypedEvent],
    relays: list[Relay],
    calls: list[tuple[list[ModelStopReason], asyncio.Future[ModelResponse[Any]]]],
    produced: dict[int, tuple[ModelStopReason, ModelResponse[Any]]],
) -> ModelStopReason | None:
    """Run the model chain to its result, letting its deltas out to the relay streaming them.

    Every LangChain call the terminal started is awaited (cancelled if the chain failed, but for
    a call whose model failed, which ends with the model's failure); the reply of each is noted
    in ``produced`` against the result its stream gave.
    """
    result: ModelStopReason | None = None
    settled = False
    chunk_class, text_class = ModelStreamEvent, TextDeltaEvent
    try:
        async with chain as stream:
            async for event in stream:
                # A raw chunk has nothing to let out (the delta event after it has), and it is
                # half of what streams: one test of its class, not the three of `let_out`.
                kind = event.__class__
                if kind is chunk_class:
                    continue
                if kind is text_class and relays:
                    # Most of the rest: `let_out`'s first case, inline (``text`` is its payload).
                    relay = relays[-1]
                    relay.out.append(event["data"])
                    if relay.waiting:
                        relay.wake_relay()
                    continue
                if isinstance(event, ModelStopReason):
                    result = event
                if relays:
                    relays[-1].let_out(event)
        settled = True
    finally:
        for relay in relays:
            relay.settle()
        if not settled:
            # (A relay is noted before its call starts: one whose call never started is last.)
            for relay, (_, call) in zip(relays, calls, strict=False):
                # A call whose model failed under the chain ends with that failure, raised in
                # LangChain's call as without the bridge (its callbacks hear of it), unless it
                # asks the model again (see `Relay.abandoned`); the rest are cancelled.
                if relay.failure is None:
                    call.cancel()
                else:
                    relay.abandoned = call
        await _ended([call for _, call in calls])
    for stops, call in calls:
        failure = None if call.cancelled() else call.exception()
        if failure is None:
            for stop in stops:
                produced[id(stop)] = (stop, call.result())
        elif any(stop is result for stop in stops):
            raise failure  # LangChain failed on the reply the chain returned
    return result


async def _ended(calls: list[asyncio.Future[Any]]) -> None:
    """Wait until each of LangChain's ``calls`` has ended, however it ended.

    A cancellation of this task while it waits is passed to the call it waits on, and the rest
    are cancelled too; it is raised here once they have all ended, even where a call swallowed
    it (LangChain middleware inside the bridge may answer instead), so the run stays cancelled.
    On Python 3.11+ each call is awaited itself, the task's count of cancellation requests
    telling whether one came: one event-loop turn a model call fewer than ``asyncio.gather``,
    which Python 3.10, with no such count, waits through.
    """
    if sys.version_info < (3, 11):
        await asyncio.gather(*calls, return_exceptions=True)
        return
    task = asyncio.current_task()
    assert task is not None, "the bridge's model call runs in a task"
    requests = task.cancelling()
    for at, call in enumerate(calls):
        try:  # noqa: SIM105 (contextlib.suppress would add a context manager a call)
            await call
        except (Exception, asyncio.CancelledError):
            pass  # how the call ended is read from it by the caller
        if task.cancelling() > requests:
            rest = calls[at + 1 :]
            for each in rest:
                each.cancel()
            await asyncio.gather(*rest, return_exceptions=True)
            raise asyncio.CancelledError
