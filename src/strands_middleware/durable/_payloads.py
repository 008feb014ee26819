"""What crosses Temporal's boundary: the run's input and output, and each activity's call.

Plain dataclasses of JSON values, so Temporal's default data converter carries them. Converse
messages are dicts here; the code on each side reads them back as this library's shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ModelCall", "ModelReply", "RunInput", "RunOutput", "ToolCall", "ToolReply"]


@dataclass
class RunInput:
    """The input of one durable run.

    Attributes:
        agent: The name of a `DurableAgent` registered on the workers.
        prompt: What ``Agent.invoke_async`` takes: a string, a list of content blocks, or None.
        invocation_state: JSON values the run's handlers and tools see in ``invocation_state``.
    """

    agent: str
    prompt: Any = None
    invocation_state: dict[str, Any] = field(default_factory=lambda: {})


@dataclass
class RunOutput:
    """How a durable run ended.

    Attributes:
        stop_reason: The last model turn's stop reason (``"end_turn"``, ``"cancelled"``, ...).
        message: The last assistant message.
        messages: The whole conversation, as the reference agent kept it.
        usage: Token usage summed over the run's model calls.
        interrupts_asked: The id of every interrupt the run waited on, in the order asked.
    """

    stop_reason: str
    message: dict[str, Any]
    messages: list[dict[str, Any]]
    usage: dict[str, int]
    interrupts_asked: list[str]


@dataclass
class ModelCall:
    """The model activity's input: the request the workflow chain hands on."""

    agent: str
    messages: list[dict[str, Any]]
    system_prompt: Any
    tool_specs: list[dict[str, Any]]
    tool_choice: dict[str, Any] | None
    invocation_state: dict[str, Any]


@dataclass
class ModelReply:
    """The model activity's result: the `ModelStopReason` of its chain, as four fields."""

    stop_reason: str
    message: dict[str, Any]
    usage: dict[str, Any]
    metrics: dict[str, Any]


@dataclass
class ToolCall:
    """The tool activity's input: the call the workflow chain hands on."""

    agent: str
    tool_use: dict[str, Any]
    invocation_state: dict[str, Any]


@dataclass
class ToolReply:
    """The tool activity's result: the ``toolResult`` of its chain."""

    result: dict[str, Any]
