"""The reference agent: a compact agent loop on the adapter layer, with hooks."""

from ._agent import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    Agent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookEvent,
    HookRegistry,
    MessageAddedEvent,
)
from ._result import AgentResult

__all__ = [
    "AfterInvocationEvent",
    "AfterModelCallEvent",
    "AfterToolCallEvent",
    "Agent",
    "AgentResult",
    "BeforeInvocationEvent",
    "BeforeModelCallEvent",
    "BeforeToolCallEvent",
    "HookEvent",
    "HookRegistry",
    "MessageAddedEvent",
]
