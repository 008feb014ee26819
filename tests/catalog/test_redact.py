"""Redact: what the default patterns mask, each of the four flows, and what is never rewritten."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.catalog import ToolApproval
from strands_middleware.catalog._redact import _GUARDS, DEFAULT_PATTERNS, Redact
from strands_middleware.content import Message
from strands_middleware.events import ModelMessageEvent, ModelStreamEvent, TextDeltaEvent
from strands_middleware.testing import ScriptedModel, text_turn, tool_context, tool_turn
from strands_middleware.tools import tool

from ..conformance.drive import AgentFactory

received: list[Any] = []


@tool
def send(to: str, body: str) -> str:
    """Send a message."""
    received.append({"to": to, "body": body})
    return f"sent to {to}"


@tool
def lookup(name: str) -> str:
    """Look a customer up."""
    return f"{name}: jane@example.com, card 4111 1111 1111 1111"


@pytest.fixture(autouse=True)
def _clear_received() -> None:
    received.clear()


# ---- the default patterns -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail john.doe+tag@mail.example.co.uk now", "mail [REDACTED:email] now"),
        ("card 4111 1111 1111 1111.", "card [REDACTED:card_number]."),
        ("card 4111-1111-1111-1111", "card [REDACTED:card_number]"),
        ("card 4242424242424242", "card [REDACTED:card_number]"),
        ("amex 378282246310005", "amex [REDACTED:card_number]"),
        ("amex 3782 822463 10005", "amex [REDACTED:card_number]"),
        ("order 12, card 4111 1111 1111 1111", "order 12, card [REDACTED:card_number]"),
        ("call +1 415 555 2671", "call [REDACTED:phone_number]"),
        ("call +44 20 7946 0958", "call [REDACTED:phone_number]"),
        (
            "call (415) 555-2671 or 415.555.2671",
            "call [REDACTED:phone_number] or [REDACTED:phone_number]",
        ),
        ("key sk-proj-abcdefghijklmnopqrstuvwxyz0123", "key [REDACTED:api_key]"),
        ("key sk-ant-api03-abcdefghijklmnopqrstuv", "key [REDACTED:api_key]"),
        ("stripe sk_live_abcdefghijklmnop1234", "stripe [REDACTED:api_key]"),
        ("github ghp_" + "a1" * 18, "github [REDACTED:api_key]"),
        ("github github_pat_" + "A" * 22, "github [REDACTED:api_key]"),
        ("slack xoxb-1234567890-abcdef", "slack [REDACTED:api_key]"),
        ("google AIza" + "B" * 35, "google [REDACTED:api_key]"),
        ("aws AKIAIOSFODNN7EXAMPLE", "aws [REDACTED:aws_access_key_id]"),
        ("aws ASIAIOSFODNN7EXAMPLE.", "aws [REDACTED:aws_access_key_id]."),
        (
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-123",
            "Authorization: [REDACTED:bearer_token]",
        ),
        ("authorization: bearer abcdef123456", "authorization: [REDACTED:bearer_token]"),
    ],
)
def test_default_patterns_mask_secrets_and_personal_data(text: str, expected: str) -> None:
    assert Redact().redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "card 4111 1111 1111 1112",  # fails the Luhn check
        "card 4111 1111-1111 1111",  # mixed separators are not a written card number
        "id 41111111111111110000000",  # 25 digits: too long for a card
        "order 1234567890123, timestamp 1700000000000",
        "on 2024-01-15 at 10:30 from 192.168.1.1, version 1.2.3",
        "the bearer of bad news; bearer instrument",
        "sk-short",
        "AKIAIOSFODNN7EXAMPLEX",  # too long to be an access key id
        "no at sign here: user at example dot com",
        "+1 2",
    ],
)
def test_lookalikes_are_left_alone(text: str) -> None:
    redact = Redact()
    assert redact.redact_text(text) is text


def test_the_default_patterns_apply_in_their_listed_order() -> None:
    assert list(DEFAULT_PATTERNS) == [
        "bearer_token",
        "api_key",
        "aws_access_key_id",
        "email",
        "card_number",
        "phone_number",
    ]
    # The bearer pattern runs before the api key pattern, so the whole header value goes.
    assert (
        Redact().redact_text("Bearer sk-abcdefghijklmnopqrstuvwxyz0") == "[REDACTED:bearer_token]"
    )


def test_a_long_text_without_matches_is_scanned_and_returned_as_is() -> None:
    text = "a" * 200_000 + " 12345 " + "b." * 50_000
    assert Redact().redact_text(text) is text


def _counting_redact(**options: Any) -> tuple[Redact, list[str]]:
    """A `Redact` whose one pattern matches ``word`` and leaves it as it was, counting each look."""
    seen: list[str] = []

    def keep(name: str, text: str) -> str:
        seen.append(text)
        return text

    return Redact(patterns={"word": r"word"}, replacement=keep, **options), seen


def test_a_text_with_nothing_to_mask_is_scanned_once() -> None:
    redact, seen = _counting_redact()
    text = "a word and another word"
    assert redact.redact_text(text) is text
    assert redact.redact_text(text) is text
    assert redact.redact_text("".join(["a word and ", "another word"])) is not text
    assert seen == ["word", "word"]


def test_a_masked_text_is_scanned_every_time() -> None:
    seen: list[str] = []

    def mask(name: str, text: str) -> str:
        seen.append(text)
        return "****"

    redact = Redact(patterns={"word": r"word"}, replacement=mask)
    assert redact.redact_text("one word") == "one ****"
    assert redact.redact_text("one word") == "one ****"
    assert seen == ["word", "word"]


def test_the_texts_remembered_as_clean_are_bounded_in_number() -> None:
    redact, seen = _counting_redact()
    redact.redact_text("first word")
    for index in range(4096):
        redact.redact_text(f"text {index}")
    redact.redact_text("first word")
    assert seen == ["word", "word"]  # forgotten, so scanned again


def test_a_text_longer_than_the_memory_is_scanned_every_time() -> None:
    redact, seen = _counting_redact()
    text = "word " + "x" * 4_000_000
    redact.redact_text(text)
    redact.redact_text(text)
    assert seen == ["word", "word"]


_PLAIN_CARD_NUMBER = re.compile(
    r"(?<!\d)(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?"
    r"|\d{4}([ -])\d{6}\2\d{4,5})(?!\d)"
)
_PLAIN_PHONE_NUMBER = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{1,4}){1,4}"
    r"|(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4})(?!\w)"
)
_DIGITS_AND_SEPARATORS = st.text(alphabet="0123456789\u0661\u0662 -.+()x_\n", max_size=60)


@settings(max_examples=400)
@given(_DIGITS_AND_SEPARATORS)
def test_the_digit_patterns_match_as_written_plainly(text: str) -> None:
    for fast, plain in (
        (DEFAULT_PATTERNS["card_number"], _PLAIN_CARD_NUMBER),
        (DEFAULT_PATTERNS["phone_number"], _PLAIN_PHONE_NUMBER),
    ):
        found = [(m.span(), m.groups()) for m in fast.finditer(text)]
        assert found == [(m.span(), m.groups()) for m in plain.finditer(text)]


@settings(max_examples=300)
@given(
    st.lists(
        st.sampled_from(
            [
                "Bearer abc123456789",
                "BEARER",
                "sk-",
                "sk_live_",
                "rk_test_",
                "ghp_",
                "github_pat_",
                "xoxb-",
                "AIza",
                "AKIA",
                "ASIA",
                "ABIA",
                "ACCA",
                "a@b.io",
                "@",
                "x",
                " ",
                "0",
                "_",
            ]
        ),
        max_size=12,
    ).map("".join)
)
def test_a_text_a_pattern_could_match_is_never_skipped(text: str) -> None:
    masked_one_by_one = text
    for name, pattern in DEFAULT_PATTERNS.items():
        masked_one_by_one = pattern.sub(f"[REDACTED:{name}]", masked_one_by_one)
    assert Redact().redact_text(text) == masked_one_by_one


@settings(max_examples=500)
@given(
    st.lists(
        st.sampled_from(["0", "12", "555", "4111", " ", "-", ".", "+", "(", ")", "x"]), max_size=14
    ).map("".join)
)
def test_the_digit_guards_pass_every_text_their_pattern_matches(text: str) -> None:
    for name in ("card_number", "phone_number"):
        pattern = DEFAULT_PATTERNS[name]
        if pattern.search(text) is not None:
            assert _GUARDS[pattern](text), (name, text)


def test_the_digit_guards_skip_prose_with_short_numbers_only() -> None:
    prose = "w1 w22 w333 at 9:30, item 42."
    assert not any(_GUARDS[DEFAULT_PATTERNS[name]](prose) for name in DEFAULT_PATTERNS)
    assert Redact().redact_text("call 555-123-4567 or +44 20 7946 0958") == (
        "call [REDACTED:phone_number] or [REDACTED:phone_number]"
    )


def test_the_bearer_guard_folds_case_as_the_pattern_does() -> None:
    # The guard lowers the text; every character the pattern matches ignoring case must lower
    # into the word it tests for.
    for letter in set("bearer"):
        folded = re.compile(letter, re.IGNORECASE)
        matched = [chr(code) for code in range(0x110000) if folded.fullmatch(chr(code))]
        assert all(letter in char.lower() for char in matched), matched


# ---- values -------------------------------------------------------------------------------------


def test_redact_walks_nested_dicts_lists_and_tuples_and_keeps_keys() -> None:
    value = {
        "to": "a@example.com",
        "cc": ["b@example.com", {"a@example.com": "c@example.com"}],
        "pair": ("x", "d@example.com"),
        "count": 3,
    }
    assert Redact().redact(value) == {
        "to": "[REDACTED:email]",
        "cc": ["[REDACTED:email]", {"a@example.com": "[REDACTED:email]"}],
        "pair": ("x", "[REDACTED:email]"),
        "count": 3,
    }
    assert value["to"] == "a@example.com"  # the input is never edited


def test_a_value_with_nothing_to_mask_is_the_same_object() -> None:
    value = {"a": ["text", {"b": ("c", 1)}], "d": None}
    assert Redact().redact(value) is value


def test_only_the_changed_branches_are_rebuilt() -> None:
    clean = {"k": "v"}
    value = {"clean": clean, "dirty": ["a@example.com"]}
    masked = Redact().redact(value)
    assert masked["clean"] is clean
    assert masked is not value


# ---- replacement and patterns -------------------------------------------------------------------


def test_a_template_replacement_names_the_pattern() -> None:
    redact = Redact(replacement="<{name} hidden> {{literal}}")
    assert redact.redact_text("a@example.com") == "<email hidden> {literal}"


def test_a_backslash_in_the_replacement_is_inserted_literally() -> None:
    redact = Redact(replacement=r"\1\g<0>")
    assert redact.redact_text("a@example.com") == r"\1\g<0>"


def test_a_function_replacement_gets_the_name_and_the_match() -> None:
    calls: list[tuple[str, str]] = []

    def mask(name: str, text: str) -> str:
        calls.append((name, text))
        return f"<{name}:{len(text)}>"

    redact = Redact(replacement=mask)
    assert (
        redact.redact_text("a@example.com / 4111 1111 1111 1112")
        == "<email:13> / 4111 1111 1111 1112"
    )
    assert calls == [("email", "a@example.com")]  # a Luhn-invalid number is not offered


def test_a_function_replacement_must_return_a_string() -> None:
    redact = Redact(replacement=lambda name, text: 5)  # type: ignore[arg-type,return-value]
    with pytest.raises(
        TypeError, match=r"replacement=\.\.\.\) returned a value of type int for a 'email' match"
    ):
        redact.redact_text("a@example.com")


def test_custom_patterns_replace_the_defaults_and_apply_in_order() -> None:
    redact = Redact(patterns={"ticket": r"TCK-\d+", "project": re.compile(r"TCK-\w+ project")})
    assert redact.redact_text("TCK-12 and a@example.com") == "[REDACTED:ticket] and a@example.com"
    assert redact.redact_text("TCK-ab project") == "[REDACTED:project]"
    assert list(redact.patterns) == ["ticket", "project"]


def test_extending_the_defaults_keeps_the_card_check() -> None:
    redact = Redact(patterns={**DEFAULT_PATTERNS, "ticket": r"TCK-\d+"})
    assert redact.redact_text("TCK-1 4111 1111 1111 1111 4111 1111 1111 1112") == (
        "[REDACTED:ticket] [REDACTED:card_number] 4111 1111 1111 1112"
    )


# ---- the four flows on an agent -----------------------------------------------------------------


def test_model_input_masks_what_the_model_is_sent_and_leaves_history_alone(
    make_agent: AgentFactory,
) -> None:
    model = ScriptedModel([text_turn("noted")])
    agent = make_agent(model=model, middleware=[Redact()])
    agent("my email is jane@example.com")
    sent = model.requests[0].messages[0]["content"][0]
    assert sent == {"text": "my email is [REDACTED:email]"}
    assert agent.messages[0]["content"][0] == {"text": "my email is jane@example.com"}


def test_model_input_masks_earlier_tool_calls_and_results_but_not_ids_or_names(
    make_agent: AgentFactory,
) -> None:
    model = ScriptedModel(
        [tool_turn("lookup", {"name": "jane@example.com"}, tool_use_id="t1"), text_turn("ok")]
    )
    agent = make_agent(
        model=model, tools=[lookup], middleware=[Redact(tool_input=False, tool_output=False)]
    )
    agent("find her")
    call, result = model.requests[1].messages[1:]
    assert call["content"][0]["toolUse"] == {
        "toolUseId": "t1",
        "name": "lookup",
        "input": {"name": "[REDACTED:email]"},
    }
    assert result["content"][0]["toolResult"] == {
        "toolUseId": "t1",
        "status": "success",
        "content": [{"text": "[REDACTED:email]: [REDACTED:email], card [REDACTED:card_number]"}],
    }
    # The history keeps what really happened.
    assert agent.messages[1]["content"][0]["toolUse"]["input"] == {"name": "jane@example.com"}


async def test_model_input_never_touches_reasoning_or_media_blocks(
    make_agent: AgentFactory,
) -> None:
    reasoning: Message = {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": "a@example.com", "signature": "s"}}},
            {"image": {"format": "png", "source": {"bytes": b"a@example.com"}}},
            {"guardContent": {"text": {"text": "a@example.com"}}},
        ],
    }
    model = ScriptedModel([text_turn("ok")])
    agent = make_agent(model=model, middleware=[Redact()], messages=[reasoning])
    await agent.invoke_async("go")
    blocks = model.requests[0].messages[0]["content"]
    assert blocks[0] == reasoning["content"][0]
    assert blocks[1] == reasoning["content"][1]
    assert blocks[2] == {"guardContent": {"text": {"text": "[REDACTED:email]"}}}


class PiecesModel:
    """A model that streams one text block in exactly the pieces given."""

    def __init__(self, *pieces: str) -> None:
        self.pieces = pieces

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"contentBlockIndex": 0, "start": {}}}
        for piece in self.pieces:
            yield {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": piece}}}
        yield {"contentBlockStop": {"contentBlockIndex": 0}}
        yield {"messageStop": {"stopReason": "end_turn"}}


async def streamed(agent: Agent) -> tuple[list[str], list[str], list[Message]]:
    """The text deltas, the raw chunks' delta texts and the message events of one run."""
    deltas: list[str] = []
    chunks: list[str] = []
    messages: list[Message] = []
    async for event in agent.stream_async("go"):
        if isinstance(event, TextDeltaEvent):
            deltas.append(event.text)
        elif isinstance(event, ModelStreamEvent) and "contentBlockDelta" in event.chunk:
            chunks.append(event.chunk["contentBlockDelta"]["delta"]["text"])  # type: ignore[typeddict-item]
        elif isinstance(event, ModelMessageEvent):
            messages.append(event.message)
    return deltas, chunks, messages


async def test_model_output_masks_the_streamed_text_as_the_result_message() -> None:
    model = PiecesModel("write to jane@exa", "mple.com or call +44 20 ", "7946 0958")
    agent = Agent(model=model, middleware=[Redact()])
    deltas, chunks, messages = await streamed(agent)
    masked = "write to [REDACTED:email] or call [REDACTED:phone_number]"
    assert agent.messages[-1] == text_turn(masked)
    assert "".join(deltas) == masked
    assert chunks == deltas
    assert messages == [text_turn(masked)]


async def test_streamed_text_goes_out_once_no_match_can_reach_back_into_it() -> None:
    agent = Agent(
        model=PiecesModel("a" * 20, "b" * 20, "c" * 20), middleware=[Redact(stream_window=30)]
    )
    deltas, chunks, _ = await streamed(agent)
    # Once the buffer holds two windows, all but the last 30 characters go out in one run; the
    # rest when the block ends.
    assert deltas == ["a" * 20 + "b" * 10, "b" * 10 + "c" * 20]
    assert chunks == deltas


async def test_a_match_is_held_whole_while_it_can_still_grow() -> None:
    key = "sk-" + "A1" * 40  # longer than the window, but a match from its 23rd character
    agent = Agent(
        model=PiecesModel("key: " + key[:30], key[30:60], key[60:] + " end"),
        middleware=[Redact(stream_window=10)],
    )
    deltas, _, _ = await streamed(agent)
    assert "".join(deltas) == "key: [REDACTED:api_key] end"
    assert not any("A1A1" in delta for delta in deltas)


async def test_a_lookbehind_sees_the_text_already_released() -> None:
    redact = Redact(patterns={"password": r"(?<=password=)\S+"}, stream_window=5)
    agent = Agent(model=PiecesModel("password=", "hunter2 and more text"), middleware=[redact])
    deltas, _, _ = await streamed(agent)
    assert "".join(deltas) == "password=[REDACTED:password] and more text"


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(
            [
                "jane@example.com",
                "4111 1111 1111 1111",
                "+1 415 555 2671",
                "(415) 555-2671",
                "AKIAIOSFODNN7EXAMPLE",
                "Bearer abc123def456",
                "sk-" + "x1" * 12,
                "hello",
                "order 12",
                "-",
                "@",
                ".",
                "7",
            ]
        ),
        max_size=25,
    ),
    separators=st.lists(st.sampled_from([" ", "\n", ", ", ": "]), min_size=25, max_size=25),
    cuts=st.lists(st.integers(min_value=1, max_value=600), max_size=12),
)
def test_streamed_deltas_join_to_exactly_the_masked_message(
    words: list[str], separators: list[str], cuts: list[int]
) -> None:
    # Words and separators keep every match shorter than the window, which is the guarantee.
    text = "".join(word + separator for word, separator in zip(words, separators, strict=False))
    text = text or "x"
    points = sorted({cut for cut in cuts if cut < len(text)})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    redact = Redact(stream_window=40)
    agent = Agent(model=PiecesModel(*pieces), middleware=[redact])
    deltas, chunks, messages = asyncio.run(streamed(agent))
    masked = redact.redact_text(text)
    assert "".join(deltas) == masked
    assert chunks == deltas
    assert messages == [text_turn(masked)]


def test_model_output_leaves_tool_call_arguments_to_tool_input(make_agent: AgentFactory) -> None:
    model = ScriptedModel(
        [
            tool_turn("send", {"to": "jane@example.com", "body": "hi"}, tool_use_id="t1"),
            text_turn("done"),
        ]
    )
    agent = make_agent(model=model, tools=[send], middleware=[Redact(tool_input=False)])
    agent("mail her")
    assert received == [{"to": "jane@example.com", "body": "hi"}]
    assert agent.messages[1]["content"][0]["toolUse"]["input"]["to"] == "jane@example.com"


def test_tool_input_masks_what_the_tool_receives(make_agent: AgentFactory) -> None:
    model = ScriptedModel(
        [
            tool_turn("send", {"to": "ops", "body": "key AKIAIOSFODNN7EXAMPLE"}, tool_use_id="t1"),
            text_turn("done"),
        ]
    )
    agent = make_agent(model=model, tools=[send], middleware=[Redact(tool_input=True)])
    agent("send the key")
    assert received == [{"to": "ops", "body": "key [REDACTED:aws_access_key_id]"}]


@pytest.mark.parametrize("redact_first", [True, False])
def test_by_default_the_tool_and_its_approver_get_the_real_arguments(redact_first: bool) -> None:
    model = ScriptedModel(
        [
            tool_turn("send", {"to": "jane@example.com", "body": "hi"}, tool_use_id="t1"),
            text_turn("done"),
        ]
    )
    gate = ToolApproval()
    middleware: list[Any] = [Redact(), gate] if redact_first else [gate, Redact()]
    agent = Agent(model=model, tools=[send], middleware=middleware)
    paused = agent("mail her")
    [interrupt] = paused.interrupts
    assert interrupt.reason["input"] == {"to": "jane@example.com", "body": "hi"}
    agent([{"interruptResponse": {"interruptId": interrupt.id, "response": "approve"}}])
    assert received == [{"to": "jane@example.com", "body": "hi"}]
    # What leaves for the model provider is still masked.
    sent_call = model.requests[1].messages[1]["content"][0]["toolUse"]  # type: ignore[typeddict-item]
    assert sent_call["input"] == {"to": "[REDACTED:email]", "body": "hi"}


def test_tool_output_masks_the_result_in_the_history(make_agent: AgentFactory) -> None:
    model = ScriptedModel(
        [tool_turn("lookup", {"name": "jane"}, tool_use_id="t1"), text_turn("ok")]
    )
    agent = make_agent(model=model, tools=[lookup], middleware=[Redact(model_input=False)])
    agent("find her")
    result = agent.messages[2]["content"][0]["toolResult"]
    assert result["content"] == [{"text": "jane: [REDACTED:email], card [REDACTED:card_number]"}]


async def test_tool_output_masks_json_content_and_keeps_the_exception() -> None:
    failure = RuntimeError("a@example.com")

    async def answer(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield ToolResultEvent(
            {
                "toolUseId": "t1",
                "status": "error",
                "content": [
                    {"json": {"owner": "a@example.com", "n": 1}},
                    {"image": {"format": "png", "source": {"bytes": b"x"}}},
                ],
            },
            exception=failure,
        )

    registry = MiddlewareRegistry()
    registry.use(Redact(), ExecuteToolStage.wrap(answer))
    context = tool_context("x", tool_use_id="t1")

    async def never(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        raise AssertionError("the short-circuit never reaches the terminal")
        yield TypedEvent()  # pragma: no cover

    result = await registry.run(ExecuteToolStage, context, never)
    assert result.tool_result["content"][0] == {"json": {"owner": "[REDACTED:email]", "n": 1}}
    assert result.tool_result["content"][1] == {
        "image": {"format": "png", "source": {"bytes": b"x"}}
    }
    assert result.exception is failure


async def test_a_clean_call_keeps_its_context_and_result_objects() -> None:
    seen: list[Any] = []

    async def terminal(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        seen.append(context)
        yield ToolResultEvent({"toolUseId": "t1", "status": "success", "content": [{"text": "ok"}]})

    registry = MiddlewareRegistry()
    registry.use(Redact())
    context = tool_context("x", {"q": "weather"}, tool_use_id="t1")
    result = await registry.run(ExecuteToolStage, context, terminal)
    assert seen == [context] and seen[0] is context
    assert result.tool_result["content"] == [{"text": "ok"}]


def test_each_switch_is_its_handlers_in_their_stages_and_phases() -> None:
    phases = [m.phase for m in Redact()]
    assert phases == [
        InvokeModelStage.Input,
        InvokeModelStage.Wrap,
        InvokeModelStage.Output,
        ExecuteToolStage.Output,
    ]
    only_tools = [m.phase for m in Redact(model_input=False, model_output=False, tool_input=True)]
    assert only_tools == [ExecuteToolStage.Input, ExecuteToolStage.Output]
    assert "Redact[invokeModel.Input]" in repr(next(iter(Redact())))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"patterns": ["email"]}, TypeError, r"patterns=\.\.\.\) takes a mapping of names"),
        ({"patterns": {}}, ValueError, r"patterns=\.\.\.\) is empty: nothing would be masked"),
        ({"patterns": {"": "x"}}, TypeError, "names must be non-empty strings"),
        ({"patterns": {3: "x"}}, TypeError, "names must be non-empty strings, got 3"),
        ({"patterns": {"bad": "("}}, ValueError, "pattern 'bad' does not compile"),
        ({"patterns": {"bad": 5}}, TypeError, "pattern 'bad' must be a str or a pattern compiled"),
        ({"patterns": {"bad": re.compile(b"x")}}, TypeError, "compiled from a str"),
        ({"patterns": {"any": r"\d*"}}, ValueError, "pattern 'any' matches the empty string"),
        ({"replacement": "{nam}"}, ValueError, r"may use only the \{name\} placeholder"),
        ({"replacement": "{0}"}, ValueError, "placeholder"),
        ({"replacement": "{"}, ValueError, "placeholder"),
        ({"replacement": 5}, TypeError, r"replacement=\.\.\.\) takes a template string"),
        ({"model_input": "yes"}, TypeError, r"model_input=\.\.\.\) must be True or False"),
        ({"tool_output": 1}, TypeError, r"tool_output=\.\.\.\) must be True or False"),
        ({"stream_window": 0}, ValueError, r"stream_window=\.\.\.\) must be a whole number"),
        (
            {
                "model_input": False,
                "model_output": False,
                "tool_input": False,
                "tool_output": False,
            },
            ValueError,
            "would mask nothing",
        ),
    ],
)
def test_bad_configuration_is_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Redact(**kwargs)


def test_on_a_strands_agent_the_callback_deltas_are_masked_as_the_message() -> None:
    import strands

    from strands_middleware.bridges.strands import StrandsBridge
    from strands_middleware.bridges.strands.testing import ScriptedStrandsModel

    shown: list[str] = []

    def callback(**event: Any) -> None:
        if isinstance(event.get("data"), str):
            shown.append(event["data"])

    model = ScriptedStrandsModel([text_turn("mail jane@example.com today")])
    agent = strands.Agent(model=model, callback_handler=callback)
    StrandsBridge.of(agent).use(Redact())
    result = agent("who?")
    masked = "mail [REDACTED:email] today"
    assert "".join(shown) == masked
    assert result.message["content"] == [{"text": masked}]


def test_what_redact_masks_never_reaches_the_log(caplog: pytest.LogCaptureFixture) -> None:
    # A replacement function that fails on the matched text: the call fails, the failure is
    # logged, and neither the error nor the log quotes what was being masked.
    def broken(name: str, text: str) -> str:
        return cast(str, text.encode())

    @tool
    def lookup(user: str) -> str:
        """Look a user up."""
        return "jane.doe@example.com"

    model = ScriptedModel([tool_turn("lookup", {"user": "jane"}), text_turn("ok")])
    agent = Agent(
        model=model,
        tools=[lookup],
        middleware=[Redact(replacement=broken, model_input=False, model_output=False)],
    )
    with caplog.at_level(logging.DEBUG):
        agent("who is jane?")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors, "the failing replacement is logged"
    assert "returned a value of type bytes for a 'email' match" in caplog.text
    assert "jane.doe" not in caplog.text
