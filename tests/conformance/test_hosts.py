"""This repository's hosts against the conformance kit, one test per clause and host.

``KNOWN_FAILURES`` is the one list of clauses a host breaks today, each with the issue that
fixes it. A listed clause must fail (xfail); once it passes, its test fails until the entry is
removed. ``make conformance`` reads the same mapping.
"""

from __future__ import annotations

from collections.abc import Mapping

from strands_middleware.conformance.hosts import load_harness
from strands_middleware.conformance.suite import ConformanceSuite

_TOOL_USE_SHARED = (
    "issue 17: ExecuteToolContext.tool_use is a shallow copy, so editing its input in place "
    "edits the history"
)
_SWALLOWED = "issue 17: an interrupt swallowed by a handler's except Exception lets the tool run"
_LATE = "issue 17: an interrupt raised after the tool ran is registered, so a resume runs it twice"
_HOST_KEYS = (
    "issue 10: the bridge hands handlers strands' messages with its tracking_id and metadata keys"
)

KNOWN_FAILURES: Mapping[str, Mapping[str, str]] = {
    "reference": {
        "tool_use_edits_do_not_reach_the_history": _TOOL_USE_SHARED,
        "swallowed_interrupt_never_runs_the_tool": _SWALLOWED,
        "interrupt_after_the_tool_ran_is_refused": _LATE,
    },
    "strands": {
        "tool_use_edits_do_not_reach_the_history": _TOOL_USE_SHARED,
        "swallowed_interrupt_never_runs_the_tool": _SWALLOWED,
        "interrupt_after_the_tool_ran_is_refused": _LATE,
        "model_context_holds_what_the_model_receives": _HOST_KEYS,
        "handlers_see_no_host_only_keys": _HOST_KEYS,
        "catalog_cache_answers_a_repeated_call": (
            "issue 10: the host-only keys in messages make every cache key differ"
        ),
        "wrap_handlers_see_the_reference_event_stream": (
            "issue 10: strands stream events reach handlers as HostEvent, not typed events"
        ),
        "handlers_closed_innermost_first_on_early_stop": (
            "no issue yet: strands-agents 1.62's event loop leaves the model-stage chain "
            "suspended when the caller closes stream_async early; it is closed only when the "
            "event loop shuts down"
        ),
    },
}
"""Host name to {clause id: why it fails today}."""


class TestReferenceAgentConformance(ConformanceSuite):
    harness = load_harness("reference")
    known_failures = KNOWN_FAILURES["reference"]


class TestStrandsBridgeConformance(ConformanceSuite):
    harness = load_harness("strands")
    known_failures = KNOWN_FAILURES["strands"]
