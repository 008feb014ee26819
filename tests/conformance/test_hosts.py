"""This repository's hosts against the conformance kit, one test per clause and host.

Each harness declares its own known failures (``known_failures`` on its class); the suite reads
them from there, as ``python -m strands_middleware.conformance`` does. A listed clause must fail
(xfail); once it passes, its test fails until the entry is removed.
"""

from __future__ import annotations

from strands_middleware.conformance import BUILT_IN_HOSTS, load_harness
from strands_middleware.conformance.suite import ConformanceSuite


class TestReferenceAgentConformance(ConformanceSuite):
    harness = load_harness("reference")


class TestStrandsBridgeConformance(ConformanceSuite):
    harness = load_harness("strands")


if BUILT_IN_HOSTS["langchain"].installed:  # the langchain extra

    class TestLangChainBridgeConformance(ConformanceSuite):
        harness = load_harness("langchain")


if BUILT_IN_HOSTS["pydantic_ai"].installed:  # pydantic-ai needs Python 3.11 or newer

    class TestPydanticAIBridgeConformance(ConformanceSuite):
        harness = load_harness("pydantic_ai")
