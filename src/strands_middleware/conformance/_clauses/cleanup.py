"""Cleanup: every generator the chain opens is closed once, innermost first, however a run ends."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ...engine._stage import Middleware
from ...events import TypedEvent
from ...stages._execute_tool import ExecuteToolStage
from ...stages._invoke_model import InvokeModelStage
from ...testing import text_turn, tool_turn
from .._clause import Trial, clause, expect
from . import _sources as cite
from ._probes import outcome, tracked

__all__ = [
    "handlers_closed_innermost_first_on_cancellation",
    "handlers_closed_innermost_first_on_early_stop",
    "handlers_closed_innermost_first_on_error",
    "handlers_closed_innermost_first_on_normal_end",
]

_WAIT_FOR_TOOL = 10.0
"""Seconds a clause waits for the run to reach its tool before calling the host stuck."""


def _trackers(log: list[str]) -> list[Middleware[Any, Any, TypedEvent]]:
    return [
        tracked(InvokeModelStage, "model outer", log),
        tracked(InvokeModelStage, "model inner", log),
        tracked(ExecuteToolStage, "tool outer", log),
        tracked(ExecuteToolStage, "tool inner", log),
    ]


def _expect_closed(log: list[str], stage: str, calls: int, how: str) -> None:
    """Each of ``calls`` calls of ``stage`` closed its two handlers once, inner first."""
    for layer in ("outer", "inner"):
        name = f"{stage} {layer}"
        opened, closed = log.count(f"open {name}"), log.count(f"close {name}")
        expect(
            opened == calls and closed == calls,
            f"{how}: {name} opened {opened}x and closed {closed}x by the time the run "
            f"ended; expected {calls} and {calls} ({log})",
        )
    closes = [entry for entry in log if entry.startswith(f"close {stage} ")]
    expected = [f"close {stage} inner", f"close {stage} outer"] * calls
    expect(closes == expected, f"{how}: {stage} handlers closed in the order {closes}")


@clause(cite.CLEANUP, cite.CLEANUP_RULE, cite.GENERATOR_CLEANUP, model_stage=True)
async def handlers_closed_innermost_first_on_normal_end(trial: Trial) -> None:
    """When a run ends normally, every handler generator it opened on model and tool calls has
    been closed exactly once, innermost first."""
    log: list[str] = []
    built = trial.build(
        [tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("3")],
        tools=[trial.tools.add],
        middleware=_trackers(log),
    )
    await built.agent.run("Add 1 and 2")
    _expect_closed(log, "model", 2, "normal end")
    _expect_closed(log, "tool", 1, "normal end")


@clause(cite.CLEANUP, cite.CLEANUP_RULE, cite.GENERATOR_CLEANUP, model_stage=True)
async def handlers_closed_innermost_first_on_error(trial: Trial) -> None:
    """When a model call raises, every handler generator around it has been closed exactly once,
    innermost first, by the time the error reaches the caller."""
    log: list[str] = []
    built = trial.build([ConnectionError("the model is down")], middleware=_trackers(log))
    ended = await outcome(built.agent.run("Hi"))
    expect(isinstance(ended, Exception), f"the run ended normally: {ended!r}")
    _expect_closed(log, "model", 1, "error")


@clause(cite.CLEANUP, cite.CLEANUP_RULE, cite.GENERATOR_CLEANUP, model_stage=True)
async def handlers_closed_innermost_first_on_cancellation(trial: Trial) -> None:
    """When the task running the agent is cancelled during a tool call, every handler generator
    it opened has been closed exactly once, innermost first, by the time the task ends."""
    log: list[str] = []
    built = trial.build(
        [tool_turn("wait_for_cancel", {}, "t1"), text_turn("Not cancelled.")],
        tools=[trial.tools.wait_for_cancel],
        middleware=_trackers(log),
    )

    async def consume() -> None:
        async for _event in built.agent.stream("Wait"):
            pass

    task = asyncio.ensure_future(consume())
    waiting = asyncio.ensure_future(trial.tools.waiting.wait())
    await asyncio.wait([task, waiting], timeout=_WAIT_FOR_TOOL, return_when="FIRST_COMPLETED")
    waiting.cancel()
    expect(not task.done(), f"the run ended before its tool was cancelled ({log})")
    expect(trial.tools.waiting.is_set(), f"the tool never started ({log})")
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    _expect_closed(log, "tool", 1, "cancellation")
    _expect_closed(log, "model", 1, "cancellation")


@clause(cite.CLEANUP, cite.CLEANUP_RULE, cite.GENERATOR_CLEANUP, model_stage=True)
async def handlers_closed_innermost_first_on_early_stop(trial: Trial) -> None:
    """When the caller stops reading the run's stream mid-model-call and closes it, every handler
    generator it opened has been closed exactly once, innermost first."""
    log: list[str] = []
    built = trial.build(
        [text_turn("A long answer, streamed in pieces."), text_turn("Unused.")],
        middleware=_trackers(log),
    )
    stream = built.agent.stream("Hi")
    async for _event in stream:
        if "event model inner" in log:
            break
    expect("event model inner" in log, f"the run ended before the model streamed ({log})")
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()
    _expect_closed(log, "model", 1, "early stop")
