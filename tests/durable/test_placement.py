"""Where each middleware runs in a durable run, and the refusals for places it cannot run."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.catalog import (
    Cache,
    CircuitBreaker,
    ContextWindow,
    Guardrail,
    Redact,
    Retry,
    Summarize,
    Timeout,
    ToolApproval,
    ToolSelector,
    UsageBudget,
    Verdict,
)
from strands_middleware.durable import PLACEMENTS, PlacementError, in_activity, in_workflow
from strands_middleware.stores import InMemoryStore
from strands_middleware.testing import ScriptedModel

from .agents import build_agent


async def passing(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        yield event


def _bare(cls: type[Any]) -> Any:
    # Placement reads an item's class only, so an unconfigured instance stands for any.
    return cls.__new__(cls)


def test_catalog_items_land_where_they_declare(tmp_path: Path) -> None:
    gate = ToolApproval(tools=["refund"])
    selector = ToolSelector(lambda spec, context: True)
    cache = Cache()
    retry = Retry(attempts=2)
    agent = build_agent("placement", tmp_path, [gate, cache, selector, retry])
    assert agent.workflow_middleware == [gate, selector]
    registered = agent.activity_registry.handlers(InvokeModelStage)
    assert [handler.__qualname__ for _phase, handler in registered] == [
        "Cache[invokeModel]",
        "Retry[invokeModel]",
    ]


def test_a_selector_choosing_by_model_runs_in_the_activity(tmp_path: Path) -> None:
    selector = ToolSelector(model=ScriptedModel([]))
    with pytest.raises(PlacementError, match="its model chooses the tools"):
        in_workflow(selector)
    agent = build_agent("selector", tmp_path, [selector])
    assert agent.workflow_middleware == []


@pytest.mark.parametrize(
    "cls", [cls for cls, rule in PLACEMENTS.items() if rule.sides == ("activity",)]
)
def test_an_item_with_side_effects_is_refused_in_workflow_code(cls: type[Any]) -> None:
    with pytest.raises(PlacementError, match=f"{cls.__name__} cannot run in workflow code"):
        in_workflow(_bare(cls))


def test_the_refusal_says_why_and_what_to_do() -> None:
    with pytest.raises(PlacementError) as refused:
        in_workflow(Timeout(seconds=5))
    assert str(refused.value) == (
        "Timeout cannot run in workflow code: it reads a clock. It runs in an activity; "
        "register it without in_workflow(...) (or with in_activity(...))."
    )


def test_an_approval_gate_is_refused_in_an_activity() -> None:
    with pytest.raises(PlacementError, match="its interrupts are workflow waits"):
        in_activity(ToolApproval())


def test_a_refusal_at_agent_construction_leaves_nothing_registered(tmp_path: Path) -> None:
    with pytest.raises(PlacementError, match="does not know where"):
        build_agent("unplaced", tmp_path, [ExecuteToolStage.wrap(passing)])


def test_a_deciding_item_may_move_into_the_activity(tmp_path: Path) -> None:
    redact = Redact()
    agent = build_agent("moved", tmp_path, [in_activity(redact)])
    assert agent.workflow_middleware == []
    assert agent.activity_registry.has_handlers(InvokeModelStage)


def test_an_item_is_placed_once() -> None:
    with pytest.raises(PlacementError, match="placed already"):
        in_activity(in_workflow(InvokeModelStage.wrap(passing)))  # type: ignore[arg-type]


def test_a_reversible_redact_is_refused_in_a_durable_run(tmp_path: Path) -> None:
    for place in (in_workflow, in_activity):
        with pytest.raises(PlacementError, match=r"^Redact cannot run in a durable run: its pseu"):
            place(Redact(reversible=True))
    with pytest.raises(PlacementError, match="Use Redact\\(\\) there"):
        build_agent("reversible", tmp_path, [Redact(reversible=True)])


def test_a_guardrail_calling_out_runs_in_the_activity(tmp_path: Path) -> None:
    def check(subject: Any) -> Verdict:
        return Verdict.allow()

    monitor = Guardrail(check, mode="monitor")
    assert build_agent("monitor", tmp_path, [monitor]).workflow_middleware == [monitor]
    alerting = Guardrail(check, mode="monitor", on_violation=lambda subject, verdict: None)
    with pytest.raises(PlacementError, match="on_violation callback is your code"):
        in_workflow(alerting)
    with pytest.raises(PlacementError, match="its classifier is a model"):
        in_workflow(Guardrail(classifier=ScriptedModel([])))
    agent = build_agent("alerting", tmp_path, [alerting])
    assert agent.workflow_middleware == []
    assert agent.activity_registry.has_handlers(InvokeModelStage)


def test_stores_clocks_and_the_summarizer_are_refused_in_workflow_code() -> None:
    with pytest.raises(PlacementError, match=r"summarizer, tried once more .* store"):
        in_workflow(Summarize(ScriptedModel([]), max_messages=10, store=InMemoryStore()))
    with pytest.raises(PlacementError, match="reads a clock and keeps circuits in a store"):
        in_workflow(CircuitBreaker())
    with pytest.raises(PlacementError, match="max_cost=, their price"):
        in_workflow(UsageBudget(max_cost=0.5))


def test_a_context_window_recovering_from_overflow_runs_in_workflow_code(tmp_path: Path) -> None:
    window = ContextWindow(max_messages=10)
    assert window.retry_on_overflow
    assert build_agent("window", tmp_path, [window]).workflow_middleware == [window]
