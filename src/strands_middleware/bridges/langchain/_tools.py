"""``ExecuteToolContext.tool`` across the boundary: a LangChain tool as handlers see it."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncGenerator
from typing import Any, cast

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool

from ...content import ToolSpec, ToolUse
from ...events import ToolResultEvent
from ...exceptions import InterruptException
from ...tools import AgentTool
from ._converse import converse_tool_result, converse_tool_specs, tool_message

__all__ = ["LangChainTool", "LibraryTool", "exception_of", "tool_in"]

# The exceptions behind the error results tools of this library answered with, by message. A
# ToolMessage is checkpointed, so the exception cannot ride on it; the bridge reads it from here
# when the answer crosses back into a handler's view. Bounded: the oldest go first.
_FAILURES: OrderedDict[int, tuple[ToolMessage, Exception]] = OrderedDict()
_FAILURES_KEPT = 1024


def exception_of(message: ToolMessage) -> Exception | None:
    """The exception behind an error result a tool of this library answered with, if any.

    Read once: the entry is let go when it is read.
    """
    entry = _FAILURES.get(id(message))
    if entry is None or entry[0] is not message:
        return None
    del _FAILURES[id(message)]
    return entry[1]


def _remember(message: ToolMessage, exception: Exception | None) -> ToolMessage:
    if exception is not None:
        _FAILURES[id(message)] = (message, exception)
        while len(_FAILURES) > _FAILURES_KEPT:
            _FAILURES.popitem(last=False)
    return message


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


class LibraryTool(BaseTool):
    """A tool of this library (``@tool`` functions, any `AgentTool`) offered to a LangChain agent.

    Example:
        ```python
        agent = create_agent(model, tools=[LibraryTool(delete_file)], middleware=[bridge])
        ```

    Attributes:
        tool: The tool of this library.
    """

    tool: Any

    def __init__(self, tool: AgentTool) -> None:
        spec = tool.tool_spec
        super().__init__(
            name=tool.tool_name,
            description=spec.get("description", "") or tool.tool_name,
            args_schema=dict(spec["inputSchema"].get("json", {})),
            tool=tool,
        )

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("a tool of this library runs asynchronously: use ainvoke")

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """Run the tool on a LangChain tool call; answer with a `ToolMessage`."""
        if not (isinstance(input, dict) and "id" in input and "args" in input):
            raise TypeError(
                f"{self.name} is run by tool calls ({{'name', 'args', 'id'}}), got {input!r}"
            )
        call = cast("dict[str, Any]", input)
        tool_use: ToolUse = {
            "toolUseId": str(call["id"]),
            "name": self.name,
            "input": dict(call["args"]),
        }
        result: ToolResultEvent | None = None
        stream = self.tool.stream(tool_use, {})
        try:
            async for event in stream:
                if isinstance(event, ToolResultEvent):
                    result = event
        except Exception as error:
            if isinstance(error, InterruptException):
                raise
            result = ToolResultEvent.from_exception(tool_use["toolUseId"], error)
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        if result is None:
            result = ToolResultEvent.error(
                tool_use["toolUseId"], f"tool {self.name!r} ended without a result"
            )
        return _remember(tool_message(result.tool_result, self.name), result.exception)
