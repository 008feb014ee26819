"""`run_handler`: run one `Middleware` against a context and a scripted inner stream.

The unit test of a handler of your own, with no agent and no model: the handler runs through a
`MiddlewareRegistry` exactly as a host runs it (Input, Wrap or Output alike, with the engine's
checks), around an inner stage that records the context it is given and streams ``inner``.

Example:
    ```python
    from strands_middleware import ExecuteToolContext, ExecuteToolStage, ToolResultEvent
    from strands_middleware.testing import run_handler, tool_context


    @ExecuteToolStage.input
    def clamp(context: ExecuteToolContext) -> ExecuteToolContext:
        return context.replace(tool_use={**context.tool_use, "input": {"limit": 10}})


    hits = ToolResultEvent({"toolUseId": "tooluse_test", "status": "success",
                            "content": [{"text": "3 hits"}]})
    run = run_handler(clamp, tool_context("search", {"limit": 500}), inner=[hits])
    assert run.calls[0].tool_use["input"] == {"limit": 10}  # what the tool was given
    assert run.result is not None and run.result.tool_result["status"] == "success"
    ```
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Iterable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from ..content import Message
from ..engine._registry import MiddlewareRegistry
from ..engine._stage import Middleware
from ..events import ModelStopReason

__all__ = ["HandlerRun", "run_handler", "run_handler_async"]

TContext = TypeVar("TContext")
TResult = TypeVar("TResult")
TEvent = TypeVar("TEvent")

Inner = Message | Iterable[Any] | Callable[[Any], Iterable[Any]]
"""What the inner stage streams: events (exceptions among them are raised), a model reply, or a
function of the context returning either."""


@dataclass
class HandlerRun(Generic[TContext, TResult, TEvent]):
    """What one run of a handler did.

    Attributes:
        events: Every event the stage yielded to its caller, in order (the result included).
        calls: The context each call of the inner stage received, in order: one per
            ``next_fn`` call (none when the handler answered by itself, several for a retry).
        result_type: The stage's result event class.
    """

    events: list[TEvent] = field(default_factory=lambda: [])
    calls: list[TContext] = field(default_factory=lambda: [])
    result_type: type[Any] = object

    @property
    def result(self) -> TResult | None:
        """The stage's result: the last event of its result type, or None when there is none."""
        for event in reversed(self.events):
            if isinstance(event, self.result_type):
                return cast(TResult, event)
        return None


async def run_handler_async(
    middleware: Middleware[TContext, TResult, TEvent],
    context: TContext,
    *,
    inner: Inner = (),
) -> HandlerRun[TContext, TResult, TEvent]:
    """`run_handler` for async tests (``pytest-asyncio``, ``anyio``): the same, awaited."""
    given = cast(object, middleware)
    if not isinstance(given, Middleware):
        raise TypeError(
            f"run_handler takes one Middleware (a handler built with stage.wrap(fn), "
            f"stage.input(fn) or stage.output(fn)), got {middleware!r}"
        )
    stage = middleware.stage
    run: HandlerRun[TContext, TResult, TEvent] = HandlerRun(result_type=stage.result_event)

    async def terminal(received: TContext) -> AsyncGenerator[TEvent, None]:
        run.calls.append(received)
        scripted = inner(received) if callable(inner) else inner
        for item in _items(scripted):
            if isinstance(item, BaseException):
                raise item
            yield cast(TEvent, _as_event(item))

    registry = MiddlewareRegistry()
    registry.use(middleware)
    async with aclosing(registry.invoke(stage, context, terminal)) as events:
        async for event in events:
            run.events.append(event)
    return run


def run_handler(
    middleware: Middleware[TContext, TResult, TEvent],
    context: TContext,
    *,
    inner: Inner = (),
) -> HandlerRun[TContext, TResult, TEvent]:
    """Run ``middleware`` once for ``context`` around a scripted inner stage; say what it did.

    The inner stage (what ``next_fn`` reaches: the model or the tool) records the context it is
    given in `HandlerRun.calls` and streams ``inner``, afresh on every call: a list of events
    (an exception in it is raised at that point, to test a retry or a fallback), or a function
    of the context returning them. A model reply (``text_turn("...")``, ``tool_turn(...)``, any
    assistant `Message`), alone or in the list, streams as its `ModelStopReason` (stop reason
    ``"tool_use"`` when it calls a tool, else ``"end_turn"``; no usage). Errors the handler
    raises propagate, as on a host; an ``interrupt()`` with no answer raises
    `InterruptException` (give answers with ``tool_context(answers=...)``).

    For synchronous tests; it runs its own event loop, so from a running loop (an async test)
    await `run_handler_async` instead.

    Args:
        middleware: One handler, as ``stage.wrap(fn)``, ``stage.input(fn)`` or
            ``stage.output(fn)`` built it (a decorated function is one).
        context: The context the stage is called with (`model_context`, `tool_context`).
        inner: What the inner stage streams; nothing by default.

    Returns:
        The events the stage yielded, the contexts the inner stage received, and the result.

    Raises:
        TypeError: ``middleware`` is not one `Middleware`.
        RuntimeError: called from a running event loop.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_handler_async(middleware, context, inner=inner))
    raise RuntimeError(
        "run_handler runs its own event loop and cannot be called from async code; use "
        "`await run_handler_async(...)` there"
    )


def _is_reply(item: object) -> bool:
    return isinstance(item, dict) and "role" in item and "content" in item


def _items(scripted: object) -> Iterable[object]:
    if _is_reply(scripted):
        return [scripted]  # one model reply
    return cast("Iterable[object]", scripted)


def _as_event(item: object) -> object:
    """A model reply as the result event a model call ends with; anything else as it is."""
    if not _is_reply(item):
        return item
    message = cast(Message, item)
    calls_a_tool = any("toolUse" in block for block in message["content"])
    return ModelStopReason(
        "tool_use" if calls_a_tool else "end_turn",
        message,
        {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
        {"latencyMs": 0},
    )
