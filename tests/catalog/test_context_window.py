"""ContextWindow: what the model is sent stays within budget, and the conversation stays whole."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strands_middleware.agent import Agent
from strands_middleware.catalog import ContextWindow, estimate_tokens
from strands_middleware.catalog._budget import MEDIA_TOKENS
from strands_middleware.catalog._overflow import is_context_overflow
from strands_middleware.content import Message, Messages
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from tests.catalog.conversation import call, check_well_formed, prompt, reply, results, texts
from tests.conformance.drive import CATALOG_HOSTS, drive

NOTE = "[{count} earlier messages were left out to fit the context window.]"


def three_turns() -> Messages:
    return [
        prompt("q1"),
        reply("a1"),
        prompt("q2"),
        call("t1"),
        results("t1"),
        reply("a2"),
        prompt("q3"),
    ]


# ---- what is sent ----------------------------------------------------------------------------


def test_within_budget_the_conversation_is_sent_as_the_very_same_list() -> None:
    messages = three_turns()
    assert ContextWindow(max_messages=7).fit(messages) is messages


def test_older_turns_go_first_and_whole_with_a_note_in_front_of_the_first_prompt_sent() -> None:
    messages = three_turns()
    sent = ContextWindow(max_messages=5).fit(messages)
    # Leaving out the first turn (2 messages) is enough: 5 messages remain.
    assert [texts(m) for m in sent] == [
        [NOTE.format(count=2), "q2"],
        [],
        [],
        ["a2"],
        ["q3"],
    ]
    assert sent[1:] == messages[3:]
    check_well_formed(sent)


def test_a_turn_is_never_split_so_a_tight_budget_leaves_out_more() -> None:
    sent = ContextWindow(max_messages=3).fit(three_turns())
    # The second turn has four messages: it cannot be cut in the middle, so it goes too.
    assert [texts(m) for m in sent] == [[NOTE.format(count=6), "q3"]]


def test_in_a_long_agentic_turn_the_oldest_rounds_go_and_the_prompt_stays() -> None:
    messages = [
        prompt("q1"),
        reply("a1"),
        prompt("research this"),
        call("t1"),
        results("t1"),
        call("t2"),
        results("t2"),
        call("t3"),
        results("t3"),
    ]
    sent = ContextWindow(max_messages=5).fit(messages)
    assert texts(sent[0]) == [NOTE.format(count=4), "research this"]
    assert sent[1:] == messages[5:]
    check_well_formed(sent)


def test_the_latest_prompt_and_last_round_are_sent_even_over_budget() -> None:
    messages = [prompt("q1"), reply("a1"), prompt("go"), call("t1"), results("t1")]
    sent = ContextWindow(max_messages=1).fit(messages)
    assert [texts(m) for m in sent] == [[NOTE.format(count=2), "go"], [], []]
    assert sent[1:] == messages[3:]


def test_a_fresh_prompt_alone_is_always_sent() -> None:
    messages = [prompt("q1"), reply("a1"), prompt("q2")]
    assert [texts(m) for m in ContextWindow(max_messages=1).fit(messages)] == [
        [NOTE.format(count=2), "q2"]
    ]


def test_without_a_marker_messages_are_dropped_without_a_trace() -> None:
    messages = three_turns()
    assert ContextWindow(max_messages=5, marker=None).fit(messages) == messages[2:]


def test_a_kept_part_starting_with_a_model_reply_gets_its_note_in_a_message_of_its_own() -> None:
    # A history that has no user prompt (it was handed over mid-task): only rounds.
    messages = [call("t1"), results("t1"), call("t2"), results("t2"), call("t3"), results("t3")]
    sent = ContextWindow(max_messages=5).fit(messages)
    assert sent == [prompt(NOTE.format(count=2)), *messages[2:]]


def test_the_given_messages_are_never_edited() -> None:
    messages = three_turns()
    before = [dict(m, content=list(m["content"])) for m in messages]
    ContextWindow(max_messages=3).fit(messages)
    assert messages == before


@given(st.data())
def test_any_cut_keeps_pairs_roles_the_latest_prompt_and_the_last_round(data: Any) -> None:
    messages: Messages = []
    ids = iter(range(1000))
    turns = data.draw(st.integers(1, 5), label="turns")
    for turn in range(turns):
        messages.append(prompt(f"q{turn}"))
        for _ in range(data.draw(st.integers(0, 4), label="rounds")):
            used = [f"t{next(ids)}" for _ in range(data.draw(st.integers(1, 3)))]
            messages.extend([call(*used), results(*used)])
        # Every turn but the last ends in the model's answer; the last may be under way.
        if turn < turns - 1 or data.draw(st.booleans(), label="answered"):
            messages.append(reply(f"a{turn}"))
    budget = data.draw(st.integers(1, len(messages) + 1), label="max_messages")
    marker = data.draw(st.sampled_from([NOTE, None]), label="marker")

    sent = ContextWindow(max_messages=budget, marker=marker).fit(messages)

    check_well_formed(sent)
    latest = max(i for i, m in enumerate(messages) if texts(m) and m["role"] == "user")
    assert texts(messages[latest])[0] in [text for m in sent for text in texts(m)]
    last = messages[-1]["content"]
    assert sent[-1]["content"][-len(last) :] == last  # the last message, perhaps with the note
    if len(messages) <= budget:
        assert sent is messages
        return
    minimum = 1 + len(messages) - _last_round_start(messages)
    assert len(sent) <= max(budget, minimum)
    left_out = len(messages) - len(sent)
    if left_out == 0:
        assert sent is messages  # all of it is the latest prompt and last round
    elif marker is not None:
        assert sent[0]["content"][0] == {"text": marker.format(count=left_out)}


def _last_round_start(messages: Messages) -> int:
    last = len(messages) - 1
    if messages[last]["role"] == "user" and "toolResult" not in messages[last]["content"][0]:
        return last + 1  # the conversation ends in a prompt: no round to keep
    while messages[last]["role"] != "assistant":
        last -= 1
    return last


# ---- token budgets ---------------------------------------------------------------------------


def test_the_token_budget_counts_the_system_prompt_and_the_messages_with_the_counter() -> None:
    seen: list[Message] = []

    def one_token_a_message(message: Message) -> int:
        seen.append(message)
        return 1

    messages = three_turns()
    window = ContextWindow(max_tokens=7, token_counter=one_token_a_message, marker=None)
    assert window.fit(messages) is messages
    # With a system prompt the seven messages and the prompt are eight tokens: one turn goes.
    assert window.fit(messages, "Be brief.") == messages[2:]
    assert {"role": "user", "content": [{"text": "Be brief."}]} in seen


def test_a_note_is_counted_against_the_token_budget() -> None:
    messages = three_turns()
    counts = {id(m): 10 for m in messages}

    def counter(message: Message) -> int:
        return counts.get(id(message), 25)  # a note costs 25

    # Leaving out one turn keeps 5 messages (50 tokens); the note makes it 75.
    assert (
        ContextWindow(max_tokens=60, token_counter=counter, marker=None).fit(messages)
        == (messages[2:])
    )
    sent = ContextWindow(max_tokens=60, token_counter=counter).fit(messages)
    assert texts(sent[0]) == [NOTE.format(count=6), "q3"]


def test_the_default_estimate_is_about_four_characters_a_token() -> None:
    assert estimate_tokens(prompt("x" * 400)) == 100 + 3
    tool_call: Message = {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "1", "name": "abcd", "input": {"a": 1}}}],
    }
    assert estimate_tokens(tool_call) == 3 + 3  # "abcd" + '{"a": 1}' = 12 characters
    with_image: Message = {
        "role": "user",
        "content": [{"text": "look"}, {"image": {"format": "png", "source": {"bytes": b"."}}}],
    }
    assert estimate_tokens(with_image) == 1 + MEDIA_TOKENS + 3


def test_a_counter_that_does_not_return_a_whole_number_is_refused_by_name() -> None:
    window = ContextWindow(max_tokens=10, token_counter=lambda message: 1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"token_counter returned 1\.5 for a user message"):
        window.fit([prompt("hi")])


# ---- on a host -------------------------------------------------------------------------------


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_on_every_host_only_what_the_model_is_sent_changes(host: str) -> None:

    def lookup(q: str) -> str:
        """Look something up."""
        return f"found {q}"

    run = drive(
        host,
        [
            text_turn("a1"),
            tool_turn("lookup", {"q": "x"}, tool_use_id="t1"),
            text_turn("a2"),
            text_turn("a3"),
        ],
        [lookup],
        [ContextWindow(max_messages=3)],
    )
    run("q1")
    run("q2")
    run("q3")
    sent = [request.messages for request in run.script.requests]
    assert [len(messages) for messages in sent] == [1, 3, 3, 1]
    # The third call (after the tool round) keeps the prompt apart and its last round.
    assert texts(sent[2][0]) == [NOTE.format(count=2), "q2"]
    assert [list(block) for block in sent[2][2]["content"]] == [["toolResult"]]
    assert texts(sent[3][0]) == [NOTE.format(count=6), "q3"]
    for messages in sent:
        check_well_formed(messages)
    history = run.messages
    assert len(history) == 8
    assert [texts(m) for m in history if m["role"] == "user" and texts(m)] == [
        ["q1"],
        ["q2"],
        ["q3"],
    ]


# ---- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({}, ValueError, r"ContextWindow needs max_messages=\.\.\., max_tokens=\.\.\. or both"),
        ({"max_messages": 0}, ValueError, r"ContextWindow\(max_messages=\.\.\.\) must be a whole"),
        ({"max_tokens": 1.5}, ValueError, r"ContextWindow\(max_tokens=\.\.\.\) must be a whole"),
        ({"max_tokens": True}, ValueError, r"max_tokens=\.\.\.\) must be a whole number"),
        (
            {"max_messages": 5, "token_counter": 3},
            TypeError,
            r"ContextWindow\(token_counter=\.\.\.\) takes a function of one Message",
        ),
        ({"max_messages": 5, "marker": 1}, TypeError, r"marker=\.\.\.\) takes a str or None"),
        ({"max_messages": 5, "marker": "{n} left"}, ValueError, r"only the \{count\} placeholder"),
        ({"max_tokens": ("fraction", 1.5)}, ValueError, r"\(.fraction., f\) with 0 < f <= 1"),
        ({"max_tokens": ("share", 0.5)}, ValueError, r"max_tokens=\.\.\.\) takes a whole number"),
        ({"max_messages": 5, "trigger": ("tokens", 9)}, ValueError, r"trigger=\.\.\. or as max_"),
        ({"trigger": []}, ValueError, r"trigger=\.\.\.\) takes \(.messages., 40\)"),
        ({"trigger": ("words", 9)}, ValueError, r"takes \(.messages., 40\).*got \('words', 9\)"),
        (
            {"trigger": [("tokens", 9), ("fraction", 0.5)]},
            ValueError,
            r"two token limits \(tokens or fraction\): give one",
        ),
        (
            {"trigger": ("messages", 0)},
            ValueError,
            r"takes \(.messages., n\) with n a whole number >= 1, got",
        ),
        ({"max_messages": 5, "keep": ("messages", 6)}, ValueError, r"keeps more messages \(6\)"),
        ({"max_messages": 5, "context_window": 0}, ValueError, r"context_window=\.\.\.\) must be"),
        ({"max_messages": 5, "pin_first": "yes"}, TypeError, r"pin_first=\.\.\.\) must be True"),
        ({"max_messages": 5, "retry_on_overflow": 1}, TypeError, r"retry_on_overflow=\.\.\.\)"),
    ],
)
def test_configuration_mistakes_are_refused_when_built(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ContextWindow(**options)


# ---- budgets in a fraction of the context window ---------------------------------------------


def ten_tokens(message: Message) -> int:
    return 10


class NamedModel(ScriptedModel):
    """A scripted model that reports a ``model_id``, as every strands provider does."""

    def __init__(self, model_id: str, turns: list[Message]) -> None:
        super().__init__(turns)
        self.model_id = model_id

    def get_config(self) -> dict[str, Any]:
        return {"model_id": self.model_id}


def sent_after_three_prompts(model: ScriptedModel, window: ContextWindow, **state: Any) -> Messages:
    agent = Agent(model=model, middleware=[window])
    for n in range(1, 4):
        agent(f"q{n}", **state)
    return model.requests[-1].messages


def test_a_fraction_is_a_share_of_the_known_context_window_of_the_calls_model() -> None:
    # gpt-4o-mini has 128,000 tokens: 0.0003 of it is 38 tokens, three 10-token messages.
    window = ContextWindow(max_tokens=("fraction", 0.0003), token_counter=ten_tokens, marker=None)
    sent = sent_after_three_prompts(NamedModel("gpt-4o-mini-2024-07-18", answers(3)), window)
    assert [texts(m) for m in sent] == [["q2"], ["a2"], ["q3"]]


def test_the_context_window_is_overridden_per_item_and_per_call() -> None:
    # 0.0003 of 70,000 is 21 tokens: two messages would be 20, but a turn goes whole.
    per_item = ContextWindow(
        max_tokens=("fraction", 0.0003), context_window=70_000, token_counter=ten_tokens
    )
    sent = sent_after_three_prompts(ScriptedModel(answers(3)), per_item, marker=None)
    assert [texts(m) for m in sent] == [[NOTE.format(count=4), "q3"]]
    # The call's invocation_state wins over the item and over the table.
    per_call = ContextWindow(
        trigger=("fraction", 0.0003), context_window=1_000_000, token_counter=ten_tokens
    )
    model = NamedModel("gpt-4o-mini", answers(3))
    sent = sent_after_three_prompts(model, per_call, context_window=70_000)
    assert [texts(m) for m in sent] == [[NOTE.format(count=4), "q3"]]


def test_a_fraction_for_a_model_the_table_does_not_know_says_what_to_pass() -> None:
    agent = Agent(
        model=NamedModel("org/my-finetune", answers(1)),
        middleware=[ContextWindow(max_tokens=("fraction", 0.8))],
    )
    with pytest.raises(ValueError, match=r"model_id 'org/my-finetune'.*context_window=<tokens>"):
        agent("q1")
    assert ContextWindow(max_tokens=("fraction", 0.5), context_window=10).fit(
        [prompt("x" * 400)]
    ) == [prompt("x" * 400)]


# ---- trigger and keep ------------------------------------------------------------------------


def test_a_trigger_of_tokens_or_messages_cuts_when_either_is_passed() -> None:
    messages = three_turns()
    by_messages = ContextWindow(trigger=[("tokens", 1000), ("messages", 5)], marker=None)
    assert by_messages.fit(messages, None) == messages[2:]
    by_tokens = ContextWindow(
        trigger=[("messages", 100), ("tokens", 49)], token_counter=ten_tokens, marker=None
    )
    assert by_tokens.fit(messages) == messages[6:]  # 5 messages are 50 and a turn goes whole
    assert (
        ContextWindow(trigger=[("messages", 7), ("tokens", 70)], token_counter=ten_tokens).fit(
            messages
        )
        is messages
    )


def test_keep_cuts_a_call_over_budget_down_to_it_and_a_call_within_budget_is_untouched() -> None:
    window = ContextWindow(max_messages=6, keep=("messages", 1), marker=None)
    messages = three_turns()
    assert window.fit(messages) == messages[6:]
    within = messages[:6]
    assert window.fit(within) is within
    by_tokens = ContextWindow(max_messages=6, keep=("tokens", 45), token_counter=ten_tokens)
    # A keep in tokens under a budget in messages: five messages and the note are 60 tokens.
    assert [texts(m) for m in by_tokens.fit(messages)] == [[NOTE.format(count=6), "q3"]]


# ---- pinning the task ------------------------------------------------------------------------


def test_pin_first_sends_the_task_in_front_of_what_is_kept() -> None:
    messages = [
        prompt("the task"),
        reply("a1"),
        prompt("q2"),
        call("t1"),
        results("t1"),
        call("t2"),
        results("t2"),
        reply("a2"),
        prompt("q3"),
        call("t3"),
        results("t3"),
    ]
    window = ContextWindow(max_messages=3, pin_first=True)
    sent = window.fit(messages)
    assert texts(sent[0]) == ["the task", NOTE.format(count=7), "q3"]
    assert sent[1:] == messages[9:]
    check_well_formed(sent)
    # In a run on the reference agent, the first call's prompt is on every later call.
    model = ScriptedModel(answers(4))
    agent = Agent(model=model, middleware=[ContextWindow(max_messages=3, pin_first=True)])
    for n in range(1, 5):
        agent(f"q{n}")
    assert [texts(m) for m in model.requests[-1].messages] == [
        ["q1", NOTE.format(count=3), "q3"],
        ["a3"],
        ["q4"],
    ]
    assert len(agent.messages) == 8


@given(st.data())
def test_with_pin_first_any_cut_keeps_pairs_roles_and_the_task(data: Any) -> None:
    messages: Messages = []
    ids = iter(range(1000))
    turns = data.draw(st.integers(2, 5), label="turns")
    for turn in range(turns):
        messages.append(prompt(f"q{turn}"))
        for _ in range(data.draw(st.integers(0, 3), label="rounds")):
            used = f"t{next(ids)}"
            messages.extend([call(used), results(used)])
        if turn < turns - 1:
            messages.append(reply(f"a{turn}"))
    budget = data.draw(st.integers(1, len(messages)), label="max_messages")
    sent = ContextWindow(max_messages=budget, pin_first=True).fit(messages)
    check_well_formed(sent)
    assert texts(sent[0])[0] == "q0"
    assert f"q{turns - 1}" in [text for m in sent for text in texts(m)]


# ---- recovering from a context overflow ------------------------------------------------------


def answers(count: int) -> list[Message]:
    return [text_turn(f"a{n}") for n in range(1, count + 1)]


def test_a_context_overflow_cuts_what_was_sent_in_half_and_tries_once_more(
    caplog: pytest.LogCaptureFixture,
) -> None:
    overflow = RuntimeError("This model's maximum context length is 8192 tokens (12000 given)")
    model = ScriptedModel([*answers(4), overflow, text_turn("a5")])
    agent = Agent(model=model, middleware=[ContextWindow(max_messages=100)])
    for n in range(1, 5):
        agent(f"q{n} " + "x" * 200)
    with caplog.at_level(logging.WARNING, logger="strands_middleware"):
        assert str(agent("q5 " + "x" * 200)).strip() == "a5"
    failed, retried = model.requests[-2].messages, model.requests[-1].messages
    assert len(failed) == 9
    # Half of what was sent: at most 4 messages and half the tokens, whole turns, with a note.
    assert [[text[:3] for text in texts(m)] for m in retried] == [["[6 ", "q4 "], ["a4"], ["q5 "]]
    assert texts(retried[0])[0] == NOTE.format(count=6)
    assert "ContextWindow: the model reported a context overflow (RuntimeError)" in caplog.text
    assert len(agent.messages) == 10  # the history is whole


def test_an_overflow_again_or_another_error_or_recovery_turned_off_reaches_the_caller() -> None:
    overflow = RuntimeError("prompt is too long: 210000 tokens > 200000 maximum")
    twice = ScriptedModel([text_turn("a1"), overflow, overflow])
    agent = Agent(model=twice, middleware=[ContextWindow(max_messages=100)])
    agent("q1")
    with pytest.raises(RuntimeError, match="prompt is too long"):
        agent("q2")
    assert len(twice.requests) == 3
    throttled = ScriptedModel([RuntimeError("Too many tokens, please wait before trying again")])
    with pytest.raises(RuntimeError, match="Too many tokens"):
        Agent(model=throttled, middleware=[ContextWindow(max_messages=100)])("q1")
    assert len(throttled.requests) == 1
    off = ScriptedModel([text_turn("a1"), overflow])
    agent = Agent(model=off, middleware=[ContextWindow(max_messages=9, retry_on_overflow=False)])
    agent("q1")
    with pytest.raises(RuntimeError, match="prompt is too long"):
        agent("q2")
    assert len(off.requests) == 2


def test_strands_context_window_overflow_through_the_bridge_is_recovered_once() -> None:
    from strands.types.exceptions import ContextWindowOverflowException

    run = drive(
        "strands",
        [*answers(2), ContextWindowOverflowException("too long"), text_turn("a3")],
        [],
        [window := ContextWindow(max_messages=100)],
    )
    assert window.retry_on_overflow
    run("q1")
    run("q2")
    assert run("q3").text == "a3"
    sent = [len(request.messages) for request in run.script.requests]
    assert sent == [1, 3, 5, 1]


@pytest.mark.parametrize(
    ("error", "overflow"),
    [
        (RuntimeError("Error code: 400 - {'code': 'context_length_exceeded'}"), True),
        (RuntimeError("input length and `max_tokens` exceed context limit: 1 + 2 > 3"), True),
        (RuntimeError("ValidationException: Input is too long for requested model."), True),
        (
            RuntimeError("The input token count (2000000) exceeds the maximum number of tokens"),
            True,
        ),
        (RuntimeError("the request exceeds the model's context window"), True),
        (type("ContextWindowOverflowError", (Exception,), {})("no message"), True),
        (RuntimeError("Too many tokens per minute"), False),
        (RuntimeError("ThrottlingException: rate exceeded"), False),
        (ConnectionError("reset by peer"), False),
    ],
)
def test_what_counts_as_a_context_overflow(error: Exception, overflow: bool) -> None:
    assert is_context_overflow(error) is overflow
    if overflow:
        wrapped = RuntimeError("model call failed")
        wrapped.__cause__ = error
        assert is_context_overflow(wrapped)


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_on_every_host_a_providers_overflow_message_is_recovered_once(host: str) -> None:
    overflow = RuntimeError("prompt is too long: 210000 tokens > 200000 maximum")
    run = drive(
        host,
        [*answers(2), overflow, text_turn("a3")],
        [],
        [ContextWindow(max_messages=4, pin_first=True)],
    )
    run("q1 " + "x" * 200)
    run("q2 " + "x" * 200)
    assert run("q3 " + "x" * 200).text == "a3"
    sent = [request.messages for request in run.script.requests]
    assert [len(messages) for messages in sent] == [1, 3, 3, 1]
    assert [text[:3] for text in texts(sent[2][0])] == ["q1 ", "[1 ", "q2 "]
    # The retry is cut from the whole conversation, not from the cut that overflowed: one note,
    # counting every message left out, between the task (pinned) and the latest prompt.
    assert [text[:3] for text in texts(sent[3][0])] == ["q1 ", "[3 ", "q3 "]
