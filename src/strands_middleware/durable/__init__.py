"""Durable runs of the reference agent on Temporal (``pip install strands-middleware[temporal]``).

A run is a Temporal workflow (`AgentRun`) running the reference agent's loop. Every model call
and every tool call is an activity, so the run survives a worker crash and replays on another
worker without asking the model again or running a completed tool again. An interrupt is a
workflow wait: its question is read with a Temporal query (`pending_interrupts`), its answer
given with a validated Temporal update (`answer_interrupt`), from any process, days later.

Where middleware runs: each stage has a workflow chain (in workflow code, replayed after a
crash, so deterministic: ToolApproval, Guardrail, Redact, ToolSelector, ...) whose innermost
step is the activity, and an activity chain (inside the activity, once per attempt, around the
real model or tool: Cache, RateLimit, Timeout, Retry, Tracing, stores, ...). Catalog items
declare their side in `PLACEMENTS`; your own middleware is placed with `in_workflow` or
`in_activity`, and an item placed where it cannot run is refused with `PlacementError`.

Example:
    ```python
    agent = DurableAgent("support", model=model, tools=[refund], middleware=[ToolApproval()])
    async with create_worker(client, task_queue="agents", agents=[agent]):
        handle = await start_run(client, "support", "Refund order 7", id="r-7",
                                 task_queue="agents")
        for interrupt in await pending_interrupts(handle):
            await answer_interrupt(handle, interrupt.id, "approve")
        output = await handle.result()
    ```
"""

try:
    # Fail here, with the fix, rather than deep inside.
    import temporalio  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as _missing:
    raise ImportError(
        'strands_middleware.durable needs temporalio: pip install "strands-middleware[temporal]"'
    ) from _missing

from ._client import (
    answer_interrupt,
    create_worker,
    pending_interrupts,
    start_run,
    workflow_runner,
)
from ._definition import ActivityOptions, DurableAgent
from ._hosts import TemporalHost, for_temporal_host
from ._payloads import RunInput, RunOutput
from ._placement import PLACEMENTS, Placed, PlacementError, in_activity, in_workflow
from ._workflow import AgentRun

__all__ = [
    "PLACEMENTS",
    "ActivityOptions",
    "AgentRun",
    "DurableAgent",
    "Placed",
    "PlacementError",
    "RunInput",
    "RunOutput",
    "TemporalHost",
    "answer_interrupt",
    "create_worker",
    "for_temporal_host",
    "in_activity",
    "in_workflow",
    "pending_interrupts",
    "start_run",
    "workflow_runner",
]
