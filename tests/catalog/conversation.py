"""Building conversations for the context items' tests, and the rules any sent one must keep."""

from __future__ import annotations

import itertools
from typing import Any

from strands_middleware.content import Message, Messages


def prompt(text: str) -> Message:
    return {"role": "user", "content": [{"text": text}]}


def reply(text: str) -> Message:
    return {"role": "assistant", "content": [{"text": text}]}


def call(*ids: str, name: str = "lookup", text: str | None = None) -> Message:
    """An assistant message calling ``name`` once per id."""
    content: list[Any] = [] if text is None else [{"text": text}]
    content.extend({"toolUse": {"toolUseId": i, "name": name, "input": {"q": i}}} for i in ids)
    return {"role": "assistant", "content": content}


def results(*ids: str, text: str = "found") -> Message:
    """The user message answering tool calls ``ids``."""
    return {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": i, "status": "success", "content": [{"text": text}]}}
            for i in ids
        ],
    }


def texts(message: Message) -> list[str]:
    return [block["text"] for block in message["content"] if "text" in block]


def check_well_formed(messages: Messages) -> None:
    """Roles alternate, and every toolUse is answered by the next message and nothing else is."""
    for before, after in itertools.pairwise(messages):
        assert before["role"] != after["role"], f"two {before['role']} messages in a row"
    for index, message in enumerate(messages):
        uses = [b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b]
        answered = [b["toolResult"]["toolUseId"] for b in message["content"] if "toolResult" in b]
        if uses:
            assert index + 1 < len(messages), f"tool uses {uses} sent without their results"
            following = messages[index + 1]["content"]
            assert [b["toolResult"]["toolUseId"] for b in following if "toolResult" in b] == uses
        if answered:
            assert index > 0, f"tool results {answered} sent without their tool uses"
            previous = messages[index - 1]["content"]
            assert [b["toolUse"]["toolUseId"] for b in previous if "toolUse" in b] == answered
