"""Running clauses against a harness, and the table of what happened.

Every clause runs with the harness's scripted model; every model-stage clause runs a second time
with the host's native model when the harness offers one (`Harness.model`). Each clause runs in
an event loop of its own with a fresh `Trial`, so one clause's failure (or leak) cannot change the
next one's outcome, and with a time limit, so a host that hangs fails the clause instead of
stopping the kit.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from ._clause import Clause, ClauseFailed, NotApplicable, Trial
from ._clauses import CLAUSES
from ._harness import NATIVE_MODEL, Capability, Harness, native_model_of

__all__ = [
    "ClauseResult",
    "HostReport",
    "Outcome",
    "format_table",
    "known_failures_of",
    "run_clause",
    "run_conformance",
]

TIME_LIMIT = 30.0
"""Seconds one clause may take before the host is called stuck."""

FRESH_PROCESS_TIME_LIMIT = 150.0
"""Seconds a clause that resumes a run in a fresh Python process may take: that process imports
the host framework first, which a loaded machine can take most of ``TIME_LIMIT`` over (the
child itself is given 120 s)."""

_IN_A_FRESH_PROCESS = frozenset({"paused_run_resumes_in_a_fresh_agent"})
"""The clauses that start a Python process on a host declaring ``RESUME_IN_ANOTHER_PROCESS``."""


class _OutOfTime(Exception):
    """A clause ran past its time limit."""


class Outcome(enum.Enum):
    """What a clause found."""

    PASS = "pass"
    FAIL = "FAIL"
    NOT_APPLICABLE = "n/a"


@dataclass(frozen=True)
class ClauseResult:
    """One clause on one host.

    Attributes:
        clause: The clause.
        outcome: What it found.
        detail: Why it failed, or a note on what it checked.
        native: The run played its scripts through the host's native model.
    """

    clause: Clause
    outcome: Outcome
    detail: str = ""
    native: bool = False

    @property
    def key(self) -> str:
        """The clause's id, followed by ``[native model]`` for a run with the native model: what
        `Harness.known_failures` lists."""
        return f"{self.clause.id}{NATIVE_MODEL}" if self.native else self.clause.id


def run_clause(
    harness: Harness, clause: Clause, *, native: bool = False, time_limit: float = TIME_LIMIT
) -> ClauseResult:
    """Run one clause against ``harness``, in an event loop of its own.

    A capability the harness does not declare runs the clause's ``otherwise`` check instead
    (or gives "n/a" when there is nothing to check). With ``native``, the clause's scripts play
    through the harness's ``native_model``. Must be called with no event loop running.
    """
    result = _run_clause(harness, clause, native, time_limit)
    return ClauseResult(result.clause, result.outcome, result.detail, native)


def _run_clause(harness: Harness, clause: Clause, native: bool, time_limit: float) -> ClauseResult:
    check = clause.check
    if (
        clause.id in _IN_A_FRESH_PROCESS
        and Capability.RESUME_IN_ANOTHER_PROCESS in harness.capabilities
    ):
        time_limit = max(time_limit, FRESH_PROCESS_TIME_LIMIT)
    if clause.needs is not None and clause.needs not in harness.capabilities:
        if clause.otherwise is None:
            return ClauseResult(
                clause, Outcome.NOT_APPLICABLE, f"the host does not declare {clause.needs.value}"
            )
        check = clause.otherwise

    async def attempt() -> str | None:
        # Not wait_for: a TimeoutError the host itself raises must not read as the time limit.
        task = asyncio.ensure_future(check(Trial(harness, native=native)))
        done, _pending = await asyncio.wait({task}, timeout=time_limit)
        if not done:
            task.cancel()
            raise _OutOfTime
        return task.result()

    try:
        note = asyncio.run(attempt())
    except ClauseFailed as failure:
        return ClauseResult(clause, Outcome.FAIL, str(failure))
    except NotApplicable as reason:
        return ClauseResult(clause, Outcome.NOT_APPLICABLE, str(reason))
    except _OutOfTime:
        return ClauseResult(clause, Outcome.FAIL, f"the host did not finish in {time_limit:g} s")
    except (Exception, asyncio.CancelledError) as error:
        return ClauseResult(
            clause, Outcome.FAIL, f"the host raised {type(error).__name__}: {error}"
        )
    return ClauseResult(clause, Outcome.PASS, note or "")


@dataclass(frozen=True)
class HostReport:
    """Every clause's result on one host, judged against the failures expected there.

    Attributes:
        host: The harness's name.
        results: One per clause, in clause order, then one per model-stage clause run with the
            native model.
        known_failures: `ClauseResult.key` to the reason it is expected to fail (the upstream
            behaviour), from `Harness.known_failures`.
    """

    host: str
    results: tuple[ClauseResult, ...]
    known_failures: Mapping[str, str]

    @property
    def unexpected(self) -> list[ClauseResult]:
        """Failures not listed as known."""
        return [
            r
            for r in self.results
            if r.outcome is Outcome.FAIL and r.key not in self.known_failures
        ]

    @property
    def fixed(self) -> list[ClauseResult]:
        """Clauses listed as known failures that did not fail: the list is out of date."""
        return [
            r
            for r in self.results
            if r.key in self.known_failures and r.outcome is not Outcome.FAIL
        ]

    @property
    def unknown_ids(self) -> list[str]:
        """Known-failure ids that name no clause that ran."""
        ran = {r.key for r in self.results}
        return sorted(set(self.known_failures) - ran)

    @property
    def ok(self) -> bool:
        """No clause failed except the known failures; a known failure that passes is reported
        (`fixed`) but does not make the run fail."""
        return not self.unexpected

    def summary(self, *, native: bool = False) -> str:
        """``HOST: N clauses, P pass, F fail, K known failures`` for the scripted model's runs
        (or, with ``native``, for the native model's), with the n/a count when there is one."""
        results = [r for r in self.results if r.native is native]
        passed = sum(r.outcome is Outcome.PASS for r in results)
        failed = sum(
            r.outcome is Outcome.FAIL and r.key not in self.known_failures for r in results
        )
        known = sum(r.outcome is Outcome.FAIL and r.key in self.known_failures for r in results)
        skipped = sum(r.outcome is Outcome.NOT_APPLICABLE for r in results)
        name = f"{self.host} {NATIVE_MODEL}" if native else self.host
        line = (
            f"{name}: {len(results)} clauses, {passed} pass, {failed} fail, {known} known failures"
        )
        return f"{line} ({skipped} n/a)" if skipped else line

    @property
    def has_native_runs(self) -> bool:
        """Whether model-stage clauses ran with the host's native model too."""
        return any(r.native for r in self.results)


def run_conformance(
    harness: Harness,
    *,
    clauses: Sequence[Clause] = CLAUSES,
    known_failures: Mapping[str, str] | None = None,
) -> HostReport:
    """Run ``clauses`` (all of them by default) against ``harness``.

    Model-stage clauses run again with the harness's native model when it offers one. The known
    failures are the harness's own (`Harness.known_failures`) unless ``known_failures`` is given.
    """
    results = [run_clause(harness, clause) for clause in clauses]
    if native_model_of(harness) is not None:
        results.extend(
            run_clause(harness, clause, native=True) for clause in clauses if clause.model_stage
        )
    if known_failures is None:
        known_failures = known_failures_of(harness)
    return HostReport(harness.name, tuple(results), dict(known_failures))


def known_failures_of(harness: Harness) -> Mapping[str, str]:
    """The harness's `Harness.known_failures` (none for a harness that declares none)."""
    found: object = getattr(harness, "known_failures", None)
    if found is None:
        return {}
    if not isinstance(found, Mapping):
        raise TypeError(
            f"{harness.name}: known_failures is a {type(found).__name__}; give a mapping of "
            "clause id to why the host breaks it"
        )
    return cast("Mapping[str, str]", found)


def _cell(report: HostReport, result: ClauseResult | None) -> str:
    if result is None:
        return "-"
    if result.key in report.known_failures:
        return "FAIL (known)" if result.outcome is Outcome.FAIL else "pass (listed as known!)"
    return result.outcome.value


def format_table(reports: Iterable[HostReport]) -> str:
    """A Markdown table, clause by host, then each host's summary lines, why each failure failed
    and what each note says."""
    reports = list(reports)
    if not reports:
        return "(no host ran)"
    keys: dict[str, ClauseResult] = {}
    for report in reports:
        for result in report.results:
            keys.setdefault(result.key, result)
    header = ["#", "clause", "cites", *(r.host for r in reports)]
    rows = [header, ["---:", "---", "---", *("---" for _ in reports)]]
    found = [{r.key: r for r in report.results} for report in reports]
    for number, (key, first) in enumerate(keys.items(), 1):
        rows.append(
            [
                str(number),
                f"`{first.clause.id}`" + (f" {NATIVE_MODEL}" if first.native else ""),
                first.clause.cites[0],
                *(
                    _cell(report, by_key.get(key))
                    for report, by_key in zip(reports, found, strict=True)
                ),
            ]
        )
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    for report in reports:
        lines.append("")
        lines.append(report.summary())
        if report.has_native_runs:
            lines.append(report.summary(native=True))
        for result in report.results:
            reason = report.known_failures.get(result.key)
            if result.outcome is Outcome.FAIL:
                label = f"known failure ({reason})" if reason else "FAIL"
                lines.append(f"  {label} {result.key}: {result.detail}")
            elif reason is not None:
                lines.append(
                    f"  listed as a known failure ({reason}) but {result.outcome.value}: "
                    f"{result.key}; remove it from the harness's known_failures"
                )
            elif result.detail:
                lines.append(f"  {result.outcome.value} {result.key}: {result.detail}")
        lines.extend(
            f"  known failure {unknown!r} names no clause that ran"
            for unknown in report.unknown_ids
        )
    return "\n".join(lines)
