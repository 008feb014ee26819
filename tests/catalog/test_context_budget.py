"""The context items' cheap paths: a call within budget unmeasured, events passed on at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strands_middleware.agent import Agent
from strands_middleware.catalog import ContextWindow, Summarize, estimate_tokens
from strands_middleware.catalog._budget import Budget
from strands_middleware.catalog._context_window import retried_on_overflow
from strands_middleware.content import Message, Messages
from strands_middleware.stages._invoke_model import InvokeModelContext
from strands_middleware.testing import ScriptedModel, text_turn
from tests.catalog.conversation import call, prompt, reply, results


def _context(messages: Messages, projected: int | None = None) -> InvokeModelContext:
    return InvokeModelContext(
        agent=None,
        messages=messages,
        system_prompt=None,
        tool_specs=[],
        tool_choice=None,
        invocation_state={},
        model=ScriptedModel([]),
        projected_input_tokens=projected,
    )


# ---- a call within budget is not measured ----------------------------------------------------


def _conversation(data: Any) -> Messages:
    messages: Messages = []
    for turn in range(data.draw(st.integers(0, 3), label="turns")):
        messages.append(prompt(f"q{turn} " + "x" * data.draw(st.integers(0, 400))))
        for round_ in range(data.draw(st.integers(0, 2), label="rounds")):
            messages.extend([call(f"t{turn}.{round_}"), results(f"t{turn}.{round_}")])
        messages.append(reply(f"a{turn}"))
    return messages


def _doubled(message: Message) -> int:
    return 2 * estimate_tokens(message)


@given(st.data())
def test_fits_whole_says_yes_only_where_the_measure_finds_the_whole_call_within_budget(
    data: Any,
) -> None:
    messages = _conversation(data)
    system = data.draw(st.sampled_from([None, "be brief", "s" * 300]), label="system")
    max_messages = data.draw(st.sampled_from([None, 1, 3, 8]), label="max_messages")
    max_tokens = data.draw(st.sampled_from([None, 1, 50, 200, 10_000]), label="max_tokens")
    budget = Budget(
        "ContextWindow",
        max_messages=8 if max_messages is None and max_tokens is None else max_messages,
        max_tokens=max_tokens,
        token_counter=data.draw(st.sampled_from([estimate_tokens, _doubled]), label="counter"),
    )
    whole = budget.measure(messages, system, count_tokens=True).tokens(0)
    # Projections about the estimate, and about the limit (where a float's rounding decides).
    limit = budget.max_tokens or 100
    projected = data.draw(
        st.sampled_from([None, 0, 1, whole, limit - 1, limit, limit + 1, 3 * limit]),
        label="projected",
    )
    measured = budget.measure(messages, system, projected).fits(0)
    if budget.fits_whole(messages, projected):
        assert measured
    # With no token limit, or the default counter and a projection below the limit, it is told.
    told = (budget.max_messages is None or len(messages) <= budget.max_messages) and (
        budget.max_tokens is None
        or (
            projected is not None
            and budget.token_counter is estimate_tokens
            and projected < budget.max_tokens
        )
    )
    assert budget.fits_whole(messages, projected) is told


def test_a_projection_within_budget_sends_the_call_as_it_is_and_one_over_it_is_cut() -> None:
    history: Messages = [prompt("q1 " + "x" * 400), reply("a1"), prompt("q2")]
    window = ContextWindow(max_tokens=100)
    cut = window.middleware()[0].handler
    assert cut(_context(history, projected=99)).messages is history
    # The estimate (over 100 tokens) is not read when the projection says the call fits...
    assert len(cut(_context(history, projected=None)).messages) < len(history)
    # ...and the projection, when over, is what the call is measured by.
    assert len(cut(_context(history, projected=101)).messages) < len(history)


# ---- the overflow recovery passes events on --------------------------------------------------


def _run(stream: AsyncGenerator[Any, None]) -> list[Any]:
    async def collect() -> list[Any]:
        return [event async for event in stream]

    return asyncio.run(collect())


def test_an_overflow_after_the_first_event_reaches_the_caller_untried() -> None:
    calls: list[Messages] = []

    async def streamed_then_overflowed(context: InvokeModelContext) -> AsyncGenerator[Any, None]:
        calls.append(context.messages)
        yield "first"
        yield "second"
        raise RuntimeError("prompt is too long: 210000 tokens > 200000 maximum")

    seen: list[Any] = []

    async def collect() -> None:
        async for event in retried_on_overflow(
            "ContextWindow", _context([prompt("q")]), streamed_then_overflowed, lambda: []
        ):
            seen.append(event)

    with pytest.raises(RuntimeError, match="prompt is too long"):
        asyncio.run(collect())
    assert seen == ["first", "second"]
    assert len(calls) == 1


def test_an_overflow_before_the_first_event_is_tried_once_more_with_less() -> None:
    calls: list[Messages] = []
    smaller: Messages = [prompt("q2")]

    async def overflowed_once(context: InvokeModelContext) -> AsyncGenerator[Any, None]:
        calls.append(context.messages)
        if len(calls) == 1:
            raise RuntimeError("context_length_exceeded")
        yield "a"
        yield "b"

    whole: list[Message] = [prompt("q1"), reply("a1"), prompt("q2")]
    events = _run(
        retried_on_overflow("Summarize", _context(whole), overflowed_once, lambda: smaller)
    )
    assert events == ["a", "b"]
    assert calls == [whole, smaller]


def test_a_call_that_streams_nothing_ends_without_a_retry() -> None:
    calls: list[Messages] = []

    async def empty(context: InvokeModelContext) -> AsyncGenerator[Any, None]:
        calls.append(context.messages)
        return
        yield  # an async generator that yields nothing

    assert _run(retried_on_overflow("ContextWindow", _context([]), empty, lambda: [])) == []
    assert len(calls) == 1


def test_summarize_within_budget_by_its_projection_sends_the_call_as_it_is() -> None:
    model = ScriptedModel([text_turn("a1")])
    summarizer = ScriptedModel([])  # any summary call would fail: none may be made
    agent = Agent(model=model, middleware=[Summarize(summarizer, max_tokens=100_000)])
    assert str(agent("q1 " + "x" * 1000)).strip() == "a1"
    assert summarizer.requests == []
    assert model.requests[0].messages == agent.messages[:1]
