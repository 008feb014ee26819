"""The kit catches broken hosts: each faulty host fails exactly the clauses its fault breaks.

Every faulty host is the reference agent with one fault, so it also fails what the reference
agent fails today (its harness's known failures) and nothing else. A faulty host playing its
scripts through a model of its own (``WrapsModelErrors``) has no native model of another kind,
so each clause runs once.
"""

from __future__ import annotations

import pytest

from strands_middleware.conformance import Harness, Outcome, run_conformance
from strands_middleware.conformance._harnesses._reference import ReferenceHarness

from .faulty import (
    AcceptsStaleResume,
    DropsReplacedInput,
    FreshCancelSignalPerCall,
    HandsOverHostObjects,
    IgnoresAgentStream,
    IgnoresConfiguration,
    LeaksGenerators,
    Minimal,
    ReasksModelOnResume,
    RefusesReplacedInput,
    RerunsFinishedTools,
    SkipsOutputHandlers,
    TakesUndeclaredReplacedInput,
    WithoutAgentStream,
    WrapsModelErrors,
)

_AGENT_STREAM = {
    "agent_stream_output_rewrite_reaches_the_result",
    "agent_stream_trailing_events_keep_the_result",
    "agent_stream_replaced_messages_are_the_input",
    "agent_stream_invocation_state_reaches_the_stages",
    "agent_stream_gate_asks_once_per_cycle",
    "agent_stream_interrupt_after_the_pass_is_refused",
    "agent_stream_short_circuit_skips_the_pass",
    "agent_stream_output_rewrite_keeps_the_usage",
    "agent_stream_wrap_handlers_see_the_reference_events",
}

CAUGHT: list[tuple[Harness, set[str]]] = [
    (
        SkipsOutputHandlers(),
        {
            "phases_run_input_wrap_output",
            "first_registered_handler_is_outermost",
            "tool_call_phases_run_input_wrap_output",
            "output_rewrite_reaches_the_history",
            "tool_output_rewrite_reaches_the_model",
            "raising_tool_becomes_an_error_result",
            "output_skipped_while_the_call_is_paused",
            "agent_stream_output_rewrite_reaches_the_result",
            "agent_stream_output_rewrite_keeps_the_usage",
            # Reversible Redact restores the model's reply in an Output handler.
            "catalog_redact_reversible_restores_values_past_the_model",
        },
    ),
    (LeaksGenerators(), {"handlers_closed_innermost_first_on_early_stop"}),
    (
        ReasksModelOnResume(),
        {
            "resume_runs_the_tool_exactly_once",
            "resume_does_not_reask_the_model",
            "interrupt_answer_reaches_the_handler",
            "output_skipped_while_the_call_is_paused",
            "each_tool_call_owes_its_own_interrupt",
            "no_standing_approval_across_cycles",
            "unknown_interrupt_id_is_refused_state_unchanged",
            "malformed_resume_is_refused_state_unchanged",
            "fresh_prompt_while_paused_is_refused",
            "paused_run_resumes_in_a_fresh_agent",
            "catalog_tool_approval_gates_the_tool",
            "resume_reuses_finished_tool_results",
            "resume_when_not_paused_is_refused",
        },
    ),
    (RerunsFinishedTools(), {"resume_reuses_finished_tool_results"}),
    (AcceptsStaleResume(), {"resume_when_not_paused_is_refused"}),
    (
        WrapsModelErrors(),
        {
            "model_error_reaches_handlers_unchanged",
            "catalog_retry_recovers_a_failed_model_call",
            "next_fn_twice_opens_a_fresh_inner_chain",
            "middleware_retry_is_one_hook_pair",
        },
    ),
    (FreshCancelSignalPerCall(), {"cancel_sets_the_signal_tool_handlers_hold"}),
    (
        IgnoresConfiguration(),
        {
            "configured_system_prompt_reaches_the_model",
            "configured_tool_choice_reaches_the_model",
        },
    ),
    (
        HandsOverHostObjects(),
        {
            "handlers_see_only_this_librarys_types",
            "handlers_see_no_host_only_keys",
            "wrap_handlers_see_the_reference_event_stream",
            "agent_stream_wrap_handlers_see_the_reference_events",
        },
    ),
    (IgnoresAgentStream(), _AGENT_STREAM),
    (DropsReplacedInput(), {"agent_stream_replaced_messages_are_the_input"}),
    (TakesUndeclaredReplacedInput(), {"agent_stream_replaced_messages_are_the_input"}),
    (RefusesReplacedInput(), set()),
    (WithoutAgentStream(), set()),
    (Minimal(), set()),
]


@pytest.mark.parametrize(("harness", "breaks"), CAUGHT, ids=[h.name for h, _ in CAUGHT])
def test_a_faulty_host_fails_exactly_the_clauses_its_fault_breaks(
    harness: Harness, breaks: set[str]
) -> None:
    report = run_conformance(harness)
    failed = {r.clause.id for r in report.results if r.outcome is Outcome.FAIL}
    assert failed == breaks | set(ReferenceHarness.known_failures)


def test_undeclared_agent_stream_is_checked_as_refused_at_registration() -> None:
    report = run_conformance(WithoutAgentStream())
    checked = {r.clause.id: r for r in report.results if r.clause.id in _AGENT_STREAM}
    assert len(checked) == len(_AGENT_STREAM)
    for result in checked.values():
        assert result.outcome is Outcome.PASS
        assert result.detail == "not declared: its handlers are refused at registration"


def test_a_host_that_ignores_an_undeclared_stage_is_told_so() -> None:
    report = run_conformance(IgnoresAgentStream())
    details = {r.detail for r in report.results if r.clause.id in _AGENT_STREAM}
    assert len(details) == 1
    assert "raised nothing: the handler would be silently ignored" in details.pop()


def test_a_host_declaring_nothing_shows_what_was_checked_instead() -> None:
    report = run_conformance(Minimal())
    by_id = {r.clause.id: r for r in report.results}
    hooks = by_id["middleware_retry_is_one_hook_pair"]
    assert (hooks.outcome, hooks.detail) == (
        Outcome.NOT_APPLICABLE,
        "the host does not declare lifecycle hooks",
    )
    streaming = by_id["wrap_handlers_see_the_reference_event_stream"]
    assert streaming.outcome is Outcome.PASS
    assert streaming.detail.startswith("not declared:")
    resumed = by_id["paused_run_resumes_in_a_fresh_agent"]
    assert resumed.outcome is Outcome.PASS
    assert resumed.detail.startswith("in this process")


def test_an_undeclared_replaced_pass_input_is_checked_as_refused_at_run_time() -> None:
    by_id = {r.clause.id: r for r in run_conformance(RefusesReplacedInput()).results}
    refused = by_id["agent_stream_replaced_messages_are_the_input"]
    assert (refused.outcome, refused.detail) == (
        Outcome.PASS,
        "not declared: a replaced input list is refused with ReplacedMessagesError",
    )
    taken = run_conformance(TakesUndeclaredReplacedInput()).results
    (unrefused,) = [r for r in taken if r.clause.id == refused.clause.id]
    assert "raised nothing" in unrefused.detail and "declare the capability" in unrefused.detail
