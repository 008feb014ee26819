"""Agents and models the store tests share, in this process and in worker processes."""

from __future__ import annotations

from typing import Any

from strands_middleware.catalog import ToolApproval
from strands_middleware.engine._stage import Middleware
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool


class ConfiguredModel(ScriptedModel):
    """A scripted model with a configuration, as every strands-agents provider has.

    `Cache` keys a model by its class and ``get_config()``, so equally configured models in
    different processes share cache entries.
    """

    def get_config(self) -> dict[str, Any]:
        return {"model_id": "scripted-model", "temperature": 0}


deleted: list[str] = []
"""What `delete_file` was asked to delete, in this process."""


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    deleted.append(path)
    return f"deleted {path}"


def paused_agent_parts() -> tuple[list[Any], list[Middleware[Any, Any, Any]]]:
    """The tools and middleware of an agent whose delete_file calls wait for approval."""
    return [delete_file], list(ToolApproval(tools=["delete_file"]))


def deletion_script() -> ScriptedModel:
    """Asks to delete a file, then (once the tool ran) says it is done."""
    return ScriptedModel(
        [tool_turn("delete_file", {"path": "/tmp/report.txt"}), text_turn("Done.")]
    )


def approvals(interrupts: list[Any]) -> list[dict[str, Any]]:
    return [
        {"interruptResponse": {"interruptId": interrupt.id, "response": "approve"}}
        for interrupt in interrupts
    ]
