"""Conversation content as plain text, for the models some items ask on the side.

`Summarize` hands its summarizer a transcript, `Guardrail` hands its check (and classifier) the
text under check, and `ToolSelector` hands its chooser the latest request. Plain text rather than
Converse messages, because a side model is not offered the agent's tools, and providers refuse a
conversation holding tool calls when no tools are configured.
"""

from __future__ import annotations

import json

from ..content import ContentBlock, Message, Messages, ToolResult, ToolUse

__all__ = ["message_text", "result_text", "tool_call_text", "transcript"]

_MEDIA = ("image", "document", "video", "audio")
_ROLES = {"user": "User", "assistant": "Assistant"}


def _json(value: object) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def tool_call_text(tool_use: ToolUse) -> str:
    """A tool call as one line: ``[called tool <name> with <JSON input>]``."""
    return f"[called tool {tool_use['name']} with {_json(tool_use['input'])}]"


def result_text(result: ToolResult) -> str:
    """The text and JSON of a tool result, one item a line; media as ``[image]`` and the like."""
    parts: list[str] = []
    for item in result["content"]:
        if "text" in item:
            parts.append(item["text"])
        elif "json" in item:
            parts.append(_json(item["json"]))
        else:
            parts.extend(f"[{kind}]" for kind in _MEDIA if kind in item)
    return "\n".join(parts)


def _block_text(block: ContentBlock) -> str | None:
    if "text" in block:
        return block["text"]
    if "toolUse" in block:
        return tool_call_text(block["toolUse"])
    if "toolResult" in block:
        result = block["toolResult"]
        return f"[tool result, {result['status']}: {result_text(result)}]"
    for kind in _MEDIA:
        if kind in block:
            return f"[{kind}]"
    return None  # reasoning, cache points, guard content: not part of what was said


def message_text(message: Message, *, tools: bool = True) -> str:
    """``message`` as text, block by block; tool calls and results too unless ``tools=False``."""
    parts: list[str] = []
    for block in message["content"]:
        if not tools and ("toolUse" in block or "toolResult" in block):
            continue
        text = _block_text(block)
        if text:
            parts.append(text)
    return "\n".join(parts)


def transcript(messages: Messages) -> str:
    """``messages`` as a transcript: ``User: ...`` and ``Assistant: ...``, a blank line apart."""
    return "\n\n".join(
        f"{_ROLES.get(message['role'], message['role'])}: {message_text(message)}"
        for message in messages
    )
