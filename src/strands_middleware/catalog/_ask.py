"""Asking a model on the side: one plain-text question, its plain-text answer.

`Guardrail`'s classifier and `ToolSelector`'s chooser are models the item itself asks, outside
the agent's model calls: the model's ``stream`` is called directly with one user message and a
system prompt, and the text deltas of its reply are joined. No hooks fire and no middleware runs
for these calls (a tool call has no model call around it to run them through), and the agent's
model and history are never involved.
"""

from __future__ import annotations

from typing import Any, cast

from ..models import Model

__all__ = ["ask"]


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
