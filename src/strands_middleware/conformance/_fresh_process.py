"""Resume a saved paused run in this (fresh) process and report what happened, as JSON.

The parent (the clause ``paused_run_resumes_in_a_fresh_agent``) writes
``{"harness": "<module>:<class>", "saved": ..., "responses": [...]}`` to stdin and reads the
report from stdout.
"""

from __future__ import annotations

import asyncio
import json
import sys

from ._clauses.interrupts import resumed_report
from ._hosts import load_harness


def main() -> None:
    """Read the request from stdin, resume, write the report to stdout."""
    request = json.load(sys.stdin)
    harness = load_harness(request["harness"])
    report = asyncio.run(resumed_report(harness, request["saved"], request["responses"]))
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
