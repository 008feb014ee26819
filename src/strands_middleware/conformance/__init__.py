"""The host conformance kit: the middleware contract as executable clauses, run against any host.

A framework author writes one small `Harness` (build an agent of the framework from an
`AgentSetup`, drive it through `HostAgent`), then runs every clause against it:

* from a test suite: subclass `strands_middleware.conformance.suite.ConformanceSuite` (needs
  pytest), one test per clause;
* from a shell: ``python -m strands_middleware.conformance package.module:harness_factory``
  prints the table (clause by result) and exits 0 only when every clause passes.

Each clause is named for what it checks and cites the section of the spec, the docs or DESIGN
that says so (`CLAUSES`). A harness declares the `Capability` values its host has; for one it
does not declare, the clause checks what an honest host without it does instead (refuses such
middleware at registration), so nothing is skipped in silence. The harnesses of this
repository's hosts (`hosts.BUILT_IN_HOSTS`: ``reference``, ``strands``) are the examples.
"""

from __future__ import annotations

from .clause import Clause, ClauseFailed, NotApplicable, Toolbox, Trial, expect
from .clauses import CLAUSES
from .harness import AgentSetup, Capability, Harness, HookName, HostAgent, RunReport
from .hosts import BUILT_IN_HOSTS, load_harness
from .runner import ClauseResult, HostReport, Outcome, format_table, run_clause, run_conformance

__all__ = [
    "BUILT_IN_HOSTS",
    "CLAUSES",
    "AgentSetup",
    "Capability",
    "Clause",
    "ClauseFailed",
    "ClauseResult",
    "Harness",
    "HookName",
    "HostAgent",
    "HostReport",
    "NotApplicable",
    "Outcome",
    "RunReport",
    "Toolbox",
    "Trial",
    "expect",
    "format_table",
    "load_harness",
    "run_clause",
    "run_conformance",
]
