"""Google-style docstrings read for a tool's description and its parameters' descriptions."""

from __future__ import annotations

import re

_ARGS_HEADERS = frozenset({"Args:", "Arguments:", "Parameters:", "Params:"})
_SECTION_HEADERS = frozenset(
    {
        *_ARGS_HEADERS,
        "Attributes:",
        "Example:",
        "Examples:",
        "Keyword Args:",
        "Keyword Arguments:",
        "Note:",
        "Notes:",
        "Other Parameters:",
        "Raises:",
        "References:",
        "Return:",
        "Returns:",
        "See Also:",
        "Warning:",
        "Warnings:",
        "Yield:",
        "Yields:",
    }
)
_ARG_ENTRY = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")


def first_paragraph(docstring: str) -> str:
    """The docstring's opening paragraph, on one line: it ends at a blank line or a section."""
    lines: list[str] = []
    for line in docstring.splitlines():
        stripped = line.strip()
        if not stripped or stripped in _SECTION_HEADERS:
            break
        lines.append(stripped)
    return " ".join(lines)


def parse_args_section(docstring: str) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section, continuation lines joined."""
    lines = docstring.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() in _ARGS_HEADERS), None)
    if start is None:
        return {}
    header_indent = _indent(lines[start])
    entry_indent: int | None = None
    descriptions: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[start + 1 :]:
        stripped = line.strip()
        if not stripped:
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break
        if entry_indent is None:
            entry_indent = indent
        match = _ARG_ENTRY.match(stripped) if indent <= entry_indent else None
        if match is not None:
            current = descriptions.setdefault(match["name"], [])
            if match["text"]:
                current.append(match["text"].strip())
        elif current is not None:
            current.append(stripped)
    return {name: " ".join(parts) for name, parts in descriptions.items() if parts}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
