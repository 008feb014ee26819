"""`Interrupt`, the request for human input a paused run carries.

It lives apart from `strands_middleware.interrupts` (which exports it) so that the exceptions
that carry interrupts can name it without the two modules importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Interrupt"]


@dataclass
class Interrupt:
    """A request for human input that paused a run.

    Attributes:
        id: Opaque identifier; send it back in the ``interruptResponse`` that answers it.
        name: The name the raiser gave; it identifies the decision being asked for.
        reason: Anything the raiser wants the human to see (must be JSON-serialisable to persist).
        response: The human's answer, set when the run is resumed. ``None`` means "not answered
            yet", which is why a resume may not answer with ``None``.
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
