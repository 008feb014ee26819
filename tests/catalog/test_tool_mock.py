"""ToolMock: fixtures answer tool calls without the real tool, and every answer is recorded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    Interrupt,
    InterruptException,
    MiddlewareRegistry,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import AfterToolCallEvent, Agent
from strands_middleware.catalog._tool_mock import ToolMock
from strands_middleware.content import ToolUse
from strands_middleware.testing import ScriptedModel, text_turn, tool_context, tool_turn
from strands_middleware.tools import tool

from ..conformance.drive import AgentFactory

real_calls: list[str] = []


@tool
def weather(city: str) -> str:
    """The real weather tool."""
    real_calls.append(city)
    return f"real weather in {city}"


@pytest.fixture(autouse=True)
def _clear_real_calls() -> None:
    real_calls.clear()


def run_one(fixture: Any, *, name: str = "weather", tool_input: Any = None) -> dict[str, Any]:
    """Run one mocked call on an agent; return the tool result the model was sent."""
    model = ScriptedModel(
        [tool_turn(name, tool_input or {"city": "Oslo"}, tool_use_id="t1"), text_turn("ok")]
    )
    agent = Agent(model=model, tools=[weather], middleware=[ToolMock({name: fixture})])
    agent("go")
    block = model.requests[1].messages[-1]["content"][0]
    return dict(block["toolResult"])


def test_a_fixture_answers_instead_of_the_real_tool() -> None:
    assert run_one("sunny, 21C") == {
        "toolUseId": "t1",
        "status": "success",
        "content": [{"text": "sunny, 21C"}],
    }
    assert real_calls == []


def test_a_tool_the_agent_does_not_have_can_be_mocked(make_agent: AgentFactory) -> None:
    mock = ToolMock({"search": ["result 1", "result 2"]})
    model = ScriptedModel([tool_turn("search", {"q": "agents"}, tool_use_id="s1"), text_turn("ok")])
    agent = make_agent(model=model, middleware=[mock])
    agent("look it up")
    assert agent.messages[2]["content"][0]["toolResult"] == {
        "toolUseId": "s1",
        "status": "success",
        "content": [{"text": '["result 1", "result 2"]'}],
    }
    assert mock.calls == [{"toolUseId": "s1", "name": "search", "input": {"q": "agents"}}]


def test_a_fixture_function_gets_the_tool_use() -> None:
    seen: list[ToolUse] = []

    def answer(tool_use: ToolUse) -> str:
        seen.append(tool_use)
        return f"mock weather in {tool_use['input']['city']}"

    assert run_one(answer)["content"] == [{"text": "mock weather in Oslo"}]
    assert seen[0]["toolUseId"] == "t1"


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ({"temp": 21, "sky": "clear"}, [{"text": '{"temp": 21, "sky": "clear"}'}]),
        (21.5, [{"text": "21.5"}]),
        (None, [{"text": "null"}]),
        (True, [{"text": "true"}]),
        ("ünïcode", [{"text": "ünïcode"}]),
        ({1, 2}, [{"text": "{1, 2}"}]),  # JSON cannot express it: str
    ],
)
def test_values_become_text_the_way_a_tool_return_value_does(value: Any, content: Any) -> None:
    assert run_one(value) == {"toolUseId": "t1", "status": "success", "content": content}


def test_a_tool_result_shaped_dict_is_the_result_with_the_calls_id() -> None:
    fixture = {"toolUseId": "other", "status": "error", "content": [{"text": "no data"}]}
    assert run_one(fixture) == {
        "toolUseId": "t1",
        "status": "error",
        "content": [{"text": "no data"}],
    }
    without_id = {"status": "success", "content": [{"json": {"temp": 3}}]}
    assert run_one(without_id) == {
        "toolUseId": "t1",
        "status": "success",
        "content": [{"json": {"temp": 3}}],
    }


def test_a_dict_with_other_keys_is_data_not_a_result() -> None:
    data = {"status": "success", "content": [], "extra": 1}
    assert run_one(data)["content"] == [
        {"text": '{"status": "success", "content": [], "extra": 1}'}
    ]


def test_a_tool_result_event_keeps_its_exception_and_gets_the_calls_id() -> None:
    failure = TimeoutError("slow")
    event = ToolResultEvent(
        {"toolUseId": "x", "status": "error", "content": [{"text": "slow"}]}, exception=failure
    )
    result = ToolMock({"weather": event}).answer(
        {"toolUseId": "t1", "name": "weather", "input": {}}
    )
    assert result.tool_use_id == "t1"
    assert result.exception is failure


@pytest.mark.parametrize(
    ("fixture", "text", "exception_type"),
    [
        (TimeoutError("upstream slow"), "Error: upstream slow", TimeoutError),
        (TimeoutError, "Error: TimeoutError", TimeoutError),
        (lambda tool_use: ConnectionError("refused"), "Error: refused", ConnectionError),
    ],
)
def test_an_exception_is_an_error_result_carrying_it(
    fixture: Any, text: str, exception_type: type[Exception]
) -> None:
    result = ToolMock({"weather": fixture}).answer(
        {"toolUseId": "t1", "name": "weather", "input": {}}
    )
    assert result.tool_result == {"toolUseId": "t1", "status": "error", "content": [{"text": text}]}
    assert isinstance(result.exception, exception_type)


def test_a_fixture_function_that_raises_is_an_error_result_the_hooks_see() -> None:
    failure = ValueError("bad city")

    def broken(tool_use: ToolUse) -> str:
        raise failure

    model = ScriptedModel([tool_turn("weather", {"city": "?"}, tool_use_id="t1"), text_turn("ok")])
    agent = Agent(model=model, tools=[weather], middleware=[ToolMock({"weather": broken})])
    exceptions: list[Any] = []
    agent.add_hook(AfterToolCallEvent, lambda event: exceptions.append(event.exception))
    agent("go")
    assert exceptions == [failure]
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "Error: bad city"}]


def test_tools_without_a_fixture_run_for_real_by_default(make_agent: AgentFactory) -> None:
    mock = ToolMock({"search": "mocked"})
    model = ScriptedModel(
        [tool_turn("weather", {"city": "Oslo"}, tool_use_id="t1"), text_turn("ok")]
    )
    agent = make_agent(model=model, tools=[weather], middleware=[mock])
    agent("go")
    assert real_calls == ["Oslo"]
    assert mock.calls == []  # only answered calls are recorded


def test_without_passthrough_an_unplanned_call_is_an_error_result(make_agent: AgentFactory) -> None:
    mock = ToolMock({"search": "mocked", "news": "mocked"}, passthrough_unknown=False)
    model = ScriptedModel(
        [tool_turn("weather", {"city": "Oslo"}, tool_use_id="t1"), text_turn("ok")]
    )
    agent = make_agent(model=model, tools=[weather], middleware=[mock])
    agent("go")
    assert real_calls == []
    assert agent.messages[2]["content"][0]["toolResult"] == {
        "toolUseId": "t1",
        "status": "error",
        "content": [
            {
                "text": "ToolMock has no fixture for tool 'weather' and passes no calls through; "
                "tools with fixtures: 'search', 'news'"
            }
        ],
    }


def test_an_empty_mock_without_passthrough_refuses_every_call(make_agent: AgentFactory) -> None:
    mock = ToolMock({}, passthrough_unknown=False)
    model = ScriptedModel(
        [tool_turn("weather", {"city": "Oslo"}, tool_use_id="t1"), text_turn("ok")]
    )
    agent = make_agent(model=model, tools=[weather], middleware=[mock])
    agent("go")
    text = agent.messages[2]["content"][0]["toolResult"]["content"][0]["text"]
    assert text.endswith("tools with fixtures: none")


def test_calls_are_recorded_in_order_as_copies(make_agent: AgentFactory) -> None:
    mock = ToolMock({"weather": "sunny"})
    model = ScriptedModel(
        [
            tool_turn("weather", {"city": "Oslo"}, tool_use_id="t1"),
            tool_turn("weather", {"city": "Rome"}, tool_use_id="t2"),
            text_turn("ok"),
        ]
    )
    agent = make_agent(model=model, middleware=[mock])
    agent("go")
    assert [(c["toolUseId"], c["input"]["city"]) for c in mock.calls] == [
        ("t1", "Oslo"),
        ("t2", "Rome"),
    ]
    tool_use = agent.messages[1]["content"][0]["toolUse"]
    assert mock.calls[0] == tool_use
    assert mock.calls[0] is not tool_use


def test_an_interrupt_raised_by_a_fixture_function_pauses_the_run(make_agent: AgentFactory) -> None:
    def ask(tool_use: ToolUse) -> str:
        raise InterruptException(Interrupt(id="v1:tool_call:t1:ask", name="ask"))

    agent = make_agent(
        model=ScriptedModel([tool_turn("weather", {"city": "Oslo"}, tool_use_id="t1")]),
        middleware=[ToolMock({"weather": ask})],
    )
    result = agent("go")
    assert result.stop_reason == "interrupt"
    assert [i.name for i in result.interrupts] == ["ask"]


def test_control_flow_from_a_fixture_is_never_turned_into_a_result() -> None:
    pause = InterruptException(Interrupt(id="i", name="ask"))
    use: ToolUse = {"toolUseId": "t1", "name": "weather", "input": {}}
    with pytest.raises(InterruptException):
        ToolMock({"weather": pause}).answer(use)
    with pytest.raises(InterruptException):
        ToolMock({"weather": lambda tool_use: pause}).answer(use)

    def cancelled(tool_use: ToolUse) -> str:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        ToolMock({"weather": cancelled}).answer(use)
    with pytest.raises(KeyboardInterrupt):
        ToolMock({"weather": lambda tool_use: KeyboardInterrupt()}).answer(use)


async def test_the_short_circuit_never_opens_the_terminal() -> None:
    async def terminal(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        raise AssertionError("a mocked call must not reach the tool")
        yield TypedEvent()  # pragma: no cover

    registry = MiddlewareRegistry()
    registry.use(ToolMock({"weather": "sunny"}))
    context = tool_context("weather", tool_use_id="t1")
    result = await registry.run(ExecuteToolStage, context, terminal)
    assert result.tool_result["content"] == [{"text": "sunny"}]


def test_answer_needs_a_fixture() -> None:
    with pytest.raises(KeyError):
        ToolMock({}).answer({"toolUseId": "t1", "name": "weather", "input": {}})


def test_it_is_one_wrap_middleware_on_the_tool_stage() -> None:
    [middleware] = list(ToolMock({}))
    assert middleware.phase is ExecuteToolStage.Wrap
    assert "ToolMock[executeTool]" in repr(middleware)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        ((["weather"],), {}, TypeError, r"fixtures=\.\.\.\) takes a mapping of tool names"),
        (({1: "x"},), {}, TypeError, r"keys must be tool names \(non-empty strings\), got 1"),
        (({"": "x"},), {}, TypeError, "keys must be tool names"),
        (({},), {"passthrough_unknown": "no"}, TypeError, "must be True or False, got 'no'"),
    ],
)
def test_bad_configuration_is_refused(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ToolMock(*args, **kwargs)
