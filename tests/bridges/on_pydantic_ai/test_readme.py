"""The README's pydantic-ai section shows code that type-checks: the code in typings/.

Its snippet is fenced ``py`` (the README's ``python`` snippets are checked on Python 3.10 too,
where pydantic-ai does not install), so this test holds it to the type-checked copy instead.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def bridge_section() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## On a pydantic-ai Agent")
    return readme[start : readme.index("\n## ", start + 1)]


def test_every_snippet_of_the_pydantic_ai_section_is_in_the_type_checked_copy() -> None:
    snippets = re.findall(r"```py\n(.*?)```", bridge_section(), re.DOTALL)
    checked = (ROOT / "typings" / "pydantic_ai_bridge_readme.py").read_text()
    assert snippets, "the pydantic-ai section has no py snippet"
    assert [s for s in snippets if s not in checked] == []


def test_the_readme_snippet_runs_and_resumes_from_json() -> None:
    # In a process of its own: pydantic-ai's run_sync leaves its event loop open.
    code = (
        "import runpy; print(runpy.run_path('typings/pydantic_ai_bridge_readme.py')['done'].output)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "Deleted."
