"""The agent the durable-run tests run, in the test process and in worker processes alike.

The model answers by the conversation it is sent (the number of assistant turns so far), not by
how often it was called, so a second worker process picks the script up where the first left it.
Every model call and every tool step is written to a journal file shared by all processes, which
is how the tests count calls across a crash. A "hold" file makes the matching step wait (while
its activity heartbeats) until the file is removed: a test kills a worker at that point.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.common import RetryPolicy

from strands_middleware.content import Messages, ToolSpec
from strands_middleware.durable import ActivityOptions, DurableAgent, Placed
from strands_middleware.engine._registry import MiddlewareSource
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import FunctionTool, tool

SCRIPT = [
    tool_turn("lookup", {"order": 7}, tool_use_id="call-lookup"),
    tool_turn("refund", {"order": 7, "amount": 5}, tool_use_id="call-refund"),
    text_turn("Order 7 is refunded."),
]
"""Three model calls: look the order up, refund it, say so."""

FAST = ActivityOptions(
    start_to_close_timeout=timedelta(seconds=20),
    heartbeat_timeout=timedelta(seconds=1),
    retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_attempts=3),
)
"""Short timeouts, so a killed worker's activity is retried within about two seconds."""


class Journal:
    """Lines appended by every process (``model 0``, ``tool lookup start``, ...), per run.

    Written from inside activities, each line under its run's workflow id; read for one run.
    """

    def __init__(self, path: Path, workflow_id: str = "") -> None:
        self.path = path
        self.workflow_id = workflow_id

    def write(self, line: str) -> None:
        with self.path.open("a") as sink:
            sink.write(f"{activity.info().workflow_id} {line}\n")

    def lines(self) -> list[str]:
        if not self.path.exists():
            return []
        prefix = f"{self.workflow_id} "
        return [
            line.removeprefix(prefix)
            for line in self.path.read_text().splitlines()
            if line.startswith(prefix)
        ]

    def count(self, line: str) -> int:
        return self.lines().count(line)


def hold_file(folder: Path, workflow_id: str, step: str) -> Path:
    """The file that holds ``step`` (``model-1``, ``tool-refund``) of one run while it exists."""
    return folder / f"{workflow_id}.{step}"


async def hold_while(journal: Journal, folder: Path, step: str) -> None:
    """Wait while the step's hold file exists, saying so once in the journal.

    It polls a file because the test that removes it runs in another process.
    """
    hold = hold_file(folder, activity.info().workflow_id, step.replace(" ", "-"))
    if os.path.exists(hold):  # noqa: ASYNC240 (a local file, checked every 50 ms)
        journal.write(f"{step} held")
        while os.path.exists(hold):  # noqa: ASYNC240, ASYNC110
            await asyncio.sleep(0.05)


class ConversationModel:
    """Plays `SCRIPT` by the number of assistant turns in the conversation it is sent."""

    def __init__(self, journal: Journal, holds: Path) -> None:
        self.journal = journal
        self.holds = holds

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        turn = sum(1 for message in messages if message["role"] == "assistant")
        await hold_while(self.journal, self.holds, f"model {turn}")
        self.journal.write(f"model {turn}")
        async for chunk in ScriptedModel([SCRIPT[turn]]).stream(messages, tool_specs):
            yield chunk


def journaled_tools(journal: Journal, holds: Path) -> list[FunctionTool[..., Any]]:
    async def step(name: str) -> None:
        journal.write(f"tool {name} start")
        await hold_while(journal, holds, f"tool {name}")
        journal.write(f"tool {name} done")

    @tool
    async def lookup(order: int) -> str:
        """Look an order up."""
        await step("lookup")
        return f"order {order}: 5 EUR, paid"

    @tool
    async def refund(order: int, amount: int) -> str:
        """Refund an order."""
        await step("refund")
        return f"refunded {amount} EUR on order {order}"

    return [lookup, refund]


def build_agent(
    name: str,
    folder: Path,
    middleware: Iterable[MiddlewareSource | Placed] = (),
) -> DurableAgent:
    """The test agent, journaling to ``folder/journal`` and held by files in ``folder``."""
    journal = Journal(folder / "journal")
    return DurableAgent(
        name,
        model=ConversationModel(journal, folder),
        tools=journaled_tools(journal, folder),
        middleware=list(middleware),
        sequential_tools=True,
        model_activity=FAST,
        tool_activity=FAST,
    )
