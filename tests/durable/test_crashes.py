"""Worker crashes: a worker process is killed with SIGKILL mid-run, a second one finishes it.

Three points of the run are tried: (a) the first tool call has completed and the next model
call has not asked the model yet, (b) a tool call is in flight, (c) the run waits for an
approval. Each crashed run is compared with the same run without a crash, made on the second
worker afterwards: the model is asked as often, a completed tool call never runs again, the
approval is asked once, and the final history is the same. Only the call in flight at the kill
runs again (at least once, within the activity's retry policy).

The counts of every scenario are printed under "durable crash counts" in the summary.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle

from strands_middleware.durable import RunOutput, answer_interrupt, start_run

from .agents import Journal, hold_file
from .conftest import CRASH_COUNTS
from .temporal_server import TemporalServer
from .test_interrupts import wait_for_interrupts

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class WorkerProcess:
    process: asyncio.subprocess.Process

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except asyncio.TimeoutError:
                self.process.kill()
        await self.process.wait()


class Workers:
    """Starts worker processes on one task queue and stops every one it started."""

    def __init__(self, server: TemporalServer, queue: str, folder: Path) -> None:
        self.server = server
        self.queue = queue
        self.folder = folder
        self.started: list[WorkerProcess] = []

    async def start(self) -> WorkerProcess:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.durable.worker_process",
            self.server.address,
            self.queue,
            str(self.folder),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
        )
        worker = WorkerProcess(process)
        self.started.append(worker)
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        assert line == b"ready\n", f"the worker process did not start: {line!r}"
        return worker


@pytest.fixture
async def workers(temporal_server: TemporalServer, tmp_path: Path) -> AsyncIterator[Workers]:
    pool = Workers(temporal_server, f"crash-{uuid.uuid4().hex[:8]}", tmp_path)
    try:
        yield pool
    finally:
        for worker in pool.started:
            await worker.stop()


async def wait_for_line(journal: Journal, line: str) -> None:
    for _ in range(400):
        if line in journal.lines():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{line!r} never appeared; the run's journal: {journal.lines()}")


@dataclass
class Counts:
    model_calls: int
    tool_starts: dict[str, int]
    tool_completions: dict[str, int]
    approvals_asked: int

    @classmethod
    def of(cls, journal: Journal, output: RunOutput) -> Counts:
        lines = journal.lines()
        tools = ("lookup", "refund")
        return cls(
            model_calls=sum(1 for line in lines if line.startswith("model") and "held" not in line),
            tool_starts={t: lines.count(f"tool {t} start") for t in tools},
            tool_completions={t: lines.count(f"tool {t} done") for t in tools},
            approvals_asked=len(output.interrupts_asked),
        )


async def crash_free(
    client: Client, workers: Workers, agent: str, answer: bool
) -> tuple[RunOutput, Counts]:
    """The same run without a crash, on a worker that is still alive."""
    run_id = f"{workers.queue}-baseline"
    handle = await start_run(client, agent, "Refund order 7", id=run_id, task_queue=workers.queue)
    if answer:
        [asked] = await wait_for_interrupts(handle)
        await answer_interrupt(handle, asked.id, "approve")
    output = await handle.result()
    return output, Counts.of(Journal(workers.folder / "journal", run_id), output)


async def crashed_run(
    client: Client,
    workers: Workers,
    agent: str,
    hold: str | None,
    kill_when: Callable[[WorkflowHandle[Any, Any], Journal], Any],
) -> tuple[RunOutput, Counts, float]:
    """Run on a first worker, kill it when ``kill_when`` returns, finish on a second one."""
    run_id = f"{workers.queue}-crash"
    journal = Journal(workers.folder / "journal", run_id)
    if hold is not None:
        hold_file(workers.folder, run_id, hold).touch()
    first = await workers.start()
    handle = await start_run(client, agent, "Refund order 7", id=run_id, task_queue=workers.queue)
    await kill_when(handle, journal)
    first.kill()
    await first.process.wait()
    killed_at = time.monotonic()
    if hold is not None:
        hold_file(workers.folder, run_id, hold).unlink()
    await workers.start()
    if agent == "approval":
        [asked] = await wait_for_interrupts(handle)
        await answer_interrupt(handle, asked.id, "approve")
    output = await asyncio.wait_for(handle.result(), 60)
    recovery = time.monotonic() - killed_at
    return output, Counts.of(journal, output), recovery


def _report(scenario: str, crashed: Counts, baseline: Counts, recovery: float) -> None:
    CRASH_COUNTS.append(
        f"{scenario}: model calls {crashed.model_calls} (crash-free {baseline.model_calls}); "
        f"tool starts {crashed.tool_starts} (crash-free {baseline.tool_starts}); tool "
        f"completions {crashed.tool_completions}; approvals asked {crashed.approvals_asked} "
        f"(crash-free {baseline.approvals_asked}); kill to end {recovery:.1f} s"
    )


async def test_a_kill_after_a_tool_call_completed(client: Client, workers: Workers) -> None:
    async def after_lookup(handle: WorkflowHandle[Any, Any], journal: Journal) -> None:
        # The lookup completed; the next model activity started and is held before it asks
        # the model.
        await wait_for_line(journal, "model 1 held")
        assert "tool lookup done" in journal.lines()

    output, crashed, recovery = await crashed_run(client, workers, "plain", "model-1", after_lookup)
    expected, baseline = await crash_free(client, workers, "plain", answer=False)
    _report("(a) after the first tool call", crashed, baseline, recovery)
    assert output.messages == expected.messages
    assert (
        crashed == baseline == Counts(3, {"lookup": 1, "refund": 1}, {"lookup": 1, "refund": 1}, 0)
    )


async def test_a_kill_while_a_tool_call_is_in_flight(client: Client, workers: Workers) -> None:
    async def refund_running(handle: WorkflowHandle[Any, Any], journal: Journal) -> None:
        await wait_for_line(journal, "tool refund held")

    output, crashed, recovery = await crashed_run(
        client, workers, "plain", "tool-refund", refund_running
    )
    expected, baseline = await crash_free(client, workers, "plain", answer=False)
    _report("(b) a tool call in flight", crashed, baseline, recovery)
    assert output.messages == expected.messages
    assert crashed.model_calls == baseline.model_calls == 3
    # The call in flight ran again on the second worker (at least once); the completed one not.
    assert crashed.tool_starts == {"lookup": 1, "refund": 2}
    assert crashed.tool_completions == baseline.tool_completions == {"lookup": 1, "refund": 1}


async def test_a_kill_while_waiting_for_an_approval(client: Client, workers: Workers) -> None:
    async def waiting(handle: WorkflowHandle[Any, Any], journal: Journal) -> None:
        await wait_for_interrupts(handle)

    output, crashed, recovery = await crashed_run(client, workers, "approval", None, waiting)
    expected, baseline = await crash_free(client, workers, "approval", answer=True)
    _report("(c) waiting for an approval", crashed, baseline, recovery)
    assert output.messages == expected.messages
    assert output.interrupts_asked == expected.interrupts_asked
    assert (
        crashed == baseline == Counts(3, {"lookup": 1, "refund": 1}, {"lookup": 1, "refund": 1}, 1)
    )
