"""A pydantic-ai agent made durable by its own ``TemporalDurability``, with our middleware.

Imported passed through the workflow sandbox (see `pydantic_ai_workflow`), so workflow code and
activities share this module's objects: `SEEN` records where each handler ran.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import timedelta
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.durable_exec.temporal import TemporalDurability
from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.workflow import ActivityConfig

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.bridges.pydantic_ai import PydanticAIMiddleware
from strands_middleware.bridges.pydantic_ai.testing import ScriptedPydanticAIModel
from strands_middleware.catalog import Redact, Retry
from strands_middleware.durable import for_temporal_host, in_activity, in_workflow
from strands_middleware.testing import text_turn, tool_turn

SEEN: list[tuple[str, bool, bool]] = []
"""(stage, in workflow code, in an activity) for every handler call."""


def recorder(stage: str) -> Any:
    async def record(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
        SEEN.append((stage, workflow.in_workflow(), activity.in_activity()))
        async for event in next_fn(context):
            yield event

    return record


def lookup(order: int) -> str:
    """Look an order up."""
    return f"order {order}: 5 EUR, paid"


AGENT = Agent(
    ScriptedPydanticAIModel(
        [tool_turn("lookup", {"order": 7}, tool_use_id="call-lookup"), text_turn("Paid.")]
    ),
    name="pydantic_ai_durable",
    tools=[lookup],
    capabilities=[
        TemporalDurability(),
        PydanticAIMiddleware(
            *for_temporal_host(
                "pydantic-ai",
                [
                    Redact(),
                    in_activity(InvokeModelStage.wrap(recorder("model"))),
                    in_workflow(ExecuteToolStage.wrap(recorder("tool"))),
                ],
            )
        ),
    ],
)


class Busy(Exception):
    """The booking system is busy: worth another try."""


BOOKINGS: list[int] = []
"""One entry per run of `book` (inside its tool activity), failed or not."""


def book(order: int) -> str:
    """Book a refund for an order."""
    BOOKINGS.append(order)
    if len(BOOKINGS) == 1:
        raise Busy("the booking system is busy")
    return f"refund booked for order {order}"


RETRYING_AGENT = Agent(
    ScriptedPydanticAIModel(
        [tool_turn("book", {"order": 7}, tool_use_id="call-book"), text_turn("Booked.")]
    ),
    name="pydantic_ai_retrying",
    tools=[book],
    capabilities=[
        # One attempt per activity: a failure reaches the workflow-side Retry at once.
        TemporalDurability(
            activity_config=ActivityConfig(
                start_to_close_timeout=timedelta(seconds=20),
                retry_policy=RetryPolicy(maximum_attempts=1),
            )
        ),
        PydanticAIMiddleware(
            *for_temporal_host(
                "pydantic-ai",
                [Retry(ExecuteToolStage, attempts=2, on=Busy, backoff=0.1)],
            )
        ),
    ],
)
