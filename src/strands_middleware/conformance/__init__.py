"""The host conformance kit: the middleware contract as executable clauses, run against any host.

A framework author writes one small `Harness` (build an agent of the framework from an
`AgentSetup`, drive it through `HostAgent`), then runs every clause against it:

* from a test suite: subclass `strands_middleware.conformance.suite.ConformanceSuite` (needs
  pytest), one test per clause;
* from a shell: ``python -m strands_middleware.conformance package.module:harness_factory``
  prints the table (clause by result) and the summary line ``HOST: N clauses, P pass, F fail, K
  known failures``, and exits 0 unless a clause fails that the harness does not list in its
  ``known_failures``.

Each clause is named for what it checks and cites the section of the spec, the docs or DESIGN
that says so (`CLAUSES`). A harness declares the `Capability` values its host has; for one it
does not declare, the clause checks what an honest host without it does instead (refuses such
middleware at registration), so nothing is skipped in silence. The harnesses of this
repository's hosts (`BUILT_IN_HOSTS`) are the examples; ``docs/writing-a-host.md`` walks through
writing one.
"""

from __future__ import annotations

from ._clause import Clause
from ._clauses import CLAUSES
from ._harness import (
    NATIVE_MODEL,
    AgentSetup,
    Capability,
    Harness,
    HookName,
    HookRecorder,
    HostAgent,
    RunReport,
    is_agent_tool,
)
from ._hosts import BUILT_IN_HOSTS, load_harness
from ._runner import (
    ClauseResult,
    HostReport,
    Outcome,
    format_table,
    known_failures_of,
    run_clause,
    run_conformance,
)

__all__ = [
    "BUILT_IN_HOSTS",
    "CLAUSES",
    "NATIVE_MODEL",
    "AgentSetup",
    "Capability",
    "Clause",
    "ClauseResult",
    "Harness",
    "HookName",
    "HookRecorder",
    "HostAgent",
    "HostReport",
    "Outcome",
    "RunReport",
    "format_table",
    "is_agent_tool",
    "known_failures_of",
    "load_harness",
    "run_clause",
    "run_conformance",
]
