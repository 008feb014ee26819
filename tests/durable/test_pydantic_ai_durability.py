"""This library's middleware on pydantic-ai's own durable execution (``TemporalDurability``).

The middleware is checked with `for_temporal_host("pydantic-ai", ...)` and registered through the
pydantic-ai bridge; the run is a workflow of the test's own on a real dev server, with the
library passed through the sandbox. What the test pins: tool handlers run in workflow code and
model handlers inside the model activity, as `for_temporal_host` assumes.
"""

from __future__ import annotations

import uuid

from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio.client import Client
from temporalio.worker import Worker

from strands_middleware.durable import workflow_runner

from .pydantic_ai_agent import BOOKINGS, SEEN
from .pydantic_ai_workflow import PydanticAIRetryRun, PydanticAIRun
from .temporal_server import TemporalServer


async def test_tool_handlers_run_in_workflow_code_and_model_handlers_in_the_activity(
    temporal_server: TemporalServer,
) -> None:
    client = await Client.connect(temporal_server.address, plugins=[PydanticAIPlugin()])
    queue = f"pydantic-ai-{uuid.uuid4().hex[:8]}"
    SEEN.clear()
    async with Worker(
        client, task_queue=queue, workflows=[PydanticAIRun], workflow_runner=workflow_runner()
    ):
        output = await client.execute_workflow(
            PydanticAIRun.run, "Is order 7 paid?", id=queue, task_queue=queue
        )
    assert output == "Paid."
    assert SEEN == [("model", False, True), ("tool", True, False), ("model", False, True)]


async def test_a_tool_retry_runs_in_workflow_code_as_a_new_tool_activity(
    temporal_server: TemporalServer,
) -> None:
    client = await Client.connect(temporal_server.address, plugins=[PydanticAIPlugin()])
    queue = f"pydantic-ai-retry-{uuid.uuid4().hex[:8]}"
    BOOKINGS.clear()
    async with Worker(
        client,
        task_queue=queue,
        workflows=[PydanticAIRetryRun],
        workflow_runner=workflow_runner(),
    ):
        handle = await client.start_workflow(
            PydanticAIRetryRun.run, "Book order 7", id=queue, task_queue=queue
        )
        output = await handle.result()
    assert output == "Booked."
    # The tool failed once with Busy (rebuilt from Temporal's ActivityError, so on=Busy matched)
    # and Retry called it again: two tool activities, each run once.
    assert BOOKINGS == [7, 7]
    history = await handle.fetch_history()
    tools = [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.activity_task_scheduled_event_attributes.activity_type.name
        and "tool" in event.activity_task_scheduled_event_attributes.activity_type.name
    ]
    assert len(tools) == 2, tools
    timers = [event for event in history.events if event.HasField("timer_started_event_attributes")]
    assert len(timers) == 1  # Retry's wait, a durable timer
