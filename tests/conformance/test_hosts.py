"""This repository's hosts against the conformance kit, one test per clause and host.

``KNOWN_FAILURES`` is the one list of clauses a host breaks today, each with the issue that
fixes it. A listed clause must fail (xfail); once it passes, its test fails until the entry is
removed. ``make conformance`` reads the same mapping.
"""

from __future__ import annotations

from collections.abc import Mapping

from strands_middleware.conformance.hosts import BUILT_IN_HOSTS, load_harness
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
    "pydantic_ai": {
        "unknown_tool_runs_the_chain_with_tool_none": (
            "pydantic-ai (2.62 and newest tested) answers a call to a tool the agent does not "
            "have itself, before any tool hook runs, so the chain never sees it"
        ),
        "unknown_tool_can_be_answered_by_middleware": (
            "pydantic-ai answers a call to an unknown tool before any tool hook runs, so "
            "middleware cannot answer it"
        ),
        "middleware_retry_is_one_hook_pair": (
            "pydantic-ai's before/after tool-execute hooks run inside the handler its execution "
            "hook is given, so a Wrap handler calling next_fn twice fires them twice"
        ),
    },
    "langchain": {},
    "openai_agents": {
        "unknown_tool_runs_the_chain_with_tool_none": (
            "openai-agents (0.19 to 0.24) raises ModelBehaviorError for a call to a tool "
            "the agent does not have, before any tool runs, so the chain never sees it"
        ),
        "unknown_tool_can_be_answered_by_middleware": (
            "openai-agents (0.19 to 0.24) ends the run with ModelBehaviorError on a "
            "call to an unknown tool, so middleware cannot answer it"
        ),
        "system_prompt_blocks_reach_the_model": (
            "openai-agents (0.19 to 0.24) takes an agent's instructions as one string, "
            "so system prompt blocks reach the model joined into one"
        ),
        "raising_tool_becomes_an_error_result": (
            "openai-agents (0.19 to 0.24) keeps a tool's output as a "
            "function_call_output item, which has no status: a failed call reaches the "
            "model as its text, not as an error"
        ),
        "catalog_tool_approval_gates_the_tool": (
            "openai-agents (0.19 to 0.24) keeps a tool's output as a "
            "function_call_output item, which has no status: a denied call reaches the "
            "model as its text, not as an error"
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


if BUILT_IN_HOSTS["langchain"].installed:  # the langchain extra

    class TestLangChainBridgeConformance(ConformanceSuite):
        harness = load_harness("langchain")
        known_failures = KNOWN_FAILURES["langchain"]


if BUILT_IN_HOSTS["pydantic_ai"].installed:  # pydantic-ai needs Python 3.11 or newer

    class TestPydanticAIBridgeConformance(ConformanceSuite):
        harness = load_harness("pydantic_ai")
        known_failures = KNOWN_FAILURES["pydantic_ai"]


if BUILT_IN_HOSTS["openai_agents"].installed:  # the openai-agents extra

    class TestOpenAIAgentsBridgeConformance(ConformanceSuite):
        harness = load_harness("openai_agents")
        known_failures = KNOWN_FAILURES["openai_agents"]
