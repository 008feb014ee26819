"""examples/multi_worker.py runs against a local redis-server and prints what it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .redis_server import RedisServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "multi_worker.py"


def test_the_multi_worker_example_shares_limits_a_cache_and_a_paused_run(
    redis_server: RedisServer,
) -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "REDIS_URL": redis_server.url},
    )
    assert completed.stdout.splitlines() == [
        "answered: 8 questions in 4 workers; never more than 2 model calls at once: True",
        "cache: a question asked again in another worker took 0 model calls",
        "budget: 80 tokens spent across workers",
        "paused: run-42 waits for approval of delete_file {'path': '/tmp/report.txt'}",
        "claims: 4 workers got the approval, 1 claimed run-42 and resumed it: Done.",
    ]
