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
  those messages), in memory, for the last ``cache_size`` summaries. Every later call whose
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
* **A failed summary is not fatal.** When the summary call raises or writes nothing, the call
  falls back to `ContextWindow` behaviour with the same budget (on the conversation with the
  last summary that was written, if any), a warning is logged, and the next call tries again.
"""

from __future__ import annotations

import hashlib
import logging
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
from ._base import CatalogMiddleware, check_positive_number, check_whole_number
from ._budget import Budget, Measure, TokenCounter, estimate_tokens
from ._context_window import ContextWindow
from ._digest import message_bytes
from ._transcript import message_text, transcript
from ._turns import Turns

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


class Summarize(CatalogMiddleware):
    """Replaces older turns in what the model is sent with a cached summary by a named model.

    Example:
        ```python
        agent.use(Summarize(small_model, max_tokens=60_000))
        agent.use(Summarize(small_model, max_messages=40, keep=0.25, instructions=house_style))
        ```

    Args:
        model: The model that writes the summaries (passed as the call's per-call model).
        max_messages: Summarize once a call would send more messages than this.
        max_tokens: Summarize once a call would send more tokens than this.
        keep: The share of the budget the messages kept verbatim may take after a summary.
        token_counter: Counts the tokens of one `Message`; `estimate_tokens` by default.
        instructions: The summarizer's system prompt.
        cache_size: How many summaries are kept.
    """

    def __init__(
        self,
        model: Model,
        *,
        max_messages: int | None = None,
        max_tokens: int | None = None,
        keep: float = 0.5,
        token_counter: TokenCounter = estimate_tokens,
        instructions: str = DEFAULT_INSTRUCTIONS,
        cache_size: int = 128,
    ) -> None:
        if not callable(getattr(model, "stream", None)):
            raise TypeError(
                f"Summarize(model=...) takes the model that writes summaries (with a stream "
                f"method), got {model!r}"
            )
        self.budget = Budget(
            "Summarize",
            max_messages=max_messages,
            max_tokens=max_tokens,
            token_counter=token_counter,
        )
        check_positive_number("Summarize", "keep", keep, of="the budget")
        if keep >= 1:
            raise ValueError(
                f"Summarize(keep=...) is the share of the budget kept verbatim, above 0 and below "
                f"1, got {keep!r}"
            )
        if not isinstance(cast(object, instructions), str) or not instructions.strip():
            raise ValueError(
                f"Summarize(instructions=...) must be a non-empty str, got {instructions!r}"
            )
        check_whole_number("Summarize", "cache_size", cache_size, minimum=1, of="summaries")
        self.model = model
        self.keep = keep
        self.instructions = instructions
        self.cache_size = cache_size
        self._kept = self.budget.scaled(keep)
        self._rewrite_at = self.budget.scaled((1 + keep) / 2)
        self._window = ContextWindow(
            max_messages=max_messages, max_tokens=max_tokens, token_counter=token_counter
        )
        self._summaries: OrderedDict[str, str] = OrderedDict()
        # Summaries already warned about for passing the budget with what follows them.
        self._overlong: dict[str, None] = {}

    def _remembered(self, key: str) -> str | None:
        summary = self._summaries.get(key)
        if summary is not None:
            self._summaries.move_to_end(key)
        return summary

    def _store(self, key: str, summary: str) -> None:
        self._summaries[key] = summary
        while len(self._summaries) > self.cache_size:
            self._summaries.popitem(last=False)

    async def _write(
        self,
        context: InvokeModelContext,
        next_fn: MiddlewareNext[InvokeModelContext, TypedEvent],
        previous: str | None,
        messages: Messages,
    ) -> str:
        """A summary of ``previous`` (the summary so far) and ``messages``, by the summarizer."""
        if previous is None:
            question = f"Conversation:\n\n{transcript(messages)}"
        else:
            question = (
                f"Summary so far:\n\n{previous}\n\nConversation since then:\n\n"
                f"{transcript(messages)}"
            )
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

    async def _sent(
        self,
        context: InvokeModelContext,
        next_fn: MiddlewareNext[InvokeModelContext, TypedEvent],
        measure: Measure,
    ) -> Messages:
        """What the call sends: the summarized conversation, or the window's fallback."""
        turns = measure.turns
        keys = _prefix_keys(turns)
        done, summary = 0, None
        for k in range(turns.units, 0, -1):
            summary = self._remembered(keys[k])
            if summary is not None:
                done = k
                break
        if summary is not None and (
            done == turns.units
            or measure.fits(done, SUMMARY_HEADER + summary)
            or measure.fits(done, budget=self._rewrite_at)
        ):
            # Reused, even when the summary is too long for what follows it, until what follows
            # passes the point halfway from ``keep`` to the whole budget: writing it again each
            # time a message is added would cost a summary call on every model call.
            return self._with_summary(measure, done, summary, keys[done])
        target = next(
            (k for k in range(done + 1, turns.units) if measure.fits(k, budget=self._kept)),
            turns.units,
        )
        covered = turns.messages[turns.start(done) : turns.start(target)]
        try:
            summary = await self._write(context, next_fn, summary, covered)
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
            return self._window.fit(with_summary, context.system_prompt)
        self._store(keys[target], summary)
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
        async def summarize(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            measure = self.budget.measure(
                context.messages, context.system_prompt, context.projected_input_tokens
            )
            if not measure.fits(0) and measure.turns.units:
                sent = await self._sent(context, next_fn, measure)
                context = context.replace(
                    messages=sent, projected_input_tokens=measure.projected(sent)
                )
            async for event in next_fn(context):
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
