"""Middleware for a ``temporalio-strands-agents`` ``TemporalAgent``, with the tool it calls.

Imported passed through the workflow sandbox (see `strands_temporal_workflow`), so workflow
code and activities share this module's objects: `SEEN` records where each handler ran.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from strands import tool
from strands.types.exceptions import ContextWindowOverflowException, ModelThrottledException
from temporalio import activity, workflow

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.bridges.strands.testing import ScriptedStrandsModel
from strands_middleware.catalog import ContextWindow, Redact, Retry, ToolApproval
from strands_middleware.durable import for_temporal_host, in_workflow
from strands_middleware.testing import text_turn, tool_turn

SEEN: list[tuple[str, bool, bool]] = []
"""(stage, in workflow code, in an activity) for every handler call."""


def recorder(stage: str) -> Any:
    async def record(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
        SEEN.append((stage, workflow.in_workflow(), activity.in_activity()))
        async for event in next_fn(context):
            yield event

    return record


@tool
async def lookup(order: int) -> str:
    """Look an order up.

    Args:
        order: The order number.
    """
    return f"order {order}: 5 EUR, paid"


MODELS: list[ScriptedStrandsModel] = []
"""Every model the factory built, last one last: its script shows the requests it got."""


def scripted_model() -> ScriptedStrandsModel:
    """The model factory the worker's ``StrandsPlugin`` builds the model with."""
    model = ScriptedStrandsModel(
        [tool_turn("lookup", {"order": 7}, tool_use_id="call-lookup"), text_turn("Paid.")]
    )
    MODELS.append(model)
    return model


APPROVAL = for_temporal_host("strands", [ToolApproval(tools=["lookup"])])

MIDDLEWARE = for_temporal_host(
    "strands",
    [
        Redact(),
        in_workflow(InvokeModelStage.wrap(recorder("model"))),
        in_workflow(ExecuteToolStage.wrap(recorder("tool"))),
    ],
)


def throttled_once() -> ScriptedStrandsModel:
    """A model whose first call fails as a throttled provider's would."""
    model = ScriptedStrandsModel(
        [
            ModelThrottledException("slow down"),
            tool_turn("lookup", {"order": 7}, tool_use_id="call-lookup"),
            text_turn("Paid."),
        ]
    )
    MODELS.append(model)
    return model


DELAYS: list[float] = []
"""Every delay a `Retry` waited in workflow code."""


async def recorded_sleep(seconds: float) -> None:
    DELAYS.append(seconds)
    await asyncio.sleep(seconds)  # workflow code: a durable timer


RETRY = for_temporal_host(
    "strands",
    [Retry(attempts=3, on=ModelThrottledException, backoff=0.2, jitter=0.5, sleep=recorded_sleep)],
)

RETRY_OTHER_ERRORS = for_temporal_host("strands", [Retry(attempts=3, on=ConnectionError)])


def overflowing_once() -> ScriptedStrandsModel:
    """A model whose second call reports that the request overflowed its context window."""
    model = ScriptedStrandsModel(
        [
            tool_turn("lookup", {"order": 7}, tool_use_id="call-lookup"),
            ContextWindowOverflowException("the request is longer than the context window"),
            text_turn("Paid."),
        ]
    )
    MODELS.append(model)
    return model


WINDOW = for_temporal_host("strands", [ContextWindow(max_messages=100)])
"""Never cuts before the model says the request overflowed; then cuts it and asks again."""
