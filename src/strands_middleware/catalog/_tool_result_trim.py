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
* **Only when the request is large, optionally.** With ``threshold=N``, nothing is cut while
  the tool results of the request add up to at most ``N`` characters (text, and JSON written
  out); past it, every large result is cut as above.
* **Some tools never.** The results of the tools named in ``exclude_tools`` are always sent whole
  (a tool is known by the ``toolUse`` block its result answers).
* **Or cleared.** With ``placeholder="..."`` a large result is not cut but replaced whole by that
  text (``{tool}`` is the tool's name, ``{total}`` its size in characters), as for a search whose
  pages the model has already used: the model sees that the call happened and what it cost.
* **Everything else is untouched**: result ids and statuses, tool calls, text the user or the
  model wrote.
"""

from __future__ import annotations

import json
from collections.abc import Collection
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
        threshold: Cut nothing while the request's tool results add up to at most this many
            characters; ``None`` (the default) cuts whenever a result is large.
        exclude_tools: Names of tools whose results are always sent whole.
        placeholder: Replace a large result whole by this text instead of cutting it; ``{tool}``
            is the tool's name and ``{total}`` the result's size in characters.

    Raises:
        TypeError: an argument of the wrong kind.
        ValueError: a number out of range, or a template with placeholders it cannot fill.
    """

    def __init__(
        self,
        *,
        max_chars: int = 2_000,
        tail_chars: int | None = None,
        keep_recent: int = 0,
        marker: str = DEFAULT_TRIM_MARKER,
        threshold: int | None = None,
        exclude_tools: Collection[str] = (),
        placeholder: str | None = None,
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
        if threshold is not None:
            check_whole_number("ToolResultTrim", "threshold", threshold, minimum=0, of="characters")
        excluded = cast(object, exclude_tools)
        if isinstance(excluded, str) or not isinstance(excluded, Collection):
            raise TypeError(
                "ToolResultTrim(exclude_tools=...) takes a collection of tool names, such as "
                f"['read_file'], got {exclude_tools!r}"
            )
        names = cast("Collection[object]", excluded)
        if not all(isinstance(name, str) and name for name in names):
            raise TypeError(
                "ToolResultTrim(exclude_tools=...) takes tool names (strings), got "
                f"{exclude_tools!r}"
            )
        if placeholder is not None:
            given_placeholder = cast(object, placeholder)
            if not isinstance(given_placeholder, str):
                raise TypeError(f"ToolResultTrim(placeholder=...) takes a str, got {placeholder!r}")
            try:
                given_placeholder.format(tool="t", total=0)
            except (KeyError, IndexError, ValueError) as error:
                raise ValueError(
                    "ToolResultTrim(placeholder=...) may use only the {tool} and {total} "
                    f"placeholders (write other braces doubled), got {placeholder!r}"
                ) from error
        self.threshold = threshold
        self.exclude_tools = frozenset(cast("Collection[str]", names))
        self.placeholder = placeholder
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
        if not rounds:
            return messages
        if self.threshold is not None and _results_size(messages, rounds) <= self.threshold:
            return messages
        tools = _tool_names(messages) if self.exclude_tools or self.placeholder else {}
        whole = set(rounds[len(rounds) - self.keep_recent :] if self.keep_recent else [])
        trimmed = list(messages)
        changed = False
        for index in rounds:
            if index in whole:
                continue
            message = self._message(messages[index], tools)
            if message is not messages[index]:
                trimmed[index] = message
                changed = True
        return trimmed if changed else messages

    def _message(self, message: Message, tools: dict[str, str]) -> Message:
        blocks = message["content"]
        new_blocks: list[ContentBlock] = [
            {**block, "toolResult": self._result(block["toolResult"], tools)}
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

    def _result(self, result: ToolResult, tools: dict[str, str]) -> ToolResult:
        tool = tools.get(result["toolUseId"], "")
        if tool in self.exclude_tools:
            return result
        content = result["content"]
        if self.placeholder is not None:
            size = _result_size(result)
            if size <= self.max_chars:
                return result
            text = self.placeholder.format(tool=tool or "a tool", total=size)
            return {**result, "content": [{"text": text}]}
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


def _item_size(item: ToolResultContent) -> int:
    if "text" in item:
        return len(item["text"])
    if "json" in item:
        return len(json.dumps(item["json"], default=str, ensure_ascii=False))
    return 0


def _result_size(result: ToolResult) -> int:
    return sum(_item_size(item) for item in result["content"])


def _results_size(messages: Messages, rounds: list[int]) -> int:
    return sum(
        _result_size(block["toolResult"])
        for index in rounds
        for block in messages[index]["content"]
        if "toolResult" in block
    )


def _tool_names(messages: Messages) -> dict[str, str]:
    """The tool each ``toolUseId`` of the conversation called, from the assistant's tool uses."""
    return {
        block["toolUse"]["toolUseId"]: block["toolUse"]["name"]
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
        if "toolUse" in block
    }
