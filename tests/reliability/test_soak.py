"""A bounded soak: thousands of invocations with mixed middleware, faults and interrupts.

After a warm-up, traced memory and the number of live async generators must stay flat: a chain
that leaked a generator, a task or a reference per call would show up here long before it
showed up in production. ``STRANDS_MIDDLEWARE_SOAK=<invocations>`` runs a longer soak; the
README records the last figures.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import random
import tracemalloc
from types import AsyncGeneratorType

from .harness import HOOKS, STAGES, WRAP_POINTS, Fault, Layer, World, answers_for, run

WARM_UP = 200
ROUNDS = int(os.environ.get("STRANDS_MIDDLEWARE_SOAK", "1000"))
CHECKPOINTS = 5
# Generous on purpose: this catches a per-call leak (which grows without bound), not noise.
MAX_GROWTH_BYTES = 256 * 1024


def world_for(rng: random.Random) -> tuple[World, int | None]:
    kinds = ["pass", "retry", "gate", "transform"]
    stack = [Layer(rng.choice(kinds), rng.choice(sorted(STAGES))) for _ in range(rng.randint(0, 4))]
    choice = rng.random()
    if choice < 0.3:
        fault = Fault("none")
    elif choice < 0.6:
        fault = Fault(
            "wrap", rng.choice(sorted(STAGES)), rng.choice(WRAP_POINTS), rng.randint(0, 1)
        )
    elif choice < 0.8:
        fault = Fault("model", "model", rng.choice(["before_first_chunk", "mid_stream"]))
    else:
        fault = Fault("hook", rng.choice(sorted(HOOKS)), "raise", rng.randint(0, 2))
    cancel_after = rng.choice([None, None, None, rng.randint(1, 12)])
    world = World(
        stack, fault, tool_turn_first=rng.random() < 0.7, parallel_tools=rng.randint(1, 3)
    )
    return world, cancel_after


async def one_round(rng: random.Random) -> None:
    world, cancel_after = world_for(rng)
    agent = world.build()
    await run(agent, "go", cancel_after)
    world.armed = False
    for _ in range(3):
        prompt = answers_for(agent) if agent.interrupt_state.activated else "next"
        result, error = await run(agent, prompt, None)
        assert error is None, repr(error)
        if result is None or result.stop_reason != "interrupt":
            break


def live_generators() -> int:
    return sum(isinstance(item, AsyncGeneratorType) for item in gc.get_objects())


async def soak() -> list[tuple[int, int, int]]:
    rng = random.Random(20261202)
    for _ in range(WARM_UP):
        await one_round(rng)
    readings: list[tuple[int, int, int]] = []
    per_checkpoint = max(ROUNDS // CHECKPOINTS, 1)
    tracemalloc.start()
    try:
        for checkpoint in range(CHECKPOINTS + 1):
            if checkpoint:
                for _ in range(per_checkpoint):
                    await one_round(rng)
            await asyncio.sleep(0)
            gc.collect()
            current, _peak = tracemalloc.get_traced_memory()
            readings.append((checkpoint * per_checkpoint, current, live_generators()))
    finally:
        tracemalloc.stop()
    return readings


def test_memory_and_generators_stay_flat_over_a_soak() -> None:
    logger = logging.getLogger("strands_middleware")
    logger.disabled = True
    try:
        readings = asyncio.run(soak())
    finally:
        logger.disabled = False
    baseline_rounds, _, baseline_generators = readings[0]
    for rounds, _memory, generators in readings[1:]:
        assert generators <= baseline_generators, (rounds, generators, baseline_generators)
    # Memory is measured from the first batch traced: what it allocates once (a cache filled the
    # first time something is formatted or imported under tracing, whatever earlier tests left
    # cold) is not a leak; a per-call leak still grows over the four batches after it.
    _, baseline_memory, _ = readings[1]
    for _rounds, memory, _generators in readings[2:]:
        assert memory - baseline_memory < MAX_GROWTH_BYTES, readings
    assert baseline_rounds == 0
    print(  # shown with pytest -s; the README quotes these
        "soak readings (rounds, traced bytes, live async generators):",
        readings,
    )
