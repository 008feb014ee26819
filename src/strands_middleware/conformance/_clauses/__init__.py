"""The clauses, in the order the table lists them: composition, model calls, tool calls, human
in the loop, cleanup, the boundary, hooks, the agent-stream stage, the catalog."""

from __future__ import annotations

from types import ModuleType

from .._clause import Clause
from . import (
    agent_stream,
    boundary,
    catalog,
    cleanup,
    composition,
    hooks,
    interrupts,
    model_calls,
    tool_calls,
)

__all__ = ["CLAUSES"]


def _clauses_of(module: ModuleType) -> list[Clause]:
    return [value for value in vars(module).values() if isinstance(value, Clause)]


CLAUSES: tuple[Clause, ...] = tuple(
    found
    for module in (
        composition,
        model_calls,
        tool_calls,
        interrupts,
        cleanup,
        boundary,
        hooks,
        agent_stream,
        catalog,
    )
    for found in _clauses_of(module)
)
"""Every clause of the host contract."""
