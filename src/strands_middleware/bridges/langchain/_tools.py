"""``ExecuteToolContext.tool`` across the boundary: a LangChain tool as handlers see it."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool

from ...content import ToolSpec, ToolUse
from ...events import ToolResultEvent
from ._converse import converse_tool_result, converse_tool_specs

__all__ = ["LangChainTool", "tool_in"]


class LangChainTool:
    """A LangChain tool as handlers see it (``context.tool`` on a LangChain agent).

    Attributes:
        host: The LangChain tool itself.
    """

    __slots__ = ("host",)

    def __init__(self, host: BaseTool) -> None:
        self.host = host

    @property
    def tool_name(self) -> str:
        """The name the model calls the tool by."""
        return self.host.name

    @property
    def tool_spec(self) -> ToolSpec:
        """The tool's spec in Converse shape."""
        return converse_tool_specs([self.host])[0]

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[ToolResultEvent, None]:
        """Run the LangChain tool on ``tool_use``; its `ToolMessage` arrives as a result event."""
        call = ToolCall(
            name=tool_use["name"],
            args=dict(tool_use["input"]),
            id=tool_use["toolUseId"],
            type="tool_call",
        )
        answer: Any = await self.host.ainvoke(call)
        if not isinstance(answer, ToolMessage):
            answer = ToolMessage(content=str(answer), tool_call_id=tool_use["toolUseId"])
        yield ToolResultEvent(converse_tool_result(answer))

    def __repr__(self) -> str:
        return f"LangChainTool({self.host!r})"


def tool_in(host: BaseTool | None) -> LangChainTool | None:
    """What a handler sees of LangChain's tool (``None`` for a tool the agent does not have)."""
    return None if host is None else LangChainTool(host)
