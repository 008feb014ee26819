"""`Redact`: mask secrets and personal data in what flows to and from the model provider.

**It protects what leaves, not what tools need.** By default it masks what the model provider is
sent and what the model returns; the arguments a tool receives are left as the model wrote them,
because a tool that sends an email needs the real address, and so does a human approving the
call. Four switches, one per flow, each building new values and never editing the ones it is
given:

* ``model_input`` (on): an InvokeModelStage Input handler masks the conversation the model is
  sent (text, the arguments of earlier tool calls, tool results). The context's messages are the
  call's own deep copy and the handler builds new ones, so the agent's history keeps the
  original text (the model never sees it; the application still does). The system prompt and
  the tool specs are the developer's own text and are sent as they are.
* ``model_output`` (on): the text the model returns is masked in the stream and in the message
  alike. An InvokeModelStage Output handler masks the message of the `ModelStopReason`, which is
  what enters the history and the agent's result; a Wrap handler masks the streamed text deltas
  (the `TextDeltaEvent` and its raw chunk) and the `ModelMessageEvent` the same way (see
  *Streaming* below). The model's tool calls are left to ``tool_input`` and reasoning blocks are
  never touched: providers sign them and reject an edited one on the next turn.
* ``tool_input`` (off): an ExecuteToolStage Input handler gives the tool a new ``tool_use``
  whose ``input`` is masked. Input handlers run before every Wrap handler, so a `ToolApproval`
  then shows the human the masked arguments the tool will get. Turn it on only for tools that
  must never see the secrets; with it off, ``model_input`` still masks those arguments in what
  the model is sent on the next turn.
* ``tool_output`` (on): an ExecuteToolStage Output handler masks the ``text`` and ``json`` content
  of the `ToolResultEvent` (its ``exception`` is kept as it is: the model never reads it).

**Streaming.** A secret can arrive split across two deltas, so deltas cannot be masked one by
one. The stream handler keeps the text of the open block in a buffer and lets a delta's text out
only once no match can reach back into it: it holds the last ``stream_window`` characters (128
by default), and, further back, everything from the start of any match that could still grow;
the rest of the block goes out, masked, when the block ends. Masking sees the text already let
out, so lookbehinds work across deltas. What this guarantees: every match that lies within
``stream_window`` characters of its start, and every match that already matches before its text
reaches that length (an API key, say), is masked in the stream exactly as in the message, so the
deltas joined are the masked message. What it costs: a UI shows text up to twice
``stream_window`` characters late, in runs of at least ``stream_window`` characters (the buffer
is masked once a window's worth can go out, not on every delta, which would rescan the same
text for each one). Only text is streamed this way; tool-call input fragments
(`ToolUseDeltaEvent`) and reasoning deltas pass through, as they do in the message. Handlers
registered before `Redact` see the masked stream, handlers after it the model's own; the result
is masked for all of them.

**Reversible masking** (``reversible=True``). The model is sent pseudonyms instead of the
matches: ``<EMAIL_1>``, ``<PHONE_NUMBER_2>`` (the pattern's name upper-cased, and a number). A
value gets the same pseudonym on every model and tool call of one run (an invocation of the
agent, told apart by its ``invocation_state`` dict), so the model can refer to it; the next run
hands them out afresh. The values come back where they leave the model's side:

* a tool gets its arguments with every pseudonym of the run replaced by its value (with
  ``tool_input=True`` it gets them masked instead), and its result is masked with the run's
  pseudonyms (``tool_output``) before anything registered earlier sees it;
* the model's reply has its pseudonyms replaced by their values (``model_output``), in the
  streamed text deltas (a pseudonym split across deltas is held back until it is whole: text goes
  out in runs of a few dozen characters) and in the message that enters the history and reaches
  the user. The history therefore keeps real values, which the next call masks again.

Only pseudonyms the run handed out are restored; one the model makes up stays as written. The
run's values live in memory only, for as long as the agent's latest run. What is restored is
restored by handlers that run inside anything registered *before* `Redact`: register `Tracing`
before it and its spans record the pseudonyms the model saw, never the values (`Tracing` after
it sees what the tool gets; ``Tracing(redact=...)`` masks what it records in any order).
``redact()`` called directly belongs to no run, so it masks with ``[REDACTED:{name}]``, and
``replacement=`` does not combine with ``reversible=True``.

Matching. Each pattern is applied in turn, in the order of the mapping, and each match is
replaced by ``replacement``: a template whose ``{name}`` is the pattern's name, or a function
``(name, matched_text) -> str``. Strings are found recursively through dicts and lists (tool
inputs, JSON results); keys, ids, tool names and binary content are left alone. Patterns are
compiled once, and a value with nothing to mask is returned as the same object, so the common
case costs one regex scan per pattern and no copying; a built-in pattern whose every match holds
a literal (``@`` for an e-mail address, ``bearer``, a key's prefix; four digits in a row for a
card number, and for a phone number without ``+`` or ``(``) is not run on a text without it. A
text found with nothing to mask is remembered (up to 4096 texts and 4 million characters per
`Redact`), so the history sent again on every model call is not scanned again; a ``replacement``
function is therefore not consulted again for a text whose every match it left as it was.

`DEFAULT_PATTERNS`, in the order they apply: ``bearer_token`` (``Bearer <token>`` with a digit
in the token), ``api_key`` (``sk-...`` keys of OpenAI and Anthropic, Stripe ``sk_live_``/
``sk_test_``/``rk_live_`` keys, GitHub ``ghp_``-style and ``github_pat_`` tokens, Slack
``xox?-`` tokens, Google ``AIza`` keys), ``aws_access_key_id`` (``AKIA``/``ASIA``/``ABIA``/
``ACCA`` plus 16), ``email``, ``card_number`` (13 to 19 digits written together, in groups of
four, or grouped 4-6-5 / 4-6-4, with one kind of separator, a space or a dash; and only when the
Luhn checksum holds, so most order numbers and timestamps are not masked)
and ``phone_number`` (``+`` and a country code, or the North American ``(555) 123-4567`` /
``555-123-4567`` forms; 8 to 15 digits). Extend them with
``Redact(patterns={**DEFAULT_PATTERNS, "ticket": r"TCK-\\d+"})``: the built-in card and phone
patterns keep their checks wherever they are used.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeGuard, TypeVar, cast

from ..engine._handlers import MiddlewareNext
from ..engine._result import MiddlewareResult
from ..engine._stage import Middleware
from ..events import ModelStopReason, ToolResultEvent, TypedEvent
from ..host._mixin import RUN_STATE, MiddlewareHostMixin
from ..stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._base import CatalogMiddleware, check_flag, check_whole_number, kind_of
from ._content_rewrite import ContentRewriter
from ._pseudonyms import Pseudonyms, pseudonym_of
from ._redacted_stream import RedactedStream, Substitution
from ._reversible import reversible_middleware
from ._scoped import ScopedState

__all__ = ["DEFAULT_PATTERNS", "Redact"]

_T = TypeVar("_T")

_BEARER = re.compile(r"(?i:\bbearer)\s+(?=[A-Za-z0-9\-._~+/]*\d)[A-Za-z0-9\-._~+/]{8,}=*")
_API_KEY = re.compile(
    r"(?<![\w-])(?:"
    r"sk-[A-Za-z0-9_-]{20,}"
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{36,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r")(?![\w-])"
)
_AWS_ACCESS_KEY_ID = re.compile(
    r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"
)
# The lookbehind pins a match to the start of a run of address characters, which keeps the scan
# linear on long text with no "@" in it.
_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
    r"\.[A-Za-z]{2,}(?![\w-])"
)
# Written together, in fours (4-4-4-4, 4-4-4-4-3), or as 4-6-5 / 4-6-4, one separator throughout:
# the grouping keeps a card apart from digits around it, which a run of "digit, maybe a space"
# would swallow (and then fail the checksum on the whole run).
#
# The digit patterns match their first character before the lookbehind: a pattern that opens
# with a character class lets ``re`` skip ahead to where a match can begin, while one that opens
# with a lookbehind is tried at every position (several times slower on prose). The lookbehind
# then reads one character further back. Written plainly, the card number is
# ``(?<!\d)(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?|\d{4}([ -])\d{6}\2\d{4,5})``
# ``(?!\d)``.
_CARD_NUMBER = re.compile(
    r"\d(?<!\d\d)(?:"
    r"\d{12,18}"
    r"|\d{3}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?"
    r"|\d{3}([ -])\d{6}\2\d{4,5}"
    r")(?!\d)"
)
# Written plainly: ``(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{1,4}){1,4}
# |(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4})(?!\w)``; each branch below starts after the
# first character and checks, looking back, which one it was.
_PHONE_NUMBER = re.compile(
    r"[+(\d](?<![\w+].)(?:"
    r"(?<=\+)\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{1,4}){1,4}"
    r"|(?<=\()\d{3}\)[ .-]?\d{3}[ .-]\d{4}"
    r"|(?<=\d)\d{2}[ .-]\d{3}[ .-]\d{4}"
    r")(?!\w)"
)

DEFAULT_PATTERNS: Mapping[str, re.Pattern[str]] = MappingProxyType(
    {
        "bearer_token": _BEARER,
        "api_key": _API_KEY,
        "aws_access_key_id": _AWS_ACCESS_KEY_ID,
        "email": _EMAIL,
        "card_number": _CARD_NUMBER,
        "phone_number": _PHONE_NUMBER,
    }
)
"""What `Redact` masks when no ``patterns`` are given, in the order the patterns apply."""

_CLEAN_TEXTS = 4096
"""How many texts found with nothing to mask one `Redact` remembers at most."""
_CLEAN_CHARACTERS = 4_000_000
"""How many characters of such texts it holds at most (a longer text is not remembered)."""


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if position % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _is_card_number(text: str) -> bool:
    digits = _digits(text)
    return 13 <= len(digits) <= 19 and _luhn(digits)


def _is_phone_number(text: str) -> bool:
    return 8 <= len(_digits(text)) <= 15


_CHECKS: dict[re.Pattern[str], Callable[[str], bool]] = {
    _CARD_NUMBER: _is_card_number,
    _PHONE_NUMBER: _is_phone_number,
}
"""Checks a match of a built-in pattern must also pass, looked up by pattern."""


def _may_hold_bearer(text: str) -> bool:
    return "bearer" in text.lower()


def _may_hold_api_key(text: str) -> bool:
    # "sk_", "rk_", "gh?_" and "github_pat_" keys all hold an underscore.
    return "sk-" in text or "_" in text or "xox" in text or "AIza" in text


def _may_hold_aws_key(text: str) -> bool:
    return "AKIA" in text or "ASIA" in text or "ABIA" in text or "ACCA" in text


def _may_hold_email(text: str) -> bool:
    return "@" in text


_FOUR_DIGITS = re.compile(r"\d{4}")


def _may_hold_card_number(text: str) -> bool:
    return _FOUR_DIGITS.search(text) is not None  # every branch opens with four digits


def _may_hold_phone_number(text: str) -> bool:
    return "+" in text or "(" in text or _may_hold_card_number(text)  # third branch: 4 digits


_GUARDS: dict[re.Pattern[str], Callable[[str], bool]] = {
    _BEARER: _may_hold_bearer,
    _API_KEY: _may_hold_api_key,
    _AWS_ACCESS_KEY_ID: _may_hold_aws_key,
    _EMAIL: _may_hold_email,
    _CARD_NUMBER: _may_hold_card_number,
    _PHONE_NUMBER: _may_hold_phone_number,
}
"""What every match of a built-in pattern holds, tested before the pattern is run.

Each pattern starts with a lookbehind (the digit ones try their branches at every digit), and on
prose with nothing to mask that scan is nearly all of what `Redact` costs. A substring test (or
one search for four digits in a row) runs in C over the whole text at once, so a text without
what a match needs skips the pattern. The guard only ever says "may match"."""


@dataclass(frozen=True)
class _Rule:
    name: str
    pattern: re.Pattern[str]
    substitute: str | Callable[[re.Match[str]], str]
    guard: Callable[[str], bool] | None
    """False for a text the pattern cannot match (None: no quick test, always scan)."""


class Redact(CatalogMiddleware):
    """Masks secrets and personal data in what the model is sent and what it returns.

    It logs nothing: what it masks never reaches a log through it.

    Example:
        ```python
        agent.use(Redact())                                    # model in and out, tool results
        agent.use(Redact(patterns={**DEFAULT_PATTERNS, "ticket": r"TCK-\\d+"}, tool_input=True))
        agent.use(Redact(replacement=lambda name, text: f"<{name}:{len(text)}>"))
        ```

    Args:
        patterns: Names to regular expressions (compiled or as strings); `DEFAULT_PATTERNS` when
            omitted. They apply in the mapping's order.
        replacement: A template (``{name}`` is the pattern's name; write other braces doubled)
            or a function of ``(name, matched_text)`` returning the text to put instead.
        model_input: Mask the conversation sent to the model (history is untouched).
        model_output: Mask the model's text, streamed and in its message, before it enters the
            history.
        tool_input: Mask the arguments a tool (and an approval gate) receives; off by default.
        tool_output: Mask the text and JSON of tool results.
        stream_window: How many characters of streamed text are held back (see the module
            docstring): a match up to this long is never split across what goes out.
        reversible: Mask with pseudonyms stable within a run (``<EMAIL_1>``) and put the values
            back in the tool's arguments and in the answer (see *Reversible masking* above).
    """

    # The item named in configuration errors: `Guardrail` masks through a Redact of its own, and
    # its user wrote Guardrail(patterns=...), not Redact(...).
    _owner = "Redact"

    def __init__(
        self,
        *,
        patterns: Mapping[str, re.Pattern[str] | str] | None = None,
        replacement: str | Callable[[str, str], str] = "[REDACTED:{name}]",
        model_input: bool = True,
        model_output: bool = True,
        tool_input: bool = False,
        tool_output: bool = True,
        stream_window: int = 128,
        reversible: bool = False,
    ) -> None:
        owner = self._owner
        compiled = _compile(owner, DEFAULT_PATTERNS if patterns is None else patterns)
        given = cast(object, replacement)  # checked at run time: callers need not be type-checked
        if isinstance(given, str):
            try:
                given.format(name="")
            except (KeyError, IndexError, ValueError) as error:
                raise ValueError(
                    f"{owner}(replacement=...) may use only the {{name}} placeholder (write other "
                    f"braces doubled, {{{{ and }}}}), got {replacement!r}"
                ) from error
        elif not callable(given):
            raise TypeError(
                f"{owner}(replacement=...) takes a template string or a function (name, "
                f"matched_text) -> str, got {replacement!r}"
            )
        switches = {
            "model_input": model_input,
            "model_output": model_output,
            "tool_input": tool_input,
            "tool_output": tool_output,
        }
        for switch, value in switches.items():
            check_flag("Redact", switch, value)
        check_whole_number("Redact", "stream_window", stream_window, minimum=1, of="characters")
        check_flag("Redact", "reversible", reversible)
        if reversible and replacement != "[REDACTED:{name}]":
            raise ValueError(
                "Redact(reversible=True) masks with pseudonyms such as <EMAIL_1>, so "
                "replacement=... does not apply: drop one of them"
            )
        if reversible and not model_input:
            raise ValueError(
                "Redact(reversible=True) hands out pseudonyms as it masks what the model is "
                "sent, so it needs model_input=True"
            )
        if not any(switches.values()):
            raise ValueError(
                "Redact(...) with model_input, model_output, tool_input and tool_output all "
                "False would mask nothing; leave at least one on"
            )
        self.patterns: Mapping[str, re.Pattern[str]] = MappingProxyType(compiled)
        self.replacement = replacement
        self.model_input = model_input
        self.model_output = model_output
        self.tool_input = tool_input
        self.tool_output = tool_output
        self.stream_window = stream_window
        self._rules = tuple(self._rule(name, pattern) for name, pattern in compiled.items())
        # Texts found with nothing to mask. Every model call sends the whole conversation again,
        # and a finished message is masked in its stream event and again in the result: the
        # texts already scanned are looked up by hash rather than scanned by every pattern once
        # more. Bounded in count and in characters held (see `redact_text`).
        self._clean: dict[str, None] = {}
        self._clean_characters = 0
        self._rewrite = ContentRewriter(self.redact_text)
        self.reversible = reversible
        self._runs: ScopedState[Pseudonyms] = ScopedState(
            owner, "invocation", lambda: Pseudonyms(self._pseudonymized)
        )

    def check_registration(self, host: MiddlewareHostMixin, earlier: Sequence[object]) -> None:
        """Refuse a reversible Redact on a host that keeps no state for a run (`RUN_STATE`)."""
        why = host.lacks.get(RUN_STATE)
        if self.reversible and why is not None:
            raise ValueError(
                f"Redact(reversible=True) cannot run on {type(host).__name__}: {why}. Its "
                "pseudonyms are kept for a run, so the model's <EMAIL_1> could not be given back "
                "to the tool or the user. Use Redact() there, which masks without restoring."
            )

    def _rule(self, name: str, pattern: re.Pattern[str]) -> _Rule:
        check = _CHECKS.get(pattern)
        replacement = self.replacement
        if isinstance(replacement, str) and check is None:
            # A constant: the fastest form re.sub takes. Backslashes are escaped so the text is
            # inserted literally rather than read as a group reference.
            return _Rule(
                name,
                pattern,
                replacement.format(name=name).replace("\\", "\\\\"),
                _GUARDS.get(pattern),
            )
        fixed = replacement.format(name=name) if isinstance(replacement, str) else None

        def substitute(match: re.Match[str]) -> str:
            text = match.group(0)
            if check is not None and not check(text):
                return text
            if fixed is not None:
                return fixed
            produced = cast(object, cast("Callable[[str, str], str]", replacement)(name, text))
            if not isinstance(produced, str):
                # Its type, never its value: what a replacement returns is often built from the
                # matched text, and this error reaches logs.
                raise TypeError(
                    f"{self._owner}(replacement=...) returned {kind_of(produced)} for a {name!r} "
                    "match; it must return a str"
                )
            return produced

        return _Rule(name, pattern, substitute, _GUARDS.get(pattern))

    def redact_text(self, text: str) -> str:
        """``text`` with every match masked (the same object when nothing matched)."""
        clean = self._clean
        if text in clean:
            return text
        original = text
        for rule in self._rules:
            if rule.guard is not None and not rule.guard(text):
                continue
            masked = rule.pattern.sub(rule.substitute, text)
            # Every match may have failed its check: keep the original object then, so an
            # unchanged value stays the same object all the way up.
            if masked is not text and masked != text:
                text = masked
        if text is original:
            self._remember_clean(text)
        return text

    def _remember_clean(self, text: str) -> None:
        """Note ``text`` as holding nothing to mask, within the bounds (see `redact_text`)."""
        if len(text) > _CLEAN_CHARACTERS:
            return
        clean = self._clean
        if len(clean) >= _CLEAN_TEXTS or self._clean_characters + len(text) > _CLEAN_CHARACTERS:
            # Forget them all rather than track an order: clearing is safe from any thread,
            # and a text still in use is scanned once more and remembered again.
            clean.clear()
            self._clean_characters = 0
        clean[text] = None
        self._clean_characters += len(text)

    def redact(self, value: _T) -> _T:
        """``value`` with every string in it masked, through dicts, lists and tuples.

        Containers are rebuilt only where something changed; a value with nothing to mask is
        returned as the same object. Keys and non-string leaves are kept as they are. With
        ``reversible=True`` this belongs to no run, so matches become ``[REDACTED:{name}]``.
        """
        return cast(_T, self._rewrite.value(value))

    def _pseudonymized(self, text: str, pseudonym: Callable[[str, str], str]) -> str:
        """``text`` with every match (that passes its pattern's check) replaced by
        ``pseudonym(name, match)``: a reversible run's masking."""
        if text in self._clean:
            return text
        masked = text
        for rule in self._rules:
            if rule.guard is not None and not rule.guard(masked):
                continue
            masked = rule.pattern.sub(
                pseudonym_of(rule.name, _CHECKS.get(rule.pattern), pseudonym), masked
            )
        if masked == text:
            # The same set as redact_text's: with reversible=True the replacement is the
            # default, so a text is clean for one exactly when it is clean for the other.
            self._remember_clean(text)
            return text
        return masked

    # ---- handlers --------------------------------------------------------------------------

    def _substitutions(self) -> list[Substitution]:
        """Each pattern with a function giving what a match becomes (itself when a check fails)."""

        def of(rule: _Rule) -> Callable[[re.Match[str]], str]:
            substitute = rule.substitute
            if callable(substitute):
                return substitute
            return lambda match: match.expand(substitute)

        return [(rule.pattern, of(rule), rule.guard) for rule in self._rules]

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        if self.reversible:
            return reversible_middleware(
                self._runs,
                [rule.name for rule in self._rules],
                model_output=self.model_output,
                tool_input=self.tool_input,
                tool_output=self.tool_output,
            )
        substitutions = self._substitutions()

        async def mask_model_stream(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            stream = RedactedStream(
                substitutions,
                mask_message=lambda message: self._rewrite.message(message, tool_uses=False),
                window=self.stream_window,
            )
            async for event in next_fn(context):
                for masked in stream.feed(event):
                    yield masked
            for masked in stream.flush():
                yield masked

        def mask_model_input(context: InvokeModelContext) -> InvokeModelContext:
            messages = self._rewrite.messages(context.messages)
            return context if messages is context.messages else context.replace(messages=messages)

        def mask_model_output(
            result: MiddlewareResult[ModelStopReason],
        ) -> MiddlewareResult[ModelStopReason]:
            stop = result.value
            message = self._rewrite.message(stop.message, tool_uses=False)
            if message is stop.message:
                return result
            return result.replace(
                value=ModelStopReason(stop.stop_reason, message, stop.usage, stop.metrics)
            )

        def mask_tool_input(context: ExecuteToolContext) -> ExecuteToolContext:
            tool_use = context.tool_use
            new_input = self._rewrite.value(tool_use["input"])
            if new_input is tool_use["input"]:
                return context
            return context.replace(tool_use={**tool_use, "input": new_input})

        def mask_tool_output(
            result: MiddlewareResult[ToolResultEvent],
        ) -> MiddlewareResult[ToolResultEvent]:
            event = result.value
            tool_result = self._rewrite.result(event.tool_result)
            if tool_result is event.tool_result:
                return result
            return result.replace(value=ToolResultEvent(tool_result, exception=event.exception))

        items: list[Middleware[Any, Any, Any]] = []
        if self.model_input:
            mask_model_input.__qualname__ = "Redact[invokeModel.Input]"
            items.append(InvokeModelStage.input(mask_model_input))
        if self.model_output:
            mask_model_stream.__qualname__ = "Redact[invokeModel.Wrap]"
            items.append(InvokeModelStage.wrap(mask_model_stream))
            mask_model_output.__qualname__ = "Redact[invokeModel.Output]"
            items.append(InvokeModelStage.output(mask_model_output))
        if self.tool_input:
            mask_tool_input.__qualname__ = "Redact[executeTool.Input]"
            items.append(ExecuteToolStage.input(mask_tool_input))
        if self.tool_output:
            mask_tool_output.__qualname__ = "Redact[executeTool.Output]"
            items.append(ExecuteToolStage.output(mask_tool_output))
        return items


def _compile(owner: str, patterns: object) -> dict[str, re.Pattern[str]]:
    if not isinstance(patterns, Mapping):
        raise TypeError(
            f"{owner}(patterns=...) takes a mapping of names to regular expressions, got "
            f"{patterns!r}"
        )
    given = cast("Mapping[object, object]", patterns)
    if not given:
        raise ValueError(f"{owner}(patterns=...) is empty: nothing would be masked")
    compiled: dict[str, re.Pattern[str]] = {}
    for name, given_pattern in given.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"{owner}(patterns=...) names must be non-empty strings, got {name!r}")
        pattern = given_pattern
        if isinstance(pattern, str):
            try:
                pattern = re.compile(pattern)
            except re.error as error:
                raise ValueError(
                    f"{owner}(patterns=...) pattern {name!r} does not compile: {error}"
                ) from error
        if not _is_text_pattern(pattern):
            raise TypeError(
                f"{owner}(patterns=...) pattern {name!r} must be a str or a pattern compiled from "
                f"a str, got {pattern!r}"
            )
        checked = pattern
        if checked.search("") is not None:
            raise ValueError(
                f"{owner}(patterns=...) pattern {name!r} matches the empty string, so it would "
                "insert the replacement everywhere"
            )
        compiled[name] = checked
    return compiled


def _is_text_pattern(value: object) -> TypeGuard[re.Pattern[str]]:
    source: object = getattr(value, "pattern", None)
    return isinstance(value, re.Pattern) and isinstance(source, str)
