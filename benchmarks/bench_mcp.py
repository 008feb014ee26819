"""The MCP gateway: what a tool call costs through the proxy, with and without middleware.

Three contestants answer the same ``tools/call`` (the test upstream's ``echo``), each over real
stdio pipes to real processes, one client session each:

* **upstream**: the upstream MCP server called directly (no proxy);
* **proxy, none**: ``python -m strands_middleware.mcp proxy -- <upstream>`` with no middleware;
* **proxy, 4 Wrap**: the same with four pass-through Wrap handlers on ExecuteToolStage.

Two figures per call. **CPU** is the CPU time of the process serving the client (the proxy, or
the upstream when called directly), read from Linux's ``/proc/<pid>/task/*/schedstat`` in
nanoseconds: what the middleware costs, and steadier on a loaded machine than any clock on the
wall. **Wall** is the round trip as the client sees it (through both processes), which the
machine's load moves by far more than the middleware does. Rounds are interleaved, the order
rotating every round, so drift hits every contestant alike; each round runs ``--calls`` calls of
each, and a ratio row is the median of the per-round ratios. Every contestant first answers once
and must give the same result.

Run: ``python benchmarks/bench_mcp.py`` (``--rounds 30 --calls 50`` by default).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from strands_middleware import ExecuteToolStage, Middleware, TypedEvent
from strands_middleware.stages._execute_tool import ExecuteToolContext

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = [sys.executable, str(ROOT / "tests" / "mcp" / "upstream_server.py")]
PROXY = [sys.executable, "-m", "strands_middleware.mcp", "proxy"]


def _pass_through(number: int) -> Middleware[Any, Any, Any]:
    async def passing(
        context: ExecuteToolContext, next_fn: Any
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event

    passing.__name__ = passing.__qualname__ = f"passing_{number}"
    return ExecuteToolStage.wrap(passing)


def four_wrap_handlers() -> list[Middleware[Any, Any, Any]]:
    """Four pass-through Wrap handlers: what ``--middleware bench_mcp:four_wrap_handlers`` loads."""
    return [_pass_through(number) for number in range(4)]


def _children() -> set[int]:
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


def _cpu_ns(pid: int) -> int:
    """CPU time a process (all its threads) has run, in nanoseconds."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        total += int((task / "schedstat").read_text().split()[0])
    return total


async def _session(stack: AsyncExitStack, argv: list[str]) -> tuple[ClientSession, int]:
    before = _children()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "benchmarks"), str(ROOT / "src")])
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(ROOT))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=sys.stderr))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    (pid,) = _children() - before
    return session, pid


async def _time(session: ClientSession, pid: int, calls: int) -> tuple[float, float]:
    """Wall-clock seconds and serving-process CPU seconds per call."""
    cpu = _cpu_ns(pid)
    started = time.perf_counter()
    for _ in range(calls):
        await session.call_tool("echo", {"text": "hello"})
    wall = time.perf_counter() - started
    return wall / calls, (_cpu_ns(pid) - cpu) / 1e9 / calls


async def main(rounds: int, calls: int) -> None:
    contestants = {
        "upstream (direct)": UPSTREAM,
        "proxy, none": [*PROXY, "--", *UPSTREAM],
        "proxy, 4 Wrap": [*PROXY, "--middleware", "bench_mcp:four_wrap_handlers", "--", *UPSTREAM],
    }
    async with AsyncExitStack() as stack:
        served = {name: await _session(stack, argv) for name, argv in contestants.items()}
        answers = {
            name: (await session.call_tool("echo", {"text": "hello"})).model_dump()
            for name, (session, _) in served.items()
        }
        first = next(iter(answers.values()))
        assert all(answer == first for answer in answers.values()), answers
        for session, pid in served.values():
            await _time(session, pid, calls)  # warm-up
        wall: dict[str, list[float]] = {name: [] for name in served}
        cpu: dict[str, list[float]] = {name: [] for name in served}
        names = list(served)
        for round_ in range(rounds):
            order = names[round_ % len(names) :] + names[: round_ % len(names)]
            for name in order:
                took, used = await _time(*served[name], calls)
                wall[name].append(took)
                cpu[name].append(used)
    print(f"MCP tools/call per call: {rounds} interleaved rounds x {calls} calls (median round)")
    print(f"  {'':<20} {'CPU of server':>14} {'wall (client)':>14}")
    for name in names:
        print(
            f"  {name:<20} {statistics.median(cpu[name]) * 1e6:11.0f} us"
            f" {statistics.median(wall[name]) * 1e3:11.3f} ms"
        )

    def ratio(times: dict[str, list[float]], top: str, bottom: str) -> float:
        return statistics.median(a / b for a, b in zip(times[top], times[bottom], strict=True))

    rows = [
        ("proxy, 4 Wrap", "proxy, none"),
        ("proxy, none", "upstream (direct)"),
        ("proxy, 4 Wrap", "upstream (direct)"),
    ]
    for top, bottom in rows:
        label = f"{top} / {bottom}:"
        cpu_ratio, wall_ratio = ratio(cpu, top, bottom), ratio(wall, top, bottom)
        print(f"  {label:<40} CPU {cpu_ratio:.3f}x   wall {wall_ratio:.3f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=50)
    options = parser.parse_args()
    anyio.run(main, options.rounds, options.calls)
