"""Middleware written the way strands' own middleware API spells it, on every host.

Each handler here reads and builds results with ``.result``/``result=``, builds events with
strands' constructor forms and names, and is registered through this library's ``use()`` or the
token form ``add_middleware(stage.Output, fn)``: on the reference agent and on ``strands.Agent``
through the bridge (and the other bridges where installed), it behaves the same.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, Callable
from typing import Any

import pytest
from strands.telemetry import EventLoopMetrics

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolResult,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelResult,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareResult,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.conformance import Capability
from strands_middleware.events import EventLoopStopEvent, TextStreamEvent
from strands_middleware.experimental import AgentStreamContext, AgentStreamResult, AgentStreamStage
from strands_middleware.testing import text_turn, tool_turn

from ..conformance.drive import HOSTS as HARNESSES
from ..conformance.drive import Driven, drive

Builder = Callable[..., Driven]
"""Builds a driven agent of one host from turns, tool functions and middleware."""

HOSTS: dict[str, Builder] = {name: functools.partial(drive, name) for name in HARNESSES}
AGENT_STREAM_HOSTS = sorted(
    name for name, harness in HARNESSES.items() if Capability.AGENT_STREAM in harness.capabilities
)


@pytest.fixture(params=sorted(HOSTS))
def host(request: pytest.FixtureRequest) -> Builder:
    return HOSTS[request.param]


@pytest.fixture(params=AGENT_STREAM_HOSTS)
def agent_stream_host(request: pytest.FixtureRequest) -> Builder:
    return HOSTS[request.param]


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


def test_a_model_output_handler_reads_and_builds_result(host: Builder) -> None:
    seen: list[type] = []

    def shout(result: InvokeModelResult) -> InvokeModelResult:
        seen.append(type(result))
        stop = result.result
        loud: Any = {"role": "assistant", "content": [{"text": stop.message["content"][0]["text"]}]}
        loud["content"][0]["text"] = loud["content"][0]["text"].upper()
        return InvokeModelResult(
            result=ModelStopReason(stop.stop_reason, loud, stop.usage, stop.metrics)
        )

    run = host([text_turn("quiet")], [], [InvokeModelStage.output(shout)])
    assert run("hi").text == "QUIET"
    assert seen == [InvokeModelResult]


@pytest.mark.parametrize("name", ["reference", "strands"])
def test_the_token_form_takes_a_strands_output_handler(name: str) -> None:
    def tag(result: InvokeModelResult) -> InvokeModelResult:
        stop = result.result
        tagged: Any = {"role": "assistant", "content": [{"text": "tagged"}]}
        return result.replace(result=ModelStopReason("end_turn", tagged, stop.usage, stop.metrics))

    run = HOSTS[name]([text_turn("plain")], [], [])
    # On strands.Agent this library's handlers register on the bridge, not on strands' registry.
    run.host.use(InvokeModelStage.output(tag))
    assert run("hi").text == "tagged"


def test_a_tool_output_handler_rewrites_the_result_the_model_reads(host: Builder) -> None:
    def redact(result: ExecuteToolResult) -> ExecuteToolResult:
        assert isinstance(result, ExecuteToolResult)
        event = result.result
        hidden: Any = {**event.tool_result, "content": [{"text": "[hidden]"}]}
        return result.replace(result=ToolResultEvent(hidden, event.exception))

    run = host(
        [tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("done")],
        [add],
        [ExecuteToolStage.output(redact)],
    )
    assert run("add").text == "done"
    block = run.script.requests[1].messages[-1]["content"][0]["toolResult"]
    assert block["content"] == [{"text": "[hidden]"}]


def test_handlers_of_both_spellings_share_a_stage(host: Builder) -> None:
    order: list[str] = []

    def plain(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        order.append(f"plain got {type(result).__name__}")
        return MiddlewareResult(result.value)  # a plain one back: the next still gets its own

    def typed(result: InvokeModelResult) -> InvokeModelResult:
        order.append(f"typed got {type(result).__name__}")
        return result

    run = host(
        [text_turn("ok")], [], [InvokeModelStage.output(typed), InvokeModelStage.output(plain)]
    )
    assert run("hi").text == "ok"
    # Output handlers apply innermost (last registered) first.
    assert order == ["plain got InvokeModelResult", "typed got InvokeModelResult"]


def test_a_wrap_handler_counts_text_by_strands_name(host: Builder) -> None:
    texts: list[str] = []

    @InvokeModelStage.wrap
    async def listen(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if isinstance(event, TextStreamEvent):
                texts.append(event["data"])
            yield event

    run = host([text_turn("streamed")], [], [listen])
    run("hi")
    assert "".join(texts) == "streamed"


def test_a_wrap_short_circuit_built_with_strands_forms(host: Builder) -> None:
    @InvokeModelStage.wrap
    async def canned(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield TextStreamEvent({"text": "from cache"}, "from cache")
        yield ModelStopReason(
            stop_reason="end_turn",
            message=text_turn("from cache"),
            usage={"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
            metrics={"latencyMs": 0},
        )

    run = host([], [], [canned])
    assert run("hi").text == "from cache"
    assert run.script.requests == []


def test_an_agent_stream_short_circuit_in_strands_positional_form(
    agent_stream_host: Builder,
) -> None:
    metrics = EventLoopMetrics()

    async def canned(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield EventLoopStopEvent("end_turn", text_turn("Canned."), metrics, {}, None)

    run = agent_stream_host([], [], [AgentStreamStage.wrap(canned)])
    outcome = run("hi")
    assert (outcome.stop_reason, outcome.text) == ("end_turn", "Canned.")
    assert run.script.requests == []
    assert run.messages == []  # the input is appended only when the terminal runs


def test_an_agent_stream_output_handler_reads_result(agent_stream_host: Builder) -> None:
    seen: list[str] = []

    def note(result: AgentStreamResult) -> AgentStreamResult:
        seen.append(f"{type(result).__name__}:{result.result.stop_reason}")
        return result

    run = agent_stream_host([text_turn("ok")], [], [AgentStreamStage.output(note)])
    assert run("hi").text == "ok"
    assert seen == ["AgentStreamResult:end_turn"]


def test_a_tool_call_context_reads_the_same_on_every_host(host: Builder) -> None:
    seen: list[object] = []

    def look(context: ExecuteToolContext) -> ExecuteToolContext:
        seen.append(context.tool_use["name"])
        return context

    run = host(
        [tool_turn("add", {"a": 2, "b": 2}, "t1"), text_turn("4")],
        [add],
        [ExecuteToolStage.input(look)],
    )
    assert run("add").text == "4"
    assert seen == ["add"]
