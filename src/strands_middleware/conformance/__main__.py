"""``python -m strands_middleware.conformance HOST [HOST ...]``: run the kit, print the table.

HOST is a host of this repository by name (``reference``, ``strands``) or a harness of your own
as ``package.module:harness_factory``; ``--all`` runs every host of this repository whose
framework is installed. Each host ends with its summary line, ``HOST: N clauses, P pass, F fail,
K known failures`` (and one more for the runs with the host's native model, when its harness
offers one). The exit status is 0 unless a clause fails that the harness does not list in its
``known_failures``; a listed clause that passes is reported, so the list is kept true.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from ._clauses import CLAUSES
from ._hosts import BUILT_IN_HOSTS, load_harness
from ._runner import HostReport, format_table, known_failures_of, run_conformance


def main(argv: Sequence[str] | None = None) -> int:
    """Run the kit as the command line asks; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m strands_middleware.conformance",
        description="Run the host conformance kit and print the table of clauses by result.",
    )
    parser.add_argument(
        "hosts",
        nargs="*",
        metavar="HOST",
        help=f"{' or '.join(sorted(BUILT_IN_HOSTS))}, or package.module:harness_factory",
    )
    parser.add_argument(
        "--all", action="store_true", help="every host of this repository that is installed"
    )
    parser.add_argument(
        "--clause", action="append", metavar="ID", help="run only this clause (repeatable)"
    )
    parser.add_argument(
        "--list", action="store_true", help="list the clauses (id, what it checks, cites); run none"
    )
    arguments = parser.parse_args(argv)
    if arguments.list:
        for number, each in enumerate(CLAUSES, 1):
            needs = f" [needs: {each.needs.value}]" if each.needs is not None else ""
            print(f"{number}. {each.id}: {each.title}{needs}\n   cites {'; '.join(each.cites)}")
        return 0
    hosts: list[str] = list(arguments.hosts)
    if arguments.all:
        for name, host in BUILT_IN_HOSTS.items():
            if host.installed and name not in hosts:
                hosts.append(name)
            elif not host.installed:
                print(f"{name}: not installed ({host.needs} cannot be imported), not run")
    if not hosts:
        parser.error("name at least one HOST, or --all")
    clauses = CLAUSES
    if arguments.clause:
        chosen = set(arguments.clause)
        clauses = tuple(c for c in CLAUSES if c.id in chosen)
        missing = chosen - {c.id for c in clauses}
        if missing:
            parser.error(f"no such clause: {', '.join(sorted(missing))}")
    # Hosts log the failures the clauses provoke on purpose; the table reports them instead.
    logging.getLogger().addHandler(logging.NullHandler())
    reports: list[HostReport] = []
    for reference in hosts:
        harness = load_harness(reference)
        chosen_ids = {c.id for c in clauses}
        listed = {
            key: reason
            for key, reason in known_failures_of(harness).items()
            if not arguments.clause or key.split("[", 1)[0] in chosen_ids
        }
        reports.append(run_conformance(harness, clauses=clauses, known_failures=listed))
    print(format_table(reports))
    return 0 if all(report.ok for report in reports) else 1


def _run() -> int:
    """`main`, for a reader that may stop reading early (``... --list | head``)."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader has gone: nothing more can be said. Python flushes stdout again at exit,
        # which would fail the same way, so stdout points at the null device from here.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return status


if __name__ == "__main__":
    sys.exit(_run())
