"""The reference agent: a compact agent loop on the adapter layer, with hooks."""

from .agent import Agent
from .hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookEvent,
    HookRegistry,
    MessageAddedEvent,
)
from .result import AgentResult

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
