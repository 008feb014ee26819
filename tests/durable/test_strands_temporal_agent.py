"""This library's middleware on ``temporalio-strands-agents``' ``TemporalAgent``.

The middleware is checked with `for_temporal_host("strands", ...)` and registered through the
strands bridge inside the workflow; the run is on a real dev server, with the library passed
through the sandbox. What the test pins: both stages' handlers run in workflow code (the model
call is the host's activity around the model alone), as `for_temporal_host` assumes.
"""

from __future__ import annotations

import uuid

from temporalio.client import Client
from temporalio.strands_agents import StrandsPlugin
from temporalio.worker import Worker

from strands_middleware.durable import workflow_runner

from .strands_temporal_agent import (
    DELAYS,
    MODELS,
    SEEN,
    overflowing_once,
    scripted_model,
    throttled_once,
)
from .strands_temporal_workflow import (
    StrandsTemporalApproval,
    StrandsTemporalOverflow,
    StrandsTemporalRetry,
    StrandsTemporalRun,
)
from .temporal_server import TemporalServer


async def test_both_stages_handlers_run_in_workflow_code(temporal_server: TemporalServer) -> None:
    plugin = StrandsPlugin(models={"scripted": scripted_model})
    client = await Client.connect(temporal_server.address, plugins=[plugin])
    queue = f"strands-{uuid.uuid4().hex[:8]}"
    SEEN.clear()
    async with Worker(
        client, task_queue=queue, workflows=[StrandsTemporalRun], workflow_runner=workflow_runner()
    ):
        output = await client.execute_workflow(
            StrandsTemporalRun.run, "Is order 7 paid?", id=queue, task_queue=queue
        )
    assert output == "Paid."
    assert SEEN == [("model", True, False), ("tool", True, False), ("model", True, False)]


async def test_an_approval_pauses_in_workflow_code_and_the_model_is_not_asked_again(
    temporal_server: TemporalServer,
) -> None:
    plugin = StrandsPlugin(models={"scripted": scripted_model})
    client = await Client.connect(temporal_server.address, plugins=[plugin])
    queue = f"strands-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[StrandsTemporalApproval],
        workflow_runner=workflow_runner(),
    ):
        output = await client.execute_workflow(
            StrandsTemporalApproval.run, "Is order 7 paid?", id=queue, task_queue=queue
        )
    assert output == ["interrupt", "approve-tool-call", "order 7: 5 EUR, paid", "Paid."]
    assert len(MODELS[-1].script.requests) == 2  # the resume did not ask the model again


async def run_throttled(temporal_server: TemporalServer, *, other_errors: bool) -> str:
    plugin = StrandsPlugin(models={"scripted": throttled_once})
    client = await Client.connect(temporal_server.address, plugins=[plugin])
    queue = f"strands-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[StrandsTemporalRetry],
        workflow_runner=workflow_runner(),
    ):
        return await client.execute_workflow(
            StrandsTemporalRetry.run, other_errors, id=queue, task_queue=queue
        )


async def test_retry_matches_the_providers_exception_through_the_model_activity(
    temporal_server: TemporalServer,
) -> None:
    DELAYS.clear()
    assert await run_throttled(temporal_server, other_errors=False) == "Paid."
    assert len(MODELS[-1].script.requests) == 3  # the throttled call, its retry, the last turn
    assert len(DELAYS) == 1 and 0.1 <= DELAYS[0] <= 0.3  # backoff 0.2, jitter drawn in workflow


async def test_an_error_retry_does_not_name_is_not_retried(temporal_server: TemporalServer) -> None:
    output = await run_throttled(temporal_server, other_errors=True)
    assert len(MODELS[-1].script.requests) == 1
    # Not among the classes Retry names, so the caller gets Temporal's error, as without Retry.
    assert output == "raised ActivityError"


async def test_a_context_overflow_is_cut_in_workflow_code_and_asked_again(
    temporal_server: TemporalServer,
) -> None:
    plugin = StrandsPlugin(models={"scripted": overflowing_once})
    client = await Client.connect(temporal_server.address, plugins=[plugin])
    queue = f"strands-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[StrandsTemporalOverflow],
        workflow_runner=workflow_runner(),
    ):
        handle = await client.start_workflow(
            StrandsTemporalOverflow.run, "Is order 7 paid?", id=queue, task_queue=queue
        )
        output = await handle.result()
    assert output == "Paid."
    sizes = [len(request.messages) for request in MODELS[-1].script.requests]
    # The second call overflowed once (the host does not retry it), then went out cut: the
    # greeting left out, the latest prompt and its tool round kept.
    assert sizes[:2] == [3, 5]
    assert len(sizes) == 3 and sizes[2] < 5
    history = await handle.fetch_history()
    models = [
        event
        for event in history.events
        if "odel" in event.activity_task_scheduled_event_attributes.activity_type.name
    ]
    assert len(models) == 3
