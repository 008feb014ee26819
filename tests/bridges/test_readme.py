"""The strands host page (docs/hosts/strands.md) shows the type-checked code in typings/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bridge_section() -> str:
    return (ROOT / "docs" / "hosts" / "strands.md").read_text()


def test_every_snippet_of_the_bridge_section_is_in_the_type_checked_copy() -> None:
    snippets = re.findall(r"```python\n(.*?)```", bridge_section(), re.DOTALL)
    checked = (ROOT / "typings" / "strands_bridge_readme.py").read_text()
    assert snippets, "the strands host page has no python snippet"
    assert [s for s in snippets if s not in checked] == []


def test_the_bridge_section_lists_every_private_strands_name_the_bridge_reads() -> None:
    from strands_middleware.bridges.strands._seams import PRIVATE_NAMES

    section = bridge_section()
    assert "bridges/strands/_seams.py" in section
    for module, name in PRIVATE_NAMES:
        assert module in section, module
        assert f"`{name}`" in section or f"`{module}.{name}`" in section, name
