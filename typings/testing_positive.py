"""What a type checker infers on the testing helpers' context builders (type-checked, never run)."""

from __future__ import annotations

import threading

from typing_extensions import assert_type

from strands_middleware import ExecuteToolContext, InvokeModelContext, MiddlewareInterruptResult
from strands_middleware.testing import model_context, scripted, text_turn, tool_context
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
