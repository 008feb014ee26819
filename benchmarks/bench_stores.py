"""Store overhead: each store operation, and a model call under each shared item, per store.

The contestants are the `InMemoryStore` (what the catalog's items use without ``store=``) and a
`RedisStore` on a redis-server this script starts (persistence off), reached over a unix socket
and over TCP on the loopback interface. Every figure is the median, over rounds, of the mean
time of one operation; rounds interleave the contestants so drift on a noisy machine hits them
alike. "model call" rows run one InvokeModelStage call through a registry holding the item,
with a terminal that answers at once, so the figure is what the item adds to a call.

Needs ``redis-server`` on the PATH (``make bench`` installs it on Debian).

Run: ``make bench`` (or ``python benchmarks/bench_stores.py --rounds 15``).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any

from strands_middleware import InvokeModelContext, InvokeModelStage, MiddlewareRegistry
from strands_middleware.catalog import Cache, CallLimit, ConcurrencyLimit, RateLimit, UsageBudget
from strands_middleware.events import ModelStopReason, TypedEvent
from strands_middleware.stores import InMemoryStore, Store
from strands_middleware.stores.redis import RedisStore
from strands_middleware.testing import ScriptedModel

Operation = Callable[[Store, int], Awaitable[object]]


class _Model(ScriptedModel):
    def get_config(self) -> dict[str, Any]:
        return {"model_id": "bench"}


_CONTEXT = InvokeModelContext(
    agent=None,
    messages=[{"role": "user", "content": [{"text": "What is the capital of France?"}]}],
    system_prompt=None,
    tool_specs=[],
    tool_choice=None,
    invocation_state={},
    model=_Model([]),
)
_RESULT = ModelStopReason(
    "end_turn",
    {"role": "assistant", "content": [{"text": "Paris."}]},
    {"inputTokens": 7, "outputTokens": 3, "totalTokens": 10},
    {"latencyMs": 1},
)


async def _answer(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
    yield _RESULT


async def _cache_get(store: Store, n: int) -> object:
    return await store.cache_get("bench")


async def _cache_set(store: Store, n: int) -> object:
    return await store.cache_set(f"bench-{n % 64}", b"x" * 512, 60)


async def _rate_reserve(store: Store, n: int) -> object:
    return await store.rate_reserve("bench", rate=1e9, burst=1_000_000)


async def _slot_cycle(store: Store, n: int) -> object:
    token = await store.slot_acquire("bench", limit=1_000, lease=30)
    return await store.slot_release("bench", token)


async def _counter_add(store: Store, n: int) -> object:
    return await store.counter_add("bench", {"model": 1}, limits={"model": 10**12})


async def _snapshot_cycle(store: Store, n: int) -> object:
    await store.snapshot_put(f"bench-{n}", b"x" * 2048, 60)
    return await store.snapshot_take(f"bench-{n}")


def _under(make: Callable[[Store], Any]) -> Callable[[Store], MiddlewareRegistry]:
    def registry(store: Store) -> MiddlewareRegistry:
        built = MiddlewareRegistry()
        built.use(make(store))
        return built

    return registry


_ITEMS: list[tuple[str, Callable[[Store], MiddlewareRegistry]]] = [
    ("model call, no item", lambda store: MiddlewareRegistry()),
    ("model call, Cache (hit)", _under(lambda store: Cache(store=store))),
    (
        "model call, RateLimit",
        _under(lambda store: RateLimit(rate=1e9, burst=1_000_000, store=store, name="b")),
    ),
    (
        "model call, ConcurrencyLimit",
        _under(lambda store: ConcurrencyLimit(limit=1_000, store=store, name="b", lease=30)),
    ),
    (
        "model call, CallLimit",
        _under(lambda store: CallLimit(model_calls=10**12, store=store, key="b")),
    ),
    (
        "model call, UsageBudget",
        _under(lambda store: UsageBudget(max_total_tokens=10**12, store=store, key="b")),
    ),
]

_OPERATIONS: list[tuple[str, Operation]] = [
    ("cache_get (hit)", _cache_get),
    ("cache_set (512 B)", _cache_set),
    ("rate_reserve", _rate_reserve),
    ("slot_acquire + slot_release", _slot_cycle),
    ("counter_add (with a limit)", _counter_add),
    ("snapshot_put + snapshot_take (2 KiB)", _snapshot_cycle),
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_server(folder: Path, port: int) -> subprocess.Popen[bytes]:
    executable = shutil.which("redis-server")
    if executable is None:
        sys.exit("redis-server is not installed (Debian: apt-get install redis-server)")
    arguments = [executable, "--port", str(port), "--bind", "127.0.0.1"]
    arguments += ["--unixsocket", str(folder / "redis.sock"), "--dir", str(folder)]
    arguments += ["--save", "", "--appendonly", "no"]  # persistence off
    process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(500):
        if (folder / "redis.sock").exists():
            return process
        time.sleep(0.01)
    process.kill()
    sys.exit("redis-server did not start")


async def _per_operation(run: Callable[[int], Awaitable[object]], count: int) -> float:
    started = time.perf_counter()
    for n in range(count):
        await run(n)
    return (time.perf_counter() - started) / count


Workload = Callable[[Store], Callable[[int], Awaitable[object]]]
"""Given a store, the operation to time (called with the operation's number)."""


def _workloads() -> list[tuple[str, Workload]]:
    workloads: list[tuple[str, Workload]] = []
    for label, operation in _OPERATIONS:

        def direct(store: Store, op: Operation = operation) -> Callable[[int], Awaitable[object]]:
            return lambda n: op(store, n)

        workloads.append((label, direct))
    for label, make_registry in _ITEMS:

        def calls(
            store: Store, make: Callable[[Store], MiddlewareRegistry] = make_registry
        ) -> Callable[[int], Awaitable[object]]:
            registry = make(store)
            return lambda n: registry.run(InvokeModelStage, _CONTEXT, _answer)

        workloads.append((label, calls))
    return workloads


async def _row(
    label: str, workload: Workload, stores: dict[str, Store], rounds: int, count: int
) -> str:
    names = list(stores)
    runs = {name: workload(store) for name, store in stores.items()}
    for run in runs.values():
        await run(0)  # warm every path (a Cache's first call is its miss)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_number in range(rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(await _per_operation(runs[name], count))
    medians = {name: statistics.median(times) * 1e6 for name, times in samples.items()}
    base = medians[names[0]]
    cells = [f"{base:.1f}"] + [
        f"{medians[name]:.1f} ({medians[name] / base:.0f}x)" for name in names[1:]
    ]
    return f"| {label} | " + " | ".join(cells) + " |"


async def main(rounds: int, count: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        port = _free_port()
        server = _start_server(Path(folder), port)
        prefix = f"bench-{uuid.uuid4().hex[:8]}"
        unix = RedisStore.from_url(f"unix://{folder}/redis.sock", prefix=prefix)
        tcp = RedisStore.from_url(f"redis://127.0.0.1:{port}/0", prefix=prefix)
        stores: dict[str, Store] = {
            "in memory": InMemoryStore(),
            "Redis, unix socket": unix,
            "Redis, TCP loopback": tcp,
        }
        try:
            for store in stores.values():
                await store.cache_set("bench", b"x" * 512, None)
            print(
                f"redis-server {_version()}; {rounds} rounds of {count} operations each; "
                "median microseconds per operation (ratio to in memory)"
            )
            print()
            print("| operation | " + " | ".join(stores) + " |")
            print("| --- |" + " ---: |" * len(stores))
            for label, workload in _workloads():
                print(await _row(label, workload, stores, rounds, count))
        finally:
            await unix.aclose()
            await tcp.aclose()
            server.terminate()
            server.wait()


def _version() -> str:
    completed = subprocess.run(
        ["redis-server", "--version"], capture_output=True, text=True, check=True
    )
    return completed.stdout.split()[2].removeprefix("v=")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--count", type=int, default=300)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rounds, arguments.count))
