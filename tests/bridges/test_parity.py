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
from strands_middleware.bridges.strands import HostEvent
from strands_middleware.catalog import Cache
from strands_middleware.events import EventLoopStopEvent, TextDeltaEvent
from strands_middleware.exceptions import UnsupportedStageError
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

from .hosts import HOSTS, KNOWN_DIFFERENCES, REFUSES_AGENT_STREAM, Builder


@pytest.fixture(params=sorted(HOSTS))
def host(request: pytest.FixtureRequest) -> Builder:
    reason = KNOWN_DIFFERENCES.get((request.param, request.function.__name__))
    if reason is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    return HOSTS[request.param]


@pytest.fixture(params=sorted(set(HOSTS) - REFUSES_AGENT_STREAM))
def agent_stream_host(request: pytest.FixtureRequest) -> Builder:
    """A host with a hook around each agent pass, where AgentStreamStage handlers run."""
    return HOSTS[request.param]


if REFUSES_AGENT_STREAM:  # such hosts need Python 3.11 (none is installed on 3.10)

    @pytest.mark.parametrize("name", sorted(REFUSES_AGENT_STREAM))
    def test_a_host_without_a_pass_hook_refuses_agent_stream_middleware(name: str) -> None:
        @AgentStreamStage.input
        def note(context: AgentStreamContext) -> AgentStreamContext:
            return context

        with pytest.raises(UnsupportedStageError, match=r"AgentStreamStage .*not"):
            HOSTS[name]([text_turn("hi")], [], [note])


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


def test_an_agent_stream_gate_asks_once_per_cycle(agent_stream_host: Builder) -> None:
    host = agent_stream_host

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


def test_agent_stream_result_is_this_librarys_stop_event(agent_stream_host: Builder) -> None:
    host = agent_stream_host
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


# ---- handlers see Converse, not the host ---------------------------------------------------


def test_a_cache_shared_by_two_agents_answers_the_second(host: Builder) -> None:
    script = ScriptedModel([text_turn("Paris.")])
    cache = Cache()
    for _ in range(2):
        run = host(script, [], [cache], system_prompt="Be brief.")
        assert run("Capital of France?").text == "Paris."
    assert len(script.requests) == 1
    assert (cache.hits, cache.misses) == (1, 1)


def test_model_call_messages_hold_only_role_and_content(host: Builder) -> None:
    seen: list[list[Any]] = []

    @InvokeModelStage.input
    def record(context: InvokeModelContext) -> InvokeModelContext:
        seen.append([sorted(message) for message in context.messages])
        return context

    run = host([text_turn("one"), text_turn("two")], [], [record])
    run("first")
    run("second")
    assert seen == [[["content", "role"]], [["content", "role"]] * 3]


# ---- results keep what they carry ----------------------------------------------------------


@AgentStreamStage.output
def polite(result: MiddlewareResult[EventLoopStopEvent]) -> MiddlewareResult[EventLoopStopEvent]:
    """Rewrites only the message of the pass's result, passing everything else through."""
    stop = result.value
    message: Any = {"role": "assistant", "content": [{"text": "Politely: hi"}]}
    return result.replace(
        value=EventLoopStopEvent(
            stop.stop_reason, message, stop.usage, stop.metrics, interrupts=stop.interrupts
        )
    )


def test_an_output_handler_rewriting_the_pass_message_keeps_its_usage(
    agent_stream_host: Builder,
) -> None:
    host = agent_stream_host
    usage: Any = {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12}
    run = host(ScriptedModel([text_turn("hi")], usage=usage), [], [polite])
    outcome = run("hello")
    assert outcome.text == "Politely: hi"
    assert outcome.usage == usage


# ---- the same events on every host ---------------------------------------------------------


def _event_kinds(events: list[TypedEvent]) -> list[str]:
    """The public class of each event: one of this library's events, or strands' `HostEvent`."""
    public = ("strands_middleware.events", HostEvent.__module__)
    return [
        next(c.__name__ for c in type(e).__mro__ if c.__module__ in public and c.__name__[0] != "_")
        for e in events
    ]


def recorder(stage: Any, into: list[TypedEvent]) -> Any:
    """A pass-through Wrap handler on ``stage`` that records every event it sees."""

    async def record(context: Any, next_fn: Any) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            into.append(event)
            yield event

    return stage.wrap(record)


def test_a_model_wrap_handler_sees_the_same_events_on_both_hosts() -> None:
    seen: dict[str, list[TypedEvent]] = {}
    turns = [
        tool_turn("add", {"a": 1, "b": 2}, tool_use_id="t1", text="Adding."),
        text_turn("It is 3."),
    ]
    for name, build in HOSTS.items():
        seen[name] = []
        build(turns, [add], [recorder(InvokeModelStage, seen[name])])("go")
    assert _event_kinds(seen["strands"]) == _event_kinds(seen["reference"])
    deltas = [e.text for e in seen["strands"] if isinstance(e, TextDeltaEvent)]
    assert "".join(deltas) == "Adding.It is 3."
    assert [measured(e) for e in seen["strands"]] == [measured(e) for e in seen["reference"]]


def measured(event: TypedEvent) -> Any:
    """The event without the one timing-dependent figure: strands adds ``timeToFirstByteMs`` to
    a call's metrics when its clock measures one."""
    if isinstance(event, ModelStopReason):
        latency = {k: v for k, v in event.metrics.items() if k != "timeToFirstByteMs"}
        return (event.stop_reason, event.message, event.usage, latency)
    return dict(event)


def test_an_agent_stream_wrap_handler_sees_the_same_events_on_both_hosts() -> None:
    """strands' lifecycle events (no counterpart here) are the only extra, as `HostEvent`s."""
    seen: dict[str, list[TypedEvent]] = {}
    turns = [tool_turn("add", {"a": 1, "b": 2}, tool_use_id="t1"), text_turn("It is 3.")]
    for name, build in HOSTS.items():
        if name in REFUSES_AGENT_STREAM:
            continue  # refused at registration: test_a_host_without_a_pass_hook_refuses...
        seen[name] = []
        build(turns, [add], [recorder(AgentStreamStage, seen[name])])("go")
    ours = {
        name: [e for e in events if not isinstance(e, HostEvent)] for name, events in seen.items()
    }
    assert _event_kinds(ours["strands"]) == _event_kinds(ours["reference"])
    assert not any(isinstance(e, HostEvent) for e in seen["reference"])


def test_a_tool_wrap_handler_sees_the_same_events_on_both_hosts() -> None:
    seen: dict[str, list[TypedEvent]] = {}
    turns = [tool_turn("add", {"a": 1, "b": 2}, tool_use_id="t1"), text_turn("3")]
    for name, build in HOSTS.items():
        seen[name] = []
        build(turns, [add], [recorder(ExecuteToolStage, seen[name])])("go")
    assert _event_kinds(seen["strands"]) == _event_kinds(seen["reference"]) == ["ToolResultEvent"]
    assert seen["strands"] == seen["reference"]


def test_a_one_block_system_prompt_reaches_handlers_as_its_text(host: Builder) -> None:
    seen: list[object] = []

    @InvokeModelStage.input
    def record(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.system_prompt)
        return context

    run = host([text_turn("ok")], [], [record], system_prompt="Be brief.")
    run("hi")
    assert seen == ["Be brief."]
    assert run.script.requests[0].system_prompt == "Be brief."
    assert run.script.requests[0].system_prompt_content == [{"text": "Be brief."}]


def test_a_message_a_handler_edits_in_place_reaches_the_model(host: Builder) -> None:
    @InvokeModelStage.input
    def shout(context: InvokeModelContext) -> InvokeModelContext:
        context.messages[-1]["content"] = [{"text": "HI"}]
        return context

    run = host([text_turn("ok")], [], [shout])
    run("hi")
    assert run.script.requests[0].messages == [{"role": "user", "content": [{"text": "HI"}]}]


def test_messages_a_handler_adds_or_removes_in_place_reach_the_model(host: Builder) -> None:
    @InvokeModelStage.input
    def remind(context: InvokeModelContext) -> InvokeModelContext:
        context.messages.append({"role": "assistant", "content": [{"text": "noted"}]})
        context.messages.append({"role": "user", "content": [{"text": "be brief"}]})
        return context

    @InvokeModelStage.input
    def drop_first(context: InvokeModelContext) -> InvokeModelContext:
        del context.messages[0]
        return context

    run = host([text_turn("ok")], [], [remind])
    run("hi")
    assert [m["content"][0].get("text") for m in run.script.requests[0].messages] == [
        "hi",
        "noted",
        "be brief",
    ]
    second = host([text_turn("ok"), text_turn("ok")], [], [drop_first])
    second("one")
    second("two")
    assert [m["content"][0].get("text") for m in second.script.requests[1].messages] == [
        "ok",
        "two",
    ]
    assert len(second.messages) == 4  # the history keeps every turn


def test_a_handler_can_switch_the_call_to_a_model_of_this_library(host: Builder) -> None:
    backup = ScriptedModel([text_turn("from the backup")])

    @InvokeModelStage.input
    def switch(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(model=backup)

    run = host([], [], [switch])
    assert run("hi").text == "from the backup"
    assert len(backup.requests) == 1


def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: First factor.
        b: Second factor.
    """
    return a * b


def tool_results(run: Any) -> list[Any]:
    return [b["toolResult"] for m in run.messages for b in m["content"] if "toolResult" in b]


def test_a_handler_can_switch_the_call_to_a_tool_of_this_library(host: Builder) -> None:
    @ExecuteToolStage.input
    def switch(context: ExecuteToolContext) -> ExecuteToolContext:
        return context.replace(tool=tool(multiply))

    run = host(
        [tool_turn("add", {"a": 2, "b": 3}, tool_use_id="t1"), text_turn("ok")], [add], [switch]
    )
    run("go")
    assert tool_results(run)[0]["content"] == [{"text": "6"}]


def test_context_tool_has_this_librarys_tool_shape(host: Builder) -> None:
    """A handler can read the tool's name and Converse spec and run it itself."""
    specs: list[Any] = []

    @ExecuteToolStage.wrap
    async def run_it_myself(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        assert context.tool is not None
        specs.append((context.tool.tool_name, sorted(context.tool.tool_spec)))
        async for event in context.tool.stream(context.tool_use, context.invocation_state):
            assert isinstance(event, TypedEvent)
            yield event

    run = host(
        [tool_turn("add", {"a": 2, "b": 3}, tool_use_id="t1"), text_turn("ok")],
        [add],
        [run_it_myself],
    )
    run("go")
    assert specs == [("add", ["description", "inputSchema", "name"])]
    assert tool_results(run)[0]["content"] == [{"text": "5"}]
