"""``ExecuteToolStage`` on pydantic-ai: the tool-execution hook of the bridge's capability.

pydantic-ai calls ``wrap_tool_execute`` with a call, its tool definition, the validated
arguments and a ``handler`` that runs the tool's own execution lifecycle (its hooks included);
it may be called several times and what the hook returns is the tool's result. The bridge runs
this library's chain there with the rules every host shares (`run_tool_stage`): handlers see
the call as a Converse ``toolUse`` and the tool as a `PydanticAITool`, whose ``stream`` calls
pydantic-ai's handler.

Back at pydantic-ai: the value the tool returned when the result is the one it produced; a
result a handler made is its content (the text, or the JSON value of a single ``json`` block),
and an error result is pydantic-ai's ``ToolFailed``, which the model reads as a failed call.
pydantic-ai's own control flow raised by the tool (``ModelRetry``, a deferral, ...) is raised
again, so pydantic-ai handles it as without the bridge.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from pydantic_ai import exceptions as host_exceptions
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.tools import ToolDefinition

from ...content import ToolResult, ToolSpec, ToolUse
from ...events import ToolResultEvent
from ...host._cancel_signal import CancelSignal
from ._messages import tool_result_content

__all__ = ["CONTROL_FLOW", "PydanticAITool", "host_result", "tool_spec_of"]

CONTROL_FLOW: tuple[type[BaseException], ...] = tuple(
    error
    for error in (
        getattr(host_exceptions, name, None)
        for name in (
            "ToolRetryError",
            "ToolFailedError",
            "ApprovalRequired",
            "CallDeferred",
            "SkipToolExecution",
            "ModelRetry",
            "ToolFailed",
        )
    )
    if isinstance(error, type)
)
"""pydantic-ai's own signals a tool may raise: they go back to pydantic-ai unchanged."""


def tool_spec_of(definition: ToolDefinition) -> ToolSpec:
    """A pydantic-ai tool definition as a Converse tool spec."""
    return {
        "name": definition.name,
        "description": definition.description or "",
        "inputSchema": {"json": dict(definition.parameters_json_schema)},
    }


class PydanticAITool:
    """A pydantic-ai tool as handlers see it (``context.tool`` on a pydantic-ai agent).

    Its ``stream`` runs pydantic-ai's execution of the tool for this call (each time it is
    called) and ends with the `ToolResultEvent` of what the tool returned.

    Attributes:
        definition: pydantic-ai's definition of the tool.
    """

    __slots__ = ("_args", "_handler", "_input", "_produced", "definition")

    def __init__(
        self,
        definition: ToolDefinition,
        handler: Callable[[dict[str, Any]], Awaitable[Any]],
        args: dict[str, Any],
        shown_input: dict[str, Any],
    ) -> None:
        self.definition = definition
        self._handler = handler
        self._args = args
        self._input = shown_input
        self._produced: dict[int, Any] = {}

    @property
    def tool_name(self) -> str:
        """The name the model calls the tool by."""
        return self.definition.name

    @property
    def tool_spec(self) -> ToolSpec:
        """The tool's spec in Converse shape."""
        return tool_spec_of(self.definition)

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[ToolResultEvent, None]:
        """Run the tool through pydantic-ai; yields its result."""
        arguments = tool_use["input"]
        # Arguments a handler left as they were go to pydantic-ai as its own validated ones.
        args = self._args if arguments == self._input else dict(arguments)
        value = await self._handler(args)
        result: ToolResult = {
            "toolUseId": tool_use["toolUseId"],
            "status": "success",
            "content": tool_result_content(value),
        }
        event = ToolResultEvent(result)
        self._produced[id(event)] = (event, value)
        yield event

    def produced(self, event: ToolResultEvent) -> tuple[bool, Any]:
        """Whether ``event`` is a result this tool produced, and the value behind it."""
        found = self._produced.get(id(event))
        if found is None or found[0] is not event:
            return False, None
        return True, found[1]

    def __repr__(self) -> str:
        return f"PydanticAITool({self.definition.name!r})"


def host_result(event: ToolResultEvent, tool: PydanticAITool) -> Any:
    """What the tool hook returns to pydantic-ai for the chain's result.

    Raises:
        ToolFailed: the result is an error (pydantic-ai's failed call, which the model reads).
        Exception: pydantic-ai's own signal the tool raised, when the result is its failure.
    """
    own, value = tool.produced(event)
    if own:
        return value
    error = event.exception
    if error is not None and isinstance(error, CONTROL_FLOW):
        raise error
    result = event.tool_result
    contents = result["content"]
    if result["status"] == "error":
        raise ToolFailed("".join(str(item.get("text", "")) for item in contents))
    if len(contents) == 1 and "json" in contents[0]:
        return contents[0]["json"]
    return "".join(str(item.get("text", "")) for item in contents)


def cancel_signal() -> threading.Event:
    """A signal for the call (pydantic-ai cancels a run by cancelling its task)."""
    return CancelSignal()
