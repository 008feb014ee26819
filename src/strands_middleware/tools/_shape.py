"""The tool shape the agent loop calls: `AgentTool`, a `typing.Protocol`."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Protocol

from ..content import ToolSpec, ToolUse

__all__ = ["AgentTool"]


class AgentTool(Protocol):
    """A tool the agent loop can offer to the model and call.

    Structural, so any object with these members is a tool: a `FunctionTool` from `tool`, a class
    of your own that streams progress, a proxy to a remote tool.
    """

    @property
    def tool_name(self) -> str:
        """The name the model calls the tool by; the same as ``tool_spec["name"]``."""
        ...

    @property
    def tool_spec(self) -> ToolSpec:
        """What the model is told about the tool: name, description and input schema."""
        ...

    def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        """Run one call and stream its events; the last event is its `ToolResultEvent`.

        Events before the result are progress (a host wraps them in `ToolStreamEvent`). A tool
        that halts for a human yields a `ToolInterruptEvent` or raises `InterruptException`
        instead of producing a result.

        Args:
            tool_use: The call the model asked for: id, name and parsed input.
            invocation_state: The per-invocation state dict the caller passed to the agent,
                shared by reference so a tool can leave something for later stages.
            **kwargs: Host-specific extras; a tool must accept and may ignore them. Every
                host of this library passes ``cancel_signal``, the call's `threading.Event`,
                set when the run is being cancelled (``ExecuteToolContext.cancel_signal``).
        """
        ...
