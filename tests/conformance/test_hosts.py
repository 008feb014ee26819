"""This repository's hosts against the conformance kit, one test per clause and host.

``KNOWN_FAILURES`` is the one list of clauses a host breaks today, each with the issue that
fixes it. A listed clause must fail (xfail); once it passes, its test fails until the entry is
removed. ``make conformance`` reads the same mapping.
"""

from __future__ import annotations

from collections.abc import Mapping

from strands_middleware.conformance.hosts import load_harness
from strands_middleware.conformance.suite import ConformanceSuite

KNOWN_FAILURES: Mapping[str, Mapping[str, str]] = {
    "reference": {},
    "strands": {
        "handlers_closed_innermost_first_on_early_stop": (
            "strands-agents (1.62 and newest tested): when the caller closes stream_async early, "
            "strands' event loop leaves the model-stage chain suspended; it is closed only when "
            "the asyncio event loop shuts down"
        ),
    },
}
"""Host name to {clause id: why it fails today}."""

KNOWN_FAILURES = {**KNOWN_FAILURES, "langchain": {}}


class TestReferenceAgentConformance(ConformanceSuite):
    harness = load_harness("reference")
    known_failures = KNOWN_FAILURES["reference"]


class TestStrandsBridgeConformance(ConformanceSuite):
    harness = load_harness("strands")
    known_failures = KNOWN_FAILURES["strands"]


class TestLangChainBridgeConformance(ConformanceSuite):
    harness = load_harness("langchain")
    known_failures = KNOWN_FAILURES["langchain"]
