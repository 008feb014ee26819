"""A worker process for the crash tests: serves the test agents until it is stopped or killed.

``python -m tests.durable.worker_process ADDRESS TASK_QUEUE FOLDER`` serves two agents,
``plain`` and ``approval`` (with a `ToolApproval` on ``refund``), journaling to FOLDER. It
prints ``ready`` once its worker polls. Its sticky queue times out after one second, so another
worker takes a killed worker's runs over within about a second (Temporal's default is ten).
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client

from strands_middleware.catalog import ToolApproval
from strands_middleware.durable import create_worker

from .agents import build_agent


async def serve(address: str, task_queue: str, folder: Path) -> None:
    client = await Client.connect(address)
    agents = [
        build_agent("plain", folder),
        build_agent("approval", folder, [ToolApproval(tools=["refund"])]),
    ]
    worker = create_worker(
        client,
        task_queue=task_queue,
        agents=agents,
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
    )
    async with worker:
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], sys.argv[2], Path(sys.argv[3])))
