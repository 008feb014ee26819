"""A conversation as the context items see it: the parts that may be left out, oldest first.

`ContextWindow` and `Summarize` both shorten what the model is sent by leaving out the start of
the conversation; this module is where they agree on what may go, so neither can break the
conversation. Three words:

* a **prompt** is a user message with no tool results in it: something the user said;
* a **turn** is a prompt and every message after it up to the next prompt;
* a **round** is one model reply (an assistant message) and the user message carrying the
  results of the tools it called, when it called any.

The *units* that may be left out, oldest first, are every turn before the latest one, then the
rounds of the latest turn except its last. So the latest prompt and the last round are always
sent, and since a round holds a ``toolUse`` together with its ``toolResult``, leaving out any
number of units from the front never sends one without the other. Roles keep alternating: a
dropped turn ends where the next prompt starts, and a dropped round is an assistant message and
the user message answering it.

With ``pin_first``, the first prompt of the conversation (the task) is sent too, whatever goes:
it travels at the front of the first message sent (with the note after it), so roles still
alternate.

Leaving units out inside the latest turn keeps its prompt in front of the rounds that remain,
which is how a long agentic run (one prompt, dozens of tool rounds) is shortened at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..content import ContentBlock, Message, Messages

__all__ = ["Turns", "is_prompt", "note_message"]


def is_prompt(message: Message) -> bool:
    """Whether ``message`` is something the user said: a user message with no tool results."""
    return message["role"] == "user" and not any("toolResult" in b for b in message["content"])


def note_message(text: str) -> Message:
    """A user message holding only ``text``: how a note is sent when no prompt can carry it."""
    return {"role": "user", "content": [{"text": text}]}


@dataclass(frozen=True)
class Turns:
    """The units of ``messages`` that may be left out, and what remains once the first ``k`` go.

    Attributes:
        messages: The conversation, as given.
        prompt: The index of the latest prompt, or None when the conversation has none.
        older: How many units are whole turns before the latest one.
        starts: Where each unit starts, oldest first, then where the always-sent last round
            starts (or ``len(messages)``): ``starts[k]`` is where the messages kept after leaving
            out ``k`` units begin.
        pinned: The index of the first prompt when it is pinned (always sent) and is not the
            latest prompt, else None.
    """

    messages: Messages
    prompt: int | None
    older: int
    starts: tuple[int, ...]
    pinned: int | None = None

    @classmethod
    def of(cls, messages: Messages, *, pin_first: bool = False) -> Turns:
        """Split ``messages`` into turns and rounds; ``pin_first`` pins the first prompt."""
        turns = cls._split(messages)
        if pin_first and turns.prompt is not None:
            first = next(i for i, message in enumerate(messages) if is_prompt(message))
            if first != turns.prompt:
                return cls(turns.messages, turns.prompt, turns.older, turns.starts, first)
        return turns

    @classmethod
    def _split(cls, messages: Messages) -> Turns:
        prompts = [index for index, message in enumerate(messages) if is_prompt(message)]
        latest = prompts[-1] if prompts else None
        first_round = 0 if latest is None else latest + 1
        round_starts = [
            index
            for index in range(first_round, len(messages))
            if index == first_round or messages[index]["role"] == "assistant"
        ]
        if latest is None:
            # No prompt at all: only rounds, the last of them always sent.
            return cls(messages, None, 0, tuple(round_starts) or (0,))
        # Messages before the first prompt (a history that starts mid-conversation) are one
        # turn of their own.
        turn_starts = [0, *(index for index in prompts[:-1] if index > 0)] if latest > 0 else []
        # Leaving out every older turn keeps the latest turn whole, from its prompt; past that,
        # its rounds go one by one with the prompt kept apart (see `kept`). The first round's
        # start is the prompt's next message, so it is never where kept messages begin.
        return cls(messages, latest, len(turn_starts), (*turn_starts, latest, *round_starts[1:]))

    @property
    def units(self) -> int:
        """How many units may be left out."""
        return len(self.starts) - 1

    def start(self, k: int) -> int:
        """Where the messages kept after leaving out the first ``k`` units begin.

        Everything before it is left out, except the latest prompt when ``k`` reaches into the
        latest turn's rounds: the prompt is sent first, then the messages from here on.
        """
        return self.starts[k]

    def keeps_prompt_apart(self, k: int) -> bool:
        """Whether leaving out ``k`` units keeps the latest prompt ahead of a later start."""
        return self.prompt is not None and self.starts[k] > self.prompt

    def pins(self, k: int) -> bool:
        """Whether leaving out ``k`` units reaches the pinned prompt, which is then sent first."""
        return self.pinned is not None and self.starts[k] > self.pinned

    def _rest(self, k: int) -> Messages:
        rest = self.messages[self.starts[k] :]
        if self.keeps_prompt_apart(k):
            assert self.prompt is not None
            return [self.messages[self.prompt], *rest]
        return rest

    def kept(self, k: int) -> Messages:
        """The messages sent after leaving out the first ``k`` units (the same list for 0)."""
        if k == 0:
            return self.messages
        rest = self._rest(k)
        if self.pins(k):
            return self._after_pinned([], rest)
        return rest

    def _after_pinned(self, note: list[ContentBlock], rest: Messages) -> Messages:
        """``rest`` with the pinned prompt (and ``note``) in front of its first message.

        When pinning, what is kept always starts with a prompt (an older turn's, or the latest
        one kept apart), so joining them keeps roles alternating.
        """
        assert self.pinned is not None and rest and is_prompt(rest[0])
        first = rest[0]
        content = [*self.messages[self.pinned]["content"], *note, *first["content"]]
        return [{**first, "content": content}, *rest[1:]]

    def left_out(self, k: int) -> int:
        """How many messages leaving out the first ``k`` units leaves out."""
        kept_before = (1 if self.keeps_prompt_apart(k) else 0) + (1 if self.pins(k) else 0)
        return self.starts[k] - kept_before

    def note_joins_prompt(self, k: int) -> bool:
        """Whether a note for the cut goes into a kept prompt rather than a message of its own."""
        if self.keeps_prompt_apart(k) or self.pins(k):
            return True
        start = self.starts[k]
        return start < len(self.messages) and is_prompt(self.messages[start])

    def kept_with_note(self, k: int, text: str) -> Messages:
        """`kept` with ``text`` in front: in the first message when it is a prompt, else alone.

        The note goes into the prompt as a block of its own (a new message: the given one is not
        edited) because a second user message in a row would break the alternation of roles
        that providers require; a kept part that starts with a model reply gets a user message
        of its own, which restores the alternation instead.
        """
        if self.pins(k):
            return self._after_pinned([{"text": text}], self._rest(k))
        kept = self.kept(k)
        if self.note_joins_prompt(k):
            first = kept[0]
            content: list[ContentBlock] = [{"text": text}, *first["content"]]
            return [{**first, "content": content}, *kept[1:]]
        return [note_message(text), *kept]
