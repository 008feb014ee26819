"""The tool call's answer on LangChain: its ``ToolMessage`` or ``Command``, both ways.

LangChain's tool handler answers a call with a ``ToolMessage`` or a ``Command`` carrying one (and
a state update); handlers see its result as a `ToolResultEvent`. What a handler leaves as it was
goes back as LangChain's own answer, a changed result as a new ``ToolMessage`` (inside the
tool's ``Command`` when it answered with one).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, cast

from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from ...content import ToolUse
from ...events import ToolResultEvent, TypedEvent
from ...exceptions import InterruptException
from ...interrupts import Interrupt
from ._converse import converse_tool_result, tool_message
from ._tools import exception_of

__all__ = ["tool_answer_of", "tool_call_of", "tool_events"]

_ToolHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


async def tool_events(
    handler: _ToolHandler,
    request: ToolCallRequest,
    tool_use_id: str,
    pauses: dict[str, GraphInterrupt],
    produced: dict[int, tuple[ToolResultEvent, ToolMessage | Command[Any]]],
) -> AsyncGenerator[TypedEvent, None]:
    """LangChain's tool call, as the terminal's result event (noted in ``produced``)."""
    try:
        answer = await handler(request)
    except GraphInterrupt as paused:  # the tool asked LangGraph itself
        ours_id = f"langgraph:{id(paused)}"
        pauses[ours_id] = paused
        raise InterruptException(Interrupt(id=ours_id, name="interrupt")) from None
    except (GraphBubbleUp, InterruptException):
        raise
    except Exception as failure:  # the tool failed: handlers see an error result
        yield ToolResultEvent.from_exception(tool_use_id, failure)
        return
    event = ToolResultEvent(_tool_result_of(answer, tool_use_id), exception=_exception_of(answer))
    produced[id(event)] = (event, answer)
    yield event


def tool_call_of(tool_use: ToolUse) -> Any:
    return {
        "name": tool_use["name"],
        "args": dict(tool_use["input"]),
        "id": tool_use["toolUseId"],
        "type": "tool_call",
    }


def _tool_result_of(answer: ToolMessage | Command[Any], tool_use_id: str) -> Any:
    if isinstance(answer, ToolMessage):
        return converse_tool_result(answer)
    message = _tool_message_in(answer, tool_use_id)
    if message is None:
        raise TypeError(
            f"the tool answered call {tool_use_id!r} with a Command that carries no ToolMessage "
            "for it, so ExecuteToolStage has no result to show handlers"
        )
    return converse_tool_result(message)


def _exception_of(answer: ToolMessage | Command[Any]) -> Exception | None:
    return exception_of(answer) if isinstance(answer, ToolMessage) else None


def _tool_message_in(command: Command[Any], tool_use_id: str) -> ToolMessage | None:
    update: Any = command.update
    messages: list[Any] = []
    if isinstance(update, dict):
        messages = list(cast("dict[str, Any]", update).get("messages", []))
    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id == tool_use_id:
            return message
    return None


def tool_answer_of(
    result: ToolResultEvent,
    produced: dict[int, tuple[ToolResultEvent, ToolMessage | Command[Any]]],
    name: str,
) -> ToolMessage | Command[Any]:
    """LangChain's answer for the chain's result: its own when a handler left it as it was."""
    entry = produced.get(id(result))
    if entry is not None and entry[0] is result:
        return entry[1]
    for event, answer in produced.values():
        if event.tool_result == result.tool_result:
            return answer
    message = tool_message(result.tool_result, name)
    originals = [answer for _, answer in produced.values() if isinstance(answer, Command)]
    if originals:
        # The tool answered with a Command: its state update and jumps stay, with the result
        # message replaced by the handler's.
        command = originals[-1]
        update: dict[str, Any] = dict(cast("dict[str, Any]", command.update))
        update["messages"] = [
            message
            if isinstance(each, ToolMessage) and each.tool_call_id == message.tool_call_id
            else each
            for each in update.get("messages", [])
        ]
        return Command(graph=command.graph, update=update, resume=command.resume, goto=command.goto)
    return message
