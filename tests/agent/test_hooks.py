"""Lifecycle hooks of the reference agent: registration, dispatch and what each event carries."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from strands_middleware.agent import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    Agent,
    AgentResult,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookEvent,
    HookRegistry,
    MessageAddedEvent,
)
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def subtract(a: int, b: int) -> int:
    """Subtract b from a."""
    return a - b


def adding_agent(answer: str = "done") -> Agent:
    model = ScriptedModel([tool_turn("add", {"a": 2, "b": 1}, tool_use_id="t1"), text_turn(answer)])
    return Agent(model=model, tools=[add, subtract])


def tool_results(agent: Agent) -> list[Any]:
    return [
        block["toolResult"]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block
    ]


def test_an_async_hook_is_awaited_before_the_loop_goes_on() -> None:
    agent = adding_agent()
    log: list[str] = []

    async def slow_before(event: BeforeToolCallEvent) -> None:
        await asyncio.sleep(0)
        log.append("hook finished")

    agent.add_hook(BeforeToolCallEvent, slow_before)
    agent.add_hook(AfterToolCallEvent, lambda event: log.append("tool ran"))
    agent("go")
    assert log == ["hook finished", "tool ran"]


def test_after_hooks_run_last_registered_first_and_before_hooks_in_order() -> None:
    agent = adding_agent()
    log: list[str] = []
    for name in ("outer", "inner"):
        agent.add_hook(BeforeModelCallEvent, lambda event, name=name: log.append(f"before {name}"))
        agent.add_hook(AfterModelCallEvent, lambda event, name=name: log.append(f"after {name}"))
    agent("go")
    assert log[:4] == ["before outer", "before inner", "after inner", "after outer"]


def test_every_event_carries_the_agent_that_fired_it() -> None:
    agent = adding_agent()
    seen: list[object] = []
    for event_type in (
        BeforeInvocationEvent,
        AfterInvocationEvent,
        MessageAddedEvent,
        BeforeModelCallEvent,
        AfterModelCallEvent,
        BeforeToolCallEvent,
        AfterToolCallEvent,
    ):
        agent.add_hook(event_type, lambda event: seen.append(event.agent))
    agent("go")
    assert seen and all(fired_by is agent for fired_by in seen)


def test_tool_events_carry_the_call_its_tool_and_the_invocation_state() -> None:
    agent = adding_agent()
    before: list[BeforeToolCallEvent] = []
    after: list[AfterToolCallEvent] = []
    agent.add_hook(BeforeToolCallEvent, before.append)
    agent.add_hook(AfterToolCallEvent, after.append)
    agent("go", user="ada")

    [started] = before
    [ended] = after
    for event in (started, ended):
        assert event.tool_use == {"toolUseId": "t1", "name": "add", "input": {"a": 2, "b": 1}}
        assert event.tool is add
        assert event.invocation_state == {"user": "ada"}
    assert ended.result == {"toolUseId": "t1", "status": "success", "content": [{"text": "3"}]}
    assert ended.exception is None


def test_a_before_tool_hook_can_swap_the_tool_that_runs() -> None:
    agent = adding_agent()

    def use_subtract(event: BeforeToolCallEvent) -> None:
        event.tool = subtract

    agent.add_hook(BeforeToolCallEvent, use_subtract)
    agent("go")
    assert tool_results(agent)[0]["content"] == [{"text": "1"}]


def test_an_after_tool_hook_can_replace_the_result_the_model_reads() -> None:
    agent = adding_agent()

    def censor(event: AfterToolCallEvent) -> None:
        event.result = {**event.result, "content": [{"text": "[censored]"}]}

    agent.add_hook(AfterToolCallEvent, censor)
    agent("go")
    assert tool_results(agent) == [
        {"toolUseId": "t1", "status": "success", "content": [{"text": "[censored]"}]}
    ]


def test_after_invocation_sees_the_result_or_none_when_the_run_failed() -> None:
    finished = adding_agent("all done")
    results: list[AgentResult | None] = []
    finished.add_hook(AfterInvocationEvent, lambda event: results.append(event.result))
    finished("go")
    [result] = results
    assert result is not None and str(result) == "all done"

    failing = Agent(model=ScriptedModel([RuntimeError("provider down")]))
    failures: list[AgentResult | None] = []
    failing.add_hook(AfterInvocationEvent, lambda event: failures.append(event.result))
    with pytest.raises(RuntimeError, match="provider down"):
        failing("go")
    assert failures == [None]


def test_message_added_carries_each_message_as_it_lands_in_history() -> None:
    agent = adding_agent()
    added: list[Any] = []
    agent.add_hook(MessageAddedEvent, lambda event: added.append(event.message))
    agent("go")
    assert added == agent.messages


@pytest.mark.parametrize(
    ("event_type", "fields"),
    [
        (MessageAddedEvent, {"message"}),
        (BeforeToolCallEvent, {"tool_use", "tool", "invocation_state"}),
        (AfterToolCallEvent, {"tool_use", "tool", "invocation_state", "result"}),
        (AfterInvocationEvent, {"result"}),
    ],
)
def test_hook_events_have_no_placeholder_for_what_the_agent_always_supplies(
    event_type: type[HookEvent], fields: set[str]
) -> None:
    required = {
        field.name
        for field in dataclasses.fields(event_type)
        if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    }
    assert required == {"agent"} | fields
    with pytest.raises(TypeError, match="missing"):
        event_type(agent=None)  # type: ignore[arg-type]


def test_add_hook_refuses_what_is_not_a_hook_event_class() -> None:
    registry = HookRegistry()
    with pytest.raises(TypeError, match="takes a hook event class, got <class 'str'>"):
        registry.add(str, print)  # type: ignore[type-var]
    with pytest.raises(TypeError, match="takes a hook event class"):
        registry.add(BeforeToolCallEvent(None, {}, None, {}), print)  # type: ignore[arg-type]


def test_add_hook_refuses_a_callback_that_cannot_be_called() -> None:
    with pytest.raises(TypeError, match="takes a callable, got 'later'"):
        adding_agent().add_hook(BeforeModelCallEvent, "later")  # type: ignore[arg-type]
