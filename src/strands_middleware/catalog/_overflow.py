"""Telling a provider's context-overflow error from any other failure of a model call.

`ContextWindow` and `Summarize` reduce what they send and try once more when a model call fails
because the request was longer than the model's context window. Each host surfaces that in its
own way, so an error counts as an overflow when:

* its class, or a base class, is named ``ContextWindowOverflowException`` (strands'
  ``strands.types.exceptions.ContextWindowOverflowException``, which every strands provider
  raises and which reaches the model call through the strands bridge) or
  ``ContextWindowOverflowError``; matched by name, so no framework is imported. An error that
  stands for another one by carrying its class's name in a ``type`` string (Temporal's
  ``ApplicationError``, the cause of the ``ActivityError`` a failed model activity raises in
  workflow code) counts by that name too; or
* its message (or the message of the error it was raised from) reads like one of the providers'
  overflow messages: OpenAI's ``context_length_exceeded`` / ``maximum context length``,
  Anthropic's ``prompt is too long`` / ``exceed context limit``, Bedrock's ``input is too
  long``, Gemini's ``exceeds the maximum number of tokens``, or any message that says the
  ``context window`` was exceeded or overflowed. Throttling messages (``too many tokens``,
  ``tokens per minute``) are not overflows.
"""

from __future__ import annotations

import re

__all__ = ["is_context_overflow"]

_CLASS_NAMES = frozenset({"ContextWindowOverflowException", "ContextWindowOverflowError"})

_MESSAGES = re.compile(
    "|".join(
        (
            r"context_length_exceeded",
            r"maximum context length",
            r"prompt is too long",
            r"exceeds? (the )?context limit",
            r"input is too long",
            r"exceeds the maximum number of tokens",
            r"context window.{0,40}(exceed|overflow)",
            r"(exceed|overflow)\w*.{0,40}context window",
        )
    ),
    re.IGNORECASE,
)


def is_context_overflow(error: BaseException) -> bool:
    """Whether ``error`` says the request was longer than the model's context window."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if any(cls.__name__ in _CLASS_NAMES for cls in type(current).__mro__):
            return True
        if getattr(current, "type", None) in _CLASS_NAMES:
            return True
        if _MESSAGES.search(str(current)):
            return True
        current = current.__cause__ or current.__context__
    return False
