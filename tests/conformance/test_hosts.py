"""This repository's hosts against the conformance kit, one test per clause and host.

Every host in `BUILT_IN_HOSTS` whose framework is installed gets a `ConformanceSuite` of its own
(``TestConformance_reference``, ``TestConformance_langchain``, ...), so a new host needs no line
here. Each harness declares its own known failures (``known_failures`` on its class); the suite
reads them from there, as ``python -m strands_middleware.conformance`` does. A listed clause must
fail (xfail); once it passes, its test fails until the entry is removed.
"""

from __future__ import annotations

from strands_middleware.conformance import BUILT_IN_HOSTS, load_harness
from strands_middleware.conformance.suite import ConformanceSuite


def _suite_name(host: str) -> str:
    # The host's own name in the test ids, so ``-k pydantic_ai`` selects its suite.
    return f"TestConformance_{host}"


for _host, _built_in in BUILT_IN_HOSTS.items():
    if _built_in.installed:  # pydantic-ai needs Python 3.11 or newer; each bridge its extra
        globals()[_suite_name(_host)] = type(
            _suite_name(_host), (ConformanceSuite,), {"harness": load_harness(_host)}
        )


def test_every_installed_host_has_a_suite() -> None:
    for host, built_in in BUILT_IN_HOSTS.items():
        assert (_suite_name(host) in globals()) is built_in.installed, host
