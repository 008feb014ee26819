"""Asking a model on the side: one question, and its answer as text or as a tool's input.

`Guardrail`'s classifier and `ToolSelector`'s chooser are models the item itself asks, outside
the agent's model calls: the model's ``stream`` is called directly with one user message and a
system prompt, and the text deltas of its reply are joined. No hooks fire and no middleware runs
for these calls (a tool call has no model call around it to run them through), and the agent's
model and history are never involved.
"""

from __future__ import annotations

from typing import Any, cast

from ..content import Message, ToolChoice, ToolSpec
from ..events import ModelStopReason
from ..host._model_stream import process_model_stream
from ..models import Model

__all__ = ["ask", "ask_for_input"]


async def ask(model: Model, *, system_prompt: str, question: str) -> str:
    """The text ``model`` answers to ``question`` under ``system_prompt``."""
    stream: Any = model.stream(
        [{"role": "user", "content": [{"text": question}]}],
        None,
        system_prompt,
        system_prompt_content=[{"text": system_prompt}],
    )
    parts: list[str] = []
    try:
        async for chunk in stream:
            text = _delta_text(chunk)
            if text:
                parts.append(text)
    finally:
        # A model holds a connection while its stream is open; close it even when abandoned.
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    return "".join(parts)


async def ask_for_input(
    model: Model, *, system_prompt: str, question: str, spec: ToolSpec
) -> dict[str, Any] | str:
    """What ``model`` answers to ``question`` when asked to answer by calling ``spec``'s tool.

    The call offers the one tool and forces it (``tool_choice``), so a model that supports tools
    answers with structured input that matches the tool's schema. Returns that input; or, from
    a model that answered in text instead (one without tool support), the text.
    """
    forced = cast(ToolChoice, {"tool": {"name": spec["name"]}})
    stream: Any = model.stream(
        [{"role": "user", "content": [{"text": question}]}],
        [spec],
        system_prompt,
        tool_choice=forced,
        system_prompt_content=[{"text": system_prompt}],
    )
    message: Message | None = None
    try:
        async for event in process_model_stream(stream):
            if isinstance(event, ModelStopReason):
                message = event.message
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    if message is None:
        return ""
    for block in message["content"]:
        if "toolUse" in block and block["toolUse"]["name"] == spec["name"]:
            found = cast(object, block["toolUse"]["input"])
            if isinstance(found, dict):
                return cast("dict[str, Any]", found)
    return "".join(block["text"] for block in message["content"] if "text" in block)


def _delta_text(chunk: object) -> str | None:
    """The text a Converse chunk adds, if it is a text delta."""
    if not isinstance(chunk, dict):
        return None
    event: object = cast("dict[str, object]", chunk).get("contentBlockDelta")
    if not isinstance(event, dict):
        return None
    delta: object = cast("dict[str, object]", event).get("delta")
    if not isinstance(delta, dict):
        return None
    text: object = cast("dict[str, object]", delta).get("text")
    return text if isinstance(text, str) else None
