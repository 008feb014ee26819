"""Fault injection on the reference agent: a world whose every part can be told to fail.

A `World` builds an agent whose model, tool, hooks and middleware (on all three stages) are
instrumented: each records when its generator opens and closes, and each can be told, by a
`Fault`, to raise at a chosen point. `run` drives one invocation with a consumer that drains it
or cancels it after some events. The checks in `assert_coherent` are what must hold after any
fault: every generator closed exactly once, no task left running, a history the model can read,
and interrupt state that survives JSON.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import sys
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareResult,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    Agent,
    AgentResult,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    MessageAddedEvent,
)
from strands_middleware.catalog import Retry
from strands_middleware.content import Message, ToolSpec, ToolUse
from strands_middleware.experimental import AgentStreamStage
from strands_middleware.host import InterruptState
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

STAGES = {"model": InvokeModelStage, "tool": ExecuteToolStage, "pass": AgentStreamStage}
WRAP_POINTS = ("before_next", "after_first_event", "after_result", "in_close")
HOOKS = {
    "before_model": BeforeModelCallEvent,
    "after_model": AfterModelCallEvent,
    "before_tool": BeforeToolCallEvent,
    "after_tool": AfterToolCallEvent,
    "message_added": MessageAddedEvent,
}


class Injected(Exception):
    """The failure a fault raises."""


@dataclass(frozen=True)
class Fault:
    """Where to fail: ``kind`` names the part, ``where`` the point, ``at`` which occurrence."""

    kind: str  # "wrap", "input", "output", "model", "tool", "hook", "none"
    stage: str = "model"
    where: str = "before_next"
    at: int = 0


@dataclass(frozen=True)
class Layer:
    """One middleware of the random stack."""

    kind: str  # "pass", "retry", "gate", "transform"
    stage: str


@dataclass
class World:
    layers: list[Layer]
    fault: Fault
    tool_turn_first: bool = True
    parallel_tools: int = 1
    opened: list[str] = field(default_factory=list[str])
    closed: list[str] = field(default_factory=list[str])
    armed: bool = True
    collected: list[str] = field(default_factory=list[str])
    counters: dict[str, int] = field(default_factory=dict[str, int])
    calls: int = 0

    # -- bookkeeping ------------------------------------------------------------------------

    def open(self, name: str) -> str:
        ident = f"{name}#{len(self.opened)}"
        self.opened.append(ident)
        return ident

    def close(self, ident: str) -> None:
        self.closed.append(ident)

    def fires(self, kind: str, stage: str, where: str) -> bool:
        """Whether the fault triggers here (each matching point counts one occurrence)."""
        fault = self.fault
        if not self.armed or fault.kind != kind or fault.stage != stage or fault.where != where:
            return False
        key = f"{kind}:{stage}:{where}"
        seen = self.counters.get(key, 0)
        self.counters[key] = seen + 1
        return seen == fault.at

    # -- parts ------------------------------------------------------------------------------

    def wrap(self, stage: str, position: int) -> Any:
        async def handler(
            context: Any, next_fn: MiddlewareNext[Any, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            ident = self.open(f"wrap-{stage}-{position}")
            try:
                if self.fires("wrap", stage, "before_next"):
                    raise Injected(f"wrap {stage} before next_fn")
                first = True
                async for event in next_fn(context):
                    yield event
                    if first and self.fires("wrap", stage, "after_first_event"):
                        raise Injected(f"wrap {stage} after the first event")
                    first = False
                if self.fires("wrap", stage, "after_result"):
                    raise Injected(f"wrap {stage} after the result")
            finally:
                self.close(ident)
                if isinstance(sys.exc_info()[1], GeneratorExit) and self.fires(
                    "wrap", stage, "in_close"
                ):
                    raise Injected(f"wrap {stage} inside aclose")

        handler.__qualname__ = f"wrap_{stage}_{position}"
        return STAGES[stage].wrap(handler)

    def transform(self, stage: str) -> list[Any]:
        def on_input(context: Any) -> Any:
            if self.fires("input", stage, "raise"):
                raise Injected(f"input {stage}")
            return context

        def on_output(result: MiddlewareResult[Any]) -> MiddlewareResult[Any]:
            if self.fires("output", stage, "raise"):
                raise Injected(f"output {stage}")
            return result

        return [STAGES[stage].input(on_input), STAGES[stage].output(on_output)]

    def gate(self) -> Any:
        @ExecuteToolStage.wrap
        async def gate(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            answer = context.interrupt("approve")
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

        return gate

    def middleware(self) -> list[Any]:
        stack: list[Any] = []
        for position, layer in enumerate(self.layers):
            if layer.kind == "pass":
                stack.append(self.wrap(layer.stage, position))
            elif layer.kind == "retry" and layer.stage in ("model", "tool"):
                stage: Any = STAGES[layer.stage]
                stack.append(Retry(stage, attempts=2, backoff=0, jitter=0, on=(Injected,)))
            elif layer.kind == "gate":
                stack.append(self.gate())
            else:
                stack.extend(self.transform(layer.stage))
        return stack

    def build(
        self, state: InterruptState | None = None, messages: list[Message] | None = None
    ) -> Agent:
        agent = Agent(
            model=FaultyModel(self),
            tools=[FaultyTool(self)],
            middleware=self.middleware(),
            interrupt_state=state,
            messages=messages,
        )
        for name, event_type in HOOKS.items():
            agent.add_hook(event_type, self._hook(name))
        return agent

    def _hook(self, name: str) -> Any:
        def hook(event: Any) -> None:
            if self.fires("hook", name, "raise"):
                raise Injected(f"hook {name}")

        return hook


class FaultyModel:
    """Answers with a tool turn first (when the world says so), then text; can fail mid-stream."""

    def __init__(self, world: World) -> None:
        self.world = world

    async def stream(
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        *,
        tool_choice: Any = None,
        system_prompt_content: Any = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        world = self.world
        ident = world.open("model")
        try:
            if world.fires("model", "model", "before_first_chunk"):
                raise Injected("model before its first chunk")
            world.calls += 1
            last = messages[-1] if messages else None
            answering_tools = last is not None and any("toolResult" in b for b in last["content"])
            if world.tool_turn_first and not answering_tools:
                turn = tool_turn("probe", {"n": world.calls}, tool_use_id=f"t{world.calls}-0")
                for extra in range(1, world.parallel_tools):
                    turn["content"].append(
                        {
                            "toolUse": {
                                "toolUseId": f"t{world.calls}-{extra}",
                                "name": "probe",
                                "input": {"n": extra},
                            }
                        }
                    )
            else:
                turn = text_turn(f"answer {world.calls}")
            count = 0
            chunks = ScriptedModel([turn]).stream(messages, tool_specs, system_prompt)
            async with aclosing(chunks):
                async for chunk in chunks:
                    yield chunk
                    count += 1
                    if count == 2 and world.fires("model", "model", "mid_stream"):
                        raise Injected("model mid-stream")
        finally:
            world.close(ident)


class FaultyTool:
    """A tool with the Strands shape that records its stream and can fail inside it."""

    def __init__(self, world: World) -> None:
        self.world = world

    @property
    def tool_name(self) -> str:
        return "probe"

    @property
    def tool_spec(self) -> ToolSpec:
        return {
            "name": "probe",
            "description": "probe",
            "inputSchema": {"json": {"type": "object"}},
        }

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        ident = self.world.open("tool")
        try:
            await asyncio.sleep(0)
            if self.world.fires("tool", "tool", "raise"):
                raise Injected("tool")
            yield ToolResultEvent(
                {
                    "toolUseId": tool_use["toolUseId"],
                    "status": "success",
                    "content": [{"text": "ok"}],
                }
            )
        finally:
            self.world.close(ident)


async def run(
    agent: Agent, prompt: Any, cancel_after: int | None
) -> tuple[AgentResult | None, BaseException | None]:
    """One invocation, drained or cancelled after ``cancel_after`` events."""
    result: list[AgentResult] = []

    async def consume() -> None:
        seen = 0
        stream = agent.stream_async(prompt)
        try:
            async for event in stream:
                seen += 1
                if cancel_after is not None and seen >= cancel_after:
                    task = asyncio.current_task()
                    assert task is not None
                    task.cancel()
                if "stop" in event and len(event["stop"]) == 5:
                    result.append(_as_result(event))
        finally:
            await stream.aclose()

    task = asyncio.ensure_future(consume())
    try:
        await task
    except BaseException as error:  # the run's own failure is what we inspect
        return None, error
    return (result[-1] if result else None), None


def _as_result(event: Any) -> AgentResult:
    stop_reason, message, usage, metrics, interrupts = event["stop"]
    return AgentResult(stop_reason, message, list(interrupts or []), usage, metrics)


def watch_collection(world: World) -> None:
    """Record every async generator that is left for the garbage collector to close.

    asyncio closes an abandoned async generator when it is collected, in a task of its own, at
    a time nobody chose. Anything that ends up there was not closed explicitly, which is exactly
    what the cleanup contract forbids, so it is recorded as a failure.
    """
    hooks = sys.get_asyncgen_hooks()

    def finalizer(generator: Any) -> None:
        world.collected.append(getattr(generator, "__qualname__", repr(generator)))
        if hooks.finalizer is not None:
            hooks.finalizer(generator)

    sys.set_asyncgen_hooks(firstiter=hooks.firstiter, finalizer=finalizer)


def assert_coherent(world: World, agent: Agent) -> None:
    """What must hold after any run, however it ended."""
    gc.collect()
    assert world.collected == [], f"left to the garbage collector: {world.collected}"
    assert sorted(world.opened) == sorted(world.closed), "every generator closed exactly once"
    assert len(world.closed) == len(set(world.closed))
    current = asyncio.current_task()
    leftovers = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    assert leftovers == [], f"tasks left running: {leftovers}"
    assert_history(agent)
    state = agent.interrupt_state
    assert InterruptState.from_dict(json.loads(json.dumps(state.to_dict()))) == state


def assert_history(agent: Agent) -> None:
    """Roles alternate, and every tool use is answered unless the run is paused on it."""
    messages = agent.messages
    for before, after in itertools.pairwise(messages):
        assert before["role"] != after["role"], f"two {before['role']} turns in a row"
    for index, message in enumerate(messages):
        uses = {b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b}
        if not uses:
            continue
        if index == len(messages) - 1:
            continue  # a paused or interrupted round; the next invocation completes it
        results = {
            b["toolResult"]["toolUseId"]
            for b in messages[index + 1]["content"]
            if "toolResult" in b
        }
        assert uses <= results, f"tool uses without results: {uses - results}"


def answers_for(agent: Agent) -> list[dict[str, Any]]:
    return [
        {"interruptResponse": {"interruptId": i.id, "response": "yes"}}
        for i in agent.interrupt_state.owed
    ]
