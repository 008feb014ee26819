"""Running clauses against a harness, and the table of what happened.

Each clause runs in an event loop of its own with a fresh `Trial`, so one clause's failure (or
leak) cannot change the next one's outcome, and with a time limit, so a host that hangs fails
the clause instead of stopping the kit.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .clause import Clause, ClauseFailed, NotApplicable, Trial
from .clauses import CLAUSES
from .harness import Harness

__all__ = [
    "ClauseResult",
    "HostReport",
    "Outcome",
    "format_table",
    "run_clause",
    "run_conformance",
]

TIME_LIMIT = 30.0
"""Seconds one clause may take before the host is called stuck."""


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
    """

    clause: Clause
    outcome: Outcome
    detail: str = ""


def run_clause(harness: Harness, clause: Clause, *, time_limit: float = TIME_LIMIT) -> ClauseResult:
    """Run one clause against ``harness``, in an event loop of its own.

    A capability the harness does not declare runs the clause's ``otherwise`` check instead
    (or gives "n/a" when there is nothing to check). Must be called with no event loop running.
    """
    check = clause.check
    if clause.needs is not None and clause.needs not in harness.capabilities:
        if clause.otherwise is None:
            return ClauseResult(
                clause, Outcome.NOT_APPLICABLE, f"the host does not declare {clause.needs.value}"
            )
        check = clause.otherwise

    async def attempt() -> str | None:
        # Not wait_for: a TimeoutError the host itself raises must not read as the time limit.
        task = asyncio.ensure_future(check(Trial(harness)))
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
        results: One per clause, in clause order.
        known_failures: Clause id to the reason it is expected to fail (an open issue).
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
            if r.outcome is Outcome.FAIL and r.clause.id not in self.known_failures
        ]

    @property
    def fixed(self) -> list[ClauseResult]:
        """Clauses listed as known failures that did not fail: the list is out of date."""
        return [
            r
            for r in self.results
            if r.clause.id in self.known_failures and r.outcome is not Outcome.FAIL
        ]

    @property
    def unknown_ids(self) -> list[str]:
        """Known-failure ids that name no clause that ran."""
        ran = {r.clause.id for r in self.results}
        return sorted(set(self.known_failures) - ran)

    @property
    def ok(self) -> bool:
        """Every clause passed, except exactly the known failures, which failed."""
        return not (self.unexpected or self.fixed or self.unknown_ids)


def run_conformance(
    harness: Harness,
    *,
    clauses: Sequence[Clause] = CLAUSES,
    known_failures: Mapping[str, str] | None = None,
) -> HostReport:
    """Run ``clauses`` (all of them by default) against ``harness``."""
    results = tuple(run_clause(harness, clause) for clause in clauses)
    return HostReport(harness.name, results, dict(known_failures or {}))


def _cell(report: HostReport, result: ClauseResult) -> str:
    if result.clause.id in report.known_failures:
        return "FAIL (known)" if result.outcome is Outcome.FAIL else "pass (listed as known!)"
    return result.outcome.value


def format_table(reports: Iterable[HostReport]) -> str:
    """A Markdown table, clause by host, then why each failure failed and what each note says."""
    reports = list(reports)
    if not reports:
        return "(no host ran)"
    header = ["#", "clause", "cites", *(r.host for r in reports)]
    rows = [header, ["---:", "---", "---", *("---" for _ in reports)]]
    for number, results in enumerate(zip(*(r.results for r in reports), strict=True), 1):
        first = results[0].clause
        rows.append(
            [
                str(number),
                f"`{first.id}`",
                first.cites[0],
                *(_cell(report, result) for report, result in zip(reports, results, strict=True)),
            ]
        )
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    for report in reports:
        passed = sum(r.outcome is Outcome.PASS for r in report.results)
        known = sum(
            r.outcome is Outcome.FAIL and r.clause.id in report.known_failures
            for r in report.results
        )
        lines.append("")
        lines.append(
            f"{report.host}: {len(report.results)} clauses, {passed} pass, "
            f"{len(report.unexpected)} fail, {known} known failures, "
            f"{sum(r.outcome is Outcome.NOT_APPLICABLE for r in report.results)} n/a"
        )
        for result in report.results:
            reason = report.known_failures.get(result.clause.id)
            if result.outcome is Outcome.FAIL:
                label = f"known failure ({reason})" if reason else "FAIL"
                lines.append(f"  {label} {result.clause.id}: {result.detail}")
            elif reason is not None:
                lines.append(
                    f"  listed as a known failure ({reason}) but {result.outcome.value}: "
                    f"{result.clause.id}; remove it from the known failures"
                )
            elif result.detail:
                lines.append(f"  {result.outcome.value} {result.clause.id}: {result.detail}")
        lines.extend(
            f"  known failure {unknown!r} names no clause that ran"
            for unknown in report.unknown_ids
        )
    return "\n".join(lines)
