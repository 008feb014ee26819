"""`Summarize`: replace the older part of what the model is sent with a summary, written once.

An InvokeModelStage Wrap handler. When the conversation a model call would send passes a budget
(``max_messages``, ``max_tokens`` or both, measured as `ContextWindow` measures), the older part
is replaced, in what this call sends, by a summary written by the model you name. The rules:

* **Written through the per-call model.** The summary is one model call made through the rest
  of the chain with ``context.replace(model=summarizer, ...)``: the host's own model call runs
  it, with the transcript of the older part as its one message, ``instructions`` as its system
  prompt and no tools. The agent's model and history are never touched, and its events are not
  streamed to the caller. Handlers registered *before* `Summarize` see one model call; those
  registered after it see the summary call too (a `Retry` there retries it, a `Tracing` there
  traces it), so register a `Guardrail` before it.
* **Written once.** A summary is kept by the conversation prefix it summarizes (a digest of
  those messages), in memory, for the last ``cache_size`` summaries (and in ``store=`` when
  given, see below). Every later call whose
  conversation starts with that prefix reuses it while the rest fits the budget; when the rest
  passes the budget again, the next summary is written from the previous one and the messages
  after it, never from the whole conversation again.
* **How much stays verbatim.** A new summary covers as much as it takes for the newest messages
  to fit within ``keep`` (a share of the budget, half by default), leaving the rest of the
  budget for the summary and for the conversation to grow before the next one.
* **Tool pairs stay whole.** What is summarized is whole turns, then whole rounds of the latest
  turn (the units of `ContextWindow`), so a ``toolUse`` and its ``toolResult`` are summarized or
  sent together. The latest user prompt and the last round are always sent as they are; the
  summary goes in front of the first message sent (a text block of the prompt, or a user
  message of its own when what is kept starts with a model reply).
* **A summary too long for the budget is not written again on every call.** A summary the
  summarizer wrote longer than the budget leaves it (the budget minus ``keep``) would, with the
  messages after it, pass the budget on every call. It is then sent as it is and the oldest
  messages after it are left out, as `ContextWindow` leaves them out (one warning per summary),
  and a new summary is written only once the messages after the last one pass the point halfway
  between ``keep`` and the whole budget. So the summarizer is called at most once per quarter of
  the budget of new conversation (with the default ``keep=0.5``), never on every model call,
  however long it writes. A single turn larger than that is summarized as it arrives. Bound
  the summary's length with ``instructions`` to keep every message.
* **A failed summary is not fatal.** A summary call that raises or writes nothing is tried
  once more; when that fails too, the call falls back to `ContextWindow` behaviour with the same
  budget (on the conversation with the last summary that was written, if any), a warning is
  logged, and the next call tries again. The user's call never fails for its summary.
* **The summarizer's input is bounded.** A transcript over ``max_summarizer_input`` tokens (as
  ``token_counter`` counts it; 50,000 by default) goes to the summarizer in parts, oldest first,
  each folded into the summary so far, so no summary call is sent more than that; a single
  message larger than the bound is cut to it (the end of its text goes, with a note).
* **Budgets and keep** are written as for `ContextWindow`: ``max_tokens=("fraction", 0.8)``
  (a share of the call's model's context window, resolved as `ContextWindow` resolves it, with
  ``context_window=`` and the call's ``invocation_state["context_window"]`` as overrides),
  ``trigger=[("tokens", 60_000), ("messages", 40)]`` (summarize when any is passed), and
  ``keep=`` as a share of the budget (``0.5``) or as ``("messages", 20)``, ``("tokens",
  20_000)`` or ``("fraction", 0.3)``.
* **Pin the task.** With ``pin_first=True`` the conversation's first prompt is never summarized:
  it is sent as it is, in front of the summary.
* **Overflow recovery.** When the model call reports a context overflow before streaming
  anything, what was sent is cut to half (as `ContextWindow` does) and tried once more
  (``retry_on_overflow=False`` turns this off).
* **Kept across processes.** With ``store=`` (a `strands_middleware.stores.CacheStore`: a
  ``RedisStore`` shared by every worker, or an ``InMemoryStore``), the latest summary of each
  conversation is kept there too, so a run resumed in another process sends it instead of
  summarizing again. ``key=`` names the conversation (a function of the call's context, such as
  ``lambda context: context.invocation_state["session_id"]``); by default it is a digest of the
  conversation's first message and system prompt. The entry holds the summary, how many
  messages it covers and a digest of them: it is sent only in front of the very messages it
  summarizes. A store that fails is a miss with a `StoreWarning`, never a failed call.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import OrderedDict
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, cast

from ..content import Messages
from ..engine._handlers import MiddlewareNext
from ..engine._stage import Middleware
from ..events import ModelStopReason, TypedEvent
from ..exceptions import CONTROL_FLOW_EXCEPTIONS
from ..models import Model
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ..stores._protocols import CacheStore
from ._base import (
    CatalogMiddleware,
    check_flag,
    check_function,
    check_positive_number,
    check_store,
    check_whole_number,
)
from ._budget import (
    Budget,
    Limits,
    Measure,
    TokenCounter,
    TokenLimit,
    budget_of,
    estimate_tokens,
    keep_of,
)
from ._context_window import ContextWindow, retried_on_overflow
from ._digest import message_bytes
from ._summary_store import ConversationKey, StoredSummary, SummaryStore
from ._transcript import message_text, transcript
from ._turns import Turns, note_message

__all__ = ["DEFAULT_INSTRUCTIONS", "SUMMARY_HEADER", "Summarize"]

_logger = logging.getLogger("strands_middleware")

DEFAULT_INSTRUCTIONS = (
    "You write the running summary of a conversation between a user and an AI assistant, so "
    "the assistant can carry on without the full transcript. Keep what it needs: the user's "
    "goals and requests, facts and figures learned (tool results included), decisions made, "
    "and anything still to do. Leave out pleasantries and repetition. Write plain prose of at "
    "most 250 words. When a summary so far is given, fold the new part of the conversation "
    "into it."
)
"""The summarizer's system prompt when `Summarize` is given no ``instructions``."""

SUMMARY_HEADER = "[Summary of the earlier conversation]\n"
"""What a summary starts with in the message that carries it."""

_CUT_NOTE = "\n[... the rest of this message was cut to fit the summarizer's input]"


class Summarize(CatalogMiddleware):
    """Replaces older turns in what the model is sent with a cached summary by a named model.

    Example:
        ```python
        agent.use(Summarize(small_model, max_tokens=60_000))
        agent.use(Summarize(small_model, max_messages=40, keep=0.25, instructions=house_style))
        agent.use(
            Summarize(
                small_model,
                trigger=[("fraction", 0.8), ("messages", 200)],
                keep=("messages", 20),
                pin_first=True,
                store=InMemoryStore(),
            )
        )
        ```

    Args:
        model: The model that writes the summaries (passed as the call's per-call model).
        max_messages: Summarize once a call would send more messages than this.
        max_tokens: Summarize once a call would send more tokens than this: a whole number, or
            ``("fraction", f)`` of the call's model's context window.
        trigger: The budget as LangChain spells it, instead of ``max_messages``/``max_tokens``:
            ``("messages", n)``, ``("tokens", n)``, ``("fraction", f)`` or a list of them (any
            one passed starts a summary).
        keep: What stays verbatim after a summary: a share of the budget (above 0, below 1),
            or ``("messages", n)``, ``("tokens", n)``, ``("fraction", f)`` or a list of them.
        context_window: The context window (tokens) fractions are a share of, instead of the
            built-in table's figure for the call's model.
        pin_first: Never summarize the conversation's first prompt (the task): send it as is.
        retry_on_overflow: Cut further and try once more when the model reports that the
            request overflowed its context window.
        token_counter: Counts the tokens of one `Message`; `estimate_tokens` by default.
        instructions: The summarizer's system prompt.
        max_summarizer_input: The most tokens one summary call is sent (its transcript and
            the summary so far); a longer transcript is summarized in parts. None: no bound.
        store: Also keep each conversation's latest summary in this
            `strands_middleware.stores.CacheStore`, for other processes.
        key: Names a call's conversation in ``store`` (return None to leave it out); by
            default a digest of its first message and system prompt.
        ttl: Seconds a summary lives in ``store``, or None (until evicted).
        cache_size: How many summaries are kept in this process.
    """

    def __init__(
        self,
        model: Model,
        *,
        max_messages: int | None = None,
        max_tokens: TokenLimit | None = None,
        trigger: Limits | None = None,
        keep: float | Limits = 0.5,
        context_window: int | None = None,
        pin_first: bool = False,
        retry_on_overflow: bool = True,
        token_counter: TokenCounter = estimate_tokens,
        instructions: str = DEFAULT_INSTRUCTIONS,
        max_summarizer_input: int | None = 50_000,
        store: CacheStore | None = None,
        key: ConversationKey | None = None,
        ttl: float | None = None,
        cache_size: int = 128,
    ) -> None:
        if not callable(getattr(model, "stream", None)):
            raise TypeError(
                f"Summarize(model=...) takes the model that writes summaries (with a stream "
                f"method), got {model!r}"
            )
        self.budget = budget_of(
            "Summarize",
            max_messages=max_messages,
            max_tokens=max_tokens,
            trigger=trigger,
            token_counter=token_counter,
            context_window=context_window,
        )
        if isinstance(keep, (int, float)) and not isinstance(keep, bool):
            check_positive_number("Summarize", "keep", keep, of="the budget")
            if keep >= 1:
                raise ValueError(
                    f"Summarize(keep=...) is the share of the budget kept verbatim, above 0 and "
                    f"below 1, or a limit such as ('messages', 20); got {keep!r}"
                )
            self._kept = self.budget.scaled(keep)
        else:
            self._kept = keep_of("Summarize", cast("Limits", keep), self.budget)
        if not isinstance(cast(object, instructions), str) or not instructions.strip():
            raise ValueError(
                f"Summarize(instructions=...) must be a non-empty str, got {instructions!r}"
            )
        check_flag("Summarize", "pin_first", pin_first)
        check_flag("Summarize", "retry_on_overflow", retry_on_overflow)
        if max_summarizer_input is not None:
            check_whole_number(
                "Summarize", "max_summarizer_input", max_summarizer_input, minimum=64, of="tokens"
            )
        check_whole_number("Summarize", "cache_size", cache_size, minimum=1, of="summaries")
        self._store: SummaryStore | None = None
        if store is None:
            if key is not None or ttl is not None:
                raise ValueError(
                    "Summarize(key=..., ttl=...) are for summaries kept in a store: pass "
                    "store=... as well, or drop them"
                )
        else:
            check_store("Summarize", store, CacheStore, "cache_get and cache_set")
            if key is not None:
                check_function("Summarize", "key", key, takes="a function of the call's context")
            if ttl is not None:
                check_positive_number("Summarize", "ttl", ttl, of="seconds")
            self._store = SummaryStore(store, key, ttl)
        self.model = model
        self.keep = keep
        self.pin_first = pin_first
        self.retry_on_overflow = retry_on_overflow
        self.instructions = instructions
        self.max_summarizer_input = max_summarizer_input
        self.cache_size = cache_size
        self._window = ContextWindow(
            max_messages=self.budget.max_messages,
            max_tokens=self.budget.max_tokens
            if self.budget.fraction is None
            else ("fraction", self.budget.fraction),
            context_window=context_window,
            pin_first=pin_first,
            token_counter=token_counter,
        )
        self._summaries: OrderedDict[str, str] = OrderedDict()
        # Summaries already warned about for passing the budget with what follows them.
        self._overlong: dict[str, None] = {}

    def _remembered(self, key: str) -> str | None:
        summary = self._summaries.get(key)
        if summary is not None:
            self._summaries.move_to_end(key)
        return summary

    def _remember(self, key: str, summary: str) -> None:
        self._summaries[key] = summary
        while len(self._summaries) > self.cache_size:
            self._summaries.popitem(last=False)

    def _tokens(self, text: str) -> int:
        return int(self.budget.token_counter(note_message(text)))

    @staticmethod
    def _question(previous: str | None, part: str) -> str:
        if previous is None:
            return f"Conversation:\n\n{part}"
        return f"Summary so far:\n\n{previous}\n\nConversation since then:\n\n{part}"

    def _part(self, entries: list[str], at: int, room: int | None) -> tuple[str, int]:
        """The transcript entries from ``at`` that fit ``room`` tokens, and where the next begin.

        At least one entry is taken; one larger than ``room`` alone is cut to it.
        """
        if room is None:
            return "\n\n".join(entries[at:]), len(entries)
        taken: list[str] = []
        used = 0
        end = at
        while end < len(entries):
            size = self._tokens(entries[end])
            if taken and used + size > room:
                break
            if not taken and size > room:
                keep = max(1, math.floor(len(entries[end]) * room / size) - len(_CUT_NOTE))
                return entries[end][:keep] + _CUT_NOTE, end + 1
            taken.append(entries[end])
            used += size
            end += 1
        return "\n\n".join(taken), end

    async def _summary(
        self,
        context: InvokeModelContext,
        next_fn: MiddlewareNext[InvokeModelContext, TypedEvent],
        previous: str | None,
        messages: Messages,
    ) -> str:
        """A summary of ``previous`` and ``messages``, in parts within ``max_summarizer_input``."""
        bound = self.max_summarizer_input
        entries = [transcript([message]) for message in messages]
        summary, at = previous, 0
        while at < len(entries):
            room = None
            if bound is not None:
                framing = self._tokens(self._question(summary, ""))
                room = max(bound - framing, bound // 2)
            part, at = self._part(entries, at, room)
            summary = await self._write_retried(context, next_fn, self._question(summary, part))
        if summary is None:
            raise ValueError("there was nothing to summarize")
        return summary

    async def _write_retried(
        self,
        context: InvokeModelContext,
        next_fn: MiddlewareNext[InvokeModelContext, TypedEvent],
        question: str,
    ) -> str:
        """`_write`, tried once more when it fails."""
        try:
            return await self._write(context, next_fn, question)
        except CONTROL_FLOW_EXCEPTIONS:
            raise
        except Exception as error:
            _logger.warning("Summarize: the summary call failed with %r; trying once more", error)
        return await self._write(context, next_fn, question)

    async def _write(
        self,
        context: InvokeModelContext,
        next_fn: MiddlewareNext[InvokeModelContext, TypedEvent],
        question: str,
    ) -> str:
        """The summarizer's answer to ``question``."""
        request = context.replace(
            model=self.model,
            messages=[{"role": "user", "content": [{"text": question}]}],
            system_prompt=self.instructions,
            tool_specs=[],
            tool_choice=None,
        )
        stop: ModelStopReason | None = None
        async with aclosing(next_fn(request)) as events:
            async for event in events:
                if isinstance(event, ModelStopReason):
                    stop = event
        if stop is None:
            raise RuntimeError("the summary call ended without a result")
        summary = message_text(stop.message, tools=False).strip()
        if not summary:
            raise ValueError("the summarizer wrote an empty summary")
        return summary

    async def _stored(
        self, name: str | None, turns: Turns, keys: list[str]
    ) -> tuple[int, str | None]:
        """The store's summary of a prefix of ``turns``, as ``(units it covers, summary)``."""
        if self._store is None or name is None:
            return 0, None
        found = await self._store.read(name)
        if found is None:
            return 0, None
        for k in range(turns.units, 0, -1):
            if turns.start(k) == found.covers and keys[k] == found.prefix:
                self._remember(keys[k], found.summary)
                return k, found.summary
        return 0, None

    async def _sent(
        self,
        context: InvokeModelContext,
        next_fn: MiddlewareNext[InvokeModelContext, TypedEvent],
        measure: Measure,
        budget: Budget,
    ) -> Messages:
        """What the call sends: the summarized conversation, or the window's fallback."""
        kept = self._kept.for_call(context.model, context.invocation_state)
        # Once a summary is too long for what follows it, it is reused until what follows
        # passes the point halfway from ``keep`` to the whole budget.
        rewrite_at = budget.between(kept, 0.5)
        turns = measure.turns
        keys = _prefix_keys(turns)
        done, summary = 0, None
        for k in range(turns.units, 0, -1):
            summary = self._remembered(keys[k])
            if summary is not None:
                done = k
                break
        name = None if self._store is None else self._store.conversation(context)
        if summary is None:
            done, summary = await self._stored(name, turns, keys)
        if summary is not None and (
            done == turns.units
            or measure.fits(done, SUMMARY_HEADER + summary)
            or measure.fits(done, budget=rewrite_at)
        ):
            # Reused, even when the summary is too long for what follows it, until what follows
            # passes the point halfway from ``keep`` to the whole budget: writing it again each
            # time a message is added would cost a summary call on every model call.
            return self._with_summary(measure, done, summary, keys[done])
        target = next(
            (k for k in range(done + 1, turns.units) if measure.fits(k, budget=kept)),
            turns.units,
        )
        first, last = turns.start(done), turns.start(target)
        covered = [turns.messages[index] for index in range(first, last) if index != turns.pinned]
        try:
            summary = await self._summary(context, next_fn, summary, covered)
        except CONTROL_FLOW_EXCEPTIONS:
            raise
        except Exception as error:
            _logger.warning(
                "Summarize: the summary call failed with %r; leaving the oldest turns out "
                "instead, as ContextWindow does",
                error,
            )
            if summary is None:
                return self._window.fit_measured(measure)
            with_summary = turns.kept_with_note(done, SUMMARY_HEADER + summary)
            return self._window.fit_measured(budget.measure(with_summary, context.system_prompt))
        self._remember(keys[target], summary)
        if self._store is not None and name is not None:
            await self._store.write(name, StoredSummary(summary, last, keys[target]))
        return self._with_summary(measure, target, summary, keys[target])

    def _with_summary(self, measure: Measure, done: int, summary: str, key: str) -> Messages:
        """The summary and what follows it, leaving out the oldest of that when it is too long.

        A summary longer than the budget leaves it is sent anyway (the latest prompt and round
        always are): what goes is the oldest messages after it, as `ContextWindow` leaves
        messages out, with one warning per summary.
        """
        turns, note = measure.turns, SUMMARY_HEADER + summary
        if measure.fits(done, note):
            return turns.kept_with_note(done, note)
        cut = next((k for k in range(done + 1, turns.units) if measure.fits(k, note)), turns.units)
        if key not in self._overlong:
            self._overlong[key] = None
            while len(self._overlong) > self.cache_size:
                del self._overlong[next(iter(self._overlong))]
            _logger.warning(
                "Summarize: the summary (%d characters) and the newest messages pass the budget; "
                "leaving out the %d oldest message(s) after the summary instead of summarizing "
                "again on every call. Ask for shorter summaries (instructions=...) or keep less "
                "verbatim (keep=...).",
                len(summary),
                turns.start(cut) - turns.start(done),
            )
        return turns.kept_with_note(cut, note)

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        def summarize(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            # A plain function handing back a generator, which the engine runs as this layer:
            # within budget the events cross one hop here (the call's own, or the overflow
            # retry's), and only a call that is summarised first adds a second.
            budget = self.budget.for_call(context.model, context.invocation_state)
            if budget.fits_whole(context.messages, context.projected_input_tokens):
                return sent_as_is(context, next_fn)
            measure = budget.measure(
                context.messages,
                context.system_prompt,
                context.projected_input_tokens,
                pin_first=self.pin_first,
                count_tokens=self._kept.limits_tokens,
            )
            if not measure.fits(0) and measure.turns.units:
                return summarized(context, next_fn, measure, budget)
            return sent_as_is(context, next_fn)

        def sent_as_is(
            request: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            if not self.retry_on_overflow:
                return next_fn(request)
            return retried_on_overflow(
                "Summarize",
                request,
                next_fn,
                lambda: self._window.reduced(
                    request.messages, request.messages, request.system_prompt
                ),
            )

        async def summarized(
            context: InvokeModelContext,
            next_fn: MiddlewareNext[InvokeModelContext, TypedEvent],
            measure: Measure,
            budget: Budget,
        ) -> AsyncGenerator[TypedEvent, None]:
            sent = await self._sent(context, next_fn, measure, budget)
            request = context.replace(messages=sent, projected_input_tokens=measure.projected(sent))
            async for event in sent_as_is(request, next_fn):
                yield event

        summarize.__qualname__ = f"Summarize[{InvokeModelStage.name}]"
        return [InvokeModelStage.wrap(summarize)]


def _prefix_keys(turns: Turns) -> list[str]:
    """For each cut ``k``, a digest of the conversation before ``turns.start(k)``.

    A rolling digest, one message at a time, so every cut's key costs one pass over the
    conversation.
    """
    rolling = hashlib.sha256()
    at: dict[int, str] = {0: rolling.hexdigest()}
    for index, message in enumerate(turns.messages, start=1):
        rolling.update(message_bytes(message))
        rolling.update(b"\x00")
        at[index] = rolling.copy().hexdigest()
    return [at[turns.start(k)] for k in range(turns.units + 1)]
