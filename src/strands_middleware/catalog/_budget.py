"""Budgets of messages and tokens, and how much of a conversation each cut of it sends.

`ContextWindow` and `Summarize` keep what the model is sent within the same kind of budget and
measure it the same way, here. ``max_messages`` counts the messages sent. ``max_tokens`` counts the
system prompt and the messages with a token counter, a function of one `Message` (the system
prompt is counted as a user message holding its blocks); tool specs are not counted. The default
counter, `estimate_tokens`, is a cheap estimate; a real tokenizer plugs in as
``lambda message: len(encoding.encode(json.dumps(message)))``.

Where the host projects a call's input tokens (``InvokeModelContext.projected_input_tokens``) and
the counter is the default one, the projection is the size of the whole request (tool specs
included, as the host counts them) and the estimate only shares it out among the messages: every
size is the estimate scaled by projection / estimate of the whole request.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, cast

from ..content import Message, Messages, SystemPrompt, ToolResult
from ._base import check_function, check_whole_number
from ._turns import Turns, note_message

__all__ = ["MEDIA_TOKENS", "Budget", "Measure", "TokenCounter", "estimate_tokens"]

TokenCounter = Callable[[Message], int]
"""Counts the tokens of one message."""

MEDIA_TOKENS = 1600
"""What `estimate_tokens` counts for one image, document, video or audio block."""

_CHARACTERS_PER_TOKEN = 4
_MESSAGE_OVERHEAD = 3
_MEDIA = ("image", "document", "video", "audio")


def estimate_tokens(message: Message) -> int:
    """A cheap estimate of the tokens of ``message``: about four characters a token.

    Text, reasoning text, tool calls (name and JSON input) and tool results (text and JSON) count
    by their characters; each image, document, video or audio block counts `MEDIA_TOKENS`; each
    message adds a few tokens for its framing. Good enough to stay within a budget with some
    headroom; count with the provider's tokenizer where the limit is tight.
    """
    characters = 0
    media = 0
    for block in message["content"]:
        if "text" in block:
            characters += len(block["text"])
        elif "toolUse" in block:
            tool_use = block["toolUse"]
            characters += len(tool_use["name"]) + len(_json(tool_use["input"]))
        elif "toolResult" in block:
            result_characters, result_media = _result_size(block["toolResult"])
            characters += result_characters
            media += result_media
        elif "reasoningContent" in block:
            characters += len(block["reasoningContent"].get("reasoningText", {}).get("text", ""))
        elif any(kind in block for kind in _MEDIA):
            media += 1
    return math.ceil(characters / _CHARACTERS_PER_TOKEN) + media * MEDIA_TOKENS + _MESSAGE_OVERHEAD


def _result_size(result: ToolResult) -> tuple[int, int]:
    characters = 0
    media = 0
    for item in result["content"]:
        if "text" in item:
            characters += len(item["text"])
        elif "json" in item:
            characters += len(_json(item["json"]))
        else:
            media += 1
    return characters, media


def _json(value: object) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


class Budget:
    """The most messages and tokens a model call may be sent, checked when an item is built."""

    def __init__(
        self,
        item: str,
        *,
        max_messages: int | None,
        max_tokens: int | None,
        token_counter: TokenCounter,
    ) -> None:
        if max_messages is None and max_tokens is None:
            raise ValueError(f"{item} needs max_messages=..., max_tokens=... or both")
        if max_messages is not None:
            check_whole_number(item, "max_messages", max_messages, minimum=1, of="messages")
        if max_tokens is not None:
            check_whole_number(item, "max_tokens", max_tokens, minimum=1, of="tokens")
        check_function(item, "token_counter", token_counter, takes="a function of one Message")
        self.max_messages = max_messages
        self.max_tokens = max_tokens
        self.token_counter = token_counter

    def measure(
        self, messages: Messages, system_prompt: SystemPrompt, projected: int | None = None
    ) -> Measure:
        """What ``messages`` (and the system prompt) weigh against this budget, cut by cut.

        ``projected``: the host's projection of the whole request's input tokens, used in place
        of the default estimate's total (see the module's notes); ignored with a counter of
        one's own, which is taken to be exact.
        """
        return Measure(self, Turns.of(messages), system_prompt, projected)

    def scaled(self, share: float) -> Budget:
        """This budget times ``share`` (each limit at least 1)."""
        return Budget(
            "Budget",
            max_messages=None
            if self.max_messages is None
            else max(1, math.floor(self.max_messages * share)),
            max_tokens=None
            if self.max_tokens is None
            else max(1, math.floor(self.max_tokens * share)),
            token_counter=self.token_counter,
        )


class Measure:
    """The sizes of every cut of one call's conversation, each message counted once.

    A cut leaves out the first ``k`` units of `Turns` and may put a note in front. ``suffix[i]``
    holds the tokens of ``messages[i:]``, so the size of a cut is a lookup, not a recount.
    """

    def __init__(
        self,
        budget: Budget,
        turns: Turns,
        system_prompt: SystemPrompt,
        projected: int | None = None,
    ) -> None:
        self.budget = budget
        self.turns = turns
        self.counts: list[int] = []
        self.suffix: list[int] = [0]
        self.system = 0
        self.scale: float | None = None
        """Projection / estimate of the whole request, when the host's projection is used."""
        if budget.max_tokens is None:
            return
        self.counts = [self.count(message) for message in turns.messages]
        for count in reversed(self.counts):
            self.suffix.append(self.suffix[-1] + count)
        self.suffix.reverse()
        if system_prompt is not None:
            blocks = [{"text": system_prompt}] if isinstance(system_prompt, str) else system_prompt
            self.system = self.count({"role": "user", "content": cast("list[Any]", blocks)})
        whole = self.suffix[0] + self.system
        if projected is not None and budget.token_counter is estimate_tokens and whole > 0:
            self.scale = projected / whole

    def count(self, message: Message) -> int:
        """The tokens of ``message``, by the budget's counter (whose answer is checked)."""
        count = cast(object, self.budget.token_counter(message))
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise TypeError(
                f"token_counter returned {count!r} for a {message['role']} message; it must "
                "return a whole number of tokens (an int >= 0)"
            )
        return count

    def messages(self, k: int, note: str | None = None) -> int:
        """How many messages the cut sends."""
        turns = self.turns
        sent = len(turns.messages) - turns.left_out(k)
        if note is not None and not turns.note_joins_prompt(k):
            sent += 1  # the note travels in a message of its own
        return sent

    def tokens(self, k: int, note: str | None = None, *, system: bool = True) -> int:
        """How many tokens the cut sends (with the system prompt unless ``system=False``)."""
        turns = self.turns
        total = self.suffix[turns.start(k)] + (self.system if system else 0)
        if turns.keeps_prompt_apart(k):
            assert turns.prompt is not None
            total += self.counts[turns.prompt]
        if note is not None:
            total += self.count(note_message(note))
        return total if self.scale is None else math.ceil(total * self.scale)

    def projected(self, messages: Messages) -> int | None:
        """The projection for sending ``messages`` instead (a cut of this conversation).

        None unless the host's projection was used: a handler that passes on a shorter request
        then leaves the figure unknown rather than wrong.
        """
        if self.scale is None:
            return None
        own = sum(self.count(message) for message in messages) + self.system
        return math.ceil(own * self.scale)

    def fits(self, k: int, note: str | None = None, *, budget: Budget | None = None) -> bool:
        """Whether the cut is within ``budget`` (this measure's own by default)."""
        limits = budget or self.budget
        if limits.max_messages is not None and self.messages(k, note) > limits.max_messages:
            return False
        return limits.max_tokens is None or self.tokens(k, note) <= limits.max_tokens
