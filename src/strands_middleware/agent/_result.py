"""`AgentResult`: what an invocation of the reference agent returns."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..content import Message, Metrics, Usage
from ..interrupts import Interrupt

__all__ = ["AgentResult"]


@dataclass
class AgentResult:
    """How an invocation ended.

    Attributes:
        stop_reason: ``"end_turn"``, ``"interrupt"``, ``"cancelled"``, ``"max_tokens"``, ...
        message: The last assistant message (empty when the run paused before the model spoke).
        interrupts: What the caller must answer to resume, when ``stop_reason == "interrupt"``.
        usage: Token usage summed over the invocation's model calls.
        metrics: Latency summed over the invocation's model calls.
    """

    stop_reason: str
    message: Message
    interrupts: list[Interrupt] = field(default_factory=list[Interrupt])
    usage: Usage = field(
        default_factory=lambda: Usage(inputTokens=0, outputTokens=0, totalTokens=0)
    )
    metrics: Metrics = field(default_factory=lambda: Metrics(latencyMs=0))

    def __str__(self) -> str:
        return "".join(block.get("text", "") for block in self.message["content"])
