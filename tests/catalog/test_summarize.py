"""Summarize: older turns become a summary written once per prefix, by the model the user names."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import InvokeModelContext, InvokeModelStage, MiddlewareNext, TypedEvent
from strands_middleware.agent import Agent, BeforeModelCallEvent
from strands_middleware.bridges.strands.testing import ScriptedStrandsModel
from strands_middleware.catalog import (
    DEFAULT_INSTRUCTIONS,
    SUMMARY_HEADER,
    ContextWindow,
    Summarize,
    estimate_tokens,
)
from strands_middleware.content import Messages
from strands_middleware.events import TextDeltaEvent
from strands_middleware.exceptions import StoreWarning
from strands_middleware.host import project_input_tokens
from strands_middleware.models import Model
from strands_middleware.stores import InMemoryStore
from strands_middleware.testing import ScriptedModel, ScriptedTurn, text_turn, tool_turn
from tests.catalog.conversation import check_well_formed, texts
from tests.conformance.drive import CATALOG_HOSTS, drive


def summarizer(host: str, *turns: ScriptedTurn) -> tuple[Model, ScriptedModel]:
    """A summarizer for ``host`` (each host streams its own kind of model) and its script."""
    script = ScriptedModel(turns)
    return (ScriptedStrandsModel(script) if host == "strands" else script), script


def contents(messages: Messages) -> list[list[str]]:
    return [texts(message) for message in messages]


def answers(count: int) -> list[ScriptedTurn]:
    return [text_turn(f"a{n}") for n in range(1, count + 1)]


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_a_summary_is_written_once_and_reused_until_the_rest_passes_the_budget(host: str) -> None:
    model, written = summarizer(host, text_turn("S1"), text_turn("S2"))
    run = drive(host, answers(5), [], [Summarize(model, max_messages=4)])
    for n in range(1, 6):
        run(f"q{n}")

    sent = [contents(request.messages) for request in run.script.requests]
    assert sent[0] == [["q1"]]
    assert sent[1] == [["q1"], ["a1"], ["q2"]]
    # Five messages pass the budget: the first two turns become a summary, which the latest
    # prompt carries, and the next call reuses it while the rest fits.
    assert sent[2] == [[SUMMARY_HEADER + "S1", "q3"]]
    assert sent[3] == [[SUMMARY_HEADER + "S1", "q3"], ["a3"], ["q4"]]
    # The rest passes the budget again: the next summary folds the previous one in.
    assert sent[4] == [[SUMMARY_HEADER + "S2", "q5"]]

    assert len(written.requests) == 2
    first, second = written.requests
    assert first.system_prompt == DEFAULT_INSTRUCTIONS
    assert not first.tool_specs
    assert contents(first.messages) == [
        ["Conversation:\n\nUser: q1\n\nAssistant: a1\n\nUser: q2\n\nAssistant: a2"]
    ]
    assert contents(second.messages) == [
        [
            "Summary so far:\n\nS1\n\nConversation since then:\n\n"
            "User: q3\n\nAssistant: a3\n\nUser: q4\n\nAssistant: a4"
        ]
    ]
    # The agent's history keeps every message, and its own model answered every prompt.
    assert len(run.messages) == 10
    assert [texts(m) for m in run.messages[:2]] == [["q1"], ["a1"]]
    assert len(run.script.requests) == 5


def test_the_summary_call_is_not_streamed_and_hooks_see_one_model_call() -> None:
    written = ScriptedModel([text_turn("SUMMARY TEXT")])
    agent = Agent(model=ScriptedModel(answers(3)), middleware=[Summarize(written, max_messages=4)])
    calls: list[str] = []
    agent.add_hook(BeforeModelCallEvent, lambda event: calls.append("model call"))
    agent("q1")
    agent("q2")

    async def third() -> list[TypedEvent]:
        return [event async for event in agent.stream_async("q3")]

    events = asyncio.run(third())
    assert len(written.requests) == 1
    assert calls == ["model call"] * 3
    streamed = "".join(event.text for event in events if isinstance(event, TextDeltaEvent))
    assert streamed == "a3"


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_a_long_tool_loop_is_summarized_by_whole_rounds_and_the_prompt_stays(host: str) -> None:

    def lookup(q: str) -> str:
        """Look something up."""
        return f"found {q}"

    model, written = summarizer(host, text_turn("Looked up x1 and x2."))
    turns: list[ScriptedTurn] = [
        tool_turn("lookup", {"q": f"x{n}"}, tool_use_id=f"t{n}") for n in range(1, 5)
    ]
    run = drive(host, [*turns, text_turn("done")], [lookup], [Summarize(model, max_messages=6)])
    assert run("research x").text == "done"

    for request in run.script.requests:
        check_well_formed(request.messages)
    last = run.script.requests[-1].messages
    # prompt + 4 rounds = 9 messages; keeping 3 (half of 6) leaves the prompt and the last round.
    assert contents(last)[0] == [SUMMARY_HEADER + "Looked up x1 and x2.", "research x"]
    assert [block["toolResult"]["toolUseId"] for block in last[-1]["content"]] == ["t4"]
    transcript = texts(written.requests[0].messages[0])[0]
    assert '[called tool lookup with {"q": "x1"}]' in transcript
    assert "[tool result, success: found x1]" in transcript
    assert "t4" not in transcript and "x4" not in transcript


def test_a_failed_summary_falls_back_to_the_context_window_and_is_tried_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Tried twice on the call that needs it (both fail), then again on the next call.
    down = ConnectionError("summarizer down")
    written = ScriptedModel([down, down, text_turn("S")])
    main = ScriptedModel(answers(4))
    agent = Agent(model=main, middleware=[Summarize(written, max_messages=4)])
    for n in range(1, 4):
        with caplog.at_level(logging.WARNING, logger="strands_middleware"):
            agent(f"q{n}")
    expected = ContextWindow(max_messages=4).fit(agent.messages[:5])
    assert main.requests[2].messages == expected
    assert "Summarize: the summary call failed with ConnectionError('summarizer down')" in (
        caplog.text
    )
    agent("q4")
    assert len(written.requests) == 3
    assert contents(main.requests[3].messages)[0] == [SUMMARY_HEADER + "S", "q4"]


def test_handlers_registered_after_it_see_the_summary_call_and_those_before_do_not() -> None:
    seen: dict[str, list[int]] = {"before": [], "after": []}

    def counting(name: str) -> Any:
        async def count(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            seen[name].append(len(context.messages))
            async for event in next_fn(context):
                yield event

        return InvokeModelStage.wrap(count)

    written = ScriptedModel([text_turn("S")])
    agent = Agent(
        model=ScriptedModel(answers(3)),
        middleware=[counting("before"), Summarize(written, max_messages=4), counting("after")],
    )
    for n in range(1, 4):
        agent(f"q{n}")
    assert seen["before"] == [1, 3, 5]
    assert seen["after"] == [1, 3, 1, 1]  # the summary call's one message, then the call itself


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({}, ValueError, r"Summarize needs max_messages=\.\.\., max_tokens=\.\.\. or both"),
        ({"max_messages": 0}, ValueError, r"Summarize\(max_messages=\.\.\.\) must be a whole"),
        ({"max_messages": 9, "keep": 0}, ValueError, r"Summarize\(keep=\.\.\.\) must be a finite"),
        ({"max_messages": 9, "keep": 1}, ValueError, r"above 0 and below 1, or a limit"),
        ({"max_messages": 9, "instructions": " "}, ValueError, r"instructions=\.\.\.\) must be"),
        ({"max_messages": 9, "cache_size": 0}, ValueError, r"cache_size=\.\.\.\) must be a whole"),
        ({"max_messages": 9, "keep": ("messages", 10)}, ValueError, r"keeps more messages"),
        ({"max_messages": 9, "keep": ("turns", 1)}, ValueError, r"keep=\.\.\.\) takes"),
        ({"max_tokens": ("fraction", 0)}, ValueError, r"with 0 < f <= 1"),
        ({"max_messages": 9, "trigger": ("messages", 9)}, ValueError, r"not both"),
        ({"max_messages": 9, "max_summarizer_input": 10}, ValueError, r"max_summarizer_input"),
        ({"max_messages": 9, "key": str}, ValueError, r"key=\.\.\., ttl=\.\.\.\) are for"),
        ({"max_messages": 9, "store": {}}, TypeError, r"store=\.\.\.\) takes a CacheStore"),
        ({"max_messages": 9, "pin_first": None}, TypeError, r"pin_first=\.\.\.\) must be"),
    ],
)
def test_configuration_mistakes_are_refused_when_built(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Summarize(ScriptedModel([]), **options)


def test_a_summarizer_that_is_not_a_model_is_refused() -> None:
    with pytest.raises(TypeError, match=r"Summarize\(model=\.\.\.\) takes the model that writes"):
        Summarize("small-model", max_messages=9)  # type: ignore[arg-type]


def test_a_summary_too_long_for_the_budget_is_not_written_again_on_every_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The summarizer writes ~200 tokens where the budget leaves 150 for a summary: with the
    # newest messages, every call passes the budget.
    written = ScriptedModel([text_turn("S" * 800 + str(n)) for n in range(30)])
    model = ScriptedModel([text_turn(f"answer {n} " + "x" * 40) for n in range(30)])
    agent = Agent(model=model, middleware=[Summarize(written, max_tokens=300)])
    summaries_after: list[int] = []
    with caplog.at_level(logging.WARNING, logger="strands_middleware"):
        for n in range(30):
            agent(f"question {n} " + "y" * 40)
            summaries_after.append(len(written.requests))

    # The first summary is needed after a dozen calls (where exactly depends on the host's
    # projection of the request); from then on one is written every third call (each time the
    # messages after the last pass halfway from keep to the budget), not on every call.
    first = summaries_after.index(1)
    assert 8 <= first <= 14
    written_at = [n for n in range(first, 30) if summaries_after[n] > summaries_after[n - 1]]
    assert written_at[0] == first and len(written_at) >= 3
    assert all(later - earlier >= 3 for earlier, later in itertools.pairwise(written_at))
    # What is sent stays within the budget: the oldest messages after the summary are left out.
    # (As the host projects the request. The budget applies the projection by scaling the
    # default counter's figure for the whole conversation, so a cut can project up to a tenth
    # over or under it.)
    for request in model.requests:
        assert project_input_tokens(request.messages, system_prompt=request.system_prompt) <= 330
    warned = [r.getMessage() for r in caplog.records if "pass the budget" in r.getMessage()]
    assert len(warned) == len(written.requests)  # one warning per summary, not per call
    assert "Ask for shorter summaries (instructions=...)" in warned[0]


# ---- budgets, trigger and keep ---------------------------------------------------------------


def ten_tokens(message: Any) -> int:
    return 10


def test_a_fraction_of_the_calls_context_window_and_a_keep_in_messages() -> None:
    written = ScriptedModel([text_turn("S1")])
    main = ScriptedModel(answers(3))
    item = Summarize(
        written, max_tokens=("fraction", 0.5), keep=("messages", 1), token_counter=ten_tokens
    )
    agent = Agent(model=main, middleware=[item])
    for n in range(1, 4):
        agent(f"q{n}", context_window=80)  # 40 tokens: four messages
    assert contents(main.requests[1].messages) == [["q1"], ["a1"], ["q2"]]
    # Five messages pass 40 tokens; keep one message (the latest prompt) and summarize the rest.
    assert contents(main.requests[2].messages) == [[SUMMARY_HEADER + "S1", "q3"]]
    assert contents(written.requests[0].messages) == [
        ["Conversation:\n\nUser: q1\n\nAssistant: a1\n\nUser: q2\n\nAssistant: a2"]
    ]


def test_a_trigger_summarizes_when_any_of_its_limits_is_passed() -> None:
    triggers: list[Any] = [
        [("messages", 4), ("tokens", 10_000)],
        [("messages", 99), ("tokens", 40)],
    ]
    for trigger in triggers:
        written = ScriptedModel([text_turn("S1")])
        main = ScriptedModel(answers(3))
        agent = Agent(
            model=main,
            middleware=[Summarize(written, trigger=trigger, keep=0.25, token_counter=ten_tokens)],
        )
        for n in range(1, 4):
            agent(f"q{n}")
        assert len(written.requests) == 1, trigger
        assert contents(main.requests[2].messages) == [[SUMMARY_HEADER + "S1", "q3"]]


def test_a_keep_in_tokens_under_a_budget_in_messages() -> None:
    written = ScriptedModel([text_turn("S1")])
    main = ScriptedModel(answers(3))
    item = Summarize(written, max_messages=4, keep=("tokens", 25), token_counter=ten_tokens)
    agent = Agent(model=main, middleware=[item])
    for n in range(1, 4):
        agent(f"q{n}")
    # Keeping 25 tokens keeps two messages at most, so only the latest prompt (a turn is whole).
    assert contents(main.requests[2].messages) == [[SUMMARY_HEADER + "S1", "q3"]]


def test_an_unknown_model_with_a_fraction_fails_the_call_saying_what_to_pass() -> None:
    agent = Agent(
        model=ScriptedModel(answers(1)),
        middleware=[Summarize(ScriptedModel([]), max_tokens=("fraction", 0.8))],
    )
    with pytest.raises(ValueError, match=r"pass Summarize\(context_window=<tokens>, \.\.\.\)"):
        agent("q1")


# ---- pinning the task ------------------------------------------------------------------------


def test_pin_first_keeps_the_task_out_of_the_summary_and_in_front_of_it() -> None:
    written = ScriptedModel([text_turn("S1")])
    main = ScriptedModel(answers(3))
    agent = Agent(model=main, middleware=[Summarize(written, max_messages=4, pin_first=True)])
    for n in range(1, 4):
        agent(f"q{n}")
    assert contents(main.requests[2].messages) == [["q1", SUMMARY_HEADER + "S1", "q3"]]
    assert contents(written.requests[0].messages) == [
        ["Conversation:\n\nAssistant: a1\n\nUser: q2\n\nAssistant: a2"]
    ]


# ---- the summarizer's input and failures -----------------------------------------------------


def test_a_failed_summary_call_is_tried_once_more_before_any_fallback() -> None:
    written = ScriptedModel([ConnectionError("summarizer down"), text_turn("S1")])
    main = ScriptedModel(answers(3))
    agent = Agent(model=main, middleware=[Summarize(written, max_messages=4)])
    for n in range(1, 4):
        agent(f"q{n}")
    assert len(written.requests) == 2
    assert written.requests[0].messages == written.requests[1].messages
    assert contents(main.requests[2].messages) == [[SUMMARY_HEADER + "S1", "q3"]]


def test_a_transcript_over_the_summarizers_input_bound_goes_in_parts_folded_in_order() -> None:
    written = ScriptedModel([text_turn("S1"), text_turn("S2"), text_turn("S3")])
    main = ScriptedModel(answers(3))
    item = Summarize(written, max_messages=4, max_summarizer_input=64)
    agent = Agent(model=main, middleware=[item])
    for n in range(1, 4):
        agent(f"q{n} " + "x" * 100)  # each prompt ~26 tokens: two fit in a part, not three
    questions = [texts(request.messages[0])[0] for request in written.requests]
    assert len(questions) >= 2
    assert questions[0].startswith("Conversation:\n\nUser: q1 ")
    assert "q2" not in questions[0]
    assert questions[1].startswith("Summary so far:\n\nS1\n\nConversation since then:\n\n")
    assert "q2 " in "".join(questions[1:])
    for question in questions:
        assert estimate_tokens({"role": "user", "content": [{"text": question}]}) <= 64
    summary = f"S{len(questions)}"
    assert contents(main.requests[2].messages)[0][0] == SUMMARY_HEADER + summary


def test_a_message_larger_than_the_bound_alone_is_cut_to_it() -> None:
    written = ScriptedModel([text_turn("S1"), text_turn("S2"), text_turn("S3")])
    main = ScriptedModel(answers(3))
    agent = Agent(
        model=main, middleware=[Summarize(written, max_messages=4, max_summarizer_input=100)]
    )
    for n in range(1, 4):
        agent(f"q{n} " + "x" * 2000)
    first = texts(written.requests[0].messages[0])[0]
    assert first.endswith("[... the rest of this message was cut to fit the summarizer's input]")
    assert estimate_tokens({"role": "user", "content": [{"text": first}]}) <= 100


# ---- overflow recovery -----------------------------------------------------------------------


def test_a_context_overflow_after_the_summary_is_recovered_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    overflow = RuntimeError("prompt is too long: 300000 tokens > 200000 maximum")
    main = ScriptedModel([*answers(3), overflow, text_turn("a4")])
    agent = Agent(model=main, middleware=[Summarize(ScriptedModel([]), max_messages=100)])
    for n in range(1, 4):
        agent(f"q{n} " + "x" * 200)
    with caplog.at_level(logging.WARNING, logger="strands_middleware"):
        assert str(agent("q4 " + "x" * 200)).strip() == "a4"
    assert len(main.requests[-2].messages) == 7
    assert len(main.requests[-1].messages) <= 3
    assert "Summarize: the model reported a context overflow" in caplog.text


# ---- summaries kept in a store ---------------------------------------------------------------


def test_a_resumed_run_in_another_agent_sharing_the_store_does_not_summarize_again() -> None:
    store = InMemoryStore()
    written = ScriptedModel([text_turn("S1")])
    first = Agent(
        model=ScriptedModel(answers(3)),
        middleware=[Summarize(written, max_messages=4, store=store)],
    )
    for n in range(1, 4):
        first(f"q{n}")
    assert len(written.requests) == 1

    # Another process: a new agent with the saved history and a new Summarize on the same store.
    idle = ScriptedModel([])
    main = ScriptedModel([text_turn("a4")])
    second = Agent(
        model=main,
        messages=first.messages,
        middleware=[Summarize(idle, max_messages=4, store=store)],
    )
    second("q4")
    assert not idle.requests
    assert contents(main.requests[0].messages) == [[SUMMARY_HEADER + "S1", "q3"], ["a3"], ["q4"]]

    # A conversation that differs where the summary was taken is not given it.
    other = ScriptedModel([text_turn("T1")])
    changed: Messages = [first.messages[0], {"role": "assistant", "content": [{"text": "other"}]}]
    third = Agent(
        model=ScriptedModel([text_turn("b")]),
        messages=[*changed, *first.messages[2:]],
        middleware=[Summarize(other, max_messages=4, store=store)],
    )
    third("q4")
    assert len(other.requests) == 1


def test_a_key_names_the_conversation_and_a_failing_store_only_warns() -> None:
    store = InMemoryStore()
    written = ScriptedModel([text_turn("S1")])
    item = Summarize(
        written,
        max_messages=4,
        store=store,
        key=lambda context: context.invocation_state.get("session"),
    )
    agent = Agent(model=ScriptedModel(answers(3)), middleware=[item])
    for n in range(1, 4):
        agent(f"q{n}", session="abc")
    assert asyncio.run(store.cache_get("summarize:abc")) is not None

    class Broken(InMemoryStore):
        async def cache_get(self, key: str) -> bytes | None:
            raise ConnectionError("store down")

    written = ScriptedModel([text_turn("S1")])
    main = ScriptedModel(answers(3))
    agent = Agent(model=main, middleware=[Summarize(written, max_messages=4, store=Broken())])
    with pytest.warns(StoreWarning, match="could not read a summary from its store"):
        for n in range(1, 4):
            agent(f"q{n}")
    assert contents(main.requests[2].messages) == [[SUMMARY_HEADER + "S1", "q3"]]
