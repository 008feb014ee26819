"""The strands bridge itself: installation, translation at the boundary, and the import guard."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncGenerator
from typing import Any

import pytest
import strands
from strands.interrupt import Interrupt as HostInterrupt
from strands.middleware import ExecuteToolStage as HostExecuteToolStage
from strands.middleware import InvokeModelStage as HostInvokeModelStage
from strands.types import _events as host_events
from strands.types import events as host_public_events

from strands_middleware import (
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.bridges.strands import StrandsBridge
from strands_middleware.bridges.strands.testing import ScriptedStrandsModel
from strands_middleware.bridges.strands.translate import (
    HostEvent,
    HostInterrupts,
    inbound,
    outbound,
)
from strands_middleware.exceptions import ReplacedMessagesError
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import ScriptedModel, text_turn


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


def test_use_returns_the_bridge_for_chaining() -> None:
    bridge = StrandsBridge.of(strands_agent())
    assert bridge.use(InvokeModelStage.input(lambda context: context)) is bridge


class TestTranslation:
    def test_unchanged_host_results_go_back_as_the_same_object(self) -> None:
        host = host_public_events.ModelStopReason(
            "end_turn",
            text_turn("x"),
            {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
            {"latencyMs": 3},  # type: ignore[arg-type]
        )
        ours = inbound(host)
        assert type(ours).__mro__[1] is ModelStopReason
        assert ours["stop"] == host["stop"]
        assert outbound(ours) is host

    def test_a_handler_built_result_becomes_a_host_result(self) -> None:
        ours = ToolResultEvent(
            {"toolUseId": "t", "status": "success", "content": []}, exception=None
        )
        host = outbound(ours)
        assert isinstance(host, host_public_events.ToolResultEvent)
        assert host.tool_result == ours.tool_result

    def test_other_host_events_are_carried_and_returned_intact(self) -> None:
        host = host_events.ModelMessageEvent(text_turn("x"))  # type: ignore[arg-type]
        ours = inbound(host)
        assert isinstance(ours, HostEvent) and isinstance(ours, TypedEvent)
        assert dict(ours) == dict(host)
        assert outbound(ours) is host

    def test_an_injected_plain_event_becomes_a_host_typed_event(self) -> None:
        host = outbound(TypedEvent({"note": "hi"}))
        assert isinstance(host, host_public_events.TypedEvent)
        assert dict(host) == {"note": "hi"}

    def test_tool_interrupt_events_carry_this_librarys_interrupts(self) -> None:
        tool_use: Any = {"toolUseId": "t", "name": "n", "input": {}}
        host = host_events.ToolInterruptEvent(tool_use, [HostInterrupt(id="i", name="n")])
        ours = inbound(host)
        assert ours.is_interrupt  # type: ignore[attr-defined]
        assert isinstance(ours.interrupts[0], Interrupt)  # type: ignore[attr-defined]

    def test_interrupt_lookups_read_through_to_strands(self) -> None:
        source = {"i": HostInterrupt(id="i", name="n")}
        view = HostInterrupts(source)
        assert view["i"].response is None
        source["i"].response = "yes"
        assert view["i"] == Interrupt(id="i", name="n", response="yes")
        assert list(view) == ["i"] and len(view) == 1


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


def test_replacing_agent_stream_messages_is_refused_on_strands_too() -> None:
    def replace_messages(context: AgentStreamContext) -> AgentStreamContext:
        return context.replace(messages=[])

    agent = strands_agent(text_turn("ok"))
    StrandsBridge.of(agent).use(AgentStreamStage.input(replace_messages))
    with pytest.raises(ReplacedMessagesError):
        agent("hi")


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
