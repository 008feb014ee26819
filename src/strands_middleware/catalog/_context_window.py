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
``lambda message: len(encoding.encode(json.dumps(message)))``. Given both, a call fits both.
With the default counter, a host's projection of the call's input tokens
(``context.projected_input_tokens``, tool specs included) is the size of the whole request, and
the estimate only shares it out among the messages; a cut request goes on with its projection
scaled down to what is sent.
"""

from __future__ import annotations

from typing import Any, cast

from ..content import Messages, SystemPrompt
from ..engine._stage import Middleware
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._base import CatalogMiddleware
from ._budget import Budget, Measure, TokenCounter, estimate_tokens

__all__ = ["DEFAULT_MARKER", "ContextWindow"]

DEFAULT_MARKER = "[{count} earlier messages were left out to fit the context window.]"
"""The note `ContextWindow` puts where it left messages out; ``{count}`` is how many."""


class ContextWindow(CatalogMiddleware):
    """Keeps what each model call is sent within a budget by leaving out the oldest turns.

    Example:
        ```python
        agent.use(ContextWindow(max_messages=40))
        agent.use(ContextWindow(max_tokens=100_000, token_counter=my_counter, marker=None))
        ```

    Args:
        max_messages: The most messages a model call is sent.
        max_tokens: The most tokens a model call is sent (system prompt and messages).
        token_counter: Counts the tokens of one `Message`; `estimate_tokens` by default.
        marker: The note put where messages were left out (``{count}`` is how many), or None to
            leave them out without a note.
    """

    def __init__(
        self,
        *,
        max_messages: int | None = None,
        max_tokens: int | None = None,
        token_counter: TokenCounter = estimate_tokens,
        marker: str | None = DEFAULT_MARKER,
    ) -> None:
        self.budget = Budget(
            "ContextWindow",
            max_messages=max_messages,
            max_tokens=max_tokens,
            token_counter=token_counter,
        )
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

    def fit(self, messages: Messages, system_prompt: SystemPrompt = None) -> Messages:
        """``messages`` as this window sends them: the very same list when within budget.

        Never edits ``messages`` or the messages in it; one that gets the note is a new one.
        """
        return self.fit_measured(self.budget.measure(messages, system_prompt))

    def fit_measured(self, measure: Measure) -> Messages:
        """`fit` on a conversation already measured against this window's budget."""
        turns = measure.turns
        if measure.fits(0):
            return turns.messages
        for k in range(1, turns.units + 1):
            note = None if self.marker is None else self.marker.format(count=turns.left_out(k))
            if k == turns.units or measure.fits(k, note):
                return turns.kept(k) if note is None else turns.kept_with_note(k, note)
        return turns.messages  # nothing may go: all of it is the latest prompt and last round

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        def context_window(context: InvokeModelContext) -> InvokeModelContext:
            measure = self.budget.measure(
                context.messages, context.system_prompt, context.projected_input_tokens
            )
            messages = self.fit_measured(measure)
            if messages is context.messages:
                return context
            return context.replace(
                messages=messages, projected_input_tokens=measure.projected(messages)
            )

        context_window.__qualname__ = "ContextWindow[invokeModel.Input]"
        return [InvokeModelStage.input(context_window)]
