"""The host of docs/writing-a-host.md, run through the kit: it keeps every clause it applies to.

The page's host leaves out pausing a tool round for a human (it says so), so the clauses of the
human-in-the-loop contract are the ones it does not apply to; every other clause must pass.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from strands_middleware.conformance import CLAUSES, Harness, Outcome, run_conformance

PAGE = Path(__file__).parents[2] / "docs" / "writing-a-host.md"

PAUSING = {
    "tool_interrupt_pauses_before_the_tool",
    "interrupt_answer_reaches_the_handler",
    "resume_runs_the_tool_exactly_once",
    "resume_does_not_reask_the_model",
    "resume_reuses_finished_tool_results",
    "output_skipped_while_the_call_is_paused",
    "each_tool_call_owes_its_own_interrupt",
    "no_standing_approval_across_cycles",
    "unknown_interrupt_id_is_refused_state_unchanged",
    "malformed_resume_is_refused_state_unchanged",
    "fresh_prompt_while_paused_is_refused",
    "resume_when_not_paused_is_refused",
    "paused_run_resumes_in_a_fresh_agent",
    "catalog_tool_approval_gates_the_tool",
    "agent_stream_gate_asks_once_per_cycle",
}
"""The clauses about pausing for a human and resuming, which the page's host leaves out."""


def _page_harness() -> Harness:
    namespace: dict[str, Any] = {"__name__": "writing_a_host"}
    for block in re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL):
        exec(compile(block, str(PAGE), "exec"), namespace)
    harness: Harness = namespace["harness"]
    return harness


def test_the_pages_host_passes_every_clause_it_applies_to() -> None:
    assert {clause.id for clause in CLAUSES} >= PAUSING
    report = run_conformance(_page_harness())
    failed = {
        result.clause.id: result.detail
        for result in report.results
        if result.outcome is Outcome.FAIL and result.clause.id not in PAUSING
    }
    assert failed == {}
    applied = [r for r in report.results if r.clause.id not in PAUSING]
    assert len(applied) == len(CLAUSES) - len(PAUSING)
