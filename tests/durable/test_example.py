"""examples/durable_approval.py, run as its docstring says: a worker, a start, an answer."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from .temporal_server import TemporalServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "durable_approval.py"


def test_a_run_waits_for_the_approval_given_from_another_process(
    temporal_server: TemporalServer,
) -> None:
    options = ["--address", temporal_server.address, "--task-queue", f"ex-{uuid.uuid4().hex[:8]}"]

    def command(*arguments: str) -> list[str]:
        completed = subprocess.run(
            [sys.executable, str(EXAMPLE), *options, *arguments],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 0, (arguments, completed.returncode, completed.stderr)
        return completed.stdout.splitlines()

    worker = subprocess.Popen(
        [sys.executable, str(EXAMPLE), *options, "worker"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().startswith("worker serving 'refunds'")
        approved, denied = f"refund-{uuid.uuid4().hex[:8]}", f"refund-{uuid.uuid4().hex[:8]}"
        assert command("start", approved) == [
            f"started {approved}",
            # The query's JSON arrives with its keys sorted.
            "waiting: approve-tool-call about "
            "{'input': {'amount': 12.5, 'order': 7}, 'name': 'refund', 'toolUseId': 'r-1'}",
        ]
        lines = command("approve", approved)
        assert lines[0].startswith("approve: v1:middleware_execute_tool:r-1:")
        assert lines[1] == "stop_reason=end_turn answer=Done: refunded 12.50 EUR on order 7."
        command("start", denied)
        assert command("deny", denied)[1] == (
            "stop_reason=end_turn answer=No refund: A human denied this call to 'refund'."
        )
    finally:
        worker.kill()
        worker.wait()
        if worker.stdout is not None:
            worker.stdout.close()
