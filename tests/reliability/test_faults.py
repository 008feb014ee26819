"""After any fault, anywhere, the agent is coherent and its next invocation works.

Hypothesis draws a random middleware stack (pass-through Wraps on every stage, retries, an
approval gate, Input/Output transforms), a fault (a Wrap handler failing before ``next_fn``,
after its first event, after the result or inside ``aclose``; an Input or Output handler; the
model before its first chunk or mid-stream; the tool; any hook) and a consumer that drains the
run or cancels it after some events. After the faulty run and after the next, fault-free one:
every generator that opened closed exactly once, no task is left running, the history alternates
and answers every tool use, and the interrupt state round-trips through JSON. The next
invocation (a resume if the run paused) ends normally.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strands_middleware.host import InterruptState

from .harness import (
    HOOKS,
    STAGES,
    WRAP_POINTS,
    Fault,
    Injected,
    Layer,
    World,
    answers_for,
    assert_coherent,
    run,
    watch_collection,
)

layers = st.lists(
    st.builds(
        Layer,
        kind=st.sampled_from(["pass", "pass", "retry", "gate", "transform"]),
        stage=st.sampled_from(sorted(STAGES)),
    ),
    max_size=5,
)


def faults_for(stack: list[Layer]) -> st.SearchStrategy[Fault]:
    """Faults at points that exist in ``stack``, plus the model, the tool and every hook."""
    points: list[Fault] = [Fault("none"), Fault("tool", "tool", "raise")]
    points += [Fault("model", "model", where) for where in ("before_first_chunk", "mid_stream")]
    points += [Fault("hook", name, "raise") for name in sorted(HOOKS)]
    for layer in stack:
        if layer.kind == "pass":
            points += [Fault("wrap", layer.stage, where) for where in WRAP_POINTS]
        elif layer.kind == "transform":
            points += [Fault(kind, layer.stage, "raise") for kind in ("input", "output")]
    return st.tuples(st.sampled_from(points), st.integers(0, 2)).map(
        lambda pair: Fault(pair[0].kind, pair[0].stage, pair[0].where, pair[1])
    )


async def scenario(world: World, cancel_after: int | None) -> None:
    watch_collection(world)
    agent = world.build()
    result, error = await run(agent, "go", cancel_after)
    assert error is None or isinstance(error, (Injected, asyncio.CancelledError)), repr(error)
    assert_coherent(world, agent)

    # The state and history survive a trip through JSON into a fresh agent.
    saved = json.loads(
        json.dumps({"messages": agent.messages, "state": agent.interrupt_state.to_dict()})
    )
    world.armed = False
    agent = world.build(InterruptState.from_dict(saved["state"]), saved["messages"])

    for _ in range(4):
        prompt = answers_for(agent) if agent.interrupt_state.activated else "next"
        result, error = await run(agent, prompt, None)
        assert error is None, repr(error)
        assert_coherent(world, agent)
        assert result is not None
        if result.stop_reason != "interrupt":
            break
    assert result is not None and result.stop_reason == "end_turn"


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    stack_and_fault=layers.flatmap(lambda stack: st.tuples(st.just(stack), faults_for(stack))),
    cancel_after=st.one_of(st.none(), st.none(), st.integers(1, 25)),
    tool_turn_first=st.booleans(),
    parallel_tools=st.integers(1, 3),
)
def test_any_fault_leaves_the_agent_coherent_and_usable(
    stack_and_fault: tuple[list[Layer], Fault],
    cancel_after: int | None,
    tool_turn_first: bool,
    parallel_tools: int,
) -> None:
    stack, fault = stack_and_fault
    world = World(stack, fault, tool_turn_first=tool_turn_first, parallel_tools=parallel_tools)
    logging.getLogger("strands_middleware").disabled = True
    try:
        asyncio.run(scenario(world, cancel_after))
    finally:
        logging.getLogger("strands_middleware").disabled = False


FULL_STACK = [
    Layer("pass", "pass"),
    Layer("transform", "pass"),
    Layer("pass", "model"),
    Layer("retry", "model"),
    Layer("transform", "model"),
    Layer("pass", "tool"),
    Layer("transform", "tool"),
    Layer("pass", "tool"),
]
EVERY_FAULT = [
    *(
        Fault("wrap", stage, where, at)
        for stage in sorted(STAGES)
        for where in WRAP_POINTS
        for at in (0, 1)
    ),
    *(
        Fault(kind, stage, "raise", at)
        for kind in ("input", "output")
        for stage in sorted(STAGES)
        for at in (0, 1)
    ),
    *(
        Fault("model", "model", where, at)
        for where in ("before_first_chunk", "mid_stream")
        for at in (0, 1)
    ),
    Fault("tool", "tool", "raise"),
    *(Fault("hook", name, "raise", at) for name in sorted(HOOKS) for at in (0, 1, 2)),
]


@pytest.mark.parametrize("fault", EVERY_FAULT, ids=repr)
@pytest.mark.parametrize("cancel_after", [None, 3, 9])
def test_every_single_fault_point_on_a_full_stack(fault: Fault, cancel_after: int | None) -> None:
    world = World(list(FULL_STACK), fault, tool_turn_first=True, parallel_tools=2)
    logging.getLogger("strands_middleware").disabled = True
    try:
        asyncio.run(scenario(world, cancel_after))
    finally:
        logging.getLogger("strands_middleware").disabled = False
