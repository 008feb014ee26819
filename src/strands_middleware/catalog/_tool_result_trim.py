"""`ToolResultTrim`: shorten large tool results in what the model is sent.

An InvokeModelStage Input handler. A tool that returns a whole web page, a log file or a big JSON
document costs its full size on every later model call; usually its start and its end are what
the model needs. The rules:

* **Head and tail, and a marker.** Each text or JSON item of a tool result longer than
  ``max_chars`` characters is cut to its first ``max_chars - tail_chars`` and its last
  ``tail_chars`` characters, with a marker between them saying how much was cut:
  ``"[... 48,210 of 50,210 characters cut ...]"``. A JSON item is written out as JSON text and
  cut as text (the model reads either the same way). Images and documents are left as they are.
* **Only what the model is sent changes.** The agent's history, and the result the tool returned
  to hooks and to other middleware, keep every character; the cut is made afresh, the same way,
  on each call, so a provider's prompt cache still sees identical text.
* **Recent results whole, optionally.** ``keep_recent=N`` sends the results of the last ``N``
  tool rounds whole (a tool round: a model reply that called tools and the user message with
  their results), so the model reads what it just asked for in full and only older results are
  cut. With ``keep_recent=0`` (the default) every large result is cut, the newest included.
* **Everything else is untouched**: result ids and statuses, tool calls, text the user or the
  model wrote.
"""

from __future__ import annotations

import json
from typing import Any, cast

from ..content import ContentBlock, Message, Messages, ToolResult, ToolResultContent
from ..engine._stage import Middleware
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._base import CatalogMiddleware, check_whole_number

__all__ = ["DEFAULT_TRIM_MARKER", "ToolResultTrim"]

DEFAULT_TRIM_MARKER = "\n[... {cut:,} of {total:,} characters cut ...]\n"
"""What `ToolResultTrim` puts where it cut: ``{cut}`` characters cut of ``{total}``."""


class ToolResultTrim(CatalogMiddleware):
    """Cuts the middle out of large tool results in what the model is sent.

    Example:
        ```python
        agent.use(ToolResultTrim(max_chars=4_000))                  # every large result
        agent.use(ToolResultTrim(max_chars=1_000, keep_recent=1))   # older results only
        ```

    Args:
        max_chars: The longest text (or JSON text) an item of a tool result may be; a longer one
            is cut to this many characters plus the marker.
        tail_chars: How many of the kept characters come from the end; half of ``max_chars`` by
            default.
        keep_recent: How many of the last tool rounds keep their results whole.
        marker: What is put where the text was cut; ``{cut}`` and ``{total}`` are numbers of
            characters (format specs such as ``{cut:,}`` work).
    """

    def __init__(
        self,
        *,
        max_chars: int = 2_000,
        tail_chars: int | None = None,
        keep_recent: int = 0,
        marker: str = DEFAULT_TRIM_MARKER,
    ) -> None:
        check_whole_number("ToolResultTrim", "max_chars", max_chars, minimum=1, of="characters")
        tail = max_chars // 2 if tail_chars is None else tail_chars
        if tail_chars is not None:
            check_whole_number(
                "ToolResultTrim", "tail_chars", tail_chars, minimum=0, of="characters"
            )
            if tail_chars > max_chars:
                raise ValueError(
                    f"ToolResultTrim(tail_chars=...) must be at most max_chars ({max_chars}), "
                    f"got {tail_chars}"
                )
        check_whole_number("ToolResultTrim", "keep_recent", keep_recent, minimum=0, of="rounds")
        given = cast(object, marker)  # checked at run time: callers need not be type-checked
        if not isinstance(given, str):
            raise TypeError(f"ToolResultTrim(marker=...) takes a str, got {marker!r}")
        try:
            given.format(cut=0, total=0)
        except (KeyError, IndexError, ValueError) as error:
            raise ValueError(
                "ToolResultTrim(marker=...) may use only the {cut} and {total} placeholders "
                f"(write other braces doubled), got {marker!r}"
            ) from error
        self.max_chars = max_chars
        self.tail_chars = tail
        self.keep_recent = keep_recent
        self.marker = marker

    def trim_text(self, text: str) -> str:
        """``text`` cut to its head and tail with the marker between (the same object if short)."""
        if len(text) <= self.max_chars:
            return text
        head = self.max_chars - self.tail_chars
        cut = len(text) - self.max_chars
        tail = text[len(text) - self.tail_chars :] if self.tail_chars else ""
        return text[:head] + self.marker.format(cut=cut, total=len(text)) + tail

    def trim(self, messages: Messages) -> Messages:
        """``messages`` with large tool results cut (the same list when nothing was cut)."""
        rounds = [index for index, message in enumerate(messages) if _has_results(message)]
        whole = set(rounds[len(rounds) - self.keep_recent :] if self.keep_recent else [])
        trimmed = list(messages)
        changed = False
        for index in rounds:
            if index in whole:
                continue
            message = self._message(messages[index])
            if message is not messages[index]:
                trimmed[index] = message
                changed = True
        return trimmed if changed else messages

    def _message(self, message: Message) -> Message:
        blocks = message["content"]
        new_blocks: list[ContentBlock] = [
            {**block, "toolResult": self._result(block["toolResult"])}
            if "toolResult" in block
            else block
            for block in blocks
        ]
        if all(
            new.get("toolResult") is old.get("toolResult")
            for new, old in zip(new_blocks, blocks, strict=True)
        ):
            return message
        return {**message, "content": new_blocks}

    def _result(self, result: ToolResult) -> ToolResult:
        content = result["content"]
        new_content = [self._item(item) for item in content]
        if all(new is old for new, old in zip(new_content, content, strict=True)):
            return result
        return {**result, "content": new_content}

    def _item(self, item: ToolResultContent) -> ToolResultContent:
        if "text" in item:
            text = self.trim_text(item["text"])
            return item if text is item["text"] else {**item, "text": text}
        if "json" in item:
            written = json.dumps(item["json"], default=str, ensure_ascii=False)
            if len(written) <= self.max_chars:
                return item
            return {"text": self.trim_text(written)}
        return item

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        def tool_result_trim(context: InvokeModelContext) -> InvokeModelContext:
            messages = self.trim(context.messages)
            return context if messages is context.messages else context.replace(messages=messages)

        tool_result_trim.__qualname__ = "ToolResultTrim[invokeModel.Input]"
        return [InvokeModelStage.input(tool_result_trim)]


def _has_results(message: Message) -> bool:
    return message["role"] == "user" and any("toolResult" in block for block in message["content"])
