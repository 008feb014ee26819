"""The same middleware, unchanged, on the reference agent and on a real ``strands.Agent``.

Every test here runs on both hosts. Where strands behaves differently by design, the test says
so in its name and its assertion.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareInterruptResult,
    MiddlewareNext,
    MiddlewareResult,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.events import EventLoopStopEvent
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.testing import text_turn, tool_turn

from .hosts import HOSTS, Builder


@pytest.fixture(params=sorted(HOSTS))
def host(request: pytest.FixtureRequest) -> Builder:
    return HOSTS[request.param]


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


deleted: list[str] = []


def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    deleted.append(path)
    return f"deleted {path}"


def test_input_transform_reaches_the_model_request(host: Builder) -> None:
    @InvokeModelStage.input
    def inject(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(system_prompt="Injected prompt")

    run = host([text_turn("ok")], [], [inject])
    run("hi")
    assert run.script.requests[0].system_prompt == "Injected prompt"


def test_output_transform_reaches_the_agent_result(host: Builder) -> None:
    @InvokeModelStage.output
    def shout(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        assert type(result.value).__module__.startswith("strands_middleware")
        stop_reason, _message, usage, metrics = result.value["stop"]
        loud: Any = {"role": "assistant", "content": [{"text": "LOUD"}]}
        return result.replace(value=ModelStopReason(stop_reason, loud, usage, metrics))

    run = host([text_turn("quiet")], [], [shout])
    assert run("hi").text == "LOUD"


def test_a_wrap_short_circuit_skips_the_model(host: Builder) -> None:
    @InvokeModelStage.wrap
    async def cached(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield ModelStopReason(
            "end_turn",
            text_turn("from cache"),
            {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
            {"latencyMs": 0},
        )

    run = host([], [], [cached])
    assert run("hi").text == "from cache"
    assert run.script.requests == []


def test_a_wrap_retry_around_a_failing_model_call_succeeds(host: Builder) -> None:
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

    run = host([ConnectionError("busy"), ConnectionError("busy"), text_turn("ok")], [], [retry])
    assert run("hi").text == "ok"
    assert len(run.script.requests) == 3


def test_a_tool_input_rewrite_reaches_the_tool(host: Builder) -> None:
    @ExecuteToolStage.input
    def bump(context: ExecuteToolContext) -> ExecuteToolContext:
        tool_use: Any = {**context.tool_use, "input": {**context.tool_use["input"], "a": 40}}
        return context.replace(tool_use=tool_use)

    run = host(
        [tool_turn("add", {"a": 1, "b": 2}, tool_use_id="t1"), text_turn("ok")], [add], [bump]
    )
    run("go")
    results = [b["toolResult"] for m in run.messages for b in m["content"] if "toolResult" in b]
    assert results[0]["content"] == [{"text": "42"}]


def test_an_unknown_tool_is_observed_with_tool_none(host: Builder) -> None:
    seen: list[object] = []

    @ExecuteToolStage.input
    def watch(context: ExecuteToolContext) -> ExecuteToolContext:
        seen.append(context.tool)
        return context

    run = host([tool_turn("missing", {}, tool_use_id="t1"), text_turn("sorry")], [add], [watch])
    run("go")
    assert seen == [None]
    results = [b["toolResult"] for m in run.messages for b in m["content"] if "toolResult" in b]
    assert results[0]["status"] == "error"


def test_handlers_see_this_librarys_types(host: Builder) -> None:
    kinds: list[str] = []

    @ExecuteToolStage.wrap
    async def check(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        assert isinstance(context, ExecuteToolContext)
        async for event in next_fn(context):
            assert isinstance(event, TypedEvent)
            if isinstance(event, ToolResultEvent):
                kinds.append("result")
            yield event

    @InvokeModelStage.wrap
    async def check_model(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        assert isinstance(context, InvokeModelContext)
        async for event in next_fn(context):
            assert isinstance(event, TypedEvent)
            if isinstance(event, ModelStopReason):
                kinds.append("stop")
            yield event

    run = host(
        [tool_turn("add", {"a": 1, "b": 2}, tool_use_id="t1"), text_turn("3")],
        [add],
        [check, check_model],
    )
    assert run("go").text == "3"
    assert kinds == ["stop", "result", "stop"]


@ExecuteToolStage.wrap
async def approval(
    context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    answer = context.interrupt("approve", reason={"input": context.tool_use["input"]})
    assert isinstance(answer, MiddlewareInterruptResult)
    if answer.response != "yes":
        yield ToolResultEvent(
            {
                "toolUseId": context.tool_use["toolUseId"],
                "status": "error",
                "content": [{"text": "denied"}],
            }
        )
        return
    async for event in next_fn(context):
        yield event


def test_an_approval_gate_pauses_with_the_spec_id_and_resumes(host: Builder) -> None:
    deleted.clear()
    run = host(
        [
            tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"),
            text_turn("gone"),
            tool_turn("delete_file", {"path": "/b"}, tool_use_id="t2"),
        ],
        [delete_file],
        [approval],
    )
    paused = run("clean")
    assert paused.stop_reason == "interrupt"
    [interrupt] = paused.interrupts
    assert (
        interrupt.id == f"v1:middleware_execute_tool:t1:{uuid.uuid5(uuid.NAMESPACE_OID, 'approve')}"
    )
    assert deleted == []
    done = run.answer(paused, "yes")
    assert (done.stop_reason, done.text) == ("end_turn", "gone")
    assert deleted == ["/a"]
    again = run("clean more")
    assert again.stop_reason == "interrupt"


def test_an_approval_gate_denial_reaches_the_model(host: Builder) -> None:
    deleted.clear()
    run = host(
        [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")],
        [delete_file],
        [approval],
    )
    run.answer(run("clean"), "no")
    assert deleted == []
    results = [b["toolResult"] for m in run.messages for b in m["content"] if "toolResult" in b]
    assert results[0]["content"] == [{"text": "denied"}]


def test_an_agent_stream_gate_asks_once_per_cycle(host: Builder) -> None:
    @AgentStreamStage.wrap
    async def gate(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        context.interrupt("run")
        async for event in next_fn(context):
            assert isinstance(event, TypedEvent)
            yield event

    run = host([text_turn("one"), text_turn("two")], [], [gate])
    paused = run("first")
    assert paused.stop_reason == "interrupt"
    assert paused.interrupts[0].id.startswith("v1:middleware_agent_stream:")
    assert run.answer(paused, "go").text == "one"
    assert run("second").stop_reason == "interrupt"


def test_agent_stream_result_is_this_librarys_stop_event(host: Builder) -> None:
    seen: list[str] = []

    @AgentStreamStage.output
    def record(
        result: MiddlewareResult[EventLoopStopEvent],
    ) -> MiddlewareResult[EventLoopStopEvent]:
        assert isinstance(result.value, EventLoopStopEvent)
        seen.append(str(result.value.stop_reason))
        return result

    run = host([text_turn("hi")], [], [record])
    assert run("hello").text == "hi"
    assert seen == ["end_turn"]
