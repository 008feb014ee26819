"""run_handler: one handler, a context and a scripted inner stream; what it yielded and did."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterator

import pytest
from typing_extensions import assert_type

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InterruptException,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareResult,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.catalog import Retry
from strands_middleware.events import TextDeltaEvent
from strands_middleware.testing import (
    HandlerRun,
    model_context,
    run_handler,
    run_handler_async,
    text_turn,
    tool_context,
    tool_turn,
)


def hits(text: str = "3 hits") -> ToolResultEvent:
    return ToolResultEvent(
        {"toolUseId": "tooluse_test", "status": "success", "content": [{"text": text}]}
    )


def test_an_input_handler_changes_what_the_inner_stage_is_given() -> None:
    @ExecuteToolStage.input
    def clamp(context: ExecuteToolContext) -> ExecuteToolContext:
        return context.replace(tool_use={**context.tool_use, "input": {"limit": 10}})

    run = run_handler(clamp, tool_context("search", {"limit": 500}), inner=[hits()])
    assert_type(run, HandlerRun[ExecuteToolContext, ToolResultEvent, TypedEvent])
    assert [call.tool_use["input"] for call in run.calls] == [{"limit": 10}]
    assert run.events == [hits()]
    assert run.result == hits()


def test_a_wrap_handler_that_answers_by_itself_never_reaches_the_inner_stage() -> None:
    @ExecuteToolStage.wrap
    async def cached(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield hits("from the cache")

    run = run_handler(cached, tool_context("search"), inner=[hits()])
    assert run.calls == []
    assert run.result == hits("from the cache")


def test_an_exception_in_the_inner_stream_is_raised_there_and_a_retry_calls_again() -> None:
    [retry] = Retry(attempts=2, backoff=0, jitter=0)
    outcomes: Iterator[list[object]] = iter([[ConnectionError("flaky")], [text_turn("Paris.")]])
    run = run_handler(retry, model_context(), inner=lambda context: next(outcomes))
    assert len(run.calls) == 2
    assert isinstance(run.result, ModelStopReason)
    assert run.result.message == text_turn("Paris.")
    assert run.result.stop_reason == "end_turn"


def test_an_output_handler_transforms_the_result_and_streams_the_rest_through() -> None:
    def shout(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        stop = result.value
        message = text_turn("PARIS.")
        return result.replace(
            value=ModelStopReason(stop.stop_reason, message, stop.usage, stop.metrics)
        )

    run = run_handler(
        InvokeModelStage.output(shout),
        model_context(),
        inner=[TextDeltaEvent("Paris."), text_turn("Paris.")],
    )
    assert run.events[0] == TextDeltaEvent("Paris.")
    assert run.result is not None
    assert run.result.message["content"] == [{"text": "PARIS."}]
    assert run_handler(
        InvokeModelStage.output(shout), model_context(), inner=tool_turn("t", {})
    ).result


def test_errors_and_interrupts_propagate_as_on_a_host() -> None:
    @ExecuteToolStage.input
    def gate(context: ExecuteToolContext) -> ExecuteToolContext:
        context.interrupt("approve")
        return context

    with pytest.raises(InterruptException):
        run_handler(gate, tool_context("delete"))
    answered = run_handler(gate, tool_context("delete", answers={"approve": "yes"}), inner=[hits()])
    assert answered.result == hits()


def test_only_one_middleware_is_taken_and_async_code_awaits_the_async_form() -> None:
    with pytest.raises(TypeError, match=r"run_handler takes one Middleware"):
        run_handler(Retry(), model_context())  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

    @InvokeModelStage.input
    def same(context: InvokeModelContext) -> InvokeModelContext:
        return context

    async def in_a_loop() -> int:
        with pytest.raises(RuntimeError, match=r"await run_handler_async"):
            run_handler(same, model_context())
        run = await run_handler_async(same, model_context(), inner=text_turn("hi"))
        return len(run.calls)

    assert asyncio.run(in_a_loop()) == 1
