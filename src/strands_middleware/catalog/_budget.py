"""Budgets of messages and tokens, and how much of a conversation each cut of it sends.

`ContextWindow` and `Summarize` keep what the model is sent within the same kind of budget and
measure it the same way, here. ``max_messages`` counts the messages sent. ``max_tokens`` counts the
system prompt and the messages with a token counter, a function of one `Message` (the system
prompt is counted as a user message holding its blocks); tool specs are not counted. The default
counter, `estimate_tokens`, is a cheap estimate; a real tokenizer plugs in as
``lambda message: len(encoding.encode(json.dumps(message)))``.

A token budget may be a share of the model's context window, ``("fraction", 0.8)``, resolved on
each call (see `context_window_for`). A budget may also be spelled as LangChain's limits,
``("messages", 40)``, ``("tokens", 60_000)``, ``("fraction", 0.8)``, one or a list of them
(`limits`): a call passes the budget when it passes any of them.

Where the host projects a call's input tokens (``InvokeModelContext.projected_input_tokens``) and
the counter is the default one, the projection is the size of the whole request (tool specs
included, as the host counts them) and the estimate only shares it out among the messages: every
size is the estimate scaled by projection / estimate of the whole request.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, cast

from ..content import Message, Messages, SystemPrompt, ToolResult
from ._base import check_function, check_whole_number
from ._models_known import KNOWN_MODELS, facts_for, model_id
from ._turns import Turns, note_message

__all__ = [
    "CONTEXT_WINDOW_KEY",
    "MEDIA_TOKENS",
    "Budget",
    "Fraction",
    "Limit",
    "Limits",
    "Measure",
    "TokenCounter",
    "TokenLimit",
    "budget_of",
    "context_window_for",
    "estimate_tokens",
    "keep_of",
    "limits",
]

TokenCounter = Callable[[Message], int]
"""Counts the tokens of one message."""

Fraction: TypeAlias = tuple[Literal["fraction"], float]
"""``("fraction", 0.8)``: a share of the model's context window, above 0 and at most 1."""

TokenLimit: TypeAlias = int | Fraction
"""A token budget: a whole number of tokens, or a `Fraction` of the model's context window."""

Limit: TypeAlias = tuple[Literal["messages"], int] | tuple[Literal["tokens"], int] | Fraction
"""One limit: ``("messages", n)``, ``("tokens", n)`` or ``("fraction", f)``."""

Limits: TypeAlias = Limit | Sequence[Limit]
"""One `Limit` or a list of them: passing any one passes the budget."""

CONTEXT_WINDOW_KEY = "context_window"
"""The ``invocation_state`` key that sets one call's context window (tokens) for fractions."""

_LIMIT_FORMS = '("messages", 40), ("tokens", 60_000) or ("fraction", 0.8)'


def _fraction(item: str, name: str, value: object) -> float:
    parts = cast("tuple[object, ...]", value) if isinstance(value, tuple) else ()
    share = parts[1] if len(parts) == 2 and parts[0] == "fraction" else None
    if (
        isinstance(share, bool)
        or not isinstance(share, (int, float))
        or not math.isfinite(share)
        or not 0 < share <= 1
    ):
        raise ValueError(
            f"{item}({name}=...) takes a whole number of tokens or a share of the model's "
            f'context window as ("fraction", f) with 0 < f <= 1, such as ("fraction", 0.8); '
            f"got {value!r}"
        )
    return float(share)


def limits(item: str, name: str, value: object) -> tuple[int | None, TokenLimit | None]:
    """``value`` (one `Limit` or a list of them) as ``(max_messages, max_tokens)``.

    Raises:
        ValueError: Not a limit, an empty list, or two limits of one kind (two token limits,
            whether in tokens or a fraction, included).
    """
    entries: list[object]
    if isinstance(value, tuple):
        entries = [value]
    elif isinstance(value, Sequence) and not isinstance(value, str):
        entries = list(cast("Sequence[object]", value))
    else:
        entries = []
    if not entries:
        raise ValueError(
            f"{item}({name}=...) takes {_LIMIT_FORMS}, or a list of them; got {value!r}"
        )
    messages: int | None = None
    tokens: TokenLimit | None = None
    for entry in entries:
        parts = cast("tuple[object, ...]", entry) if isinstance(entry, tuple) else ()
        kind = parts[0] if parts else None
        if kind == "fraction":
            found: TokenLimit = ("fraction", _fraction(item, name, parts))
        elif kind in ("messages", "tokens") and len(parts) == 2:
            number = parts[1]
            if isinstance(number, bool) or not isinstance(number, int) or number < 1:
                raise ValueError(
                    f"{item}({name}=...) takes ({kind!r}, n) with n a whole number >= 1, "
                    f"got {entry!r}"
                )
            found = number
        else:
            raise ValueError(
                f"{item}({name}=...) takes {_LIMIT_FORMS}, or a list of them; got {entry!r}"
            )
        if kind == "messages":
            if messages is not None:
                raise ValueError(f"{item}({name}=...) has two message limits: give one")
            messages = cast(int, found)
        else:
            if tokens is not None:
                raise ValueError(
                    f"{item}({name}=...) has two token limits (tokens or fraction): give one"
                )
            tokens = found
    return messages, tokens


def context_window_for(
    item: str, model: object, invocation_state: Mapping[str, Any], override: int | None
) -> int:
    """The context window (tokens) a fractional budget of ``item`` is a share of, for one call.

    In order: the call's ``invocation_state["context_window"]``, the item's ``context_window=``,
    then the built-in table (`KNOWN_MODELS`) by the ``model_id`` the call's model reports.

    Raises:
        ValueError: None of them gives it, or the call's value is not a whole number >= 1.
    """
    given = invocation_state.get(CONTEXT_WINDOW_KEY)
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, int) or given < 1:
            raise ValueError(
                f"{item}: invocation_state[{CONTEXT_WINDOW_KEY!r}] must be a whole number of "
                f"tokens >= 1, got {given!r}"
            )
        return given
    if override is not None:
        return override
    found = model_id(model)
    facts = facts_for(found, KNOWN_MODELS)
    if facts is None:
        raise ValueError(
            f"{item} has a budget in a fraction of the context window, and the model of this "
            f"call (model_id {found!r}) is not in strands_middleware.catalog.KNOWN_MODELS; pass "
            f"{item}(context_window=<tokens>, ...), or {CONTEXT_WINDOW_KEY}=<tokens> in the "
            "call's invocation_state, or give the budget in tokens"
        )
    return facts.context_window


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
    """The most messages and tokens a model call may be sent, checked when an item is built.

    A budget with a `Fraction` of tokens is resolved for each call with `for_call`; only a
    resolved budget (``fraction is None``) measures.
    """

    def __init__(
        self,
        item: str,
        *,
        max_messages: int | None,
        max_tokens: TokenLimit | None,
        token_counter: TokenCounter,
        context_window: int | None = None,
    ) -> None:
        if max_messages is None and max_tokens is None:
            raise ValueError(f"{item} needs max_messages=..., max_tokens=... or both")
        if max_messages is not None:
            check_whole_number(item, "max_messages", max_messages, minimum=1, of="messages")
        self.fraction: float | None = None
        if isinstance(max_tokens, tuple):
            self.fraction = _fraction(item, "max_tokens", max_tokens)
            max_tokens = None
        elif max_tokens is not None:
            check_whole_number(item, "max_tokens", max_tokens, minimum=1, of="tokens")
        if context_window is not None:
            check_whole_number(item, "context_window", context_window, minimum=1, of="tokens")
        check_function(item, "token_counter", token_counter, takes="a function of one Message")
        self.item = item
        self.max_messages = max_messages
        self.max_tokens: int | None = max_tokens
        self.token_counter = token_counter
        self.context_window = context_window
        self._by_window: dict[int, Budget] = {}

    def for_call(self, model: object, invocation_state: Mapping[str, Any]) -> Budget:
        """This budget for one call: itself, or with its fraction resolved to tokens.

        Raises:
            ValueError: A fraction whose context window is unknown (see `context_window_for`).
        """
        if self.fraction is None:
            return self
        window = context_window_for(self.item, model, invocation_state, self.context_window)
        resolved = self._by_window.get(window)
        if resolved is None:
            resolved = Budget(
                self.item,
                max_messages=self.max_messages,
                max_tokens=max(1, math.floor(window * self.fraction)),
                token_counter=self.token_counter,
            )
            if len(self._by_window) < 64:  # a handful of models per item; never unbounded
                self._by_window[window] = resolved
        return resolved

    def measure(
        self,
        messages: Messages,
        system_prompt: SystemPrompt,
        projected: int | None = None,
        *,
        pin_first: bool = False,
        count_tokens: bool = False,
    ) -> Measure:
        """What ``messages`` (and the system prompt) weigh against this budget, cut by cut.

        ``projected``: the host's projection of the whole request's input tokens, used in place
        of the default estimate's total (see the module's notes); ignored with a counter of
        one's own, which is taken to be exact. ``pin_first``: the first prompt is always sent.
        ``count_tokens``: count tokens even when this budget has no token limit (for a ``keep``
        that has one).
        """
        assert self.fraction is None, "resolve a fractional budget with for_call first"
        turns = Turns.of(messages, pin_first=pin_first)
        return Measure(self, turns, system_prompt, projected, count_tokens=count_tokens)

    def fits_whole(self, messages: Messages, projected: int | None = None) -> bool:
        """Whether ``messages`` sent whole are surely within this budget, told without measuring.

        True only where `measure` would find the uncut conversation within the budget
        (``Measure.fits(0)``): within the message limit, and either no token limit or the
        host's projection ``projected`` (the whole request's tokens, which the default counter's
        sizes are scaled to) below it. False is no verdict: measure then. A call well within its
        budget, the common case, so costs neither a walk over the conversation nor a count of
        each message.
        """
        assert self.fraction is None, "resolve a fractional budget with for_call first"
        if self.max_messages is not None and len(messages) > self.max_messages:
            return False
        if self.max_tokens is None:
            return True
        # The measured size is the estimate scaled to the projection, rounded up: the
        # projection itself give or take a float's rounding, so below the limit by one or more
        # it is surely within it.
        return (
            projected is not None
            and self.token_counter is estimate_tokens
            and projected < self.max_tokens
        )

    @property
    def limits_tokens(self) -> bool:
        """Whether this budget has a token limit (in tokens or in a fraction)."""
        return self.max_tokens is not None or self.fraction is not None

    def scaled(self, share: float) -> Budget:
        """This budget times ``share`` (each limit at least 1; a fraction stays a fraction)."""
        tokens: TokenLimit | None
        if self.fraction is not None:
            tokens = ("fraction", min(1.0, self.fraction * share))
        else:
            tokens = (
                None if self.max_tokens is None else max(1, math.floor(self.max_tokens * share))
            )
        return Budget(
            self.item,
            max_messages=None
            if self.max_messages is None
            else max(1, math.floor(self.max_messages * share)),
            max_tokens=tokens,
            token_counter=self.token_counter,
            context_window=self.context_window,
        )

    def between(self, keep: Budget, share: float) -> Budget:
        """A resolved budget ``share`` of the way from ``keep`` to this one, limit by limit.

        A limit ``keep`` does not set stays this budget's own. Both must be resolved.
        """

        def point(mine: int | None, kept: int | None) -> int | None:
            if mine is None or kept is None:
                return mine
            return max(1, math.floor(kept + (mine - kept) * share))

        return Budget(
            self.item,
            max_messages=point(self.max_messages, keep.max_messages),
            max_tokens=point(self.max_tokens, keep.max_tokens),
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
        *,
        count_tokens: bool = False,
    ) -> None:
        self.budget = budget
        self.turns = turns
        self.counts: list[int] = []
        self.suffix: list[int] = [0]
        self.system = 0
        self.scale: float | None = None
        """Projection / estimate of the whole request, when the host's projection is used."""
        if budget.max_tokens is None and not count_tokens:
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
        if turns.pins(k):
            sent -= 1  # the pinned prompt travels inside the first message sent
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
        if turns.pins(k):
            assert turns.pinned is not None
            total += self.counts[turns.pinned]
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


def budget_of(
    item: str,
    *,
    max_messages: int | None,
    max_tokens: TokenLimit | None,
    trigger: Limits | None,
    token_counter: TokenCounter,
    context_window: int | None,
) -> Budget:
    """An item's budget from ``max_messages``/``max_tokens`` or from ``trigger=`` (not both)."""
    if trigger is not None:
        if max_messages is not None or max_tokens is not None:
            raise ValueError(
                f"{item} takes its budget as trigger=... or as max_messages=.../max_tokens=..., "
                "not both"
            )
        max_messages, max_tokens = limits(item, "trigger", trigger)
    return Budget(
        item,
        max_messages=max_messages,
        max_tokens=max_tokens,
        token_counter=token_counter,
        context_window=context_window,
    )


def keep_of(item: str, keep: Limits, budget: Budget) -> Budget:
    """The budget of what stays once ``budget`` is passed, checked to be below it where known."""
    messages, tokens = limits(item, "keep", keep)
    kept = Budget(
        item,
        max_messages=messages,
        max_tokens=tokens,
        token_counter=budget.token_counter,
        context_window=budget.context_window,
    )
    pairs: list[tuple[str, float | None, float | None]] = [
        ("messages", kept.max_messages, budget.max_messages),
        ("tokens", kept.max_tokens, budget.max_tokens),
        ("fraction", kept.fraction, budget.fraction),
    ]
    for kind, low, high in pairs:
        if low is not None and high is not None and low > high:
            raise ValueError(
                f"{item}(keep=...) keeps more {kind} ({low!r}) than the budget allows "
                f"({high!r}): keep must be at most the budget"
            )
    return kept
