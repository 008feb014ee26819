"""Helpers for testing middleware and agents without a network.

`ScriptedModel` (with `scripted`, `text_turn` and `tool_turn`) is a model that plays a script and
records every request; `model_context` and `tool_context` build stage contexts so a handler can
be unit-tested without an agent.
"""

from ._contexts import TEST_TOOL_USE_ID, model_context, tool_context
from ._scripted_model import (
    ModelRequest,
    ScriptedModel,
    ScriptedTurn,
    ScriptExhaustedError,
    scripted,
    text_turn,
    tool_turn,
)

__all__ = [
    "TEST_TOOL_USE_ID",
    "ModelRequest",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedTurn",
    "model_context",
    "scripted",
    "text_turn",
    "tool_context",
    "tool_turn",
]
