"""The private strands-agents names the bridge cannot do without, in one place.

strands-agents makes public only what middleware authors construct: the stage tokens and
contexts of the model and tool stages, ``ModelStopReason``, ``ToolResultEvent`` and
``TypedEvent``. Two things the bridge needs have no public home yet:

* the ``AgentStreamStage`` token, which strands keeps in ``strands.middleware._agent_stream``
  until that stage's contract is final (as this library keeps it in ``experimental``);
* the stream event classes other than the two results (text and tool-use deltas, reasoning,
  raw chunks, the model message, tool progress, tool interrupts and the pass's stop event), in
  ``strands.types._events``. The bridge recognises strands' events by these classes and builds
  new ones with them, since the strands loop tells events apart with ``isinstance``.

Each name is looked up when the bridge is imported, so a strands release that moves one fails
here with the name and the fix, not later as a half-translated stream. Everything else the
bridge does goes through strands' public API (``Agent.add_middleware`` and the public contexts).
``tests/bridges/test_seams.py`` also pins the payload of every event class (its dict keys and
constructor), which is what `_translate` relies on.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

__all__ = [
    "PRIVATE_NAMES",
    "AgentStreamStage",
    "EventLoopStopEvent",
    "ModelMessageEvent",
    "ModelStreamChunkEvent",
    "ReasoningRedactedContentStreamEvent",
    "ReasoningSignatureStreamEvent",
    "ReasoningTextStreamEvent",
    "TextStreamEvent",
    "ToolInterruptEvent",
    "ToolStreamEvent",
    "ToolUseStreamEvent",
    "private_name",
]

_EVENTS = "strands.types._events"

PRIVATE_NAMES: tuple[tuple[str, str], ...] = (
    ("strands.middleware._agent_stream", "AgentStreamStage"),
    (_EVENTS, "EventLoopStopEvent"),
    (_EVENTS, "ModelMessageEvent"),
    (_EVENTS, "ModelStreamChunkEvent"),
    (_EVENTS, "ReasoningRedactedContentStreamEvent"),
    (_EVENTS, "ReasoningSignatureStreamEvent"),
    (_EVENTS, "ReasoningTextStreamEvent"),
    (_EVENTS, "TextStreamEvent"),
    (_EVENTS, "ToolInterruptEvent"),
    (_EVENTS, "ToolStreamEvent"),
    (_EVENTS, "ToolUseStreamEvent"),
)
"""Every ``(module, name)`` the bridge reads from a private strands-agents module."""


def private_name(module: str, name: str) -> Any:
    """``module.name`` from the installed strands-agents, or an ImportError saying what to do."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        try:
            version = metadata.version("strands-agents")
        except metadata.PackageNotFoundError:  # pragma: no cover - strands is importable here
            version = "(unknown version)"
        raise ImportError(
            f"strands_middleware.bridges.strands needs {module}.{name}, which strands-agents "
            f"{version} does not have: the name is private to strands-agents and this release "
            "moved it. Pin strands-agents to a release that has it (1.62.0 does: "
            'pip install "strands-agents==1.62.0"), or upgrade strands-middleware to a release '
            "that supports this strands-agents."
        ) from error


AgentStreamStage: Any = private_name(*PRIVATE_NAMES[0])
EventLoopStopEvent: Any = private_name(*PRIVATE_NAMES[1])
ModelMessageEvent: Any = private_name(*PRIVATE_NAMES[2])
ModelStreamChunkEvent: Any = private_name(*PRIVATE_NAMES[3])
ReasoningRedactedContentStreamEvent: Any = private_name(*PRIVATE_NAMES[4])
ReasoningSignatureStreamEvent: Any = private_name(*PRIVATE_NAMES[5])
ReasoningTextStreamEvent: Any = private_name(*PRIVATE_NAMES[6])
TextStreamEvent: Any = private_name(*PRIVATE_NAMES[7])
ToolInterruptEvent: Any = private_name(*PRIVATE_NAMES[8])
ToolStreamEvent: Any = private_name(*PRIVATE_NAMES[9])
ToolUseStreamEvent: Any = private_name(*PRIVATE_NAMES[10])
