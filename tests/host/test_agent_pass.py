"""The AgentStreamStage runner: history in the terminal, stop-event selection, interrupts."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import MiddlewareNext, MiddlewareRegistry, TypedEvent
from strands_middleware.content import Message
from strands_middleware.events import EventLoopStopEvent
from strands_middleware.exceptions import ReplacedMessagesError
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.host import AgentPassPoint, InterruptState, run_agent_pass

USER: Message = {"role": "user", "content": [{"text": "hi"}]}
ANSWER: Message = {"role": "assistant", "content": [{"text": "hello"}]}
USAGE: Any = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}


def stop(reason: str = "end_turn") -> EventLoopStopEvent:
    return EventLoopStopEvent(reason, ANSWER, USAGE, {"latencyMs": 1})


class Host:
    def __init__(self) -> None:
        self.history: list[Message] = []
        self.announced: list[tuple[str, int]] = []
        self.state = InterruptState()
        self.registry = MiddlewareRegistry()
        self.terminal_ran = 0

    async def terminal(self, context: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
        self.terminal_ran += 1
        yield TypedEvent({"data": "working"})
        yield stop()

    def added(self, message: Message) -> None:
        self.announced.append((message["role"], len(self.history)))

    async def run(self, messages: list[Message] | None = None) -> list[TypedEvent]:
        stream = run_agent_pass(
            self.registry,
            agent="agent",
            messages=[USER] if messages is None else messages,
            history=self.history,
            invocation_state={},
            interrupt_state=self.state,
            terminal=self.terminal,
            on_message_added=self.added,
        )
        return [event async for event in stream]


async def test_input_lands_in_history_and_is_announced_inside_the_terminal() -> None:
    host = Host()
    seen: list[int] = []
    in_terminal: list[int] = []
    terminal = host.terminal

    async def look(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        seen.append(len(host.history))
        async for event in next_fn(context):
            yield event
        seen.append(len(host.history))
        assert context.messages[0] is host.history[-1]

    async def counting(context: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
        in_terminal.append(len(host.history))
        async for event in terminal(context):
            yield event

    host.terminal = counting  # type: ignore[method-assign]
    host.registry.add_middleware(AgentStreamStage, look)
    await host.run()
    assert seen == [0, 1]
    assert in_terminal == [1]
    assert host.announced == [("user", 1)]


async def test_a_short_circuit_appends_and_announces_nothing() -> None:
    host = Host()

    async def canned(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield stop("end_turn")

    host.registry.add_middleware(AgentStreamStage, canned)
    events = await host.run()
    assert host.terminal_ran == 0
    assert host.history == []
    assert host.announced == []
    assert isinstance(events[-1], EventLoopStopEvent)


async def test_a_gate_that_pauses_before_the_terminal_holds_the_input_for_the_resume() -> None:
    host = Host()
    inputs: list[list[Message]] = []

    async def gate(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        inputs.append(list(context.messages))
        context.interrupt("run-gate")
        async for event in next_fn(context):
            yield event

    host.registry.add_middleware(AgentStreamStage, gate)
    paused = await host.run()
    assert isinstance(paused[-1], EventLoopStopEvent) and paused[-1].stop_reason == "interrupt"
    assert host.history == [] and host.terminal_ran == 0
    (owed,) = host.state.owed
    host.state.resume([{"interruptResponse": {"interruptId": owed.id, "response": "go"}}])
    done = await host.run([])
    assert isinstance(done[-1], EventLoopStopEvent) and done[-1].stop_reason == "end_turn"
    assert inputs == [[USER], [USER]]
    assert host.history == [USER] and host.announced == [("user", 1)]
    assert not host.state.activated and "agent_stream_input" not in host.state.context


async def test_in_place_edits_reach_history() -> None:
    host = Host()

    def shout(context: AgentStreamContext) -> AgentStreamContext:
        context.messages[0]["content"] = [{"text": "HI"}]
        return context

    host.registry.add_middleware(AgentStreamStage.Input, shout)
    await host.run([{"role": "user", "content": [{"text": "hi"}]}])
    assert host.history[0]["content"] == [{"text": "HI"}]


OTHER: Message = {"role": "user", "content": [{"text": "other"}]}


async def test_a_replaced_messages_list_is_the_input_appended() -> None:
    host = Host()
    host.registry.add_middleware(
        AgentStreamStage.Input, lambda context: context.replace(messages=[OTHER])
    )
    await host.run()
    assert host.history == [OTHER] and host.announced == [("user", 1)]
    assert host.terminal_ran == 1


async def test_a_point_refuses_a_replaced_list_unless_its_host_takes_one() -> None:
    registry = MiddlewareRegistry()
    registry.add_middleware(AgentStreamStage.Input, lambda context: context.replace(messages=[]))
    reached: list[list[Message]] = []

    async def terminal(context: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
        reached.append(context.messages)
        yield stop()

    refusing = AgentPassPoint(registry, agent=None, messages=[USER], invocation_state={})
    with pytest.raises(ReplacedMessagesError, match=r"replaced context\.messages"):
        async with refusing.open(terminal) as stream:
            async for _event in stream:
                pass
    assert reached == []
    taking = AgentPassPoint(
        registry, agent=None, messages=[USER], invocation_state={}, replaceable_input=True
    )
    async with taking.open(terminal) as stream:
        events = [event async for event in stream]
    assert reached == [[]] and isinstance(events[-1], EventLoopStopEvent)


async def test_invocation_state_replacement_reaches_the_terminal() -> None:
    host = Host()
    received: list[dict[str, Any]] = []

    async def terminal(context: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
        received.append(context.invocation_state)
        yield stop()

    host.terminal = terminal  # type: ignore[method-assign]
    host.registry.add_middleware(
        AgentStreamStage.Input, lambda context: context.replace(invocation_state={"new": True})
    )
    await host.run()
    assert received == [{"new": True}]


async def test_the_last_stop_event_is_the_result_even_with_trailing_events() -> None:
    host = Host()

    async def trailing(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event
        yield TypedEvent({"after": True})

    host.registry.add_middleware(AgentStreamStage, trailing)
    events = await host.run()
    assert events[-1] == TypedEvent({"after": True})
    assert [e for e in events if isinstance(e, EventLoopStopEvent)] == [stop()]


async def test_a_dropped_stop_event_is_a_runtime_error() -> None:
    host = Host()

    async def drop(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if not isinstance(event, EventLoopStopEvent):
                yield event

    host.registry.add_middleware(AgentStreamStage, drop)
    with pytest.raises(
        RuntimeError, match="stage 'agentStream' ended without a EventLoopStopEvent"
    ):
        await host.run()


async def test_an_interrupt_becomes_an_interrupt_stop_and_activates_the_state() -> None:
    host = Host()

    async def gate(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        context.interrupt("approve-run", reason="costly")
        async for event in next_fn(context):
            yield event

    host.registry.add_middleware(AgentStreamStage, gate)
    events = await host.run()
    last = events[-1]
    assert isinstance(last, EventLoopStopEvent)
    assert last.stop_reason == "interrupt"
    assert [i.name for i in last.interrupts or []] == ["approve-run"]
    assert host.state.activated
    assert host.state.pending_tool_execution is None
    assert host.terminal_ran == 0


async def test_an_interrupt_after_the_stop_event_is_refused_and_clears_the_state() -> None:
    host = Host()

    async def late_gate(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event
        context.interrupt("too-late")

    host.registry.add_middleware(AgentStreamStage, late_gate)
    with pytest.raises(RuntimeError, match="raised interrupt 'too-late' after the pass produced"):
        await host.run()
    assert not host.state.activated
    assert dict(host.state.interrupts) == {}


async def test_a_resumed_pass_that_completes_deactivates_the_state() -> None:
    host = Host()
    answers: list[object] = []

    async def gate(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        answers.append(context.interrupt("approve-run").response)
        async for event in next_fn(context):
            yield event

    host.registry.add_middleware(AgentStreamStage, gate)
    first = await host.run()
    interrupt = first[-1].interrupts[0]  # type: ignore[attr-defined]
    host.state.resume([{"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}])
    second = await host.run([])
    assert answers == ["yes"]
    assert isinstance(second[-1], EventLoopStopEvent) and second[-1].stop_reason == "end_turn"
    assert not host.state.activated
    # The next cycle asks again: no standing approval.
    third = await host.run()
    assert third[-1].stop_reason == "interrupt"  # type: ignore[attr-defined]


async def test_an_awaited_announcement_runs_before_the_terminal_for_each_message() -> None:
    host = Host()
    log: list[str] = []
    second: Message = {"role": "user", "content": [{"text": "and more"}]}

    async def added(message: Message) -> None:
        log.append(f"announced {message['content'][0]['text']} at {len(host.history)}")

    async def terminal(context: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
        log.append(f"terminal at {len(host.history)}")
        yield stop()

    host.terminal = terminal  # type: ignore[method-assign]
    host.added = added  # type: ignore[method-assign, assignment]
    await host.run([USER, second])
    assert log == ["announced hi at 1", "announced and more at 2", "terminal at 2"]
    assert host.history == [USER, second]
