"""How handlers compose: phase order, registration order, fresh inner chains."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from ...engine._handlers import MiddlewareNext
from ...engine._result import MiddlewareResult
from ...engine._stage import Middleware, MiddlewareStage
from ...events import TypedEvent
from ...stages._execute_tool import ExecuteToolStage
from ...stages._invoke_model import InvokeModelStage
from ...testing import text_turn, tool_turn
from .._clause import Trial, clause, expect
from . import _sources as cite
from ._probes import tracked

__all__ = [
    "first_registered_handler_is_outermost",
    "next_fn_twice_opens_a_fresh_inner_chain",
    "phases_run_input_wrap_output",
    "tool_call_phases_run_input_wrap_output",
]


def _phase_logger(
    stage: MiddlewareStage[Any, Any, TypedEvent], log: list[str], label: str
) -> tuple[Middleware[Any, Any, TypedEvent], ...]:
    """An Input, a Wrap and an Output handler on ``stage`` that log when they run."""

    def on_input(context: Any) -> Any:
        log.append(f"input {label}")
        return context

    async def on_wrap(
        context: Any, next_fn: MiddlewareNext[Any, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        log.append(f"wrap {label} in")
        async for event in next_fn(context):
            yield event
        log.append(f"wrap {label} out")

    def on_output(result: MiddlewareResult[Any]) -> MiddlewareResult[Any]:
        log.append(f"output {label}")
        return result

    return stage.input(on_input), stage.wrap(on_wrap), stage.output(on_output)


@clause(cite.PHASES, cite.PHASE_ORDER, model_stage=True)
async def phases_run_input_wrap_output(trial: Trial) -> None:
    """A model call runs its Input, then Wrap, then Output handlers, whatever the order they were
    registered in."""
    log: list[str] = []
    on_input, on_wrap, on_output = _phase_logger(InvokeModelStage, log, "A")
    built = trial.build([text_turn("Hello.")], middleware=[on_output, on_wrap, on_input])
    await built.agent.run("Hi")
    expect(
        log == ["input A", "wrap A in", "wrap A out", "output A"],
        f"registered Output, Wrap, Input; they ran as {log}",
    )


@clause(cite.PHASES, cite.PHASE_ORDER, model_stage=True)
async def first_registered_handler_is_outermost(trial: Trial) -> None:
    """Within each phase the first registered handler is the outermost: its Input runs first,
    its Wrap opens first and ends last, its Output runs last."""
    log: list[str] = []
    first = _phase_logger(InvokeModelStage, log, "1")
    second = _phase_logger(InvokeModelStage, log, "2")
    built = trial.build([text_turn("Hello.")], middleware=[*first, *second])
    await built.agent.run("Hi")
    expected = [
        "input 1",
        "input 2",
        "wrap 1 in",
        "wrap 2 in",
        "wrap 2 out",
        "wrap 1 out",
        "output 2",
        "output 1",
    ]
    expect(log == expected, f"expected {expected}, got {log}")


@clause(cite.PHASES, cite.PHASE_ORDER)
async def tool_call_phases_run_input_wrap_output(trial: Trial) -> None:
    """A tool call composes its handlers as a model call does: phase order first, then
    registration order within a phase."""
    log: list[str] = []
    first = _phase_logger(ExecuteToolStage, log, "1")
    second = _phase_logger(ExecuteToolStage, log, "2")
    built = trial.build(
        [tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("3")],
        tools=[trial.tools.add],
        middleware=[first[2], first[1], second[2], first[0], second[1], second[0]],
    )
    await built.agent.run("Add 1 and 2")
    expected = [
        "input 1",
        "input 2",
        "wrap 1 in",
        "wrap 2 in",
        "wrap 2 out",
        "wrap 1 out",
        "output 2",
        "output 1",
    ]
    expect(log == expected, f"expected {expected}, got {log}")


@clause(cite.CLEANUP_RULE, cite.CLEANUP, model_stage=True)
async def next_fn_twice_opens_a_fresh_inner_chain(trial: Trial) -> None:
    """A Wrap handler that calls next_fn again after a failure (a retry) gets a fresh inner
    chain: the inner handlers and the model run again, and the retry's result is the call's."""
    log: list[str] = []

    async def retry(
        context: Any, next_fn: MiddlewareNext[Any, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            async for event in next_fn(context):
                yield event
        except ConnectionError:
            log.append("retry")
            async for event in next_fn(context):
                yield event

    built = trial.build(
        [ConnectionError("the model is busy"), text_turn("Second time lucky.")],
        middleware=[InvokeModelStage.wrap(retry), tracked(InvokeModelStage, "inner", log)],
    )
    report = await built.agent.run("Hi")
    expect(report.text == "Second time lucky.", f"the run ended with {report.text!r}")
    expect(len(built.script.requests) == 2, f"the model was asked {len(built.script.requests)}x")
    opens = log.count("open inner")
    closes = log.count("close inner")
    expect(
        opens == 2 and closes == 2,
        f"the inner handler opened {opens}x and closed {closes}x; expected 2 and 2 ({log})",
    )
