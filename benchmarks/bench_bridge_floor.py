"""The strands bridge's floor: what it would cost if the stream's deltas crossed untranslated.

An experiment behind one row of the README's speed table ("bridge 4 mw / native 4 mw"), not a
way to run the bridge. Every streamed delta reaches strands' handlers as two events, a raw chunk
and its text; the bridge hands each to this library's handlers as a `TypedEvent` of its own and
back. Here a third contestant runs the same bridge with those two kinds of event passed through
both ways as strands' own objects (handlers would then see strands' events, which the bridge's
contract rules out), everything else as shipped. Against strands' own four handlers it shows
what the bridge's structure costs (its chains, contexts and generator hops) apart from the
translation, so the shipped row splits into the two:

    python benchmarks/bench_bridge_floor.py --rounds 25      # timed, as bench_e2e.py times
    python benchmarks/bench_bridge_floor.py --instructions   # counted under callgrind

It reaches into the bridge's private module (`events_in` and `events_out`, swapped around each
untranslated invocation only), so it follows the bridge's internals rather than its API.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import bench_e2e as e2e
from strands_middleware.bridges.strands import bridge as bridge_module
from strands_middleware.bridges.strands import translate
from strands_middleware.bridges.strands._seams import ModelStreamChunkEvent, TextStreamEvent


async def _events_in(
    stream: Any, crossing: translate.Crossing, *, model_call: bool = False
) -> AsyncGenerator[Any, None]:
    """`translate.events_in` with the two delta classes passed through as strands' own."""
    chunk_class, text_class = ModelStreamChunkEvent, TextStreamEvent
    try:
        async for event in stream:
            cls = event.__class__
            if cls is chunk_class or cls is text_class:
                yield event
                continue
            convert = translate.INBOUND.get(cls) or translate.translator(translate.INBOUND, cls)
            ours = convert(event, crossing)
            if model_call and convert is translate._model_stop_in:
                yield translate.ModelMessageEvent(ours.message)
            yield ours
    finally:
        await stream.aclose()


async def _events_out(
    chain: AbstractAsyncContextManager[AsyncIterator[Any]],
    table: dict[type, translate.Translate],
    crossing: translate.Crossing,
) -> AsyncGenerator[Any, None]:
    """`translate.events_out` with the two delta classes passed through as strands' own."""
    chunk_class, text_class = ModelStreamChunkEvent, TextStreamEvent
    async with chain as stream:
        async for event in stream:
            cls = event.__class__
            if cls is chunk_class or cls is text_class:
                yield event
                continue
            back = (table.get(cls) or translate.translator(table, cls))(event, crossing)
            if back is not None:
                yield back


@contextlib.contextmanager
def _untranslated() -> Iterator[None]:
    shipped = bridge_module.events_in, bridge_module.events_out
    bridge_module.events_in, bridge_module.events_out = _events_in, _events_out
    try:
        yield
    finally:
        bridge_module.events_in, bridge_module.events_out = shipped


@dataclass
class _Untranslated(e2e.Contestant):
    async def invoke(self, agent: Any) -> None:
        with _untranslated():
            await super().invoke(agent)


def _rows(deltas: int) -> list[e2e.Row]:
    turns = e2e._Turns(deltas)
    native = e2e.Contestant("native+4", e2e.native(turns, 4))
    build = e2e.bridged(turns, lambda: e2e.wraps(4))
    return [
        e2e.Row("bridge 4 mw, as shipped / native 4 mw", e2e.Contestant("bridge+4", build), native),
        e2e.Row(
            "bridge 4 mw, deltas untranslated / native 4 mw",
            _Untranslated("bridge+4-untranslated", build),
            native,
        ),
    ]


async def main(argv: list[str]) -> None:
    args = e2e.parser(__doc__.splitlines()[0], calls=6).parse_args(argv)
    rows = _rows(args.deltas)
    if args.counted_worker is not None:
        by_name = {c.name: c for row in rows for c in (row.contestant, row.baseline)}
        await e2e._counted_worker(by_name[args.counted_worker], args.calls)
        return
    for row in rows:
        await e2e._check_same_work(row)
    if args.instructions:
        shared = [f"--calls={args.calls}", f"--deltas={args.deltas}"]
        await e2e._instruction_ratios(rows, shared, args.calls, script=__file__)
        return
    for row in rows:
        ratio = await e2e._ratio(row, args.rounds, args.calls)
        print(f"| {row.label} | {ratio:.2f}x |", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
