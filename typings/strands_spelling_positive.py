"""strands' middleware spelling: per-stage result wrappers and the two-class stage form."""

from __future__ import annotations

from typing import Any

from strands.telemetry import EventLoopMetrics
from typing_extensions import assert_type

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolResult,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelResult,
    InvokeModelStage,
    Middleware,
    MiddlewareRegistry,
    MiddlewareResult,
    MiddlewareStage,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.events import (
    EventLoopStopEvent,
    InitEventLoopEvent,
    ReasoningDeltaEvent,
    ReasoningTextStreamEvent,
    TextDeltaEvent,
    TextStreamEvent,
    ToolUseDeltaEvent,
    ToolUseStreamEvent,
)
from strands_middleware.experimental import AgentStreamResult, AgentStreamStage
from strands_middleware.testing import ScriptedModel

from ._stage_fixtures import Done, Event, SearchContext, SearchStage

agent = Agent(model=ScriptedModel([]))


# An Output handler written the strands way: its own result class, read and built with .result.
def retag(result: InvokeModelResult) -> InvokeModelResult:
    stop = result.result
    assert_type(stop, ModelStopReason)
    assert_type(result.value, ModelStopReason)
    return InvokeModelResult(result=stop)


def keep(result: ExecuteToolResult) -> ExecuteToolResult:
    assert_type(result.result, ToolResultEvent)
    return result.replace(result=result.result)


def finish(result: AgentStreamResult) -> AgentStreamResult:
    assert_type(result.result, EventLoopStopEvent)
    return result


# Both spellings register on the same stage, on a phase token or through the builder.
def plain(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
    return result.replace(value=result.value)


# A handler typed for the stage's own class may return a plain MiddlewareResult.
def downgrade(result: InvokeModelResult) -> MiddlewareResult[ModelStopReason]:
    return MiddlewareResult(result.result)


agent.add_middleware(InvokeModelStage.Output, retag)
agent.add_middleware(InvokeModelStage.Output, plain)
agent.add_middleware(InvokeModelStage.Output, downgrade)
agent.add_middleware(ExecuteToolStage.Output, keep)
agent.add_middleware(AgentStreamStage.Output, finish)
agent.add_middleware(InvokeModelStage.Output, lambda result: result.replace(result=result.result))
assert_type(
    InvokeModelStage.output(retag),
    Middleware[InvokeModelContext, ModelStopReason, TypedEvent, InvokeModelResult],
)
assert_type(
    ExecuteToolStage.output(keep),
    Middleware[ExecuteToolContext, ToolResultEvent, TypedEvent, ExecuteToolResult],
)

# The built-in stages carry their result class as a fourth parameter.
assert_type(InvokeModelStage.result_event, type[ModelStopReason])
assert_type(AgentStreamStage.result_event, type[EventLoopStopEvent])
assert_type(InvokeModelStage.result_type, type[Any])


def built(stop: ModelStopReason) -> None:
    assert_type(InvokeModelResult(stop), InvokeModelResult)
    assert_type(InvokeModelResult(result=stop).value, ModelStopReason)


# A custom stage in strands' two-class form.
class Found(MiddlewareResult[Done]):
    """The search stage's result class."""


StrandsStyle = MiddlewareStage[SearchContext, Done, Event, Found](
    "search", result_type=Found, result_event=Done
)
assert_type(StrandsStyle.result_event, type[Done])


def found(result: Found) -> Found:
    assert_type(result.result, Done)
    return result


registry = MiddlewareRegistry()
registry.add_middleware(StrandsStyle.Output, found)
registry.add_middleware(SearchStage.Output, lambda result: result.replace(result=result.value))


# strands' event names are the same classes, with strands' constructor forms.
def events(stop: ModelStopReason) -> None:
    assert_type(TextStreamEvent({"text": "hi"}, "hi"), TextDeltaEvent)
    assert_type(TextStreamEvent("hi"), TextDeltaEvent)
    assert_type(
        ToolUseStreamEvent({"toolUse": {"input": "{"}}, {"toolUseId": "t1", "name": "add"}),
        ToolUseDeltaEvent,
    )
    assert_type(
        ReasoningTextStreamEvent({"reasoningContent": {"text": "t"}}, "t"), ReasoningDeltaEvent
    )
    metrics = EventLoopMetrics()
    assert_type(EventLoopStopEvent("end_turn", stop.message, metrics, {}, None), EventLoopStopEvent)
    assert_type(
        EventLoopStopEvent("end_turn", stop.message, stop.usage, stop.metrics), EventLoopStopEvent
    )
    assert_type(InitEventLoopEvent(), InitEventLoopEvent)


def projected(context: InvokeModelContext) -> InvokeModelContext:
    assert_type(context.projected_input_tokens, int | None)
    return context.replace(projected_input_tokens=None)
