"""examples/openai_agents_portable.py prints the same story on both hosts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "openai_agents_portable.py"


def test_one_middleware_object_tells_the_same_story_on_both_hosts() -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=True
    )
    lines = completed.stdout.splitlines()
    logged = "  model calls logged: ['1 messages -> tool_use', '3 messages -> end_turn']"
    for host in ("reference", "openai-agents"):
        assert f"[{host}] paused: asks ['approve-tool-call']" in lines
        done = f"[{host}] done: 'The report is gone.', deleted ['/tmp/report.txt']"
        assert done in lines
    assert lines.count(logged) == 2
