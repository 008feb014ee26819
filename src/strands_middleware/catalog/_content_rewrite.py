"""`ContentRewriter`: every string of Converse content put through one text function.

`Redact` masks with it, and a reversible `Redact` masks and restores each run's pseudonyms with
it. Containers are rebuilt only where a string changed, so a value with nothing to rewrite comes
back as the same object (what lets the handlers hand back an unchanged context or result).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from ..content import ContentBlock, Message, Messages, ToolResult, ToolResultContent

__all__ = ["ContentRewriter"]

_SKIPPED_BLOCKS = frozenset(
    {"reasoningContent", "image", "document", "video", "audio", "cachePoint"}
)
"""Message blocks never rewritten: signed reasoning, binary media, and markers."""


class ContentRewriter:
    """Rewrites strings through ``text``; keys, ids, tool names and binary content stay as they are.

    Args:
        text: What a string becomes (the same object when it is unchanged).
    """

    __slots__ = ("text",)

    def __init__(self, text: Callable[[str], str]) -> None:
        self.text = text

    def value(self, value: object) -> object:
        """``value`` with every string in it rewritten, through dicts, lists and tuples."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            mapping = cast("dict[Any, object]", value)
            changed: dict[Any, object] | None = None
            for key, item in mapping.items():
                new = self.value(item)
                if new is not item:
                    if changed is None:
                        changed = dict(mapping)
                    changed[key] = new
            return mapping if changed is None else changed
        if isinstance(value, (list, tuple)):
            items = cast("list[object] | tuple[object, ...]", value)
            new_items = [self.value(item) for item in items]
            if all(new is old for new, old in zip(new_items, items, strict=True)):
                return items
            return tuple(new_items) if isinstance(items, tuple) else new_items
        return value

    def message(self, message: Message, *, tool_uses: bool) -> Message:
        """The message rewritten; the input of its tool calls only when ``tool_uses``."""
        blocks = message["content"]
        new_blocks = [self._block(block, tool_uses=tool_uses) for block in blocks]
        if all(new is old for new, old in zip(new_blocks, blocks, strict=True)):
            return message
        return {**message, "content": new_blocks}

    def _block(self, block: ContentBlock, *, tool_uses: bool) -> ContentBlock:
        if "text" in block:
            text = self.text(block["text"])
            return block if text is block["text"] else {**block, "text": text}
        if "toolUse" in block:
            if not tool_uses:
                return block
            tool_use = block["toolUse"]
            new_input = self.value(tool_use["input"])
            if new_input is tool_use["input"]:
                return block
            return {**block, "toolUse": {**tool_use, "input": new_input}}
        if "toolResult" in block:
            result = self.result(block["toolResult"])
            return block if result is block["toolResult"] else {**block, "toolResult": result}
        if _SKIPPED_BLOCKS.intersection(block):
            return block
        return cast(ContentBlock, self.value(block))

    def messages(self, messages: Messages) -> Messages:
        """Every message rewritten, tool calls included."""
        new_messages = [self.message(message, tool_uses=True) for message in messages]
        if all(new is old for new, old in zip(new_messages, messages, strict=True)):
            return messages
        return new_messages

    def result(self, result: ToolResult) -> ToolResult:
        """A tool result with its text and JSON content rewritten."""
        content = result["content"]
        new_content = [self._result_content(item) for item in content]
        if all(new is old for new, old in zip(new_content, content, strict=True)):
            return result
        return {**result, "content": new_content}

    def _result_content(self, item: ToolResultContent) -> ToolResultContent:
        if "text" in item:
            text = self.text(item["text"])
            return item if text is item["text"] else {**item, "text": text}
        if "json" in item:
            data = self.value(item["json"])
            return item if data is item["json"] else {**item, "json": data}
        return item
