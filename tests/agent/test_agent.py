"""The reference agent end to end, on a scripted model and no network."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareResult,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    Agent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    MessageAddedEvent,
)
from strands_middleware.host import InterruptState
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First.
        b: Second.
    """
    return a + b


@tool
def explode(reason: str) -> str:
    """Fail on purpose."""
    raise RuntimeError(reason)


def results_in(agent: Agent) -> list[dict[str, Any]]:
    return [
        block["toolResult"]  # type: ignore[misc]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block
    ]


def test_a_text_turn_ends_the_run() -> None:
    agent = Agent(model=ScriptedModel([text_turn("hello")]))
    result = agent("hi")
    assert result.stop_reason == "end_turn"
    assert str(result) == "hello"
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]


def test_a_tool_turn_runs_the_tool_and_calls_the_model_again() -> None:
    model = ScriptedModel(
        [tool_turn("add", {"a": 2, "b": 3}, tool_use_id="t1"), text_turn("5")],
        usage={"inputTokens": 3, "outputTokens": 2, "totalTokens": 5},
        metrics={"latencyMs": 7},
    )
    agent = Agent(model=model, tools=[add])
    result = agent("2+3?")
    assert str(result) == "5"
    assert results_in(agent) == [
        {"toolUseId": "t1", "status": "success", "content": [{"text": "5"}]}
    ]
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert model.requests[0].tool_specs is not None
    assert [spec["name"] for spec in model.requests[0].tool_specs] == ["add"]
    # Usage and latency add up over the invocation's two model calls.
    assert result.usage == {"inputTokens": 6, "outputTokens": 4, "totalTokens": 10}
    assert result.metrics == {"latencyMs": 14}


async def test_invoke_async_and_stream_async() -> None:
    agent = Agent(model=ScriptedModel([text_turn("a"), text_turn("b")]))
    assert str(await agent.invoke_async("x")) == "a"
    events = [event async for event in agent.stream_async("y")]
    assert events[-1]["stop"][0] == "end_turn"


async def test_calling_the_agent_from_async_code_is_refused() -> None:
    agent = Agent(model=ScriptedModel([]))
    with pytest.raises(RuntimeError, match=r"await agent\.invoke_async"):
        agent("x")


def test_input_transform_reaches_the_model_request() -> None:
    model = ScriptedModel([text_turn("ok")])
    agent = Agent(model=model, system_prompt="original")
    agent.add_middleware(
        InvokeModelStage.Input, lambda context: context.replace(system_prompt="injected")
    )
    agent("hi")
    assert model.requests[0].system_prompt == "injected"


def test_output_transform_reaches_the_result() -> None:
    def shout(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        stop_reason, message, usage, metrics = result.value["stop"]
        loud = {
            "role": "assistant",
            "content": [{"text": str(message["content"][0]["text"]).upper()}],
        }
        return result.replace(value=ModelStopReason(stop_reason, loud, usage, metrics))  # type: ignore[arg-type]

    agent = Agent(model=ScriptedModel([text_turn("quiet")]))
    agent.use(InvokeModelStage.output(shout))
    assert str(agent("hi")) == "QUIET"
    assert agent.messages[-1]["content"] == [{"text": "QUIET"}]


def test_a_wrap_short_circuit_skips_the_model() -> None:
    @InvokeModelStage.wrap
    async def cached(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield ModelStopReason(
            "end_turn",
            text_turn("cached"),
            {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
            {"latencyMs": 0},
        )

    model = ScriptedModel([])
    agent = Agent(model=model, middleware=[cached])
    assert str(agent("hi")) == "cached"
    assert model.requests == []


def test_a_wrap_retry_around_a_failing_model_call_succeeds_and_hooks_see_one_call() -> None:
    @InvokeModelStage.wrap
    async def retry(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        for attempt in range(3):
            try:
                async for event in next_fn(context):
                    yield event
                return
            except ConnectionError:
                if attempt == 2:
                    raise

    model = ScriptedModel([ConnectionError("throttled"), ConnectionError("again"), text_turn("ok")])
    agent = Agent(model=model, middleware=[retry])
    calls: list[str] = []
    agent.add_hook(BeforeModelCallEvent, lambda event: calls.append("before"))
    agent.add_hook(AfterModelCallEvent, lambda event: calls.append("after"))
    assert str(agent("hi")) == "ok"
    assert len(model.requests) == 3
    assert calls == ["before", "after"]


def test_a_tool_input_rewrite_reaches_the_tool() -> None:
    def double_a(context: ExecuteToolContext) -> ExecuteToolContext:
        tool_use = {**context.tool_use, "input": {**context.tool_use["input"], "a": 20}}
        return context.replace(tool_use=tool_use)  # type: ignore[typeddict-item]

    model = ScriptedModel([tool_turn("add", {"a": 2, "b": 3}, tool_use_id="t1"), text_turn("done")])
    agent = Agent(model=model, tools=[add], middleware=[ExecuteToolStage.input(double_a)])
    agent("go")
    assert results_in(agent)[0]["content"] == [{"text": "23"}]


def test_an_unknown_tool_is_observed_with_tool_none_and_answered_as_unknown() -> None:
    seen: list[object] = []

    def watch(context: ExecuteToolContext) -> ExecuteToolContext:
        seen.append(context.tool)
        return context

    model = ScriptedModel([tool_turn("missing", {}, tool_use_id="t1"), text_turn("sorry")])
    agent = Agent(model=model, tools=[add], middleware=[ExecuteToolStage.input(watch)])
    agent("go")
    assert seen == [None]
    assert results_in(agent)[0]["content"] == [{"text": "Unknown tool: missing"}]
    assert results_in(agent)[0]["status"] == "error"


def test_a_failing_tool_becomes_an_error_result_the_model_reads() -> None:
    model = ScriptedModel(
        [tool_turn("explode", {"reason": "boom"}, tool_use_id="t1"), text_turn("oh")]
    )
    agent = Agent(model=model, tools=[explode])
    agent("go")
    assert results_in(agent)[0]["status"] == "error"
    assert "boom" in str(results_in(agent)[0]["content"])


def test_per_call_model_switch_leaves_the_agent_model_alone() -> None:
    main = ScriptedModel([text_turn("from main")])
    backup = ScriptedModel([text_turn("from backup")])
    agent = Agent(model=main)
    agent.add_middleware(InvokeModelStage.Input, lambda context: context.replace(model=backup))
    assert str(agent("hi")) == "from backup"
    assert agent.model is main
    assert main.requests == []


def test_handlers_cannot_reach_history_through_the_context() -> None:
    def vandal(context: InvokeModelContext) -> InvokeModelContext:
        context.messages.clear()
        context.messages.append({"role": "user", "content": [{"text": "forged"}]})
        return context

    model = ScriptedModel([text_turn("ok")])
    agent = Agent(model=model, middleware=[InvokeModelStage.input(vandal)])
    agent("real")
    assert agent.messages[0]["content"] == [{"text": "real"}]


async def test_several_tool_uses_run_concurrently_by_default() -> None:
    running: list[int] = []
    peak: list[int] = []

    @tool
    async def slow(n: int) -> int:
        """Sleep a little."""
        running.append(n)
        peak.append(len(running))
        await asyncio.sleep(0.01)
        running.remove(n)
        return n

    turn = tool_turn("slow", {"n": 1}, tool_use_id="a")
    turn["content"].append({"toolUse": {"toolUseId": "b", "name": "slow", "input": {"n": 2}}})
    agent = Agent(model=ScriptedModel([turn, text_turn("ok")]), tools=[slow])
    await agent.invoke_async("go")
    assert max(peak) == 2
    assert [r["toolUseId"] for r in results_in(agent)] == ["a", "b"]

    running.clear()
    peak.clear()
    turn2 = tool_turn("slow", {"n": 1}, tool_use_id="c")
    turn2["content"].append({"toolUse": {"toolUseId": "d", "name": "slow", "input": {"n": 2}}})
    sequential = Agent(
        model=ScriptedModel([turn2, text_turn("ok")]), tools=[slow], sequential_tools=True
    )
    await sequential.invoke_async("go")
    assert max(peak) == 1


def test_hooks_fire_in_lifecycle_order() -> None:
    model = ScriptedModel([tool_turn("add", {"a": 1, "b": 1}, tool_use_id="t1"), text_turn("2")])
    agent = Agent(model=model, tools=[add])
    log: list[str] = []
    for event_type in (
        BeforeInvocationEvent,
        AfterInvocationEvent,
        MessageAddedEvent,
        BeforeModelCallEvent,
        AfterModelCallEvent,
        BeforeToolCallEvent,
        AfterToolCallEvent,
    ):
        agent.add_hook(event_type, lambda event: log.append(type(event).__name__))
    agent("go")
    assert log == [
        "BeforeInvocationEvent",
        "MessageAddedEvent",
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "MessageAddedEvent",
        "BeforeToolCallEvent",
        "AfterToolCallEvent",
        "MessageAddedEvent",
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "MessageAddedEvent",
        "AfterInvocationEvent",
    ]


def test_after_tool_call_retry_reruns_the_tool_chain() -> None:
    runs: list[int] = []

    def count(context: ExecuteToolContext) -> ExecuteToolContext:
        runs.append(1)
        return context

    attempts: list[int] = []

    def retry_once(event: AfterToolCallEvent) -> None:
        attempts.append(1)
        if len(attempts) == 1:
            event.retry = True

    model = ScriptedModel([tool_turn("add", {"a": 1, "b": 1}, tool_use_id="t1"), text_turn("2")])
    agent = Agent(model=model, tools=[add], middleware=[ExecuteToolStage.input(count)])
    agent.add_hook(AfterToolCallEvent, retry_once)
    agent("go")
    assert runs == [1, 1]
    assert len(results_in(agent)) == 1


def test_a_before_tool_hook_can_cancel_the_call() -> None:
    def refuse(event: BeforeToolCallEvent) -> None:
        event.cancel_tool = "not allowed today"

    model = ScriptedModel([tool_turn("add", {"a": 1, "b": 1}, tool_use_id="t1"), text_turn("ok")])
    agent = Agent(model=model, tools=[add])
    agent.add_hook(BeforeToolCallEvent, refuse)
    agent("go")
    assert results_in(agent)[0] == {
        "toolUseId": "t1",
        "status": "error",
        "content": [{"text": "not allowed today"}],
    }


def test_cancel_answers_pending_tool_uses_without_running_them() -> None:
    ran: list[int] = []

    @tool
    def record(n: int) -> int:
        """Record a call."""
        ran.append(n)
        return n

    model = ScriptedModel([tool_turn("record", {"n": 1}, tool_use_id="t1")])
    agent = Agent(model=model, tools=[record])
    agent.add_hook(AfterModelCallEvent, lambda event: agent.cancel())
    result = agent("go")
    assert result.stop_reason == "cancelled"
    assert ran == []
    # Every toolUse still gets its toolResult, so the history stays valid for the next call.
    assert results_in(agent) == [
        {
            "toolUseId": "t1",
            "status": "error",
            "content": [{"text": "Tool call cancelled: the agent was cancelled."}],
        }
    ]
    assert model.remaining == 0


async def test_cancelling_the_task_running_a_tool_sets_the_signal_its_handlers_hold() -> None:
    started = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    signals: list[Any] = []
    agent = Agent(
        model=ScriptedModel([tool_turn("wait", {}, tool_use_id="t1"), text_turn("done")]),
        tools=[wait],
    )

    def note(context: ExecuteToolContext) -> ExecuteToolContext:
        signals.append(context.cancel_signal)
        return context

    agent.use(ExecuteToolStage.input(note))
    run = asyncio.ensure_future(agent.invoke_async("go"))
    await asyncio.wait_for(started.wait(), 5)
    assert not signals[0].is_set()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert signals[0].is_set()


def test_middleware_errors_in_a_tool_chain_become_error_results() -> None:
    def broken(context: ExecuteToolContext) -> ExecuteToolContext:
        raise KeyError("bad input handler")

    model = ScriptedModel([tool_turn("add", {"a": 1, "b": 1}, tool_use_id="t1"), text_turn("ok")])
    agent = Agent(model=model, tools=[add], middleware=[ExecuteToolStage.input(broken)])
    agent("go")
    assert results_in(agent)[0]["status"] == "error"


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        Agent(model=ScriptedModel([]), tools=[add, add])


def test_a_bad_prompt_is_a_clear_error() -> None:
    agent = Agent(model=ScriptedModel([]))
    with pytest.raises(TypeError, match="a prompt is a str, a list of content blocks, or None"):
        agent(42)  # type: ignore[arg-type]
    assert agent.messages == []


def test_interrupt_state_round_trips_through_json_between_agents() -> None:
    state = InterruptState()
    copy = InterruptState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert copy == state
    agent = Agent(model=ScriptedModel([text_turn("x")]), interrupt_state=copy)
    assert agent.interrupt_state is copy


def test_tool_results_keep_the_model_turn_order(tmp_path: Any) -> None:
    turn = tool_turn("add", {"a": 1, "b": 1}, tool_use_id="first")
    turn["content"].append(
        {"toolUse": {"toolUseId": "second", "name": "add", "input": {"a": 2, "b": 2}}}
    )
    agent = Agent(model=ScriptedModel([turn, text_turn("ok")]), tools=[add])
    agent("go")
    assert [r["toolUseId"] for r in results_in(agent)] == ["first", "second"]


def test_tool_result_event_output_handler_sees_each_call() -> None:
    seen: list[str] = []

    def audit(result: MiddlewareResult[ToolResultEvent]) -> MiddlewareResult[ToolResultEvent]:
        seen.append(result.value.tool_use_id)
        return result

    model = ScriptedModel([tool_turn("add", {"a": 1, "b": 1}, tool_use_id="t9"), text_turn("ok")])
    Agent(model=model, tools=[add], middleware=[ExecuteToolStage.output(audit)])("go")
    assert seen == ["t9"]


def roles(agent: Agent) -> list[str]:
    return [message["role"] for message in agent.messages]


def test_after_a_failed_model_call_the_next_prompt_joins_the_unanswered_turn() -> None:
    model = ScriptedModel([ConnectionError("down"), text_turn("back")])
    agent = Agent(model=model)
    with pytest.raises(ConnectionError):
        agent("first")
    assert roles(agent) == ["user"]
    assert str(agent("second")) == "back"
    assert roles(agent) == ["user", "assistant"]
    assert agent.messages[0]["content"] == [{"text": "first"}, {"text": "second"}]


def test_after_a_run_died_mid_tool_round_the_tool_uses_get_error_results() -> None:
    model = ScriptedModel([tool_turn("add", {"a": 1, "b": 1}, tool_use_id="t1"), text_turn("ok")])
    agent = Agent(model=model, tools=[add])

    def explode_hook(event: BeforeToolCallEvent) -> None:
        raise RuntimeError("hook failed")

    agent.add_hook(BeforeToolCallEvent, explode_hook)
    with pytest.raises(RuntimeError, match="hook failed"):
        agent("go")
    assert roles(agent) == ["user", "assistant"]
    agent.hooks = type(agent.hooks)()  # the faulty hook is gone
    assert str(agent("again")) == "ok"
    assert roles(agent) == ["user", "assistant", "user", "assistant"]
    repaired = agent.messages[2]["content"]
    assert repaired[0]["toolResult"]["toolUseId"] == "t1"  # type: ignore[typeddict-item]
    assert repaired[0]["toolResult"]["status"] == "error"  # type: ignore[typeddict-item]
    assert repaired[1] == {"text": "again"}


def test_after_a_cancelled_tool_round_the_next_prompt_keeps_roles_alternating() -> None:
    model = ScriptedModel([tool_turn("add", {"a": 1, "b": 1}, tool_use_id="t1"), text_turn("ok")])
    agent = Agent(model=model, tools=[add])
    cancel_once = [True]

    def cancel(event: AfterModelCallEvent) -> None:
        if cancel_once:
            cancel_once.clear()
            agent.cancel()

    agent.add_hook(AfterModelCallEvent, cancel)
    assert agent("go").stop_reason == "cancelled"
    assert str(agent("continue")) == "ok"
    assert roles(agent) == ["user", "assistant", "user", "assistant"]


def test_a_tool_handler_bug_is_logged_and_the_model_reads_the_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @ExecuteToolStage.wrap
    async def typo(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        _ = context.tool_use["inptu"]  # type: ignore[typeddict-item]
        async for event in next_fn(context):
            yield event

    model = ScriptedModel([tool_turn("add", {"a": 1, "b": 1}, tool_use_id="t1"), text_turn("ok")])
    agent = Agent(model=model, tools=[add], middleware=[typo])
    with caplog.at_level(logging.ERROR, logger="strands_middleware"):
        result = agent("go")
    assert result.stop_reason == "end_turn"
    assert results_in(agent)[0]["content"] == [{"text": "Error: 'inptu'"}]
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "typo (executeTool.Wrap)" in record.getMessage()
    assert record.exc_info is not None


def test_a_model_handler_bug_ends_the_run() -> None:
    @InvokeModelStage.wrap
    async def typo(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        _ = context.invocation_state["missing"]
        async for event in next_fn(context):
            yield event

    agent = Agent(model=ScriptedModel([text_turn("ok")]), middleware=[typo])
    with pytest.raises(KeyError, match="missing"):
        agent("go")


def test_one_middleware_may_be_passed_without_a_list() -> None:
    seen: list[str] = []

    @InvokeModelStage.input
    def note(context: InvokeModelContext) -> InvokeModelContext:
        seen.append("model call")
        return context

    agent = Agent(model=ScriptedModel([text_turn("ok")]), middleware=note)
    agent("hi")
    assert seen == ["model call"]


def test_middleware_that_is_not_middleware_is_refused_with_what_is_wanted() -> None:
    def bare(context: InvokeModelContext) -> InvokeModelContext:
        return context

    with pytest.raises(
        TypeError, match=r"Agent\(middleware=\.\.\.\) takes a Middleware, a catalog item"
    ):
        Agent(model=ScriptedModel([]), middleware=bare)  # type: ignore[arg-type]


def test_a_handler_mutating_the_tool_input_leaves_the_history_alone() -> None:
    def vandal(context: ExecuteToolContext) -> ExecuteToolContext:
        context.tool_use["input"]["a"] = 100
        return context

    model = ScriptedModel([tool_turn("add", {"a": 1, "b": 1}, tool_use_id="t1"), text_turn("ok")])
    agent = Agent(model=model, tools=[add], middleware=[ExecuteToolStage.input(vandal)])
    agent("go")
    assert agent.messages[1]["content"][0]["toolUse"]["input"] == {"a": 1, "b": 1}  # type: ignore[typeddict-item]
    # The edit reaches this call's tool, as the context it ran with says.
    assert results_in(agent)[0]["content"] == [{"text": "101"}]
