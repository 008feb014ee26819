"""Starting workers and runs, reading and answering interrupts: the caller's side of a run."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from ..interrupts import Interrupt
from ._activities import execute_tool, invoke_model
from ._definition import DurableAgent
from ._payloads import RunInput, RunOutput
from ._workflow import ANSWER_UPDATE, PENDING_QUERY, AgentRun

__all__ = [
    "answer_interrupt",
    "create_worker",
    "pending_interrupts",
    "start_run",
    "workflow_runner",
]


def workflow_runner() -> SandboxedWorkflowRunner:
    """Temporal's sandbox with ``strands_middleware`` passed through.

    The library's modules are then imported once, outside the sandbox, and shared by every
    run. What keeps workflow code deterministic is where each handler is placed (see
    `PLACEMENTS`): handlers with clocks or I/O run in activities.
    """
    restrictions = SandboxRestrictions.default.with_passthrough_modules("strands_middleware")
    return SandboxedWorkflowRunner(restrictions=restrictions)


def create_worker(
    client: Client,
    *,
    task_queue: str,
    agents: Iterable[DurableAgent],
    **worker_options: Any,
) -> Worker:
    """A Temporal worker running the durable runs of ``agents`` on ``task_queue``.

    It registers the `AgentRun` workflow and the model and tool activities, with
    `workflow_runner`. Run it with ``async with worker:`` or ``await worker.run()``.

    Args:
        client: A connected Temporal client.
        task_queue: The queue the runs are started on.
        agents: The agents this worker serves; every worker of the queue needs the same ones.
        **worker_options: Passed on to ``temporalio.worker.Worker``.

    Raises:
        ValueError: two different agents share a name in this process.
    """
    for agent in agents:
        agent.register()
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[AgentRun],
        activities=[invoke_model, execute_tool],
        workflow_runner=workflow_runner(),
        **worker_options,
    )


async def start_run(
    client: Client,
    agent: str,
    prompt: str | list[Mapping[str, Any]] | None,
    *,
    id: str,
    task_queue: str,
    invocation_state: Mapping[str, Any] | None = None,
) -> WorkflowHandle[AgentRun, RunOutput]:
    """Start a durable run of the agent named ``agent``; ``await handle.result()`` for its end.

    Args:
        client: A connected Temporal client.
        agent: The name of a `DurableAgent` the workers of ``task_queue`` serve.
        prompt: A string, a list of content blocks, or None.
        id: The workflow id: one run per id at a time.
        task_queue: The queue the workers poll.
        invocation_state: JSON values handlers and tools see in ``invocation_state``.
    """
    run = RunInput(
        agent=agent,
        prompt=[dict(block) for block in prompt] if isinstance(prompt, list) else prompt,
        invocation_state=dict(invocation_state or {}),
    )
    return await client.start_workflow(AgentRun.run, run, id=id, task_queue=task_queue)


async def pending_interrupts(handle: WorkflowHandle[Any, Any]) -> list[Interrupt]:
    """The interrupts a run waits on (a Temporal query); empty when it waits on none."""
    found: list[dict[str, Any]] = await handle.query(
        PENDING_QUERY, result_type=list[dict[str, Any]]
    )
    return [Interrupt(id=item["id"], name=item["name"], reason=item["reason"]) for item in found]


async def answer_interrupt(
    handle: WorkflowHandle[Any, Any], interrupt_id: str, response: Any
) -> None:
    """Answer one interrupt of a run (a Temporal update, validated before it is recorded).

    The update's id is the interrupt's, so sending the same answer again (a retry after a lost
    reply) is recorded once.

    Raises:
        temporalio.client.WorkflowUpdateFailedError: the run rejected the answer (malformed, an
            unknown id, or answered already); the run is unchanged.
    """
    # By name, so a client needs no import of the workflow; one overload's types are unknown.
    by_name: Any = handle
    await by_name.execute_update(
        ANSWER_UPDATE,
        {"interruptId": interrupt_id, "response": response},
        id=f"answer:{interrupt_id}",
        result_type=str,
    )
