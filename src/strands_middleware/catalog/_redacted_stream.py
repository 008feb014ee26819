"""`RedactedStream`: the streamed text of a model call, masked without splitting a match.

`Redact` masks the model's message once it is complete; this masks the same text while it is
still arriving, so that a UI rendering deltas never shows what the message hides. A match can
arrive split across deltas, so the text of the open block is buffered and goes out only once no
match can reach back into it (the rules are in `strands_middleware.catalog._redact`).

Exactness. The message is masked pattern by pattern over its whole text, and a later pattern can
match only because an earlier one replaced something (a lookbehind that now sees ``]`` where it
saw a letter). So the buffer is masked the same way, pattern by pattern, keeping track of which
characters of the model's text each piece of the result stands for; the text is cut only where
no match of any pattern, at any step, crosses, and what goes out is the masked result up to that
point. For each pattern the end of what already went out is kept as that pattern saw it (up to
``window`` characters), and the pattern searches the buffer after it, so a lookbehind reads what
it would read in the whole message.

It works on event keys rather than classes, so it masks this library's `TextDeltaEvent` and
`ModelStreamEvent` and a host's own delta events (a strands ``TextStreamEvent`` reaches handlers
as a plain `TypedEvent` with the same keys) alike:

* a raw chunk ``{"event": {"contentBlockDelta": {"delta": {"text": ...}, ...}}}``;
* a text delta ``{"data": <text>, ...}`` (strands adds ``"delta": {"text": <text>}``), which hosts
  stream right after the raw chunk carrying the same text.

Both are rewritten to carry the text that goes out with that chunk, and dropped while none does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias, cast

from ..content import Message
from ..events import (
    ModelMessageEvent,
    ModelStopReason,
    ModelStreamEvent,
    TextDeltaEvent,
    TypedEvent,
)

__all__ = ["RedactedStream", "Substitution"]

_NOTHING: tuple[TypedEvent, ...] = ()

Substitution: TypeAlias = tuple[
    re.Pattern[str], Callable[[re.Match[str]], str], Callable[[str], bool] | None
]
"""A pattern, what a match of it becomes (the match itself when it is not to be masked), and a
quick test that is False for a text the pattern cannot match (None: always scan)."""


class RedactedStream:
    """Masks the text deltas of one model call; feed it every event, then flush it.

    Args:
        substitutions: The patterns, in the order they apply, and what their matches become.
        mask_message: Masks a finished message (for `ModelMessageEvent`).
        window: How many characters at the end of the buffer are always held back.
    """

    __slots__ = (
        "_block",
        "_contexts",
        "_delta_template",
        "_due",
        "_echo",
        "_echo_text",
        "_mask_message",
        "_pending",
        "_raw_template",
        "_substitutions",
        "_window",
    )

    def __init__(
        self,
        substitutions: Sequence[Substitution],
        *,
        mask_message: Callable[[Message], Message],
        window: int,
    ) -> None:
        self._substitutions = tuple(substitutions)
        self._mask_message = mask_message
        self._window = window
        # The buffer is masked once it holds a window beyond the one kept back, not on every
        # delta: each release masks the whole buffer with every pattern, so releasing on each
        # delta of a few characters would scan the same window over and over, while waiting for
        # a window's worth scans each character a bounded number of times. Text then goes out
        # in runs of at least ``window`` characters.
        self._due = 2 * window
        self._pending = ""  # the open block's text not let out yet, as the model wrote it
        # Per pattern, the end of the block's text already let out, as that pattern saw it.
        self._contexts: list[str] = ["" for _ in self._substitutions]
        self._block: object = None  # contentBlockIndex of the open text block
        self._echo: str | None = None  # the raw chunk's text, awaiting its text delta event
        self._echo_text = ""  # what went out with that chunk
        self._raw_template: Mapping[str, Any] | None = None
        self._delta_template: Mapping[str, Any] | None = None

    def feed(self, event: TypedEvent) -> Sequence[TypedEvent]:
        """The events to forward in place of ``event`` (none while its text is held back)."""
        # Every event of every model call comes through here, so the two kinds of delta are
        # read in line. They are told apart by their exact class first: a text delta is never
        # probed for a raw chunk, nor a raw chunk for text (other classes, a handler's own
        # events, are probed for both).
        kind = type(event)
        if kind is not TextDeltaEvent:
            # A raw chunk's text: the lookups under one ``try`` rather than a type test per
            # level, since nearly every event that gets here is a text chunk.
            text: Any = None
            block: object = None
            chunk: Any = event.get("event")
            if chunk is not None:
                try:
                    body: Any = chunk["contentBlockDelta"]
                    text = body["delta"]["text"]
                    block = body.get("contentBlockIndex")
                except (KeyError, TypeError, AttributeError, IndexError):
                    text = None
            if isinstance(text, str):
                flushed = self.flush() if block != self._block else None
                self._block = block
                self._raw_template = event
                self._pending += text
                released = self._release(final=False) if len(self._pending) >= self._due else ""
                self._echo, self._echo_text = text, released
                if released:
                    return [*(flushed or ()), _with_raw_text(event, released)]
                return flushed or _NOTHING
        if kind is not ModelStreamEvent:
            delta: Any = event.get("data")
            if isinstance(delta, str):
                self._delta_template = event
                if self._echo is not None and delta == self._echo:
                    self._echo = None
                    echoed = self._echo_text
                    return [_with_delta_text(event, echoed)] if echoed else _NOTHING
                # A text delta no raw chunk announced (a handler's own): it joins the buffer.
                self._echo = None
                self._pending += delta
                released = self._release(final=False) if len(self._pending) >= self._due else ""
                return [_with_delta_text(event, released)] if released else _NOTHING
        self._echo = None
        if isinstance(event, ModelMessageEvent):
            return [*self.flush(), ModelMessageEvent(self._mask_message(event.message))]
        if isinstance(event, ModelStopReason) or _ends_block(event):
            return [*self.flush(), event]
        return (event,)

    def unchanged(self, event: TypedEvent, anchor: str) -> bool:
        """Whether ``event`` can go out as it is, without `feed`, when every match starts with
        ``anchor`` and no pattern looks behind: nothing is held, and it is a text delta or a raw
        chunk of this library's own classes with no ``anchor`` in its text (a raw chunk that is
        not a text delta has none). Other events take `feed`."""
        if self._pending:
            return False
        kind = type(event)
        if kind is TextDeltaEvent:
            return anchor not in event["data"]
        if kind is ModelStreamEvent:
            body: Any = event["event"].get("contentBlockDelta")
            if body is None:
                return True
            text: Any = body.get("delta", {}).get("text")
            return not isinstance(text, str) or anchor not in text
        return False

    def flush(self) -> list[TypedEvent]:
        """Let out, masked, whatever the open block still holds (its end has come)."""
        released = self._release(final=True) if self._pending else ""
        self._contexts = ["" for _ in self._substitutions]
        self._block = None
        self._echo = None
        out: list[TypedEvent] = []
        if released:
            if self._raw_template is not None:
                out.append(_with_raw_text(self._raw_template, released))
            if self._delta_template is not None:
                out.append(_with_delta_text(self._delta_template, released))
        return out

    def _release(self, *, final: bool) -> str:
        """Mask and return the buffered text no match can reach back into (all of it if final)."""
        raw = self._pending
        text = _Tracked(raw)
        seen: list[_Tracked] = []  # the buffer as each pattern saw it, before it applied
        spans: list[tuple[int, int]] = []
        for (pattern, substitute, guard), context in zip(
            self._substitutions, self._contexts, strict=True
        ):
            seen.append(text)
            if guard is None or guard(context + text.text):
                text = text.substituted(pattern, substitute, context, spans)
        end = len(raw) if final else _safe_end(len(raw) - self._window, spans)
        if end <= 0:
            return ""
        self._contexts = [
            (context + before.up_to(end))[-self._window :]
            for context, before in zip(self._contexts, seen, strict=True)
        ]
        self._pending = raw[end:]
        return text.up_to(end)


class _Tracked:
    """Buffered text, masked by some patterns, knowing what each character stands for.

    Character ``i`` stands for the span ``[lo[i], hi[i])`` of the buffered text as the model
    wrote it: one character of its own, or, inside a replacement, the whole match it replaced.
    Until a pattern replaces something, every character stands for itself (``lo`` and ``hi`` are
    ``None``): that is nearly every delta of a stream, and it keeps the bookkeeping to slicing.
    """

    __slots__ = ("hi", "lo", "text")

    def __init__(self, text: str, lo: list[int] | None = None, hi: list[int] | None = None) -> None:
        self.text = text
        self.lo = lo
        self.hi = hi

    def substituted(
        self,
        pattern: re.Pattern[str],
        substitute: Callable[[re.Match[str]], str],
        context: str,
        spans: list[tuple[int, int]],
    ) -> _Tracked:
        """This text with one pattern applied, searched after ``context``; spans are recorded.

        ``context`` is the text already let out, as this pattern saw it: the search starts after
        it, so a lookbehind reads what the whole message would show there.
        """
        offset = len(context)
        whole = context + self.text
        parts: list[str] = []
        lo: list[int] = []
        hi: list[int] = []
        last = 0
        own_lo: list[int] | None = None
        own_hi: list[int] | None = None
        for match in pattern.finditer(whole, offset):
            begin, finish = match.start() - offset, match.end() - offset
            span = self._span(begin, finish)
            spans.append(span)
            replaced = substitute(match)
            if replaced == match.group(0):
                continue
            if own_lo is None or own_hi is None:
                own_lo, own_hi = self._bounds()
            parts += (self.text[last:begin], replaced)
            lo += own_lo[last:begin]
            lo += [span[0]] * len(replaced)
            hi += own_hi[last:begin]
            hi += [span[1]] * len(replaced)
            last = finish
        if own_lo is None or own_hi is None:
            return self
        parts.append(self.text[last:])
        return _Tracked("".join(parts), lo + own_lo[last:], hi + own_hi[last:])

    def _bounds(self) -> tuple[list[int], list[int]]:
        if self.lo is not None and self.hi is not None:
            return self.lo, self.hi
        size = len(self.text)
        return list(range(size)), list(range(1, size + 1))

    def _span(self, begin: int, finish: int) -> tuple[int, int]:
        if self.lo is None or self.hi is None:  # every character stands for itself
            if begin == finish:
                at = min(begin, len(self.text))
                return at, at
            return begin, finish
        if begin == finish:  # an empty match stands for no text, at the place it is found
            at = self.lo[begin] if begin < len(self.lo) else (self.hi[-1] if self.hi else 0)
            return at, at
        return self.lo[begin], self.hi[finish - 1]

    def up_to(self, end: int) -> str:
        """The characters that stand for text before ``end`` (no replacement crosses it)."""
        if self.hi is None:
            return self.text[:end]
        return "".join(char for char, hi in zip(self.text, self.hi, strict=True) if hi <= end)


def _safe_end(limit: int, spans: list[tuple[int, int]]) -> int:
    """The last place up to ``limit`` that no span crosses (0 if there is none)."""
    end = max(0, limit)
    moved = True
    while moved and end > 0:
        moved = False
        for begin, finish in spans:
            if begin < end < finish:
                end = begin
                moved = True
    return end


def _ends_block(event: Mapping[str, Any]) -> bool:
    chunk = event.get("event")
    if not isinstance(chunk, dict):
        return False
    keys = cast("dict[str, Any]", chunk)
    return "contentBlockStop" in keys or "contentBlockStart" in keys or "messageStop" in keys


def _with_raw_text(event: Mapping[str, Any], text: str) -> TypedEvent:
    chunk: dict[str, Any] = dict(cast("Mapping[str, Any]", event["event"]))
    body: dict[str, Any] = dict(cast("Mapping[str, Any]", chunk["contentBlockDelta"]))
    body["delta"] = {**cast("Mapping[str, Any]", body["delta"]), "text": text}
    chunk["contentBlockDelta"] = body
    if type(event) is ModelStreamEvent:
        return ModelStreamEvent(cast(Any, chunk))
    return TypedEvent({**event, "event": chunk})


def _with_delta_text(event: Mapping[str, Any], text: str) -> TypedEvent:
    if type(event) is TextDeltaEvent:
        return TextDeltaEvent(text)
    fields: dict[str, Any] = {**event, "data": text}
    delta = event.get("delta")
    if isinstance(delta, Mapping) and "text" in delta:
        fields["delta"] = {**cast("Mapping[str, Any]", delta), "text": text}
    return TypedEvent(fields)
