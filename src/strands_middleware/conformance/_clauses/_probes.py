"""Recording handlers and small readers the clauses share."""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Awaitable, Iterator, Sequence
from typing import Any, TypeVar

from ...content import Message, Messages, Metrics, ToolResult, Usage
from ...engine._handlers import MiddlewareNext
from ...engine._stage import Middleware, MiddlewareStage
from ...events import ToolResultEvent, TypedEvent
from ...events import __all__ as _event_names
from ...interrupts import Interrupt
from ...stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ...testing import ModelRequest

__all__ = [
    "ZERO_METRICS",
    "ZERO_USAGE",
    "conversation",
    "exception_chain",
    "gate",
    "last_tool_results",
    "outcome",
    "public_event_class",
    "responses",
    "texts",
    "tool_id",
    "tool_results",
    "tracked",
]

T = TypeVar("T")

ZERO_USAGE: Usage = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
ZERO_METRICS: Metrics = {"latencyMs": 0}

_EVENT_CLASSES = frozenset(_event_names)


def tool_id(tool_use_id: str, name: str) -> str:
    """The deterministic interrupt id the spec gives a tool-stage gate called ``name``."""
    return f"v1:middleware_execute_tool:{tool_use_id}:{uuid.uuid5(uuid.NAMESPACE_OID, name)}"


def responses(interrupts: Sequence[Interrupt], response: Any) -> list[dict[str, Any]]:
    """The resume blocks answering every interrupt with ``response``."""
    return [
        {"interruptResponse": {"interruptId": interrupt.id, "response": response}}
        for interrupt in interrupts
    ]


def conversation(messages: Messages) -> list[tuple[str, list[Any]]]:
    """``(role, content)`` of each message: what a conversation is, whatever else a host keeps."""
    return [(str(message["role"]), list(message["content"])) for message in messages]


def tool_results(messages: Messages) -> list[ToolResult]:
    """Every tool result in ``messages``, in order."""
    return [
        block["toolResult"]
        for message in messages
        for block in message["content"]
        if "toolResult" in block
    ]


def last_tool_results(request: ModelRequest) -> list[ToolResult]:
    """The tool results a model request ends with."""
    return tool_results(request.messages[-1:])


def texts(result: ToolResult | Message) -> str:
    """The text blocks of a tool result or a message, joined."""
    return "".join(str(block.get("text", "")) for block in result["content"])


def public_event_class(event: object) -> str:
    """The name of the public event class of this library ``event`` is an instance of.

    Hosts may subclass the public classes (to remember the host event behind one); what a
    handler can rely on is the public class it is an instance of.
    """
    for cls in type(event).__mro__:
        if cls.__module__ == "strands_middleware.events" and cls.__name__ in _EVENT_CLASSES:
            return cls.__name__
    return f"{type(event).__module__}.{type(event).__qualname__}"


def exception_chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and the exceptions it was raised from or while handling."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


async def outcome(awaitable: Awaitable[T]) -> T | BaseException:
    """What awaiting ``awaitable`` gives: its value, or the exception it raised."""
    try:
        return await awaitable
    except Exception as error:
        return error


def tracked(
    stage: MiddlewareStage[Any, Any, TypedEvent], name: str, log: list[str]
) -> Middleware[Any, Any, TypedEvent]:
    """A pass-through Wrap handler logging ``open <name>`` and, in its ``finally``, ``close``."""

    async def handler(
        context: Any, next_fn: MiddlewareNext[Any, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        log.append(f"open {name}")
        try:
            async for event in next_fn(context):
                log.append(f"event {name}")
                yield event
        finally:
            log.append(f"close {name}")

    handler.__name__ = handler.__qualname__ = f"tracked_{name}"
    return stage.wrap(handler)


def gate(
    answers: list[Any], *, name: str = "approve", approve: Any = "yes"
) -> Middleware[ExecuteToolContext, Any, TypedEvent]:
    """A tool-stage approval gate: asks under ``name`` before the tool runs.

    Each answer it receives (the `MiddlewareInterruptResult` itself) is appended to ``answers``;
    anything but ``approve`` ends the call with a "denied" error result.
    """

    async def approval(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        answer = context.interrupt(name, reason={"input": dict(context.tool_use["input"])})
        answers.append(answer)
        if answer.response != approve:
            yield ToolResultEvent.error(context.tool_use["toolUseId"], "denied")
            return
        async for event in next_fn(context):
            yield event

    return ExecuteToolStage.wrap(approval)
