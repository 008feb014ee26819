"""What a type checker infers on the reference agent's hooks (type-checked, never run)."""

from __future__ import annotations

from typing import Literal

from typing_extensions import assert_type

from strands_middleware.agent import (
    AfterInvocationEvent,
    AfterToolCallEvent,
    Agent,
    AgentResult,
    BeforeToolCallEvent,
    HookEvent,
    MessageAddedEvent,
)
from strands_middleware.content import Message, ToolResult, ToolUse
from strands_middleware.testing import ScriptedModel
from strands_middleware.tools import AgentTool

agent = Agent(model=ScriptedModel([]))


# The callback is checked against the event class it is registered for.
def refuse_deletes(event: BeforeToolCallEvent) -> None:
    assert_type(event.agent, Agent)
    assert_type(event.tool_use, ToolUse)
    assert_type(event.tool, AgentTool | None)
    if event.tool_use["name"].startswith("delete"):
        event.cancel_tool = "Deleting is not allowed."


async def audit(event: AfterToolCallEvent) -> None:
    assert_type(event.result, ToolResult)
    assert_type(event.result["status"], Literal["success", "error"])
    assert_type(event.exception, BaseException | None)


def finished(event: AfterInvocationEvent) -> None:
    assert_type(event.result, AgentResult | None)


agent.add_hook(BeforeToolCallEvent, refuse_deletes)
agent.add_hook(AfterToolCallEvent, audit)  # an async callback is awaited
agent.add_hook(AfterInvocationEvent, finished)


# A callback for a base class handles any of its events; what it returns is ignored.
def log_any(event: HookEvent) -> str:
    return type(event).__name__


agent.add_hook(MessageAddedEvent, log_any)
agent.hooks.add(AfterToolCallEvent, log_any)


# A lambda gets the event's type from the class it is registered for.
seen: list[Message] = []
agent.add_hook(MessageAddedEvent, lambda event: seen.append(event.message))
