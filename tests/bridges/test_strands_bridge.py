"""The strands bridge itself: installation, translation at the boundary, and the import guard."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import pytest
import strands
from strands.hooks import AfterToolCallEvent
from strands.interrupt import Interrupt as HostInterrupt
from strands.interrupt import InterruptException as HostInterruptException
from strands.interrupt import _InterruptState
from strands.middleware import ExecuteToolContext as HostExecuteToolContext
from strands.middleware import ExecuteToolStage as HostExecuteToolStage
from strands.middleware import InvokeModelContext as HostInvokeModelContext
from strands.middleware import InvokeModelStage as HostInvokeModelStage
from strands.middleware import MiddlewareInterruptResult as HostMiddlewareInterruptResult
from strands.types import _events as host_events
from strands.types import events as host_public_events
from strands.types.exceptions import EventLoopException

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
from strands_middleware.bridges.strands import StrandsBridge
from strands_middleware.bridges.strands import _seams as seams
from strands_middleware.bridges.strands._stream import events_in, events_out
from strands_middleware.bridges.strands._translate import (
    OUTBOUND,
    Crossing,
    HostEvent,
    inbound,
    outbound,
)
from strands_middleware.bridges.strands.testing import ScriptedStrandsModel
from strands_middleware.catalog import ToolApproval
from strands_middleware.events import EventLoopStopEvent, ModelStreamEvent, TextDeltaEvent
from strands_middleware.exceptions import (
    InterruptException,
    InterruptResumeError,
)
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn


def strands_agent(*turns: Any) -> strands.Agent:
    return strands.Agent(
        model=ScriptedStrandsModel(ScriptedModel(list(turns))), callback_handler=None
    )


def test_of_returns_one_bridge_per_agent() -> None:
    agent = strands_agent()
    assert StrandsBridge.of(agent) is StrandsBridge.of(agent)
    assert StrandsBridge.of(strands_agent()) is not StrandsBridge.of(agent)


def test_the_bridge_needs_a_strands_agent() -> None:
    with pytest.raises(TypeError, match=r"StrandsBridge needs a strands\.Agent"):
        StrandsBridge(object())


def bridge_layers(agent: Any, host_stage: Any) -> int:
    """How many of the bridge's layers strands holds for ``host_stage``."""
    tagged = agent._middleware_registry._handlers.get(host_stage, [])
    return sum(isinstance(getattr(t.handler, "__self__", None), StrandsBridge) for t in tagged)


def test_only_stages_with_handlers_are_installed_on_the_agent() -> None:
    agent = strands_agent()
    bridge = StrandsBridge.of(agent)
    bridge.add_middleware(InvokeModelStage.Input, lambda context: context)
    assert bridge_layers(agent, HostInvokeModelStage) == 1
    assert bridge_layers(agent, HostExecuteToolStage) == 0
    # Registering more on the same stage does not install a second layer.
    bridge.add_middleware(InvokeModelStage.Input, lambda context: context)
    assert bridge_layers(agent, HostInvokeModelStage) == 1


def passing(stage: Any) -> Any:
    """A pass-through Wrap handler on ``stage``."""

    async def wrap(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
        async for event in next_fn(context):
            yield event

    return stage.wrap(wrap)


def stream_of(agent: strands.Agent, host_stage: Any) -> Any:
    """What the agent's registry streams for a model call (the generator, unstarted)."""

    async def terminal(context: Any) -> AsyncGenerator[Any, None]:
        yield host_public_events.TypedEvent({"unused": True})

    context = HostInvokeModelContext(
        agent=agent,
        messages=[],
        system_prompt=None,
        tool_specs=[],
        tool_choice=None,
        invocation_state={},
        model=agent.model,
    )
    return agent._middleware_registry.invoke(host_stage, context, terminal)


def test_the_bridge_leaves_strands_registry_as_strands_made_it() -> None:
    agent = strands_agent()
    registry = agent._middleware_registry
    shipped = type(registry)
    StrandsBridge.of(agent).use(passing(InvokeModelStage))
    # Registered through the public add_middleware only: strands runs the stage its own way.
    assert agent._middleware_registry is registry
    assert type(registry) is shipped
    assert stream_of(agent, HostInvokeModelStage).ag_code.co_name == "invoke"


def test_a_stage_with_a_native_handler_too_runs_through_strands_composition() -> None:
    for native_first in (True, False):
        agent = strands_agent()
        if native_first:
            agent.add_middleware(HostInvokeModelStage, Native())
        StrandsBridge.of(agent).use(passing(InvokeModelStage))
        if not native_first:
            agent.add_middleware(HostInvokeModelStage, Native())
        stream = stream_of(agent, HostInvokeModelStage)
        assert stream.ag_code is not events_out.__code__, native_first
        assert stream.ag_code.co_name == "invoke", native_first


def test_a_patch_on_strands_registry_class_sees_every_stage() -> None:
    host_registry: Any = type(strands_agent()._middleware_registry)
    shipped = host_registry.invoke
    stages: list[str] = []

    def recording(self: Any, stage: Any, context: Any, terminal: Any) -> Any:
        stages.append(stage.name)
        return shipped(self, stage, context, terminal)

    agent = strands_agent(text_turn("hello"))
    StrandsBridge.of(agent).use(passing(InvokeModelStage))
    with mock.patch.object(host_registry, "invoke", recording):
        assert str(agent("hi")).strip() == "hello"
    assert "invokeModel" in stages


def test_a_registry_of_another_class_is_left_alone_and_the_bridge_still_runs() -> None:
    host_registry: Any = type(strands_agent()._middleware_registry)

    class OwnRegistry(host_registry):
        """A registry of the application's own class."""

    agent = strands_agent(text_turn("hello"))
    own = OwnRegistry()
    agent._middleware_registry = own
    seen: list[Any] = []

    @InvokeModelStage.wrap
    async def record(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            seen.append(event)
            yield event

    StrandsBridge.of(agent).use(record)
    assert type(agent._middleware_registry) is OwnRegistry
    assert str(agent("hi")).strip() == "hello"
    assert any(isinstance(event, ModelStopReason) for event in seen)


def test_a_short_circuit_run_by_the_bridge_itself_closes_strands_model_stream() -> None:
    closed: list[str] = []

    class Model(ScriptedStrandsModel):
        async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
            try:
                async for chunk in super().stream(*args, **kwargs):
                    yield chunk
            finally:
                closed.append("model stream")

    @InvokeModelStage.wrap
    async def first_chunk_only(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event
            break
        message: Any = {"role": "assistant", "content": [{"text": "cut short"}]}
        usage: Any = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        yield ModelStopReason("end_turn", message, usage, {"latencyMs": 0})

    agent = strands.Agent(model=Model([text_turn("a long answer")]), callback_handler=None)
    StrandsBridge.of(agent).use(first_chunk_only)
    result = agent("hi")
    assert str(result).strip() == "cut short"
    assert closed == ["model stream"]


def test_use_returns_the_bridge_for_chaining() -> None:
    bridge = StrandsBridge.of(strands_agent())
    assert bridge.use(InvokeModelStage.input(lambda context: context)) is bridge


def crossing() -> Crossing:
    return Crossing(None, {})


class TestTranslation:
    def test_unchanged_host_results_go_back_as_the_same_object(self) -> None:
        host = host_public_events.ModelStopReason(
            "end_turn",
            text_turn("x"),
            {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
            {"latencyMs": 3},  # type: ignore[arg-type]
        )
        state = crossing()
        ours = inbound(host, state)
        assert isinstance(ours, ModelStopReason)
        assert ours["stop"] == host["stop"]
        assert outbound(ours, state) is host

    def test_a_handler_built_result_becomes_a_host_result(self) -> None:
        ours = ToolResultEvent(
            {"toolUseId": "t", "status": "success", "content": []}, exception=None
        )
        host = outbound(ours, crossing())
        assert isinstance(host, host_public_events.ToolResultEvent)
        assert host.tool_result == ours.tool_result

    def test_events_without_a_counterpart_are_carried_and_returned_intact(self) -> None:
        host = host_events.StartEventLoopEvent()
        state = crossing()
        ours = inbound(host, state)
        assert isinstance(ours, HostEvent) and isinstance(ours, TypedEvent)
        assert dict(ours) == dict(host)
        assert outbound(ours, state) is host

    def test_a_host_event_changed_in_place_keeps_its_strands_class(self) -> None:
        host = host_events.ToolCancelEvent({"toolUseId": "t", "name": "n", "input": {}}, "no")
        ours = inbound(host, crossing())
        ours["note"] = 1
        back = outbound(ours, crossing())
        assert type(back) is host_events.ToolCancelEvent
        assert back is not host and back["note"] == 1 and "note" not in host

    def test_an_injected_plain_event_becomes_a_host_typed_event(self) -> None:
        host = outbound(TypedEvent({"note": "hi"}), crossing())
        assert isinstance(host, host_public_events.TypedEvent)
        assert dict(host) == {"note": "hi"}

    def test_tool_interrupt_events_carry_this_librarys_interrupts(self) -> None:
        tool_use: Any = {"toolUseId": "t", "name": "n", "input": {}}
        host = host_events.ToolInterruptEvent(tool_use, [HostInterrupt(id="i", name="n")])
        state = crossing()
        ours = inbound(host, state)
        assert ours.is_interrupt
        assert ours.interrupts == [Interrupt(id="i", name="n")]
        assert outbound(ours, state) is host

    def test_something_that_is_not_an_event_is_refused_naming_it(self) -> None:
        with pytest.raises(TypeError, match=r"cannot translate a int"):
            inbound(3, crossing())


def delta_events() -> list[Any]:
    """The two strands events of one streamed text delta: its raw chunk and its text."""
    return [
        seams.ModelStreamChunkEvent({"contentBlockDelta": {"delta": {"text": "hi"}}}),
        seams.TextStreamEvent(delta={"text": "hi"}, text="hi"),
    ]


def edit(event: Any, how: str) -> None:
    """Change a handler's delta event in place: add a key, or put a new value in its own key."""
    if how == "key added":
        event["note"] = 1
    elif how == "value replaced":
        key = "data" if isinstance(event, TextDeltaEvent) else "event"
        event[key] = "HI" if key == "data" else {"contentBlockDelta": {"delta": {"text": "HI"}}}


async def listed(stream: Any) -> list[Any]:
    return [event async for event in stream]


class TestStreamedDeltas:
    """The stream's own translation of the per-delta events agrees with the tables'."""

    async def test_events_in_gives_what_inbound_gives(self) -> None:
        hosts = delta_events()

        async def strands_stream() -> AsyncGenerator[Any, None]:
            for host in hosts:
                yield host

        streamed = await listed(events_in(strands_stream(), crossing()))
        tabled = [inbound(host, crossing()) for host in hosts]
        assert [type(e) for e in streamed] == [type(e) for e in tabled]
        assert streamed == tabled
        assert isinstance(streamed[0], ModelStreamEvent)
        assert isinstance(streamed[1], TextDeltaEvent) and streamed[1].text == "hi"

    @pytest.mark.parametrize("how", ["unchanged", "key added", "value replaced"])
    async def test_events_out_gives_what_outbound_gives(self, how: str) -> None:
        hosts = delta_events()
        state = crossing()
        ours = [inbound(host, state) for host in hosts]
        for event in ours:
            edit(event, how)

        async def chain() -> AsyncGenerator[Any, None]:
            for event in ours:
                yield event

        streamed = await listed(events_out(aclosing(chain()), OUTBOUND, state))
        tabled = [outbound(event, state) for event in ours]
        assert [type(e) for e in streamed] == [type(e) for e in tabled]
        assert streamed == tabled
        kept = how != "value replaced"  # strands' event has no place for an added key
        for host, back in zip(hosts, streamed, strict=True):
            assert (back is host) is kept
        if not kept:
            assert streamed[1]["data"] == "HI" and streamed[1]["delta"] == {"text": "HI"}


def test_a_handler_injected_event_reaches_the_strands_stream() -> None:
    @InvokeModelStage.wrap
    async def note(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield TypedEvent({"custom_note": "before the call"})
        async for event in next_fn(context):
            yield event

    agent = strands_agent(text_turn("ok"))
    StrandsBridge.of(agent).use(note)

    async def collect() -> list[Any]:
        return [event async for event in agent.stream_async("hi")]

    import asyncio

    events = asyncio.run(collect())
    assert any(event.get("custom_note") == "before the call" for event in events)


def test_a_replaced_agent_stream_messages_list_is_what_strands_appends() -> None:
    def replace_messages(context: AgentStreamContext) -> AgentStreamContext:
        kept = context.messages[0]
        kept["content"] = [*kept["content"], {"text": "(kept)"}]
        return context.replace(messages=[{"role": "user", "content": [{"text": "other"}]}, kept])

    agent = strands_agent(text_turn("ok"))
    StrandsBridge.of(agent).use(AgentStreamStage.input(replace_messages))
    agent("hi")
    texts = [[block.get("text") for block in message["content"]] for message in agent.messages]
    assert texts == [["other"], ["hi", "(kept)"], ["ok"]]


def test_model_stop_reason_in_handlers_is_this_librarys() -> None:
    seen: list[type] = []

    @InvokeModelStage.wrap
    async def look(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if isinstance(event, ModelStopReason):
                seen.append(type(event))
            assert not isinstance(event, host_public_events.ModelStopReason)
            yield event

    agent = strands_agent(text_turn("ok"))
    StrandsBridge.of(agent).use(look)
    agent("hi")
    assert len(seen) == 1 and issubclass(seen[0], ModelStopReason)


def test_importing_the_adapter_without_strands_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['strands'] = None; sys.modules['strands.middleware'] = None\n"
        "import strands_middleware.bridges.strands"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert completed.returncode != 0
    assert 'pip install "strands-middleware[strands]"' in completed.stderr
    assert "strands-agents 1.62.0 or newer" in completed.stderr


def test_the_rest_of_the_package_never_imports_strands() -> None:
    code = (
        "import sys; sys.modules['strands'] = None\n"
        "import strands_middleware, strands_middleware.agent, strands_middleware.catalog\n"
        "import strands_middleware.experimental, strands_middleware.testing\n"
        "print('ok')"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert completed.stdout.strip() == "ok"


# ---- results keep what they carry ----------------------------------------------------------

USAGE: Any = {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12}


def figures(result: Any) -> tuple[Any, ...]:
    """What strands' AgentResult reports of a run's cost."""
    metrics = result.metrics
    return (
        dict(metrics.accumulated_usage),
        metrics.accumulated_metrics["latencyMs"],
        metrics.cycle_count,
        dict(metrics.latest_agent_invocation.usage),
    )


def metered_agent() -> strands.Agent:
    script = ScriptedModel([text_turn("hi")], usage=USAGE, metrics={"latencyMs": 30})
    return strands.Agent(model=ScriptedStrandsModel(script), callback_handler=None)


def test_a_pass_output_rewriting_only_the_message_keeps_strands_metrics() -> None:
    def polite(
        result: MiddlewareResult[EventLoopStopEvent],
    ) -> MiddlewareResult[EventLoopStopEvent]:
        stop = result.value
        message: Any = {"role": "assistant", "content": [{"text": "Politely: hi"}]}
        return result.replace(
            value=EventLoopStopEvent(stop.stop_reason, message, stop.usage, stop.metrics)
        )

    plain = metered_agent()("hello")
    agent = metered_agent()
    StrandsBridge.of(agent).use(AgentStreamStage.output(polite))
    rewritten = agent("hello")
    assert str(rewritten).strip() == "Politely: hi"
    assert figures(plain) == (USAGE, 30, 1, USAGE)
    assert figures(rewritten) == figures(plain)


def test_a_wrap_handler_replacing_the_pass_stop_keeps_strands_metrics() -> None:
    @AgentStreamStage.wrap
    async def replace_stop(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if isinstance(event, EventLoopStopEvent):
                message: Any = {"role": "assistant", "content": [{"text": "replaced"}]}
                yield EventLoopStopEvent(event.stop_reason, message, event.usage, event.metrics)
            else:
                yield event

    agent = metered_agent()
    StrandsBridge.of(agent).use(replace_stop)
    result = agent("hello")
    assert str(result).strip() == "replaced"
    assert figures(result) == (USAGE, 30, 1, USAGE)


def test_a_handler_changing_the_pass_usage_is_what_agent_result_reports() -> None:
    cheaper: Any = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}

    def discount(
        result: MiddlewareResult[EventLoopStopEvent],
    ) -> MiddlewareResult[EventLoopStopEvent]:
        stop = result.value
        return result.replace(
            value=EventLoopStopEvent(stop.stop_reason, stop.message, cheaper, {"latencyMs": 3})
        )

    agent = metered_agent()
    StrandsBridge.of(agent).use(AgentStreamStage.output(discount))
    assert figures(agent("hello")) == (cheaper, 3, 1, cheaper)


# ---- what handlers leave unchanged reaches strands as strands' own -------------------------


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


class Native:
    """A strands-native Wrap handler that records the contexts and events it sees."""

    def __init__(self) -> None:
        self.contexts: list[Any] = []
        self.events: list[Any] = []

    async def __call__(self, context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
        self.contexts.append(context)
        async for event in next_fn(context):
            self.events.append(event)
            yield event


HOST_STAGES = (HostInvokeModelStage, HostExecuteToolStage, seams.AgentStreamStage)


def pass_through(stage: Any) -> list[Any]:
    """An Input, a Wrap and an Output handler on ``stage`` that change nothing."""
    return [stage.input(lambda context: context), passing(stage), stage.output(lambda r: r)]


def sandwiched(*middleware: Any) -> tuple[strands.Agent, dict[Any, Native], dict[Any, Native]]:
    """A strands agent with the bridge between strands-native handlers outside and inside it."""
    script = ScriptedModel(
        [tool_turn("add", {"a": 1, "b": 2}, tool_use_id="t1", text="Adding."), text_turn("3")]
    )
    agent = strands.Agent(
        model=ScriptedStrandsModel(script),
        tools=[strands.tool(add)],
        system_prompt="Be brief.",
        callback_handler=None,
    )
    outside = {stage: Native() for stage in HOST_STAGES}
    inside = {stage: Native() for stage in HOST_STAGES}
    for stage in HOST_STAGES:
        agent.add_middleware(stage, outside[stage])
    StrandsBridge.of(agent).use(*middleware)
    for stage in HOST_STAGES:
        agent.add_middleware(stage, inside[stage])
    return agent, outside, inside


def test_what_handlers_pass_through_reaches_strands_as_the_same_objects() -> None:
    agent, outside, inside = sandwiched(
        *pass_through(InvokeModelStage),
        *pass_through(ExecuteToolStage),
        *pass_through(AgentStreamStage),
    )
    agent("go")
    for stage in HOST_STAGES:
        assert outside[stage].events, stage
        assert len(outside[stage].events) == len(inside[stage].events)
        assert all(o is i for o, i in zip(outside[stage].events, inside[stage].events, strict=True))
    model_calls = zip(
        outside[HostInvokeModelStage].contexts, inside[HostInvokeModelStage].contexts, strict=True
    )
    for out, into in model_calls:
        assert into is out  # nothing changed: strands' own context, not a copy of it
        assert into.messages is out.messages
        assert into.system_prompt is out.system_prompt
        assert into.tool_specs is out.tool_specs
        assert into.model is out.model
    [out] = outside[HostExecuteToolStage].contexts
    [into] = inside[HostExecuteToolStage].contexts
    assert into is out
    assert into.tool is out.tool and into.tool_use is out.tool_use
    [out] = outside[seams.AgentStreamStage].contexts
    [into] = inside[seams.AgentStreamStage].contexts
    assert into is out


def test_a_changed_message_keeps_strands_keys_and_a_new_one_goes_as_given() -> None:
    @InvokeModelStage.input
    def rewrite(context: InvokeModelContext) -> InvokeModelContext:
        context.messages[0]["content"] = [{"text": "edited"}]
        extra: Any = {"role": "user", "content": [{"text": "extra"}]}
        return context.replace(messages=[*context.messages, extra])

    agent, outside, inside = sandwiched(rewrite)
    agent("go")
    sent = outside[HostInvokeModelStage].contexts[1].messages
    received = inside[HostInvokeModelStage].contexts[1].messages
    assert received[0] == {**sent[0], "content": [{"text": "edited"}]}
    assert "tracking_id" in received[0]
    assert all(r is s for r, s in zip(received[1:-1], sent[1:], strict=True))
    assert received[-1] == {"role": "user", "content": [{"text": "extra"}]}


def test_handlers_see_tool_specs_without_strands_only_keys() -> None:
    seen: list[Any] = []

    def annotate(context: Any) -> Any:  # as MCP tools carry annotations on strands
        specs = [{**spec, "annotations": {"readOnlyHint": True}} for spec in context.tool_specs]
        return context.replace(tool_specs=specs)

    @InvokeModelStage.input
    def record(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.tool_specs)
        return context

    agent, _outside, inside = sandwiched(record)
    # strands runs Input handlers before every Wrap handler, so this one is outside the bridge.
    agent.add_middleware(HostInvokeModelStage.Input, annotate)
    agent("go")
    assert [sorted(spec) for spec in seen[0]] == [["description", "inputSchema", "name"]]
    received = inside[HostInvokeModelStage].contexts[0].tool_specs
    assert received[0]["annotations"] == {"readOnlyHint": True}


def test_a_changed_text_delta_reaches_the_strands_stream() -> None:
    @InvokeModelStage.wrap
    async def shout(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield TextDeltaEvent(event.text.upper()) if isinstance(event, TextDeltaEvent) else event

    agent = strands_agent(text_turn("quiet words"))
    StrandsBridge.of(agent).use(shout)

    async def texts() -> list[str]:
        return [event["data"] async for event in agent.stream_async("hi") if "data" in event]

    import asyncio

    assert "".join(asyncio.run(texts())) == "QUIET WORDS"


def test_hooks_see_the_tool_result_a_handler_returned() -> None:
    seen: list[Any] = []
    refused = PermissionError("not today")

    @ExecuteToolStage.output
    def refuse(result: MiddlewareResult[ToolResultEvent]) -> MiddlewareResult[ToolResultEvent]:
        return result.replace(
            value=ToolResultEvent.error(result.value.tool_use_id, "refused", refused)
        )

    agent, _outside, _inside = sandwiched(refuse)
    agent.add_hook(lambda event: seen.append((event.result, event.exception)), AfterToolCallEvent)
    agent("go")
    assert seen == [
        ({"toolUseId": "t1", "status": "error", "content": [{"text": "refused"}]}, refused)
    ]


def test_a_model_result_a_handler_changes_is_what_strands_records() -> None:
    cheaper: Any = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}

    @InvokeModelStage.output
    def discount(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        stop_reason, message, _usage, metrics = result.value["stop"]
        return result.replace(value=ModelStopReason(stop_reason, message, cheaper, metrics))

    agent = metered_agent()
    StrandsBridge.of(agent).use(discount)
    result = agent("hello")
    assert agent.messages[-1]["metadata"]["usage"] == cheaper
    assert dict(result.metrics.accumulated_usage) == cheaper


def test_an_error_after_a_tool_round_reaches_the_caller_inside_strands_own_exception() -> None:
    """strands wraps what a later cycle raises in EventLoopException; not the bridge's to change."""
    refused = ConnectionError("model gone")

    @InvokeModelStage.input
    def second_call_fails(context: InvokeModelContext) -> InvokeModelContext:
        if len(context.messages) > 1:
            raise refused
        return context

    agent, _outside, _inside = sandwiched(second_call_fails)
    with pytest.raises(EventLoopException) as raised:
        agent("go")
    assert raised.value.original_exception is refused
    assert raised.value.__cause__ is refused


# ---- interrupts go through strands' own interrupt() ----------------------------------------


@dataclass
class TaskContext(HostExecuteToolContext):
    """A strands tool context answering interrupt() its own way, as background tool calls do."""

    answers: dict[str, Any] = field(default_factory=dict[str, Any])
    asked: list[Any] = field(default_factory=list[Any])

    def interrupt(self, name: str, *, reason: Any = None, response: Any = None) -> Any:
        self.asked.append((name, reason, self.tool_use["toolUseId"]))
        if name in self.answers:
            return HostMiddlewareInterruptResult(response=self.answers[name])
        raise HostInterruptException(HostInterrupt(id=f"task:{name}", name=name, reason=reason))


def task_context(**answers: Any) -> TaskContext:
    agent = strands_agent()
    return TaskContext(
        agent=agent,
        tool=None,
        tool_use={"toolUseId": "t1", "name": "delete_file", "input": {}},
        invocation_state={},
        cancel_signal=threading.Event(),
        _interrupt_state=_InterruptState(),
        answers=answers,
    )


@ExecuteToolStage.wrap
async def gate(
    context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    answer = context.interrupt("approve", reason="sure?")
    assert isinstance(answer, MiddlewareInterruptResult)
    yield ToolResultEvent.error(context.tool_use["toolUseId"], f"answered {answer.response}")


async def run_tool_layer(host_context: Any) -> list[Any]:
    bridge = StrandsBridge.of(host_context.agent).use(gate)

    async def host_next(context: Any) -> AsyncGenerator[Any, None]:
        raise AssertionError("the gate answers without running the tool")
        yield

    return [event async for event in bridge._tool_layer(host_context, host_next)]


async def test_interrupt_is_answered_by_the_strands_contexts_own_interrupt() -> None:
    host_context = task_context(approve="yes")
    [result] = await run_tool_layer(host_context)
    assert host_context.asked == [("approve", "sure?", "t1")]
    assert result.tool_result["content"] == [{"text": "answered yes"}]


async def test_an_unanswered_interrupt_reaches_strands_as_its_own_exception() -> None:
    seen: list[Any] = []

    @ExecuteToolStage.wrap
    async def watch(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            async for event in next_fn(context):
                yield event
        except InterruptException as error:
            seen.append(error.interrupt)
            raise

    host_context = task_context()
    StrandsBridge.of(host_context.agent).use(watch)
    with pytest.raises(HostInterruptException) as raised:
        await run_tool_layer(host_context)
    assert seen == [Interrupt(id="task:approve", name="approve", reason="sure?")]
    assert (raised.value.interrupt.id, raised.value.interrupt.reason) == ("task:approve", "sure?")


# ---- an answer the gate does not accept is refused before strands reads it ---------------------


def test_a_wrong_approval_answer_is_refused_and_the_strands_agent_stays_paused() -> None:
    removed: list[str] = []

    @strands.tool
    def remove(path: str) -> str:
        """Remove a file.

        Args:
            path: The file.
        """
        removed.append(path)
        return f"removed {path}"

    agent = strands.Agent(
        model=ScriptedStrandsModel(
            [tool_turn("remove", {"path": "/a"}, tool_use_id="t1"), text_turn("done")]
        ),
        tools=[remove],
        callback_handler=None,
    )
    StrandsBridge.of(agent).use(ToolApproval())
    paused = agent("clean up")
    [interrupt] = paused.interrupts
    state_before = agent._interrupt_state.to_dict()  # pyright: ignore[reportPrivateUsage]
    messages_before = [dict(message) for message in agent.messages]

    def answer(response: Any) -> list[Any]:
        return [{"interruptResponse": {"interruptId": interrupt.id, "response": response}}]

    with pytest.raises(InterruptResumeError, match="ToolApproval 'approve-tool-call': the answer"):
        agent(answer("yes"))
    with pytest.raises(InterruptResumeError, match="nothing was resumed"):
        asyncio.run(agent.invoke_async(answer({"approved": True})))
    assert agent._interrupt_state.to_dict() == state_before  # pyright: ignore[reportPrivateUsage]
    assert agent.messages == messages_before
    assert removed == []

    assert str(agent(answer("approve"))).strip() == "done"
    assert removed == ["/a"]
