"""Interrupts as workflow waits: read by a query, answered by a validated update."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError

from strands_middleware import ExecuteToolStage
from strands_middleware.catalog import ToolApproval
from strands_middleware.durable import (
    answer_interrupt,
    create_worker,
    in_activity,
    pending_interrupts,
    start_run,
)
from strands_middleware.interrupts import Interrupt

from .agents import Journal, build_agent


async def wait_for_interrupts(handle: WorkflowHandle[Any, Any]) -> list[Interrupt]:
    """Query the run until it waits on an interrupt (about 10 s at most)."""
    for _ in range(200):
        found = await pending_interrupts(handle)
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("the run never waited on an interrupt")


def _update_events(events: list[Any]) -> list[str]:
    return [e.WhichOneof("attributes") for e in events if "update" in e.WhichOneof("attributes")]


async def test_an_approval_is_asked_once_and_bad_answers_change_nothing(
    client: Client, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    name, queue = f"approval-{tag}", f"queue-{tag}"
    agent = build_agent(name, tmp_path, [ToolApproval(tools=["refund"])])
    journal = Journal(tmp_path / "journal", name)
    try:
        async with create_worker(client, task_queue=queue, agents=[agent]):
            handle = await start_run(client, name, "Refund order 7", id=name, task_queue=queue)
            [asked] = await wait_for_interrupts(handle)
            assert asked.name == "approve-tool-call"
            assert asked.reason == {
                "toolUseId": "call-refund",
                "name": "refund",
                "input": {"order": 7, "amount": 5},
            }
            assert journal.count("tool refund start") == 0
            bad_answers: list[object] = [
                {"interruptId": "v1:nope", "response": "approve"},
                {"interruptId": asked.id},
                {"interruptId": asked.id, "response": None},
                {"interruptId": asked.id, "response": "approve", "extra": 1},
                "approve",
            ]
            by_name: Any = handle
            for bad in bad_answers:
                with pytest.raises(WorkflowUpdateFailedError):
                    await by_name.execute_update("answer_interrupt", bad)
            # The validator rejected each before it was written: no update is in history, and
            # the run still waits on the same interrupt.
            history = await handle.fetch_history()
            assert _update_events(history.events) == []
            assert await pending_interrupts(handle) == [asked]

            await answer_interrupt(handle, asked.id, "approve")
            output = await handle.result()
    finally:
        agent.unregister()
    assert output.stop_reason == "end_turn"
    assert output.interrupts_asked == [asked.id]
    assert journal.count("tool refund done") == 1
    assert [line for line in journal.lines() if line.startswith("model")] == [
        "model 0",
        "model 1",
        "model 2",
    ]
    history = await handle.fetch_history()
    assert _update_events(history.events) == [
        "workflow_execution_update_accepted_event_attributes",
        "workflow_execution_update_completed_event_attributes",
    ]


async def test_a_denied_call_never_runs(client: Client, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    name, queue = f"deny-{tag}", f"queue-{tag}"
    agent = build_agent(name, tmp_path, [ToolApproval(tools=["refund"])])
    try:
        async with create_worker(client, task_queue=queue, agents=[agent]):
            handle = await start_run(client, name, "Refund order 7", id=name, task_queue=queue)
            [asked] = await wait_for_interrupts(handle)
            await answer_interrupt(handle, asked.id, {"decision": "deny", "message": "no"})
            output = await handle.result()
    finally:
        agent.unregister()
    denied = output.messages[4]["content"][0]["toolResult"]
    assert denied["status"] == "error"
    assert "A human denied this call to 'refund'. Their message: no" in denied["content"][0]["text"]
    assert Journal(tmp_path / "journal", name).count("tool refund start") == 0


async def test_an_interrupt_raised_inside_an_activity_ends_the_call_with_an_error(
    client: Client, tmp_path: Path
) -> None:
    async def asks(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
        context.interrupt("in-activity")
        async for event in next_fn(context):
            yield event

    tag = uuid.uuid4().hex[:8]
    name, queue = f"inside-{tag}", f"queue-{tag}"
    agent = build_agent(name, tmp_path, [in_activity(ExecuteToolStage.wrap(asks))])
    try:
        async with create_worker(client, task_queue=queue, agents=[agent]):
            handle = await start_run(client, name, "Refund order 7", id=name, task_queue=queue)
            output = await handle.result()
    finally:
        agent.unregister()
    refused = output.messages[2]["content"][0]["toolResult"]
    assert refused["status"] == "error"
    assert "raised inside the tool activity" in refused["content"][0]["text"]
    assert output.interrupts_asked == []
    assert Journal(tmp_path / "journal", name).count("tool lookup start") == 0


def only_decisions(interrupt: Interrupt, response: Any) -> None:
    if response not in ("approve", "deny"):
        raise ValueError(f"{interrupt.name} takes 'approve' or 'deny', got {response!r}")


async def test_an_agent_may_check_answers_before_they_are_recorded(
    client: Client, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    name, queue = f"checked-{tag}", f"queue-{tag}"
    agent = build_agent(name, tmp_path, [ToolApproval(tools=["refund"])])
    agent.answer_check = only_decisions
    try:
        async with create_worker(client, task_queue=queue, agents=[agent]):
            handle = await start_run(client, name, "Refund order 7", id=name, task_queue=queue)
            [asked] = await wait_for_interrupts(handle)
            with pytest.raises(WorkflowUpdateFailedError) as rejected:
                await answer_interrupt(handle, asked.id, "maybe")
            assert "approve-tool-call takes 'approve' or 'deny', got 'maybe'" in str(
                rejected.value.cause
            )
            assert _update_events((await handle.fetch_history()).events) == []
            await answer_interrupt(handle, asked.id, "approve")
            output = await handle.result()
    finally:
        agent.unregister()
    assert output.interrupts_asked == [asked.id]
