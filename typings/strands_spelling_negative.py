"""Mistakes in strands' spelling that the checkers reject (one per line, both ignore codes)."""

from __future__ import annotations

from strands.telemetry import EventLoopMetrics

from strands_middleware import (
    ExecuteToolResult,
    ExecuteToolStage,
    InvokeModelResult,
    InvokeModelStage,
    MiddlewareResult,
    MiddlewareStage,
    ModelStopReason,
    ToolResultEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.events import EventLoopStopEvent, TextStreamEvent
from strands_middleware.testing import ScriptedModel

from ._stage_fixtures import Done, Event, SearchContext

agent = Agent(model=ScriptedModel([]))


def tool_handler(result: ExecuteToolResult) -> ExecuteToolResult:
    return result


def model_handler(result: InvokeModelResult) -> InvokeModelResult:
    return result


def wrong_event(result: InvokeModelResult) -> MiddlewareResult[ToolResultEvent]:
    return MiddlewareResult(ToolResultEvent.error("t1", "no"))


# A tool-stage result class on the model stage, and the other way round.
agent.add_middleware(InvokeModelStage.Output, tool_handler)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]
agent.add_middleware(ExecuteToolStage.Output, model_handler)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]
InvokeModelStage.output(tool_handler)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

# Returning a wrapper of another stage's result event.
InvokeModelStage.output(wrong_event)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def build(stop: ModelStopReason, tool: ToolResultEvent) -> None:
    # A result class holds its own stage's event, by either keyword.
    InvokeModelResult(result=tool)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    ExecuteToolResult(stop)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    InvokeModelResult(stop).replace(result=tool)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    # result is read-only, as value is.
    InvokeModelResult(stop).result = stop  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]


# strands' two-class form: result_type is a MiddlewareResult subclass (a plain dataclass with a
# .result field, as strands' own result classes are, is not accepted).
MiddlewareStage[SearchContext, Done, Event, SearchContext](  # type: ignore[type-var]  # pyright: ignore[reportInvalidTypeArguments]
    "search", result_type=SearchContext, result_event=Done
)


def events(stop: ModelStopReason) -> None:
    # strands' forms are typed: the delta first, then the text; the stop event's extras are None.
    TextStreamEvent("hi", {"text": "hi"})  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    EventLoopStopEvent("end_turn", stop.message, EventLoopMetrics(), {}, None, stop)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
