"""CallLimit: what counts, what happens at each cap, and the scope counts live in."""

from __future__ import annotations

import gc
import pickle
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import AfterModelCallEvent, AfterToolCallEvent, Agent
from strands_middleware.catalog import CallLimit, CallLimitExceeded, ScopedState
from strands_middleware.content import Message
from strands_middleware.events import ToolInterruptEvent
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import (
    ScriptedModel,
    model_context,
    text_turn,
    tool_context,
    tool_turn,
)
from strands_middleware.tools import tool

from ..conformance.drive import AgentFactory

ran: list[str] = []


@tool
def echo(text: str) -> str:
    """Echo."""
    ran.append(f"echo {text}")
    return text


@tool
def search(query: str) -> str:
    """Search."""
    ran.append(f"search {query}")
    return f"results for {query}"


@pytest.fixture(autouse=True)
def _reset_ran() -> None:
    ran.clear()


def tool_results(message: Message) -> dict[str, Any]:
    return {
        block["toolResult"]["toolUseId"]: block["toolResult"]
        for block in message["content"]
        if "toolResult" in block
    }


def several_tools(*uses: tuple[str, str, dict[str, Any]]) -> Message:
    return {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": tool_use_id, "name": name, "input": tool_input}}
            for tool_use_id, name, tool_input in uses
        ],
    }


def approve(result: Any) -> list[dict[str, Any]]:
    return [
        {"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}
        for interrupt in result.interrupts
    ]


@ExecuteToolStage.wrap
async def gate(
    context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    context.interrupt("approve")
    async for event in next_fn(context):
        yield event


# ---- the model cap -------------------------------------------------------------------------


def test_the_model_call_past_the_cap_raises_before_the_model_is_asked() -> None:
    model = ScriptedModel(
        [tool_turn("echo", {"text": "1"}), tool_turn("echo", {"text": "2"}), text_turn("never")]
    )
    agent = Agent(model=model, tools=[echo], middleware=[CallLimit(model_calls=2)])
    seen: list[BaseException | None] = []
    agent.add_hook(AfterModelCallEvent, lambda event: seen.append(event.exception))
    with pytest.raises(CallLimitExceeded) as caught:
        agent("go")
    assert str(caught.value) == (
        "CallLimit(model_calls=2) reached: 2 model calls already made in this invocation; the "
        "run stops instead of calling the model again"
    )
    assert (caught.value.limit, caught.value.scope) == (2, "invocation")
    assert len(model.requests) == 2
    assert ran == ["echo 1", "echo 2"]  # the tools of the last answered turn still ran
    assert seen == [None, None, caught.value]
    assert agent.messages[-1]["role"] == "user"  # nothing invented into the history
    assert "toolResult" in agent.messages[-1]["content"][0]


def test_the_message_counts_one_call_in_the_singular(make_agent: AgentFactory) -> None:
    agent = make_agent(
        model=ScriptedModel([tool_turn("echo", {"text": "x"})]),
        tools=[echo],
        middleware=[CallLimit(model_calls=1, scope="agent")],
    )
    with pytest.raises(CallLimitExceeded, match=r"1 model call already made by this agent;"):
        agent("go")


def test_invocation_scope_counts_each_invocation_afresh(make_agent: AgentFactory) -> None:
    model = ScriptedModel([text_turn("a"), text_turn("b"), text_turn("c")])
    agent = make_agent(model=model, middleware=[CallLimit(model_calls=1)])
    assert [str(agent(prompt)) for prompt in ("1", "2", "3")] == ["a", "b", "c"]


def test_agent_scope_counts_for_the_agents_lifetime(make_agent: AgentFactory) -> None:
    model = ScriptedModel([text_turn("a"), text_turn("b"), text_turn("never")])
    agent = make_agent(model=model, middleware=[CallLimit(model_calls=2, scope="agent")])
    agent("1")
    agent("2")
    with pytest.raises(CallLimitExceeded, match=r"2 model calls already made by this agent"):
        agent("3")
    assert len(model.requests) == 2


def test_agents_never_share_counts_even_when_they_share_the_object(
    make_agent: AgentFactory,
) -> None:
    limit = CallLimit(model_calls=1, scope="agent")
    for name in ("first", "second"):
        assert (
            str(make_agent(model=ScriptedModel([text_turn(name)]), middleware=[limit])("hi"))
            == name
        )


def test_a_retry_inside_the_limit_is_one_call(make_agent: AgentFactory) -> None:
    from strands_middleware.catalog._retry import Retry

    async def no_sleep(delay: float) -> None:
        return None

    model = ScriptedModel([ConnectionError("throttled"), text_turn("ok")])
    agent = make_agent(
        model=model, middleware=[CallLimit(model_calls=1), Retry(sleep=no_sleep, jitter=0)]
    )
    assert str(agent("hi")) == "ok"
    assert len(model.requests) == 2


# ---- the tool caps -------------------------------------------------------------------------


def test_a_tool_call_past_the_cap_is_answered_with_an_error_the_model_reads() -> None:
    model = ScriptedModel(
        [
            tool_turn("echo", {"text": "1"}, tool_use_id="t1"),
            tool_turn("echo", {"text": "2"}, tool_use_id="t2"),
            text_turn("done"),
        ]
    )
    agent = Agent(model=model, tools=[echo], middleware=[CallLimit(tool_calls=1)])
    exceptions: list[BaseException | None] = []
    agent.add_hook(AfterToolCallEvent, lambda event: exceptions.append(event.exception))
    assert str(agent("go")) == "done"
    assert ran == ["echo 1"]
    refused = {
        "toolUseId": "t2",
        "status": "error",
        "content": [
            {
                "text": "Tool call limit reached: at most 1 tool call in this invocation. Do not "
                "call any more tools."
            }
        ],
    }
    assert tool_results(model.requests[2].messages[-1]) == {"t2": refused}
    assert exceptions == [None, None]  # a refusal is not a failure: Retry leaves it alone


def test_per_tool_caps_only_the_named_tool(make_agent: AgentFactory) -> None:
    model = ScriptedModel(
        [
            tool_turn("search", {"query": "a"}, tool_use_id="s1"),
            tool_turn("echo", {"text": "b"}, tool_use_id="e1"),
            tool_turn("search", {"query": "c"}, tool_use_id="s2"),
            tool_turn("echo", {"text": "d"}, tool_use_id="e2"),
            text_turn("done"),
        ]
    )
    agent = make_agent(
        model=model, tools=[echo, search], middleware=[CallLimit(per_tool={"search": 1})]
    )
    agent("go")
    assert ran == ["search a", "echo b", "echo d"]
    [refusal] = tool_results(model.requests[3].messages[-1])["s2"]["content"]
    assert refusal == {
        "text": "Tool call limit reached: 'search' may be called at most 1 time in this "
        "invocation. Do not call it again."
    }


def test_a_per_tool_limit_of_zero_forbids_the_tool(make_agent: AgentFactory) -> None:
    model = ScriptedModel([tool_turn("search", {"query": "a"}, tool_use_id="s1"), text_turn("ok")])
    agent = make_agent(
        model=model,
        tools=[search],
        middleware=[CallLimit(per_tool={"search": 0}, scope="agent")],
    )
    agent("go")
    assert ran == []
    [refusal] = tool_results(model.requests[1].messages[-1])["s1"]["content"]
    assert refusal["text"].startswith("Tool call limit reached: 'search' may be called at most 0")
    assert "0 times by this agent" in refusal["text"]


def test_a_call_must_fit_both_caps_and_a_refused_call_is_not_counted(
    make_agent: AgentFactory,
) -> None:
    model = ScriptedModel(
        [
            tool_turn("search", {"query": "a"}, tool_use_id="s1"),
            tool_turn("search", {"query": "b"}, tool_use_id="s2"),  # refused: per_tool
            tool_turn("echo", {"text": "c"}, tool_use_id="e1"),  # the 2nd counted call: fits
            tool_turn("echo", {"text": "d"}, tool_use_id="e2"),  # refused: tool_calls
            text_turn("done"),
        ]
    )
    agent = make_agent(
        model=model,
        tools=[echo, search],
        middleware=[CallLimit(tool_calls=2, per_tool={"search": 1})],
    )
    agent("go")
    assert ran == ["search a", "echo c"]
    texts = [
        tool_results(request.messages[-1]).popitem()[1]["content"][0]["text"]
        for request in model.requests[1:]
    ]
    assert texts[1].startswith("Tool call limit reached: 'search' may be called at most 1 time")
    assert texts[3].startswith("Tool call limit reached: at most 2 tool calls in this invocation")


def test_tool_calls_running_at_once_cannot_all_slip_under_the_cap(make_agent: AgentFactory) -> None:
    model = ScriptedModel(
        [
            several_tools(
                ("a", "echo", {"text": "a"}),
                ("b", "echo", {"text": "b"}),
                ("c", "echo", {"text": "c"}),
            ),
            text_turn("done"),
        ]
    )
    agent = make_agent(model=model, tools=[echo], middleware=[CallLimit(tool_calls=2)])
    agent("go")
    statuses = {
        tool_use_id: result["status"]
        for tool_use_id, result in tool_results(model.requests[1].messages[-1]).items()
    }
    # Which call is refused depends on the order the host starts them in (LangChain's sync
    # ToolNode runs them on threads), so the rule is: exactly one is refused, and only the other
    # two ran.
    assert sorted(statuses.values()) == ["error", "success", "success"]
    admitted = sorted(
        f"echo {tool_use_id}" for tool_use_id, s in statuses.items() if s == "success"
    )
    assert sorted(ran) == admitted


def test_a_tool_call_that_pauses_for_a_human_is_counted_only_when_it_runs(
    make_agent: AgentFactory,
) -> None:
    model = ScriptedModel([tool_turn("echo", {"text": "x"}), text_turn("done")])
    agent = make_agent(
        model=model,
        tools=[echo],
        middleware=[CallLimit(tool_calls=1, scope="agent"), gate],
    )
    paused = agent("go")
    assert paused.stop_reason == "interrupt"
    assert str(agent(approve(paused))) == "done"
    assert ran == ["echo x"]  # the resumed call was within the cap


async def test_an_interrupt_event_uncounts_the_call() -> None:
    limit = CallLimit(tool_calls=1)
    registry = MiddlewareRegistry()
    registry.use(limit)
    agent = object()
    state: dict[str, Any] = {}
    tool_use: Any = {"toolUseId": "t1", "name": "ask", "input": {}}

    async def asks(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        yield ToolInterruptEvent(tool_use, [Interrupt(id="i", name="ask")])

    async def answers(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        yield ToolResultEvent({"toolUseId": "t1", "status": "success", "content": []})

    context = tool_context("ask", tool_use_id="t1", invocation_state=state, agent=agent)
    [halted] = [event async for event in registry.invoke(ExecuteToolStage, context, asks)]
    assert halted.is_interrupt
    [result] = [event async for event in registry.invoke(ExecuteToolStage, context, answers)]
    assert result["tool_result"]["status"] == "success"


# ---- how invocations and agents are told apart ---------------------------------------------


async def test_an_invocation_is_recognised_by_its_invocation_state_dict() -> None:
    limit = CallLimit(model_calls=1)
    registry = MiddlewareRegistry()
    registry.use(limit)
    agent = object()
    first: dict[str, Any] = {}

    async def answer(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        yield ModelStopReason(
            "end_turn",
            {"role": "assistant", "content": []},
            {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
            {"latencyMs": 0},
        )

    def call(state: dict[str, Any]) -> Any:
        return registry.run(
            InvokeModelStage, model_context(invocation_state=state, agent=agent), answer
        )

    await call(first)
    with pytest.raises(CallLimitExceeded):
        await call(first)  # the same dict: the same invocation
    await call({})  # an equal but new dict: a new invocation
    await call(first)  # only the latest invocation is remembered: this starts afresh too
    with pytest.raises(CallLimitExceeded):
        await call(first)


def test_scoped_state_forgets_an_agent_when_it_is_collected() -> None:
    class Host:
        pass

    scoped: ScopedState[list[int]] = ScopedState("Test", "agent", list)
    host = Host()
    scoped.get(host, {}).append(1)
    assert scoped.current(host) == [1]
    assert len(scoped) == 1
    del host
    gc.collect()
    assert len(scoped) == 0


def test_scoped_state_keeps_agents_that_cannot_be_weakly_referenced() -> None:
    class Slotted:
        __slots__ = ()

    scoped: ScopedState[list[int]] = ScopedState("Test", "invocation", list)
    host = Slotted()
    state: dict[str, Any] = {}
    scoped.get(host, state).append(1)
    assert scoped.get(host, state) == [1]
    assert scoped.get(host, {}) == []
    assert scoped.current(object()) is None


def test_scoped_state_refuses_an_unknown_scope() -> None:
    with pytest.raises(ValueError, match=r"Test\(scope=\.\.\.\) must be 'invocation' or 'agent'"):
        ScopedState("Test", "session", list)  # type: ignore[arg-type]


# ---- configuration -------------------------------------------------------------------------


def test_it_registers_only_the_stages_it_caps() -> None:
    assert [m.phase for m in CallLimit(model_calls=1)] == [InvokeModelStage.Wrap]
    assert [m.phase for m in CallLimit(tool_calls=1)] == [ExecuteToolStage.Wrap]
    assert [m.phase for m in CallLimit(per_tool={"x": 1})] == [ExecuteToolStage.Wrap]
    assert [m.phase for m in CallLimit(model_calls=1, per_tool={"x": 1})] == [
        InvokeModelStage.Wrap,
        ExecuteToolStage.Wrap,
    ]


def test_call_limit_exceeded_pickles() -> None:
    error = CallLimitExceeded(3, "agent")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.limit, copy.scope, str(copy)) == (3, "agent", str(error))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({}, ValueError, r"CallLimit needs at least one of model_calls=\.\.\., tool_calls="),
        ({"per_tool": {}}, ValueError, r"CallLimit needs at least one of .* a non-empty per_tool"),
        (
            {"model_calls": -1},
            ValueError,
            r"CallLimit\(model_calls=\.\.\.\) must be a whole number",
        ),
        ({"model_calls": True}, ValueError, r"model_calls=\.\.\.\) must be a whole number >= 0"),
        ({"tool_calls": 1.5}, ValueError, r"CallLimit\(tool_calls=\.\.\.\) must be a whole number"),
        ({"per_tool": "search"}, TypeError, r"CallLimit\(per_tool=\.\.\.\) takes a mapping"),
        ({"per_tool": {1: 1}}, TypeError, r"per_tool=\.\.\.\) keys are tool names"),
        ({"per_tool": {"": 1}}, TypeError, r"per_tool=\.\.\.\) keys are tool names"),
        ({"per_tool": {"x": -1}}, ValueError, r"limits must be whole numbers >= 0, got -1 for 'x'"),
        ({"per_tool": {"x": False}}, ValueError, r"limits must be whole numbers >= 0"),
        (
            {"model_calls": 1, "scope": "session"},
            ValueError,
            r"CallLimit\(scope=\.\.\.\) must be 'invocation' or 'agent', got 'session'",
        ),
    ],
)
def test_bad_configuration_is_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        CallLimit(**kwargs)
