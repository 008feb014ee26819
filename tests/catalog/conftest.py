"""Catalog items run on every host: tests taking ``make_agent`` run once per installed host.

``make_agent`` builds an agent with the reference agent's keywords through the host's harness
(``tests/conformance/drive.py``), so each host is driven the way the conformance kit drives it.
A test that needs what only the reference agent has (its hooks, its typed event stream, its
interrupt state) builds ``Agent`` directly.

A test that cannot pass on a host because of a clause the host's harness lists as a known
failure is expected to fail there, with the harness's own reason: the reason is written once,
on the harness.
"""

from __future__ import annotations

import pytest

from strands_middleware.conformance import known_failures_of

from ..conformance.drive import AGENTS, HOSTS, AgentFactory

_UNKNOWN_TOOL = "unknown_tool_runs_the_chain_with_tool_none"

NEEDS_CLAUSE: dict[str, str] = {
    "test_an_interrupt_is_never_retried_even_when_on_catches_everything": _UNKNOWN_TOOL,
    "test_a_call_to_a_tool_the_agent_does_not_have_is_gated_too": _UNKNOWN_TOOL,
    "test_a_tool_the_agent_does_not_have_can_be_mocked": _UNKNOWN_TOOL,
    "test_calls_are_recorded_in_order_as_copies": _UNKNOWN_TOOL,
    "test_an_interrupt_raised_by_a_fixture_function_pauses_the_run": _UNKNOWN_TOOL,
}
"""Catalog test to the clause it needs a host to keep (a call to a tool the agent lacks)."""

KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {
    ("pydantic_ai", "test_model_input_never_touches_reasoning_or_media_blocks"): (
        "pydantic-ai's messages have no guard-content block and no media in an assistant turn: "
        "a Converse message holding them loses them on the way to pydantic-ai"
    ),
}
"""(host, catalog test) to why the host cannot carry what the test gives it (no clause)."""


@pytest.fixture(params=sorted(AGENTS))
def make_agent(request: pytest.FixtureRequest) -> AgentFactory:
    test = request.function.__name__
    reason = KNOWN_DIFFERENCES.get((request.param, test))
    clause = NEEDS_CLAUSE.get(test)
    if clause is not None:
        reason = known_failures_of(HOSTS[request.param]).get(clause, reason)
    if reason is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    return AGENTS[request.param]
