"""The pydantic-ai host page (docs/hosts/pydantic-ai.md) shows the code in typings/.

tests/test_doc_snippets.py checks and runs the page's snippet where pydantic-ai is installed;
this test also holds it to the copy in typings/, which ``make typecheck`` checks.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def bridge_section() -> str:
    return (ROOT / "docs" / "hosts" / "pydantic-ai.md").read_text()


def test_every_snippet_of_the_pydantic_ai_section_is_in_the_type_checked_copy() -> None:
    snippets = re.findall(r"```python\n(.*?)```", bridge_section(), re.DOTALL)
    checked = (ROOT / "typings" / "pydantic_ai_bridge_readme.py").read_text()
    assert snippets, "the pydantic-ai host page has no python snippet"
    assert [s for s in snippets if s not in checked] == []


def test_the_page_snippet_runs_and_resumes_from_json() -> None:
    # In a process of its own: pydantic-ai's run_sync leaves its event loop open.
    code = (
        "import runpy; print(runpy.run_path('typings/pydantic_ai_bridge_readme.py')['done'].output)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "Deleted."
