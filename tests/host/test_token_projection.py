"""`project_input_tokens` against strands-agents' own estimate, and who fills and reads it."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest
from strands.event_loop.event_loop import _estimate_input_tokens
from strands.models.model import _estimate_tokens_with_heuristic

from strands_middleware import (
    InvokeModelContext,
    InvokeModelStage,
    ModelStopReason,
)
from strands_middleware.agent import Agent
from strands_middleware.bridges.strands.testing import ScriptedStrandsModel
from strands_middleware.catalog import ContextWindow, Summarize
from strands_middleware.content import Message, Messages, ToolSpec, Usage
from strands_middleware.host import project_input_tokens
from strands_middleware.testing import ScriptedModel, model_context, text_turn, tool_turn
from strands_middleware.tools import tool

SPECS: list[ToolSpec] = [
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {"json": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    }
]


def conversation() -> Messages:
    return [
        {"role": "user", "content": [{"text": "Please add one and two, then explain."}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "I should call the tool."}}},
                {"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 1, "b": 2}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "t1",
                        "status": "success",
                        "content": [{"text": "3"}, {"json": {"sum": 3, "note": "exact"}}],
                    }
                },
                {"guardContent": {"text": {"text": "checked"}}},
                {"citationsContent": {"content": [{"text": "cited passage"}]}},
            ],
        },
    ]


class _FakeRegistry:
    def __init__(self, specs: list[ToolSpec]) -> None:
        self.specs = specs

    def get_all_tool_specs(self) -> list[ToolSpec]:
        return self.specs


def strands_estimate(messages: Messages, system_prompt: str | None) -> int:
    """What strands' event loop projects for an agent with this history."""
    agent: Any = SimpleNamespace(
        messages=messages,
        model=ScriptedStrandsModel(ScriptedModel([])),
        tool_registry=_FakeRegistry(SPECS),
        system_prompt=system_prompt,
        _system_prompt_content=None,
    )
    return asyncio.run(_estimate_input_tokens(agent))


def test_a_cold_start_estimates_the_whole_request_as_strands_does() -> None:
    messages = conversation()
    ours = project_input_tokens(messages, system_prompt="Be brief.", tool_specs=SPECS)
    theirs = _estimate_tokens_with_heuristic(messages, SPECS, "Be brief.", None)  # type: ignore[arg-type]
    assert ours == theirs == strands_estimate(messages, "Be brief.")
    assert ours > 0


@pytest.mark.parametrize(
    "usage",
    [
        {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120},
        # cache reported apart from inputTokens: added to the prompt
        {
            "inputTokens": 10,
            "outputTokens": 20,
            "totalTokens": 130,
            "cacheReadInputTokens": 90,
            "cacheWriteInputTokens": 10,
        },
        # cache counted inside inputTokens (input + output == total): not added again
        {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120, "cacheReadInputTokens": 90},
    ],
)
def test_the_last_reported_usage_is_the_baseline_as_in_strands(usage: Usage) -> None:
    messages = conversation()
    # strands keeps the usage on the assistant message; our hosts pass it as last_call.
    with_metadata = copy.deepcopy(messages)
    with_metadata[1]["metadata"] = {"usage": usage}  # type: ignore[typeddict-unknown-key]
    expected = strands_estimate(with_metadata, "Be brief.")
    assert (
        project_input_tokens(with_metadata, system_prompt="Be brief.", tool_specs=SPECS) == expected
    )
    assert (
        project_input_tokens(
            messages, system_prompt="Be brief.", tool_specs=SPECS, last_call=(messages[1], usage)
        )
        == expected
    )


def test_the_baseline_is_found_in_a_copy_of_the_history_as_an_equal_turn() -> None:
    messages = conversation()
    usage: Usage = {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120}
    produced = messages[1]
    by_identity = project_input_tokens(messages, last_call=(produced, usage))
    assert by_identity != project_input_tokens(messages)  # the baseline counts
    assert project_input_tokens(copy.deepcopy(messages), last_call=(produced, usage)) == by_identity


def test_a_baseline_no_longer_in_history_is_ignored() -> None:
    messages = conversation()
    gone: Message = {"role": "assistant", "content": [{"text": "elsewhere"}]}
    usage: Usage = {"inputTokens": 999, "outputTokens": 1, "totalTokens": 1000}
    assert project_input_tokens(messages, last_call=(gone, usage)) == project_input_tokens(messages)


def test_the_reference_agent_fills_the_field_for_every_model_call() -> None:
    usage: Usage = {"inputTokens": 40, "outputTokens": 7, "totalTokens": 47}
    seen: list[int | None] = []

    @InvokeModelStage.input
    def look(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.projected_input_tokens)
        return context

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: First addend.
            b: Second addend.
        """
        return a + b

    script = ScriptedModel([tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("3")], usage=usage)
    agent = Agent(model=script, tools=[add], system_prompt="Be brief.", middleware=[look])
    agent("Add 1 and 2")
    specs = [add.tool_spec]
    first = _estimate_tokens_with_heuristic(script.requests[0].messages, specs, "Be brief.", None)  # type: ignore[arg-type]
    history = copy.deepcopy(agent.messages[:3])
    history[1]["metadata"] = {"usage": usage}  # type: ignore[typeddict-unknown-key]
    agent_view: Any = SimpleNamespace(
        messages=history,
        model=ScriptedStrandsModel(ScriptedModel([])),
        tool_registry=_FakeRegistry(specs),
        system_prompt="Be brief.",
        _system_prompt_content=None,
    )
    second = asyncio.run(_estimate_input_tokens(agent_view))
    assert seen == [first, second]
    assert second == 40 + 7 + project_input_tokens([agent.messages[2]])


def test_a_context_built_without_it_reads_none() -> None:
    assert model_context().projected_input_tokens is None
    context = model_context()
    assert dataclasses.replace(context, projected_input_tokens=5).projected_input_tokens == 5
    assert context.replace(projected_input_tokens=7).projected_input_tokens == 7


def long_conversation() -> Messages:
    messages: Messages = []
    for turn in range(6):
        messages.append({"role": "user", "content": [{"text": f"question {turn} " * 5}]})
        messages.append({"role": "assistant", "content": [{"text": f"answer {turn} " * 5}]})
    messages.append({"role": "user", "content": [{"text": "last question"}]})
    return messages


def test_context_window_sizes_the_request_by_the_projection() -> None:
    window = ContextWindow(max_tokens=1_000, marker=None)
    handler = window.middleware()[0]  # the Input handler that cuts (then the overflow retry)
    context = model_context(messages=long_conversation())
    # By its own estimate everything fits.
    assert handler.handler(context) is context
    # The host projects ten times as much: the window cuts, and passes the projection on, scaled.
    projected = dataclasses.replace(context, projected_input_tokens=10 * 1_000)
    cut = handler.handler(projected)
    assert len(cut.messages) < len(context.messages)
    assert cut.projected_input_tokens is not None
    assert cut.projected_input_tokens <= 1_000 < projected.projected_input_tokens  # type: ignore[operator]


def test_a_counter_of_ones_own_is_taken_as_exact() -> None:
    window = ContextWindow(max_tokens=1_000, token_counter=lambda message: 1, marker=None)
    handler = window.middleware()[0]
    context = dataclasses.replace(
        model_context(messages=long_conversation()), projected_input_tokens=10**6
    )
    assert handler.handler(context) is context


async def test_summarize_sizes_the_request_by_the_projection() -> None:
    summarizer = ScriptedModel([text_turn("They talked.")])
    summarize = Summarize(summarizer, max_tokens=1_000)
    (handler,) = summarize.middleware()
    sent: list[InvokeModelContext] = []

    async def next_fn(context: InvokeModelContext) -> Any:
        if context.model is summarizer:
            async for event in summarizer.stream(context.messages, None, None):
                del event
            yield ModelStopReason(
                "end_turn",
                text_turn("They talked."),
                {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
                {},
            )
            return
        sent.append(context)
        yield ModelStopReason(
            "end_turn", text_turn("ok"), {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}, {}
        )

    context = dataclasses.replace(
        model_context(messages=long_conversation()), projected_input_tokens=10_000
    )
    async for _event in handler.handler(context, next_fn):
        pass
    (final,) = sent
    assert len(final.messages) < len(context.messages)
    assert final.projected_input_tokens is not None and final.projected_input_tokens < 10_000


def test_a_previous_call_that_reported_no_input_tokens_is_no_baseline() -> None:
    from strands_middleware.host import project_input_tokens

    produced = {"role": "assistant", "content": [{"text": "hi"}]}
    messages = [{"role": "user", "content": [{"text": "x" * 400}]}, produced]
    nothing = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
    whole = project_input_tokens(messages)  # type: ignore[arg-type]
    assert whole >= 100
    assert project_input_tokens(messages, last_call=(produced, nothing)) == whole  # type: ignore[arg-type]
