"""``ExecuteToolContext.tool`` across the boundary, both ways.

A strands tool has the members of this library's `AgentTool` but streams strands' events, so
handlers get it as a `StrandsTool`: the same name and (Converse) spec, a ``stream`` whose events
and interrupts are this library's. Back at the terminal it is strands' own tool again. A tool a
handler puts in its place with ``context.replace(tool=...)`` reaches strands as it is when it is
a strands tool, and as a `LibraryTool` when it is one of this library's (``@tool`` functions and
anything else with the `AgentTool` members), whose events and interrupts go the other way.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from strands.interrupt import InterruptException as HostInterruptException
from strands.types.tools import AgentTool as HostAgentTool

from ...content import ToolSpec, ToolUse
from ...events import TypedEvent
from ...exceptions import InterruptException
from ...tools import AgentTool
from ._converse import TOOL_SPEC_KEYS, view
from ._translate import (
    Crossing,
    inbound,
    interrupt_exception_in,
    interrupt_exception_out,
    outbound,
)

__all__ = ["LibraryTool", "StrandsTool", "tool_in", "tool_out"]


class StrandsTool:
    """A strands tool as handlers see it (``context.tool`` on a strands agent).

    Attributes:
        host: The strands tool itself.
    """

    __slots__ = ("host",)

    def __init__(self, host: Any) -> None:
        self.host = host

    @property
    def tool_name(self) -> str:
        """The name the model calls the tool by."""
        name: str = self.host.tool_name
        return name

    @property
    def tool_spec(self) -> ToolSpec:
        """The tool's spec in Converse shape (without strands-only keys such as ``annotations``)."""
        spec: ToolSpec = view(self.host.tool_spec, TOOL_SPEC_KEYS)
        return spec

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        """Run the strands tool; its strands events arrive as this library's."""
        crossing = Crossing(None, invocation_state)
        stream = self.host.stream(tool_use, invocation_state, **kwargs)
        try:
            async for event in stream:
                if isinstance(event, dict):
                    yield inbound(event, crossing)
                else:
                    yield event
        except HostInterruptException as error:
            raise interrupt_exception_in(error) from error
        finally:
            await stream.aclose()

    def __repr__(self) -> str:
        return f"StrandsTool({self.host!r})"


class LibraryTool(HostAgentTool):
    """A tool of this library offered to the strands loop; its events go back as strands'."""

    def __init__(self, tool: AgentTool) -> None:
        super().__init__()
        self.tool = tool

    @property
    def tool_name(self) -> str:
        """The tool's own name."""
        return self.tool.tool_name

    @property
    def tool_spec(self) -> Any:
        """The tool's own spec."""
        return self.tool.tool_spec

    @property
    def tool_type(self) -> str:
        """How strands lists the tool's kind."""
        return "strands_middleware"

    async def stream(
        self, tool_use: Any, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        """Run the tool; its events arrive as strands'."""
        crossing = Crossing(None, invocation_state)
        stream = self.tool.stream(tool_use, invocation_state, **kwargs)
        try:
            async for event in stream:
                if isinstance(event, TypedEvent):
                    yield outbound(event, crossing)
                else:
                    yield event
        except InterruptException as error:
            raise interrupt_exception_out(error) from error
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()


def tool_in(host: Any) -> StrandsTool | None:
    """What a handler sees of strands' tool (``None`` for a tool the agent does not have)."""
    return None if host is None else StrandsTool(host)


def tool_out(ours: Any, shown: Any) -> Any:
    """What strands runs for the tool a handler left in the context (``shown``: what it saw)."""
    if ours is shown and ours is not None:
        return ours.host
    if ours is None or isinstance(ours, HostAgentTool):
        return ours
    if isinstance(ours, StrandsTool):
        return ours.host
    return LibraryTool(ours)
