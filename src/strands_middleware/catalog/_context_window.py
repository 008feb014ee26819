"""`ContextWindow`: keep what the model is sent within a budget of messages or tokens.

An InvokeModelStage Input handler. When the conversation a model call would send is over budget,
it leaves out the oldest part of it for this call, and puts a short note where it was so the
model knows something came before. The rules:

* **Only what the model is sent changes.** The context's messages are the call's own copy and
  the handler builds a new list, so the agent's history keeps every message, and the next call
  starts again from the whole history.
* **Oldest turns first, whole.** Older turns go first (a turn: a user prompt and everything up
  to the next prompt), then, when the latest turn alone is over budget, its oldest rounds (a
  round: a model reply and the results of the tools it called). A ``toolUse`` is never sent
  without its ``toolResult`` nor the other way round, and roles keep alternating.
* **Never dropped:** the system prompt (it is counted, never changed), the latest user prompt
  and the last round. When they alone are over budget they are sent as they are: nothing else
  can go without breaking the conversation, and the provider reports the overflow itself.
* **Elided or dropped.** With the default ``marker`` the left-out part is elided: the first
  message sent starts with a note, ``"[12 earlier messages were left out to fit the context
  window.]"`` (a text block of its own in front of the prompt, or a user message of its own when
  what is kept starts with a model reply). With ``marker=None`` it is dropped without a trace.

Budgets: ``max_messages`` counts the messages sent; ``max_tokens`` counts the system prompt and
the messages with ``token_counter`` (a function of one `Message`; the tool specs are not
counted, so leave room for them). The default counter, `estimate_tokens`, is a cheap estimate
(about four characters a token, 1,600 for each image, document, video or audio block); pass a
tokenizer's count where the limit is tight, e.g.
``lambda message: len(encoding.encode(json.dumps(message)))``. Given both, a call fits both:
it is cut when it passes either (tokens OR messages). The same budget can be written as
LangChain writes it, ``trigger=[("tokens", 60_000), ("messages", 40)]``. With the default
counter, a host's projection of the call's input tokens (``context.projected_input_tokens``,
tool specs included) is the size of the whole request, and the estimate only shares it out
among the messages; a cut request goes on with its projection scaled down to what is sent.

* **A share of the context window.** ``max_tokens=("fraction", 0.8)`` (or
  ``trigger=("fraction", 0.8)``) is 80% of the context window of the model each call goes to:
  the call's ``invocation_state["context_window"]`` when set (with the reference agent,
  ``agent("...", context_window=32_000)``), else the item's ``context_window=``, else the
  built-in table `strands_middleware.catalog.KNOWN_MODELS`, matched by the ``model_id`` the
  call's model reports (``model.get_config()``). A model found nowhere fails the call with a
  `ValueError` naming those two overrides: a guessed window would be wrong one way or the other.
* **Keep.** By default a call over budget is cut just enough to fit. ``keep=`` (the same forms:
  ``("messages", 20)``, ``("tokens", 30_000)``, ``("fraction", 0.5)``) cuts it further, to what
  ``keep`` allows, once the budget is passed: the budget is the trigger, ``keep`` what stays.
* **Pin the task.** With ``pin_first=True`` the conversation's first prompt (the task) is sent
  on every call, whatever else goes: it leads the first message sent, then the note, then that
  message's own content, so roles still alternate and no tool pair is split.
* **Overflow recovery.** When the model call fails because the request overflowed the model's
  context window, before anything was streamed, the request is cut to half of what was sent
  (messages and tokens, as counted, from the whole conversation) and tried once more, with a
  warning logged. A second overflow, or one raised after events were streamed, reaches the
  caller; ``retry_on_overflow=False`` turns this off. An overflow is an error whose class (or a
  base class) is named ``ContextWindowOverflowException`` (strands', which every strands
  provider raises and the strands bridge lets through) or ``ContextWindowOverflowError``, or
  whose message (or its cause's) reads like a provider's: ``context_length_exceeded``,
  ``maximum context length`` (OpenAI), ``prompt is too long``, ``exceed context limit``
  (Anthropic), ``input is too long`` (Bedrock), ``exceeds the maximum number of tokens``
  (Gemini), or a ``context window`` exceeded or overflowed. Throttling (``too many tokens``) is
  not an overflow. The cut is made by an Input handler, so it comes before every Wrap handler
  whatever the order of registration (a `UsageBudget` or a `Cache` sees the request as it is
  sent); the recovery is a Wrap handler in the place `ContextWindow` was registered.
* **No work within budget.** A call within budget is passed on as it is: the same list, no copy.
  A budget of messages only, or a token budget with the default counter where the host projects
  the call's input tokens, tells a call within it without measuring it (the length of the list,
  and the projection against the limit): no message is walked or counted. The overflow recovery
  guards only the wait for the first event; the events after it are passed straight on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any, cast

from ..content import Messages, SystemPrompt
from ..engine._handlers import MiddlewareNext
from ..engine._stage import Middleware
from ..events import TypedEvent
from ..exceptions import CONTROL_FLOW_EXCEPTIONS
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._base import CatalogMiddleware, check_flag
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
from ._overflow import is_context_overflow

__all__ = ["DEFAULT_MARKER", "ContextWindow"]

_logger = logging.getLogger("strands_middleware")

_REMEMBERED_CUTS = 64

DEFAULT_MARKER = "[{count} earlier messages were left out to fit the context window.]"
"""The note `ContextWindow` puts where it left messages out; ``{count}`` is how many."""


class ContextWindow(CatalogMiddleware):
    """Keeps what each model call is sent within a budget by leaving out the oldest turns.

    Example:
        ```python
        agent.use(ContextWindow(max_messages=40))
        agent.use(ContextWindow(max_tokens=("fraction", 0.8), pin_first=True))
        agent.use(ContextWindow(trigger=[("tokens", 100_000), ("messages", 200)], marker=None))
        ```

    Args:
        max_messages: The most messages a model call is sent.
        max_tokens: The most tokens a model call is sent (system prompt and messages): a whole
            number, or ``("fraction", f)`` of the model's context window.
        trigger: The budget as LangChain spells it, instead of ``max_messages``/``max_tokens``:
            ``("messages", n)``, ``("tokens", n)``, ``("fraction", f)`` or a list of them (a
            call passing any one is cut).
        keep: What a call over budget is cut down to (the same forms); just enough to fit
            when omitted.
        context_window: The context window (tokens) fractions are a share of, instead of the
            built-in table's figure for the call's model.
        pin_first: Send the conversation's first prompt (the task) on every call.
        retry_on_overflow: Cut further and try once more when the model reports that the
            request overflowed its context window.
        token_counter: Counts the tokens of one `Message`; `estimate_tokens` by default.
        marker: The note put where messages were left out (``{count}`` is how many), or None to
            leave them out without a note.
    """

    def __init__(
        self,
        *,
        max_messages: int | None = None,
        max_tokens: TokenLimit | None = None,
        trigger: Limits | None = None,
        keep: Limits | None = None,
        context_window: int | None = None,
        pin_first: bool = False,
        retry_on_overflow: bool = True,
        token_counter: TokenCounter = estimate_tokens,
        marker: str | None = DEFAULT_MARKER,
    ) -> None:
        self.budget = budget_of(
            "ContextWindow",
            max_messages=max_messages,
            max_tokens=max_tokens,
            trigger=trigger,
            token_counter=token_counter,
            context_window=context_window,
        )
        self.keep = None if keep is None else keep_of("ContextWindow", keep, self.budget)
        check_flag("ContextWindow", "pin_first", pin_first)
        check_flag("ContextWindow", "retry_on_overflow", retry_on_overflow)
        self.pin_first = pin_first
        self.retry_on_overflow = retry_on_overflow
        given = cast(object, marker)  # checked at run time: callers need not be type-checked
        if given is not None:
            if not isinstance(given, str):
                raise TypeError(f"ContextWindow(marker=...) takes a str or None, got {marker!r}")
            try:
                given.format(count=0)
            except (KeyError, IndexError, ValueError) as error:
                raise ValueError(
                    "ContextWindow(marker=...) may use only the {count} placeholder (write other "
                    f"braces doubled, {{{{ and }}}}), got {marker!r}"
                ) from error
        self.marker = marker
        # What the Input handler cut, by the id of the list it sent: (that list, the whole
        # conversation). Read by the overflow handler of the same call; bounded, because a call
        # whose messages a later handler replaced never reads its entry.
        self._cut: dict[int, tuple[Messages, Messages]] = {}

    def fit(self, messages: Messages, system_prompt: SystemPrompt = None) -> Messages:
        """``messages`` as this window sends them: the very same list when within budget.

        Never edits ``messages`` or the messages in it; one that gets the note is a new one.
        A budget in a fraction of the context window needs ``context_window=`` here (there is
        no call to take a model from).
        """
        budget = self.budget.for_call(None, {})
        keep = None if self.keep is None else self.keep.for_call(None, {})
        measure = budget.measure(
            messages,
            system_prompt,
            pin_first=self.pin_first,
            count_tokens=keep is not None and keep.limits_tokens,
        )
        return self.fit_measured(measure, keep)

    def fit_measured(self, measure: Measure, keep: Budget | None = None) -> Messages:
        """`fit` on a conversation already measured against this window's (resolved) budget.

        ``keep``: once the budget is passed, cut down to this (resolved) budget instead.
        """
        turns = measure.turns
        if measure.fits(0):
            return turns.messages
        for k in range(1, turns.units + 1):
            note = None if self.marker is None else self.marker.format(count=turns.left_out(k))
            if k == turns.units or measure.fits(k, note, budget=keep):
                return turns.kept(k) if note is None else turns.kept_with_note(k, note)
        return turns.messages  # nothing may go: all of it is the latest prompt and last round

    def reduced(
        self, messages: Messages, sent: Messages, system_prompt: SystemPrompt
    ) -> Messages | None:
        """``messages`` cut to half of ``sent`` (in messages and tokens), or None if no less.

        What is sent after the model reported a context overflow for ``sent``.
        """
        counter = self.budget.token_counter
        size = _tokens(sent, system_prompt, counter)
        half = Budget(
            self.budget.item,
            max_messages=max(1, len(sent) // 2),
            max_tokens=max(1, size // 2),
            token_counter=counter,
        )
        cut = self.fit_measured(half.measure(messages, system_prompt, pin_first=self.pin_first))
        if len(cut) < len(sent) or _tokens(cut, system_prompt, counter) < size:
            return cut
        return None

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        def context_window(context: InvokeModelContext) -> InvokeModelContext:
            budget = self.budget.for_call(context.model, context.invocation_state)
            if budget.fits_whole(context.messages, context.projected_input_tokens):
                return context
            measure = budget.measure(
                context.messages,
                context.system_prompt,
                context.projected_input_tokens,
                pin_first=self.pin_first,
                count_tokens=self.keep is not None and self.keep.limits_tokens,
            )
            if measure.fits(0):
                return context
            keep = (
                None
                if self.keep is None
                else self.keep.for_call(context.model, context.invocation_state)
            )
            messages = self.fit_measured(measure, keep)
            if messages is context.messages:
                return context
            if self.retry_on_overflow:
                self._cut[id(messages)] = (messages, context.messages)
                while len(self._cut) > _REMEMBERED_CUTS:
                    del self._cut[next(iter(self._cut))]
            return context.replace(
                messages=messages, projected_input_tokens=measure.projected(messages)
            )

        context_window.__qualname__ = f"ContextWindow[{InvokeModelStage.name}.Input]"
        handlers: list[Middleware[Any, Any, Any]] = [InvokeModelStage.input(context_window)]
        if not self.retry_on_overflow:
            return handlers

        def overflow_recovery(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            # A plain function handing back retried_on_overflow's generator: the engine runs
            # that generator as this layer, so every streamed event costs one hop here, not two.
            # The whole conversation this call was cut from, when the Input handler cut it (and
            # no later handler replaced the messages since): a second cut starts from it, so
            # the note counts every message left out and is not put in front of the first one.
            entry = self._cut.pop(id(context.messages), None) if self._cut else None
            whole = entry[1] if entry is not None and entry[0] is context.messages else None
            return retried_on_overflow(
                "ContextWindow",
                context,
                next_fn,
                lambda: self.reduced(
                    context.messages if whole is None else whole,
                    context.messages,
                    context.system_prompt,
                ),
            )

        overflow_recovery.__qualname__ = f"ContextWindow[{InvokeModelStage.name}.Wrap]"
        return [*handlers, InvokeModelStage.wrap(overflow_recovery)]


async def retried_on_overflow(
    item: str,
    context: InvokeModelContext,
    next_fn: MiddlewareNext[InvokeModelContext, TypedEvent],
    reduce: Callable[[], Messages | None],
) -> AsyncGenerator[TypedEvent, None]:
    """The call's events; on a context overflow before any event, once more with ``reduce()``.

    ``reduce`` returns the smaller messages, or None when nothing more can go (the error is then
    raised as it is).
    """
    # Only a failure before the first event is recovered from, so only the wait for that event
    # is guarded; the events after it are passed on with no work of this layer's own.
    stream = next_fn(context)
    try:
        first = await anext(stream)
    except StopAsyncIteration:
        return
    except CONTROL_FLOW_EXCEPTIONS:
        raise
    except Exception as error:
        if not is_context_overflow(error):
            raise
        smaller = reduce()
        if smaller is None:
            raise
        _logger.warning(
            "%s: the model reported a context overflow (%s); sending %d of %d messages and "
            "trying once more",
            item,
            type(error).__name__,
            len(smaller),
            len(context.messages),
        )
    else:
        yield first
        async for event in stream:
            yield event
        return
    async for event in next_fn(context.replace(messages=smaller, projected_input_tokens=None)):
        yield event


def _tokens(messages: Messages, system_prompt: SystemPrompt, counter: TokenCounter) -> int:
    """The tokens of ``messages`` and the system prompt, by ``counter``."""
    return (
        Budget("ContextWindow", max_messages=None, max_tokens=1, token_counter=counter)
        .measure(messages, system_prompt)
        .tokens(0)
    )
