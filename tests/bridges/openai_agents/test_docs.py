"""The host page's Python blocks run as they are (offline, scripted model)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "hosts" / "openai-agents.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)


def test_the_page_has_python_blocks() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_python_block_of_the_page_runs(index: int) -> None:
    # In a process of its own: each block runs its own event loop with asyncio.run.
    completed = subprocess.run(
        [sys.executable, "-c", BLOCKS[index]], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
