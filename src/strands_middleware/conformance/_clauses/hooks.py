"""Hooks: middleware retries are invisible to the host's lifecycle hooks."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from ...engine._handlers import MiddlewareNext
from ...events import TypedEvent
from ...stages._execute_tool import ExecuteToolStage
from ...stages._invoke_model import InvokeModelStage
from ...testing import text_turn, tool_turn
from .._clause import Trial, clause, expect
from .._harness import Capability
from . import _sources as cite

__all__ = ["middleware_retry_is_one_hook_pair"]


@clause(cite.HOOK_RETRIES, cite.BUILT_IN_STAGES, needs=Capability.HOOKS, model_stage=True)
async def middleware_retry_is_one_hook_pair(trial: Trial) -> None:
    """A Wrap handler that calls next_fn again (a retry) is still one before/after hook pair, on
    a model call and on a tool call."""

    async def retry_model(
        context: Any, next_fn: MiddlewareNext[Any, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            async for event in next_fn(context):
                yield event
        except ConnectionError:
            async for event in next_fn(context):
                yield event

    async def run_tool_twice(
        context: Any, next_fn: MiddlewareNext[Any, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for _event in next_fn(context):
            pass
        async for event in next_fn(context):
            yield event

    built = trial.build(
        [ConnectionError("busy"), tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("3")],
        tools=[trial.tools.add],
        middleware=[InvokeModelStage.wrap(retry_model), ExecuteToolStage.wrap(run_tool_twice)],
    )
    await built.agent.run("Add 1 and 2")
    expect(len(trial.tools.calls) == 2, f"the tool ran {len(trial.tools.calls)}x, expected 2")
    expect(len(built.script.requests) == 3, f"the model was asked {len(built.script.requests)}x")
    hooks = built.agent.hook_events()
    expected = [
        "before_model_call",
        "after_model_call",
        "before_tool_call",
        "after_tool_call",
        "before_model_call",
        "after_model_call",
    ]
    expect(hooks == expected, f"the hooks fired {hooks}; expected {expected}")
