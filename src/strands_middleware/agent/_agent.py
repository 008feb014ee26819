"""`Agent`: a compact, complete agent loop built on the adapter layer, and its lifecycle hooks.

It exists so the whole middleware system can be used and tested with no other framework and no
network: give it any model with the Strands model shape (``strands_middleware.testing.
ScriptedModel`` plays back scripted turns) and tools with the Strands tool shape (or plain
functions decorated with ``@tool``). Every stage point goes through `strands_middleware.host`,
so the rules the stages promise hold here exactly as they do on other hosts.

The loop, per invocation: ``BeforeInvocationEvent``; the input is appended to history; then one
pass through AgentStreamStage whose terminal alternates model calls (InvokeModelStage) and tool
rounds (one ExecuteToolStage call per tool use, run concurrently unless ``sequential_tools``)
until the model stops asking for tools, a tool call pauses for a human, or the run is cancelled;
``AfterInvocationEvent`` last, however the run ended.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar, cast

from ..content import (
    ContentBlock,
    Message,
    Messages,
    SystemPrompt,
    ToolChoice,
    ToolResult,
    ToolUse,
    Usage,
)
from ..engine._registry import MiddlewareSource
from ..events import (
    EventLoopStopEvent,
    InitEventLoopEvent,
    ModelStopReason,
    ToolInterruptEvent,
    ToolResultEvent,
    TypedEvent,
)
from ..host import project_input_tokens
from ..host._agent_pass import run_agent_pass
from ..host._interrupt_state import InterruptState, PendingToolExecution
from ..host._mixin import MiddlewareHostMixin
from ..host._model_call import estimate_on_read, model_call_context, run_model_call
from ..host._tool_call import run_tool_call, tool_call_context
from ..interrupts import Interrupt
from ..models import Model
from ..stages._agent_stream import AgentStreamContext
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ..tools import AgentTool
from ._prompt import (
    empty_turn,
    input_messages,
    looks_like_resume,
    middleware_sources,
    result_of,
    stop_event,
)
from ._result import AgentResult
from ._streams import closing, merged

__all__ = [
    "AfterInvocationEvent",
    "AfterModelCallEvent",
    "AfterToolCallEvent",
    "Agent",
    "BeforeInvocationEvent",
    "BeforeModelCallEvent",
    "BeforeToolCallEvent",
    "HookEvent",
    "HookRegistry",
    "MessageAddedEvent",
    "THookEvent",
]

# ---- lifecycle hooks ------------------------------------------------------------------------
#
# Hooks observe the loop from outside the middleware chains: they fire once per logical step, so a
# middleware that calls ``next_fn`` three times is still one Before/After pair. The one exception
# runs the other way: an `AfterToolCallEvent` that sets ``retry`` re-runs the whole tool chain, so
# stateful tool middleware runs once per attempt.


@dataclass
class HookEvent:
    """Base of every hook event.

    Attributes:
        agent: The agent whose loop fired the event.
    """

    agent: Agent


@dataclass
class BeforeInvocationEvent(HookEvent):
    """An invocation starts (before its input is appended to history)."""


@dataclass
class AfterInvocationEvent(HookEvent):
    """An invocation ended, however it ended; ``result`` is None when it failed."""

    result: AgentResult | None


@dataclass
class MessageAddedEvent(HookEvent):
    """A message was appended to the agent's history."""

    message: Message


@dataclass
class BeforeModelCallEvent(HookEvent):
    """A model call is about to run (once per call, whatever middleware retries inside it)."""


@dataclass
class AfterModelCallEvent(HookEvent):
    """A model call ended with ``stop_response`` or ``exception``."""

    stop_response: ModelStopReason | None = None
    exception: BaseException | None = None


@dataclass
class BeforeToolCallEvent(HookEvent):
    """A tool call is about to run; set ``cancel_tool`` (True or a message) to skip it.

    ``tool`` is None when the model asked for a tool the agent does not have; replacing it
    changes the tool the call runs.
    """

    tool_use: ToolUse
    tool: AgentTool | None
    invocation_state: dict[str, Any]
    cancel_tool: bool | str = False


@dataclass
class AfterToolCallEvent(HookEvent):
    """A tool call ended; set ``retry = True`` to run the tool chain again.

    ``result`` may be replaced to change what the model reads.
    """

    tool_use: ToolUse
    tool: AgentTool | None
    invocation_state: dict[str, Any]
    result: ToolResult
    exception: BaseException | None = None
    retry: bool = False


THookEvent = TypeVar("THookEvent", bound=HookEvent)
_After = (AfterInvocationEvent, AfterModelCallEvent, AfterToolCallEvent)


class HookRegistry:
    """Callbacks by event type; "after" events run their callbacks in reverse order.

    Running "after" callbacks last-registered-first pairs them with their "before" callbacks
    like nested scopes, the same way the middleware chain unwinds.
    """

    def __init__(self) -> None:
        # Each list holds callbacks for exactly its key's event type (``add`` pairs them), which
        # the dict's type cannot say; ``fire`` looks them up by ``type(event)``.
        self._callbacks: dict[type[HookEvent], list[Callable[[Any], object]]] = {}

    def add(self, event_type: type[THookEvent], callback: Callable[[THookEvent], object]) -> None:
        """Call ``callback`` with every event of ``event_type``.

        The callback may be a plain function or a coroutine function (its awaitable is awaited
        before the loop goes on); what it returns is otherwise ignored.

        Raises:
            TypeError: ``event_type`` is not a hook event class, or ``callback`` is not callable.
        """
        candidate = cast(object, event_type)
        if not (isinstance(candidate, type) and issubclass(candidate, HookEvent)):
            raise TypeError(f"add_hook() takes a hook event class, got {event_type!r}")
        if not callable(callback):
            raise TypeError(f"add_hook() takes a callable, got {callback!r}")
        self._callbacks.setdefault(event_type, []).append(callback)

    def has(self, event_type: type[HookEvent]) -> bool:
        """Whether any callback is registered for ``event_type`` (so firing it does something)."""
        return event_type in self._callbacks

    async def fire(self, event: THookEvent) -> THookEvent:
        """Run the callbacks for ``event`` and return it (callbacks may have changed it)."""
        callbacks = self._callbacks.get(type(event), [])
        if isinstance(event, _After):
            callbacks = list(reversed(callbacks))
        for callback in callbacks:
            outcome = callback(event)
            if inspect.isawaitable(outcome):
                await outcome
        return event


# ---- the agent ------------------------------------------------------------------------------

Prompt = str | Sequence[Mapping[str, Any]] | None
"""A user prompt (text or content blocks), a list of interrupt responses, or None."""


class _ToolOutcome:
    """What one tool use of a round ended with: a result or an interrupt."""

    __slots__ = ("interrupts", "result")

    def __init__(self) -> None:
        self.result: ToolResult | None = None
        self.interrupts: list[Interrupt] = []


class Agent(MiddlewareHostMixin):
    """The reference agent loop.

    Example:
        ```python
        agent = Agent(model=ScriptedModel([text_turn("hi")]), tools=[add], middleware=[timing])
        result = agent("Say hi")
        ```

    Args:
        model: Anything with the Strands model shape.
        tools: Tools with the Strands tool shape (``@tool`` functions included).
        system_prompt: A string or a list of system content blocks.
        middleware: A `Middleware`, a catalog item, or a list of either, registered in order.
        messages: Initial history (copied).
        tool_choice: Passed to every model call.
        sequential_tools: Run the tool uses of one turn one after another instead of together.
        interrupt_state: State to start from, e.g. ``InterruptState.from_dict(saved)`` together
            with the saved ``messages``, to resume a paused run in another process.
    """

    def __init__(
        self,
        *,
        model: Model,
        tools: Iterable[AgentTool] = (),
        system_prompt: SystemPrompt = None,
        middleware: MiddlewareSource | Iterable[MiddlewareSource] = (),
        messages: Messages | None = None,
        tool_choice: ToolChoice | None = None,
        sequential_tools: bool = False,
        interrupt_state: InterruptState | None = None,
    ) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self.tool_choice = tool_choice
        self.sequential_tools = sequential_tools
        self.messages: Messages = list(messages or [])
        self.tools: dict[str, AgentTool] = {}
        for item in tools:
            if item.tool_name in self.tools:
                raise ValueError(
                    f"two tools are named {item.tool_name!r}; tool names must be unique"
                )
            self.tools[item.tool_name] = item
        self.hooks = HookRegistry()
        self.interrupt_state = interrupt_state if interrupt_state is not None else InterruptState()
        self._cancel_signal = threading.Event()
        # The last model call's message and usage: the baseline of the next call's projection.
        self._last_call: tuple[Message, Usage] | None = None
        self.use(*middleware_sources(middleware))

    # ---- public API ----------------------------------------------------------------------------

    def add_hook(
        self, event_type: type[THookEvent], callback: Callable[[THookEvent], object]
    ) -> None:
        """Call ``callback`` (sync or async) with every hook event of ``event_type``.

        Example:
            ```python
            agent.add_hook(AfterToolCallEvent, lambda event: print(event.result["status"]))
            ```

        Raises:
            TypeError: ``event_type`` is not a hook event class, or ``callback`` is not callable.
        """
        self.hooks.add(event_type, callback)

    def cancel(self) -> None:
        """Stop the running invocation at its next step; it ends with ``"cancelled"``."""
        self._cancel_signal.set()

    def __call__(self, prompt: Prompt = None, **invocation_state: Any) -> AgentResult:
        """Run an invocation to its end from synchronous code."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass  # no loop running: the normal case
        else:
            raise RuntimeError(
                "agent(...) runs its own event loop and cannot be called from async code; "
                "use `await agent.invoke_async(...)` there"
            )
        # Outside the except block, so a failure in the run is not reported as happening
        # "during handling" of the RuntimeError above.
        return asyncio.run(self.invoke_async(prompt, **invocation_state))

    async def invoke_async(self, prompt: Prompt = None, **invocation_state: Any) -> AgentResult:
        """Run an invocation to its end and return its result."""
        result: AgentResult | None = None
        async for event in self.stream_async(prompt, **invocation_state):
            if isinstance(event, EventLoopStopEvent):
                result = result_of(event)
        assert result is not None  # run_agent_pass raises when there is no stop event
        return result

    async def stream_async(
        self, prompt: Prompt = None, **invocation_state: Any
    ) -> AsyncGenerator[TypedEvent, None]:
        """Run an invocation, yielding every event; the last `EventLoopStopEvent` is the result.

        To resume a paused run, pass a list of ``{"interruptResponse": {"interruptId": ...,
        "response": ...}}`` blocks, one for each interrupt the result listed. A malformed or
        unknown response, or an answer the middleware that asked does not accept (``"yes"`` to
        a `ToolApproval`), raises before anything runs and leaves the agent as it was, still
        paused and still answerable.
        """
        new_messages: Messages = []
        if self.interrupt_state.activated or looks_like_resume(prompt):
            # Validates every response before changing anything; refuses a fresh prompt while
            # an interrupt is owed, and a resume when nothing is.
            self.interrupt_state.resume(prompt, self.answer_problem)
        else:
            new_messages = self._continue_history(input_messages(prompt))
        self._cancel_signal.clear()
        state: dict[str, Any] = dict(invocation_state)
        await self.hooks.fire(BeforeInvocationEvent(agent=self))
        result: AgentResult | None = None
        try:
            # Outside the agent-stream chain, as strands yields it: no stage handler sees it.
            yield InitEventLoopEvent()
            async with closing(
                run_agent_pass(
                    self.middleware_registry,
                    agent=self,
                    messages=new_messages,
                    history=self.messages,
                    invocation_state=state,
                    interrupt_state=self.interrupt_state,
                    terminal=self._run_loop,
                    on_message_added=self._message_added,
                )
            ) as events:
                async for event in events:
                    if isinstance(event, EventLoopStopEvent):
                        result = result_of(event)
                    yield event
        finally:
            await self.hooks.fire(AfterInvocationEvent(agent=self, result=result))

    def _continue_history(self, new_messages: Messages) -> Messages:
        """Keep the history a valid conversation after a run that did not finish.

        A run that raised, was cancelled or was abandoned can leave the history ending in an
        assistant turn whose tool uses never got results, or in a user turn the model never
        answered. Sending either as it is would break the conversation (every ``toolUse`` needs
        its ``toolResult``; roles must alternate), and dropping the leftover would lose a message.
        So the missing results are supplied as errors the model can read, and a trailing user
        turn is taken out of the history and merged with this invocation's input into one user
        message, which the pass then appends (and announces) as usual.
        """
        if not self.messages or self.interrupt_state.pending_tool_execution is not None:
            return new_messages
        last = self.messages[-1]
        blocks: list[ContentBlock] = []
        if last["role"] == "assistant":
            answered: set[str] = set()
            for use in (b["toolUse"] for b in last["content"] if "toolUse" in b):
                if use["toolUseId"] not in answered:
                    answered.add(use["toolUseId"])
                    blocks.append(
                        ContentBlock(
                            toolResult=ToolResultEvent.error(
                                use["toolUseId"],
                                "Tool call did not complete: the invocation that made it ended "
                                "before the tool ran.",
                            ).tool_result
                        )
                    )
            if not blocks:
                return new_messages
        else:
            if not new_messages:
                return new_messages  # nothing to add: the model answers the user turn as it is
            blocks.extend(self.messages.pop()["content"])
        for message in new_messages:
            blocks.extend(message["content"])
        return [Message(role="user", content=blocks)]

    # ---- the loop ------------------------------------------------------------------------------

    def _message_added(self, message: Message) -> Awaitable[object] | None:
        # None when nothing listens: the pass then appends its input with no await, so its
        # terminal's stream is handed on with no generator around it.
        if not self.hooks.has(MessageAddedEvent):
            return None
        return self.hooks.fire(MessageAddedEvent(agent=self, message=message))

    async def _append(self, message: Message) -> None:
        self.messages.append(message)
        await self.hooks.fire(MessageAddedEvent(agent=self, message=message))

    async def _run_loop(self, context: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
        usage = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        latency = 0
        state = context.invocation_state
        while True:
            pending = self.interrupt_state.pending_tool_execution
            if pending is not None:
                message = pending.assistant_message
                completed = list(pending.completed_tool_results)
            else:
                if self._cancel_signal.is_set():
                    yield stop_event("cancelled", empty_turn(), usage, latency)
                    return
                stop: ModelStopReason | None = None
                await self.hooks.fire(BeforeModelCallEvent(agent=self))
                tool_specs = [tool.tool_spec for tool in self.tools.values()]
                model_context = model_call_context(
                    self,
                    messages=self.messages,
                    system_prompt=self.system_prompt,
                    tool_specs=tool_specs,
                    tool_choice=self.tool_choice,
                    invocation_state=state,
                    model=self.model,
                )
                self._project_on_read(model_context)
                try:
                    async with closing(
                        run_model_call(self.middleware_registry, model_context)
                    ) as stream:
                        async for event in stream:
                            if isinstance(event, ModelStopReason):
                                stop = event
                            else:
                                yield event
                except BaseException as exc:
                    await self.hooks.fire(AfterModelCallEvent(agent=self, exception=exc))
                    raise
                assert stop is not None
                await self.hooks.fire(AfterModelCallEvent(agent=self, stop_response=stop))
                usage["inputTokens"] += stop.usage.get("inputTokens", 0)
                usage["outputTokens"] += stop.usage.get("outputTokens", 0)
                usage["totalTokens"] += stop.usage.get("totalTokens", 0)
                latency += int(stop.metrics.get("latencyMs", 0))
                message = stop.message
                await self._append(message)
                self._last_call = (message, stop.usage)
                if stop.stop_reason != "tool_use":
                    yield stop_event(stop.stop_reason, message, usage, latency)
                    return
                completed = []
            paused: list[bool] = []
            async for event in self._tool_round(message, completed, state, paused):
                yield event
            if paused:
                owed = list(self.interrupt_state.owed)
                yield stop_event("interrupt", message, usage, latency, owed)
                return
            if self._cancel_signal.is_set():
                yield stop_event("cancelled", message, usage, latency)
                return

    def _project_on_read(self, context: InvokeModelContext) -> None:
        """Give the model call its projected input tokens, made when a handler first reads them
        (as on every host), of the request the context holds then; None when no handler could
        read them."""
        if not self.middleware_registry.has_handlers(InvokeModelStage):
            return  # only the terminal reads the context: the estimate would go unread
        estimate_on_read(context, partial(project_input_tokens, last_call=self._last_call))

    async def _tool_round(
        self,
        message: Message,
        completed: list[ToolResult],
        state: dict[str, Any],
        paused: list[bool],
    ) -> AsyncGenerator[TypedEvent, None]:
        """Run the tool uses of ``message``; append their results, or pause the round.

        ``paused`` gets an entry when a tool call interrupted and the round is held for a resume.
        """
        uses = [block["toolUse"] for block in message["content"] if "toolUse" in block]
        done = {result["toolUseId"]: result for result in completed}
        todo = [use for use in uses if use["toolUseId"] not in done]
        outcomes = {use["toolUseId"]: _ToolOutcome() for use in todo}
        if self._cancel_signal.is_set():
            for use in todo:
                outcomes[use["toolUseId"]].result = ToolResultEvent.error(
                    use["toolUseId"], "Tool call cancelled: the agent was cancelled."
                ).tool_result
        else:
            streams = [self._one_tool(use, state, outcomes[use["toolUseId"]]) for use in todo]
            async for event in merged(streams, sequential=self.sequential_tools):
                yield event
        results = dict(done)
        for tool_use_id, outcome in outcomes.items():
            if outcome.result is not None:
                results[tool_use_id] = outcome.result
        interrupted = any(outcome.interrupts for outcome in outcomes.values())
        ordered = [results[use["toolUseId"]] for use in uses if use["toolUseId"] in results]
        if interrupted:
            self.interrupt_state.pending_tool_execution = PendingToolExecution(
                assistant_message=message, completed_tool_results=ordered
            )
            self.interrupt_state.activate()
            paused.append(True)
            return
        if self._cancel_signal.is_set() and len(ordered) < len(uses):
            # Tools of a resumed round that never ran keep the pause for a later resume.
            self.interrupt_state.set_pending_tool_results(ordered)
            return
        self.interrupt_state.end_tool_cycle()
        await self._append(
            Message(role="user", content=[ContentBlock(toolResult=result) for result in ordered])
        )

    async def _one_tool(
        self, tool_use: ToolUse, state: dict[str, Any], outcome: _ToolOutcome
    ) -> AsyncGenerator[TypedEvent, None]:
        tool = self.tools.get(tool_use["name"])
        before = await self.hooks.fire(
            BeforeToolCallEvent(agent=self, tool_use=tool_use, tool=tool, invocation_state=state)
        )
        if before.cancel_tool:
            text = (
                before.cancel_tool
                if isinstance(before.cancel_tool, str)
                else "Tool call cancelled."
            )
            outcome.result = ToolResultEvent.error(tool_use["toolUseId"], text).tool_result
            return
        while True:
            result_event: ToolResultEvent | None = None
            context = tool_call_context(
                self,
                tool=before.tool,
                tool_use=tool_use,
                invocation_state=state,
                cancel_signal=self._cancel_signal,
                interrupts=self.interrupt_state.interrupts,
            )
            # A failing tool middleware already ends the stream with a logged error result.
            async with closing(
                run_tool_call(
                    self.middleware_registry, context, self.interrupt_state, self._cancel_signal
                )
            ) as stream:
                async for event in stream:
                    if isinstance(event, ToolInterruptEvent):
                        outcome.interrupts = list(event.interrupts)
                    elif isinstance(event, ToolResultEvent):
                        result_event = event
                    yield event
            if outcome.interrupts:
                return
            assert result_event is not None
            after = await self.hooks.fire(
                AfterToolCallEvent(
                    agent=self,
                    tool_use=tool_use,
                    tool=before.tool,
                    invocation_state=state,
                    result=result_event.tool_result,
                    exception=result_event.exception,
                )
            )
            if after.retry:
                continue
            outcome.result = after.result
            return
