"""The README's bridge section shows code that type-checks: the code in typings/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bridge_section() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## On a strands.Agent")
    return readme[start : readme.index("\n## ", start + 1)]


def test_every_snippet_of_the_bridge_section_is_in_the_type_checked_copy() -> None:
    snippets = re.findall(r"```python\n(.*?)```", bridge_section(), re.DOTALL)
    checked = (ROOT / "typings" / "strands_bridge_readme.py").read_text()
    assert snippets, "the bridge section has no python snippet"
    assert [s for s in snippets if s not in checked] == []


def test_the_bridge_section_lists_every_private_strands_name_the_bridge_reads() -> None:
    from strands_middleware.bridges.strands._seams import PRIVATE_NAMES

    section = bridge_section()
    assert "bridges/strands/_seams.py" in section
    for module, name in PRIVATE_NAMES:
        assert module in section, module
        assert f"`{name}`" in section or f"`{module}.{name}`" in section, name
