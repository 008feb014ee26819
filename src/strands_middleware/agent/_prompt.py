"""What a call to the reference agent is given and what it hands back, as plain data.

Reading ``Agent(middleware=...)`` and a prompt (a string, content blocks, or a resume), and
building the stop event and the `AgentResult` a run ends with.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from ..content import ContentBlock, Message, Messages
from ..engine._registry import MiddlewareSource
from ..engine._stage import Middleware
from ..events import EventLoopStopEvent
from ..interrupts import Interrupt
from ._result import AgentResult

__all__ = [
    "empty_turn",
    "input_messages",
    "looks_like_resume",
    "middleware_sources",
    "result_of",
    "stop_event",
]


def middleware_sources(middleware: object) -> tuple[MiddlewareSource, ...]:
    """What ``Agent(middleware=...)`` was given, as the arguments ``use()`` takes."""
    if isinstance(middleware, Middleware):
        one: Middleware[Any, Any, Any] = cast(Any, middleware)
        return (one,)
    if isinstance(middleware, Iterable) and not isinstance(middleware, (str, bytes)):
        return tuple(cast("Iterable[MiddlewareSource]", middleware))
    raise TypeError(
        "Agent(middleware=...) takes a Middleware, a catalog item, or a list of them, got "
        f"{middleware!r}; build a Middleware from a function with stage.wrap(fn), "
        "stage.input(fn) or stage.output(fn)"
    )


def looks_like_resume(prompt: object) -> bool:
    return isinstance(prompt, list) and any(
        isinstance(block, dict) and "interruptResponse" in block
        for block in cast("list[object]", prompt)
    )


def input_messages(prompt: object) -> Messages:
    """The user message a prompt makes: a str, a list of content blocks, or None for none."""
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [Message(role="user", content=[ContentBlock(text=prompt)])]
    if not isinstance(prompt, (list, tuple)):
        raise TypeError(
            f"a prompt is a str, a list of content blocks, or None; got {type(prompt).__name__}"
        )
    blocks: list[ContentBlock] = []
    for block in cast("list[object]", prompt):
        if not isinstance(block, dict):
            raise TypeError(
                f"a prompt's content blocks are dicts such as {{'text': ...}}; got {block!r}"
            )
        blocks.append(cast(ContentBlock, dict(cast("dict[str, Any]", block))))
    return [Message(role="user", content=blocks)]


def empty_turn() -> Message:
    return Message(role="assistant", content=[])


def stop_event(
    reason: str,
    message: Message,
    usage: dict[str, int],
    latency: int,
    interrupts: list[Interrupt] | None = None,
) -> EventLoopStopEvent:
    return EventLoopStopEvent(
        reason,
        message,
        {
            "inputTokens": usage["inputTokens"],
            "outputTokens": usage["outputTokens"],
            "totalTokens": usage["totalTokens"],
        },
        {"latencyMs": latency},
        interrupts=interrupts,
    )


def result_of(event: EventLoopStopEvent) -> AgentResult:
    return AgentResult(
        stop_reason=event.stop_reason,
        message=event.message,
        interrupts=list(event.interrupts or []),
        usage=event.usage,
        metrics=event.metrics,
    )
