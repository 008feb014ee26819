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

from .pydantic_ai_agent import SEEN
from .pydantic_ai_workflow import PydanticAIRun
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
