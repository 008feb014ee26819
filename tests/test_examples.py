"""Every program in examples/ runs and prints what its docstring promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str) -> str:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return completed.stdout


def test_custom_stage_example_normalises_caches_and_stamps() -> None:
    lines = run_example("custom_stage.py").splitlines()
    assert lines == [
        "SearchEvent {'note': \"searching for 'agent loops'\"}",
        "SearchDone {'hits': ['agent loops #1', 'agent loops #2'], 'engine': 'demo'}",
        "SearchEvent {'note': 'served from cache'}",
        "SearchDone {'hits': ['agent loops #1', 'agent loops #2'], 'engine': 'demo'}",
    ]
