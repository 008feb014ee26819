"""Human-in-the-loop interrupts: what a paused run asks for and what a resume answers.

An interrupt is raised when middleware (or a tool) needs a human's answer before the run can go
on. The run stops, the caller collects the `Interrupt` objects from the result, and a later call
resumes with one ``{"interruptResponse": {"interruptId": ..., "response": ...}}`` block per
interrupt. This module holds only plain data; the stage runners decide when interrupts are
registered and released.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AGENT_STREAM_INTERRUPT_PREFIX",
    "EXECUTE_TOOL_INTERRUPT_PREFIX",
    "Interrupt",
    "InterruptException",
    "MiddlewareInterruptResult",
    "agent_stream_interrupt_id",
    "execute_tool_interrupt_id",
]

EXECUTE_TOOL_INTERRUPT_PREFIX = "v1:middleware_execute_tool:"
"""Id prefix of interrupts raised by ExecuteToolStage middleware (one tool call's scope)."""

AGENT_STREAM_INTERRUPT_PREFIX = "v1:middleware_agent_stream:"
"""Id prefix of interrupts raised by AgentStreamStage middleware (a whole pass's scope)."""


def _name_hash(name: str) -> str:
    # uuid5 makes the id a pure function of the name: the same gate asks under the same id on
    # every resume, so the answer a caller sends back finds its interrupt again.
    return str(uuid.uuid5(uuid.NAMESPACE_OID, name))


def execute_tool_interrupt_id(tool_use_id: str, name: str) -> str:
    """Return the deterministic id of a tool-middleware interrupt.

    The ``toolUseId`` makes it unique per tool call; the hashed name makes it stable across
    resumes.
    """
    return f"{EXECUTE_TOOL_INTERRUPT_PREFIX}{tool_use_id}:{_name_hash(name)}"


def agent_stream_interrupt_id(name: str) -> str:
    """Return the deterministic id of an agent-stream-middleware interrupt.

    The id has no scoping part: within one agent only one such interrupt is live at a time, so the
    name alone identifies the decision. Two agents sharing one gate and name share the id too.
    """
    return f"{AGENT_STREAM_INTERRUPT_PREFIX}{_name_hash(name)}"


@dataclass
class Interrupt:
    """A request for human input that paused a run.

    Attributes:
        id: Opaque identifier; send it back in the ``interruptResponse`` that answers it.
        name: The name the raiser gave; it identifies the decision being asked for.
        reason: Anything the raiser wants the human to see (must be JSON-serialisable to persist).
        response: The human's answer, set when the run is resumed.
    """

    id: str
    name: str
    reason: Any = None
    response: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the shape `from_dict` reads back)."""
        return {"id": self.id, "name": self.name, "reason": self.reason, "response": self.response}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Interrupt:
        """Rebuild an interrupt from `to_dict` output."""
        return cls(
            id=data["id"],
            name=data["name"],
            reason=data.get("reason"),
            response=data.get("response"),
        )


class InterruptException(Exception):
    """Raised to pause a run until a human answers `interrupt`.

    It subclasses `Exception`, so a broad ``except Exception`` in middleware swallows it and turns
    a pause into an error. Middleware that catches errors around ``next_fn`` or ``interrupt()``
    must re-raise it.
    """

    def __init__(self, interrupt: Interrupt) -> None:
        super().__init__(interrupt)
        self.interrupt = interrupt

    def __str__(self) -> str:
        interrupt = self.interrupt
        return f"interrupt {interrupt.name!r} (id {interrupt.id}) is waiting for a response"


@dataclass(frozen=True)
class MiddlewareInterruptResult:
    """What a middleware ``interrupt()`` returns once the run is resumed with an answer.

    Attributes:
        response: The answer the run was resumed with (or the preemptive response passed to
            ``interrupt()``).
    """

    response: Any
