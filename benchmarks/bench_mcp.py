"""The MCP gateway: what a tool call costs through the proxy, with and without middleware.

Three contestants answer the same ``tools/call`` (the test upstream's ``echo``), each over real
stdio pipes to real processes, one client session each:

* **upstream**: the upstream MCP server called directly (no proxy);
* **proxy, none**: ``python -m strands_middleware.mcp proxy -- <upstream>`` with no middleware;
* **proxy, 4 Wrap**: the same with four pass-through Wrap handlers on ExecuteToolStage.

Figures are wall-clock time per call (a call is a round trip through other processes, so the
benchmark process's CPU time would miss most of it). Rounds are interleaved, the order rotating
every round, so drift on a shared machine hits every contestant alike; each round times
``--calls`` calls of each, and a ratio row is the median of the per-round ratios. Every
contestant first answers once and must give the same result.

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
from strands_middleware.stages.execute_tool import ExecuteToolContext

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


async def _session(stack: AsyncExitStack, argv: list[str]) -> ClientSession:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "benchmarks"), str(ROOT / "src")])
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(ROOT))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=sys.stderr))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def _time(session: ClientSession, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await session.call_tool("echo", {"text": "hello"})
    return (time.perf_counter() - started) / calls


async def main(rounds: int, calls: int) -> None:
    contestants = {
        "upstream (direct)": UPSTREAM,
        "proxy, none": [*PROXY, "--", *UPSTREAM],
        "proxy, 4 Wrap": [*PROXY, "--middleware", "bench_mcp:four_wrap_handlers", "--", *UPSTREAM],
    }
    async with AsyncExitStack() as stack:
        sessions = {name: await _session(stack, argv) for name, argv in contestants.items()}
        answers = {
            name: (await session.call_tool("echo", {"text": "hello"})).model_dump()
            for name, session in sessions.items()
        }
        first = next(iter(answers.values()))
        assert all(answer == first for answer in answers.values()), answers
        for session in sessions.values():
            await _time(session, calls)  # warm-up
        times: dict[str, list[float]] = {name: [] for name in sessions}
        names = list(sessions)
        for round_ in range(rounds):
            order = names[round_ % len(names) :] + names[: round_ % len(names)]
            for name in order:
                times[name].append(await _time(sessions[name], calls))
    print(f"MCP tools/call, wall-clock per call: {rounds} interleaved rounds x {calls} calls")
    for name, measured in times.items():
        print(f"  {name:<20} {statistics.median(measured) * 1e3:8.3f} ms (median round)")

    def ratio(top: str, bottom: str) -> float:
        return statistics.median(a / b for a, b in zip(times[top], times[bottom], strict=True))

    print(f"  proxy, 4 Wrap / proxy, none:        {ratio('proxy, 4 Wrap', 'proxy, none'):.3f}x")
    print(f"  proxy, none / upstream (direct):    {ratio('proxy, none', 'upstream (direct)'):.3f}x")
    print(
        f"  proxy, 4 Wrap / upstream (direct):  {ratio('proxy, 4 Wrap', 'upstream (direct)'):.3f}x"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=50)
    options = parser.parse_args()
    anyio.run(main, options.rounds, options.calls)
