"""Mistakes on ``@tool`` a type checker must reject (type-checked, never run).

As in `engine_negative.py`, each case carries both checkers' ignore comments, and an unneeded
ignore is itself an error, so a case that stops failing fails the check.
"""

from __future__ import annotations

from strands_middleware.tools import tool


@tool
def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


@tool(name="search_docs")
def search(query: str) -> list[str]:
    return [query]


# Calling the tool directly is checked like calling the function.
add("1", 2)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
add(1, c=2)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
search(query=3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
text: str = add(1)  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]

# The decorator's options are keyword-only and typed.
tool("search_docs")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
tool(name=3)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
tool(title="Search")  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]

# What it wraps must be callable.
tool(42)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
