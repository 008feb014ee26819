"""A durable run of the reference agent on a real Temporal dev server, worker in this process."""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio import activity, workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError
from temporalio.worker import Replayer

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.catalog import ContextWindow, Summarize
from strands_middleware.durable import (
    ActivityOptions,
    AgentRun,
    DurableAgent,
    create_worker,
    in_activity,
    in_workflow,
    start_run,
    workflow_runner,
)
from strands_middleware.stores import InMemoryStore
from strands_middleware.testing import ScriptedModel, text_turn

from .agents import SCRIPT, Journal, build_agent, journaled_tools


def _names() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"agent-{tag}", f"queue-{tag}"


async def test_a_run_calls_each_model_turn_and_tool_once_and_replays_without_calls(
    client: Client, tmp_path: Path
) -> None:
    name, queue = _names()
    agent = build_agent(name, tmp_path)
    journal = Journal(tmp_path / "journal", name)
    try:
        async with create_worker(client, task_queue=queue, agents=[agent]):
            handle = await start_run(client, name, "Refund order 7", id=name, task_queue=queue)
            output = await handle.result()
        assert output.stop_reason == "end_turn"
        assert output.message == SCRIPT[2]
        assert [m["role"] for m in output.messages] == ["user", "assistant"] * 3
        assert output.messages[2]["content"][0]["toolResult"]["content"] == [
            {"text": "order 7: 5 EUR, paid"}
        ]
        assert journal.lines() == [
            "model 0",
            "tool lookup start",
            "tool lookup done",
            "model 1",
            "tool refund start",
            "tool refund done",
            "model 2",
        ]
        # A replay from history (what a new worker does after a crash) runs workflow code only:
        # no activity runs, so the model is not asked again and no tool runs again.
        history = await handle.fetch_history()
        await Replayer(workflows=[AgentRun], workflow_runner=workflow_runner()).replay_workflow(
            history
        )
        assert len(journal.lines()) == 7
    finally:
        agent.unregister()


async def test_each_side_runs_where_it_is_placed(client: Client, tmp_path: Path) -> None:
    seen: list[tuple[str, str, bool, bool]] = []

    def recorder(label: str) -> Any:
        async def record(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
            seen.append(
                (label, type(context).__name__, workflow.in_workflow(), activity.in_activity())
            )
            async for event in next_fn(context):
                yield event

        return record

    name, queue = _names()
    agent = build_agent(
        name,
        tmp_path,
        [
            in_workflow(InvokeModelStage.wrap(recorder("workflow"))),
            in_activity(InvokeModelStage.wrap(recorder("activity"))),
            in_workflow(ExecuteToolStage.wrap(recorder("workflow"))),
            in_activity(ExecuteToolStage.wrap(recorder("activity"))),
        ],
    )
    try:
        async with create_worker(client, task_queue=queue, agents=[agent]):
            handle = await start_run(client, name, "Refund order 7", id=name, task_queue=queue)
            await handle.result()
    finally:
        agent.unregister()
    model_calls = [s for s in seen if s[1] == "InvokeModelContext"]
    tool_calls = [s for s in seen if s[1] == "ExecuteToolContext"]
    # Each model call: the workflow handler in workflow code, then the activity handler inside
    # the activity. A workflow handler may run again on replay; each activity handler once.
    assert {s for s in model_calls} == {
        ("workflow", "InvokeModelContext", True, False),
        ("activity", "InvokeModelContext", False, True),
    }
    assert sum(1 for s in model_calls if s[0] == "activity") == 3
    assert sum(1 for s in tool_calls if s[0] == "activity") == 2
    assert {s for s in tool_calls} == {
        ("workflow", "ExecuteToolContext", True, False),
        ("activity", "ExecuteToolContext", False, True),
    }


class BrokenModel:
    async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise ConnectionError("provider unreachable")
        yield  # an async generator that fails when it is first iterated


async def test_a_model_call_that_fails_for_good_ends_the_run_with_the_reason(
    client: Client,
) -> None:
    name, queue = _names()
    agent = DurableAgent(
        name,
        model=BrokenModel(),
        model_activity=ActivityOptions(
            start_to_close_timeout=timedelta(seconds=5),
            retry_policy=RetryPolicy(maximum_attempts=1),
        ),
    )
    try:
        async with create_worker(client, task_queue=queue, agents=[agent]):
            handle = await start_run(client, name, "Hello", id=name, task_queue=queue)
            with pytest.raises(WorkflowFailureError) as failed:
                await handle.result()
    finally:
        agent.unregister()
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.type == "ModelCallFailed"
    assert "provider unreachable" in str(cause)


def test_agents_are_told_apart_by_name(tmp_path: Path) -> None:
    first = build_agent("twin", tmp_path)
    first.register()
    try:
        with pytest.raises(ValueError, match="another DurableAgent is registered as 'twin'"):
            build_agent("twin", tmp_path).register()
        first.register()  # the same agent again is fine
    finally:
        first.unregister()


class ContextWindowOverflowException(Exception):
    """Named as strands' overflow error, which `ContextWindow` recognises by its name."""


class OverflowingModel:
    """Plays `SCRIPT` by the last tool result it is sent; overflows at ``limit`` messages."""

    def __init__(self, limit: int = 5) -> None:
        self.limit = limit
        self.sizes: list[int] = []

    async def stream(
        self, messages: Any, tool_specs: Any = None, *args: Any, **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        self.sizes.append(len(messages))
        if len(messages) >= self.limit:
            raise ContextWindowOverflowException("the request is longer than the context window")
        results = [
            block["toolResult"]["toolUseId"]
            for block in messages[-1]["content"]
            if "toolResult" in block
        ]
        turn = {"call-lookup": 1, "call-refund": 2}.get(results[0], 0) if results else 0
        async for chunk in ScriptedModel([SCRIPT[turn]]).stream(messages, tool_specs):
            yield chunk


async def test_a_context_overflow_is_cut_in_workflow_code_and_asked_as_a_new_activity(
    client: Client, tmp_path: Path
) -> None:
    name, queue = _names()
    model = OverflowingModel()
    window = ContextWindow(max_messages=100)  # never cuts before the model says it overflowed
    agent = DurableAgent(
        name,
        model=model,
        tools=journaled_tools(Journal(tmp_path / "journal"), tmp_path),
        middleware=[window],
        sequential_tools=True,
        # Retried without end by default: an overflow must fail the activity at once anyway.
        model_activity=ActivityOptions(start_to_close_timeout=timedelta(seconds=10)),
    )
    try:
        assert agent.workflow_middleware == [window]
        async with create_worker(client, task_queue=queue, agents=[agent]):
            handle = await start_run(client, name, "Refund order 7", id=name, task_queue=queue)
            output = await handle.result()
        assert output.stop_reason == "end_turn"
        assert output.message == SCRIPT[2]
        # The third call overflowed once (not retried by Temporal), then went out cut in half.
        assert model.sizes[:3] == [1, 3, 5]
        assert len(model.sizes) == 4
        assert model.sizes[3] < 5
        # The workflow chain asked a second model activity, so history records four; a replay
        # schedules the same ones (a different request would fail it as nondeterministic).
        history = await handle.fetch_history()
        scheduled = [
            event
            for event in history.events
            if event.activity_task_scheduled_event_attributes.activity_type.name
            == "strands_middleware.invoke_model"
        ]
        assert len(scheduled) == 4
        await Replayer(workflows=[AgentRun], workflow_runner=workflow_runner()).replay_workflow(
            history
        )
        assert len(model.sizes) == 4
    finally:
        agent.unregister()


async def test_a_summary_its_retried_summarizer_and_its_store_run_inside_the_model_activity(
    client: Client, tmp_path: Path
) -> None:
    name, queue = _names()
    model = OverflowingModel(limit=100)
    summarizer = ScriptedModel(
        [ConnectionError("summarizer unreachable"), text_turn("Order 7 was looked up.")]
    )
    store = InMemoryStore()
    summarize = Summarize(summarizer, max_messages=4, store=store)
    agent = DurableAgent(
        name,
        model=model,
        tools=journaled_tools(Journal(tmp_path / "journal"), tmp_path),
        middleware=[summarize],
        sequential_tools=True,
        model_activity=ActivityOptions(
            start_to_close_timeout=timedelta(seconds=10),
            retry_policy=RetryPolicy(maximum_attempts=1),
        ),
    )
    try:
        assert agent.workflow_middleware == []
        async with create_worker(client, task_queue=queue, agents=[agent]):
            handle = await start_run(client, name, "Refund order 7", id=name, task_queue=queue)
            output = await handle.result()
        assert output.message == SCRIPT[2]
        # The third call went out summarized: the summarizer failed once and was asked again
        # within the same (single-attempt) model activity, and its summary was stored.
        assert len(summarizer.requests) == 2
        assert model.sizes[:2] == [1, 3] and len(model.sizes) == 3 and model.sizes[2] < 5
        assert len(store._cache) == 1  # pyright: ignore[reportPrivateUsage]
        history = await handle.fetch_history()
        scheduled = [
            event
            for event in history.events
            if event.activity_task_scheduled_event_attributes.activity_type.name
            == "strands_middleware.invoke_model"
        ]
        assert len(scheduled) == 3
    finally:
        agent.unregister()
