"""What a type checker infers on the testing helpers' context builders (type-checked, never run)."""

from __future__ import annotations

import threading

from typing_extensions import assert_type

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareInterruptResult,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.testing import (
    HandlerRun,
    model_context,
    run_handler,
    run_handler_async,
    scripted,
    text_turn,
    tool_context,
)
from strands_middleware.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


assert_type(model_context(), InvokeModelContext)
assert_type(
    model_context(
        messages=[{"role": "user", "content": [{"text": "hi"}]}],
        system_prompt=[{"text": "Be brief."}],
        tool_specs=[add.tool_spec],
        tool_choice=None,
        invocation_state={"user": "ada"},
        model=scripted(text_turn("hello")),
        agent=object(),
    ),
    InvokeModelContext,
)
assert_type(tool_context(), ExecuteToolContext)
assert_type(
    tool_context(
        "add",
        {"a": 1, "b": 2},
        tool_use_id="t1",
        tool=add,
        invocation_state={},
        cancel_signal=threading.Event(),
        answers={"approve": {"decision": "yes"}},
    ),
    ExecuteToolContext,
)
assert_type(
    tool_context(answers={"approve": "yes"}).interrupt("approve"), MiddlewareInterruptResult
)


# ---- run_handler: one handler, typed by its stage ---------------------------------------------


@InvokeModelStage.input
def _concise(context: InvokeModelContext) -> InvokeModelContext:
    return context.replace(system_prompt="Answer in one sentence.")


_model_run = run_handler(_concise, model_context(), inner=text_turn("Paris."))
assert_type(_model_run, HandlerRun[InvokeModelContext, ModelStopReason, TypedEvent])
assert_type(_model_run.calls, list[InvokeModelContext])
assert_type(_model_run.events, list[TypedEvent])
assert_type(_model_run.result, ModelStopReason | None)


@ExecuteToolStage.input
def _clamp(context: ExecuteToolContext) -> ExecuteToolContext:
    return context


async def in_a_test() -> None:
    run = await run_handler_async(_clamp, tool_context("search"), inner=lambda context: [])
    assert_type(run.result, ToolResultEvent | None)
