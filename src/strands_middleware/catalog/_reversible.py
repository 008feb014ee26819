"""The handlers of a reversible `Redact`: pseudonyms to the model, values back where they leave.

* model calls: an Input handler masks the conversation the model is sent with the run's
  pseudonyms (`Pseudonyms`); a Wrap handler restores the pseudonyms in the streamed text deltas
  (a pseudonym split across deltas is held back until it is whole), and an Output handler
  restores them in the reply that enters the history and reaches the user.
* tool calls: one Wrap handler gives the tool its arguments with the values restored (masked
  instead, with ``tool_input=True``), and masks its result with the run's pseudonyms.

The reply and the tool call are restored by handlers that run *inside* anything registered
before `Redact` on the model's result (Output runs outside every Wrap) and on the tool call (a
Wrap registered first is outermost): `Tracing` registered before it records what the model sent
and received, pseudonyms and all.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import Any

from ..engine._handlers import MiddlewareNext
from ..engine._phases import output_applies_when
from ..engine._result import MiddlewareResult
from ..engine._stage import Middleware
from ..events import ModelStopReason, ToolResultEvent, TypedEvent
from ..stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._pseudonyms import PSEUDONYM, Pseudonyms, pseudonym_label
from ._redacted_stream import RedactedStream
from ._scoped import ScopedState

__all__ = ["reversible_middleware"]

_REPLIES = 256
"""How many replies are held between the Wrap and the Output handler at most."""


def reversible_middleware(
    runs: ScopedState[Pseudonyms],
    names: Sequence[str],
    *,
    model_output: bool,
    tool_input: bool,
    tool_output: bool,
) -> list[Middleware[Any, Any, Any]]:
    """The handlers of a reversible `Redact` whose patterns are ``names``; ``runs`` holds each
    run's pseudonyms."""
    replies: dict[int, tuple[ModelStopReason, Pseudonyms]] = {}
    # The longest pseudonym the stream must see whole before it can be restored.
    window = max(len(f"<{pseudonym_label(name)}_>") for name in names) + 12

    def mask_model_input(context: InvokeModelContext) -> InvokeModelContext:
        run = runs.get(context.agent, context.invocation_state)
        messages = run.masking.messages(context.messages)
        return context if messages is context.messages else context.replace(messages=messages)

    def has_pseudonyms(context: InvokeModelContext) -> bool:
        return bool(runs.get(context.agent, context.invocation_state).values)

    def restore_model_stream(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        run = runs.get(context.agent, context.invocation_state)
        if not run.values:
            # No pseudonym handed out in this run yet, and none can be while the model answers
            # (only masking the request and the tool calls hands them out): nothing in the reply
            # can need restoring, so it streams through with no layer of this handler's own
            # (the engine runs the generator returned here in its place).
            return next_fn(context)
        return _restored_model_stream(run, context, next_fn, window, replies)

    def restore_model_output(
        result: MiddlewareResult[ModelStopReason],
    ) -> MiddlewareResult[ModelStopReason]:
        stop = result.value
        # An Output handler is not handed the call's context: the run is the one the Wrap
        # handler saw the reply in (a reply it did not see, a handler's own, stays as it is).
        seen = replies.pop(id(stop), None)
        if seen is None or seen[0] is not stop:
            return result
        run = seen[1]
        message = run.restoring.message(stop.message, tool_uses=False)
        if message is stop.message:
            return result
        return result.replace(
            value=ModelStopReason(stop.stop_reason, message, stop.usage, stop.metrics)
        )

    async def tool_call(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        # A Wrap handler, so that what is registered before it (Tracing) sees the arguments
        # as the model wrote them and the result as the model will read it.
        run = runs.get(context.agent, context.invocation_state)
        tool_use = context.tool_use
        rewrite = run.masking if tool_input else run.restoring
        arguments = rewrite.value(tool_use["input"])
        if arguments is not tool_use["input"]:
            context = context.replace(tool_use={**tool_use, "input": arguments})
        async for event in next_fn(context):
            if tool_output and isinstance(event, ToolResultEvent):
                masked = run.masking.result(event.tool_result)
                if masked is not event.tool_result:
                    yield ToolResultEvent(masked, exception=event.exception)
                    continue
            yield event

    mask_model_input.__qualname__ = "Redact[invokeModel.Input]"
    items: list[Middleware[Any, Any, Any]] = [InvokeModelStage.input(mask_model_input)]
    if model_output:
        restore_model_stream.__qualname__ = "Redact[invokeModel.Wrap]"
        items.append(InvokeModelStage.wrap(restore_model_stream))
        restore_model_output.__qualname__ = "Redact[invokeModel.Output]"
        # It restores only replies the Wrap handler saw, which it sees only in a run that has
        # handed out a pseudonym: other calls run without the Output handlers' driver.
        output_applies_when(restore_model_output, has_pseudonyms)
        items.append(InvokeModelStage.output(restore_model_output))
    tool_call.__qualname__ = "Redact[executeTool.Wrap]"
    items.append(ExecuteToolStage.wrap(tool_call))
    return items


async def _restored_model_stream(
    run: Pseudonyms,
    context: InvokeModelContext,
    next_fn: MiddlewareNext[InvokeModelContext, TypedEvent],
    window: int,
    replies: dict[int, tuple[ModelStopReason, Pseudonyms]],
) -> AsyncGenerator[TypedEvent, None]:
    """The reply's events with this run's pseudonyms put back in its text (``replies``: the
    replies seen, for the Output handler)."""
    stream = RedactedStream(
        [(PSEUDONYM, run.restore_match, _may_hold_pseudonym)],
        mask_message=lambda message: run.restoring.message(message, tool_uses=False),
        window=window,
    )
    async for event in next_fn(context):
        if stream.unchanged(event, "<"):
            # Nearly every delta: no pseudonym can begin in it and none is waiting to end,
            # so it goes out at once, unchanged, without the stream's bookkeeping.
            yield event
            continue
        # The result is restored by the Output handler, outside every Wrap handler: one
        # registered before this one (Tracing) records the reply as the model wrote it.
        if isinstance(event, ModelStopReason):
            for restored in stream.flush():
                yield restored
            replies[id(event)] = (event, run)
            while len(replies) > _REPLIES:  # replies no Output handler saw (a failure)
                del replies[next(iter(replies))]
            yield event
            continue
        for restored in stream.feed(event):
            yield restored
    for restored in stream.flush():
        yield restored


def _may_hold_pseudonym(text: str) -> bool:
    return "<" in text
