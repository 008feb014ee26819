"""Chain overhead: this registry against the one inside strands-agents and the bare terminal.

Every workload runs the same terminal (a stream of pre-built events, so what is measured is the
chain, not the events) through three contestants in one process: the bare terminal, this
library's `MiddlewareRegistry`, and `strands.middleware`'s registry with the same handlers.
Rounds are interleaved (the order rotates each round) so drift on a noisy machine hits every
contestant alike, and each contestant's figure is the median of its rounds.

Run: ``make bench`` (or ``python benchmarks/bench_chain.py --rounds 60``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from strands_middleware import MiddlewareRegistry, MiddlewareResult, MiddlewareStage


class Event(dict[str, Any]):
    """A streamed event."""


class Done(Event):
    """The result event."""


@dataclass
class _StrandsResult:
    result: Done


Context = dict[str, Any]
OURS = MiddlewareStage[Context, Done, Event]("bench", result_type=Done)


def _events(count: int) -> list[Event]:
    return [Event(i=i) for i in range(count - 1)] + [Done(ok=True)]


def _terminal(events: list[Event]) -> Callable[[Context], AsyncGenerator[Event, None]]:
    async def terminal(context: Context) -> AsyncGenerator[Event, None]:
        for event in events:
            yield event

    return terminal


async def passthrough(
    context: Context, next_fn: Callable[[Context], AsyncIterator[Event]]
) -> AsyncGenerator[Event, None]:
    async for event in next_fn(context):
        yield event


def tag_input(context: Context) -> Context:
    return {**context, "tagged": True}


def ours_output(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
    return result.replace(value=Done(ok=True, tagged=True))


def strands_output(result: _StrandsResult) -> _StrandsResult:
    return _StrandsResult(result=Done(ok=True, tagged=True))


@dataclass
class Workload:
    name: str
    events: int
    calls: int
    wraps: int = 0
    inputs: int = 0
    outputs: int = 0
    target: float = 0.0
    versus_bare: bool = False


WORKLOADS = [
    Workload("no handlers, 1000-event stream", 1000, 1, target=1.15, versus_bare=True),
    Workload("4 pass-through Wrap, 1000-event stream", 1000, 1, wraps=4, target=1.7),
    Workload("16 pass-through Wrap, 1000-event stream", 1000, 1, wraps=16, target=2.0),
    Workload("4 Wrap, one event per call (x1000 calls)", 1, 1000, wraps=4, target=1.5),
    Workload(
        "1 Input + 2 Wrap + 1 Output, 1000-event stream",
        1000,
        1,
        wraps=2,
        inputs=1,
        outputs=1,
        target=1.8,
    ),
]


def _contestants(workload: Workload) -> dict[str, Callable[[], Awaitable[None]]]:
    from strands.middleware._registry import MiddlewareRegistry as StrandsRegistry
    from strands.middleware.types import MiddlewareStage as StrandsStage

    terminal = _terminal(_events(workload.events))
    ours = MiddlewareRegistry()
    strands_stage: Any = StrandsStage("bench", result_type=_StrandsResult, result_event=Done)
    theirs = StrandsRegistry()
    for _ in range(workload.inputs):
        ours.add_middleware(OURS.Input, tag_input)
        theirs.add_middleware(strands_stage.Input, tag_input)
    for _ in range(workload.wraps):
        ours.add_middleware(OURS, passthrough)
        theirs.add_middleware(strands_stage, passthrough)
    for _ in range(workload.outputs):
        ours.add_middleware(OURS.Output, ours_output)
        theirs.add_middleware(strands_stage.Output, strands_output)
    context: Context = {}
    calls = range(workload.calls)

    async def bare() -> None:
        for _ in calls:
            async for _event in terminal(context):
                pass

    async def run_ours() -> None:
        for _ in calls:
            async for _event in ours.invoke(OURS, context, terminal):
                pass

    async def run_strands() -> None:
        for _ in calls:
            async for _event in theirs.invoke(strands_stage, context, terminal):
                pass

    return {"bare": bare, "ours": run_ours, "strands": run_strands}


async def _measure(workload: Workload, rounds: int) -> dict[str, float]:
    contestants = _contestants(workload)
    names = list(contestants)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for name in names:  # warm-up
        await contestants[name]()
    for round_index in range(rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter()
            await contestants[name]()
            samples[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in samples.items()}


async def main(rounds: int) -> int:
    from importlib.metadata import version

    import strands  # noqa: F401 - fail early with a clear message when the dev extra is missing

    print(
        f"python {sys.version.split()[0]}, strands-agents {version('strands-agents')}, "
        f"{rounds} interleaved rounds, medians"
    )
    print()
    print("| workload | bare | ours | strands | figure | target | met |")
    print("| --- | ---: | ---: | ---: | --- | ---: | :---: |")
    for workload in WORKLOADS:
        medians = await _measure(workload, rounds)
        if workload.versus_bare:
            figure = medians["ours"] / medians["bare"]
            label = f"ours/bare {figure:.2f}x"
            met = figure <= workload.target
            target = f"<= {workload.target:.2f}x"
        else:
            figure = medians["strands"] / medians["ours"]
            label = f"strands/ours {figure:.2f}x"
            met = figure >= workload.target
            target = f">= {workload.target:.2f}x"
        print(
            f"| {workload.name} | {medians['bare'] * 1e3:.3f} ms | {medians['ours'] * 1e3:.3f} ms"
            f" | {medians['strands'] * 1e3:.3f} ms | {label} | {target}"
            f" | {'yes' if met else 'no'} |"
        )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="interleaved rounds per workload")
    arguments = parser.parse_args()
    sys.exit(asyncio.run(main(arguments.rounds)))
