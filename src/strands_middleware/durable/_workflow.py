"""`AgentRun`: the workflow that runs the reference agent's loop, durably.

The loop is the reference `Agent` itself, built fresh for each run inside workflow code, with
the workflow side of the middleware registered on it. Two things stand in for the parts that
must not run in workflow code:

* the **model** is reached through the innermost InvokeModelStage Wrap handler, which runs the
  model activity (the activity side of the chain and the model) and yields its `ModelStopReason`
  instead of calling ``next_fn``; the agent's own model is a placeholder that is never called;
* each **tool** is a stand-in with the real tool's spec whose ``stream`` runs the tool activity
  (the activity side of the chain and the tool), so the tool stage's host rules (fail closed,
  interrupts registered by the executor) hold on the workflow side as on any host.

An interrupt ends an ``invoke_async`` pass with ``stop_reason == "interrupt"``; the workflow then
waits (no worker is held) until every pending interrupt is answered through the
``answer_interrupt`` update, and resumes the agent with the answers. The answers are in history,
so a replay resumes the same way and never asks again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Callable
from typing import Any, cast

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from ..agent import Agent
from ..content import Messages, SystemContentBlock, ToolChoice, ToolResult, ToolSpec, ToolUse
from ..engine._handlers import MiddlewareNext
from ..events import ModelStopReason, ToolResultEvent, TypedEvent
from ..interrupts import Interrupt
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._activities import execute_tool, invoke_model
from ._definition import ActivityOptions, DurableAgent, registered_agent
from ._payloads import ModelCall, RunInput, RunOutput, ToolCall

__all__ = ["ANSWER_UPDATE", "PENDING_QUERY", "AgentRun", "check_answer"]

PENDING_QUERY = "pending_interrupts"
ANSWER_UPDATE = "answer_interrupt"


def _portable(state: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``invocation_state`` an activity can be sent (JSON values only)."""
    kept: dict[str, Any] = {}
    for key, value in state.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        kept[key] = value
    return kept


def _schedule(options: ActivityOptions) -> dict[str, Any]:
    return {
        "start_to_close_timeout": options.start_to_close_timeout,
        "heartbeat_timeout": options.heartbeat_timeout,
        "retry_policy": options.retry_policy,
    }


class _ModelInActivity:
    """The agent's model in workflow code: never called, since the innermost handler is."""

    def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        system_prompt_content: list[SystemContentBlock] | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        raise RuntimeError(
            "a durable run calls its model inside the model activity; a workflow-side "
            "InvokeModelStage handler that replaces context.model has no effect there: place "
            "it with in_activity(...)"
        )


def _model_in_activity(
    agent: DurableAgent,
) -> Callable[
    [InvokeModelContext, MiddlewareNext[InvokeModelContext, TypedEvent]],
    AsyncGenerator[TypedEvent, None],
]:
    async def model_activity(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        # The innermost step of the workflow chain: the activity instead of next_fn.
        reply = await workflow.execute_activity(
            invoke_model,
            ModelCall(
                agent=agent.name,
                messages=cast("list[dict[str, Any]]", context.messages),
                system_prompt=context.system_prompt,
                tool_specs=cast("list[dict[str, Any]]", context.tool_specs),
                tool_choice=cast("dict[str, Any] | None", context.tool_choice),
                invocation_state=_portable(context.invocation_state),
            ),
            **_schedule(agent.model_activity),
        )
        yield ModelStopReason(
            reply.stop_reason,
            cast(Any, reply.message),
            cast(Any, reply.usage),
            cast(Any, reply.metrics),
        )

    model_activity.__qualname__ = "DurableRun[model activity]"
    return model_activity


class _ToolInActivity:
    """A tool in workflow code: the real tool's spec, run by the tool activity."""

    def __init__(self, agent: DurableAgent, spec: ToolSpec) -> None:
        self._agent = agent
        self._spec = spec

    @property
    def tool_name(self) -> str:
        return self._spec["name"]

    @property
    def tool_spec(self) -> ToolSpec:
        return self._spec

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        reply = await workflow.execute_activity(
            execute_tool,
            ToolCall(
                agent=self._agent.name,
                tool_use=cast("dict[str, Any]", tool_use),
                invocation_state=_portable(invocation_state),
            ),
            **_schedule(self._agent.tool_activity),
        )
        yield ToolResultEvent(cast(ToolResult, reply.result))


def _run_agent(agent: DurableAgent) -> Agent:
    return Agent(
        model=_ModelInActivity(),
        tools=[_ToolInActivity(agent, tool.tool_spec) for tool in agent.tools.values()],
        system_prompt=agent.system_prompt,
        middleware=[
            *agent.workflow_middleware,
            InvokeModelStage.wrap(_model_in_activity(agent)),
        ],
        tool_choice=agent.tool_choice,
        sequential_tools=agent.sequential_tools,
    )


def check_answer(
    pending: list[Interrupt],
    answered: dict[str, Any],
    answer: object,
    agent: DurableAgent | None = None,
) -> str:
    """The interrupt id ``answer`` answers; raises if it may not be accepted.

    An answer is ``{"interruptId": <id of a pending, unanswered interrupt>, "response": <JSON
    value, not None>}``, and passes the agent's ``answer_check`` if it has one.

    Raises:
        ValueError: the answer is malformed, names no pending interrupt, or one answered
            already; or what ``answer_check`` raised.
    """
    if not isinstance(answer, dict):
        raise ValueError(f'an answer is {{"interruptId": ..., "response": ...}}, got {answer!r}')
    fields = cast("dict[str, Any]", answer)
    if set(fields) != {"interruptId", "response"}:
        raise ValueError(
            f'an answer has exactly the keys "interruptId" and "response", got {sorted(fields)}'
        )
    interrupt_id = fields["interruptId"]
    ids = [interrupt.id for interrupt in pending]
    if interrupt_id not in ids:
        raise ValueError(
            f"no pending interrupt has the id {interrupt_id!r}; pending: {ids or 'none'} (query "
            f"{PENDING_QUERY!r} for them)"
        )
    if interrupt_id in answered:
        raise ValueError(f"interrupt {interrupt_id!r} is answered already")
    if fields["response"] is None:
        raise ValueError("an answer's response may not be None (None means 'not answered')")
    if agent is not None and agent.answer_check is not None:
        agent.answer_check(pending[ids.index(interrupt_id)], fields["response"])
    return cast(str, interrupt_id)


@workflow.defn(name="strands_middleware.AgentRun")
class AgentRun:
    """A durable run of a `DurableAgent` (see the module notes).

    Query ``pending_interrupts`` lists the interrupts waiting for an answer (``id``, ``name``,
    ``reason``); update ``answer_interrupt`` answers one, and its validator rejects a malformed
    answer, an unknown id or a second answer without touching the run.
    """

    @workflow.init
    def __init__(self, run: RunInput) -> None:
        # Set up here rather than in run(): an update arriving with the first workflow task is
        # validated before run() starts.
        self._agent_name = run.agent
        self._pending: list[Interrupt] = []
        self._answers: dict[str, Any] = {}
        self._asked: list[str] = []

    @workflow.run
    async def run(self, run: RunInput) -> RunOutput:
        """Run the agent to its end, waiting for answers whenever it is interrupted."""
        definition = registered_agent(run.agent)
        agent = _run_agent(definition)
        state = dict(run.invocation_state)
        try:
            result = await agent.invoke_async(run.prompt, **state)
            while result.stop_reason == "interrupt":
                self._pending = list(result.interrupts)
                self._asked.extend(interrupt.id for interrupt in self._pending)
                try:
                    await workflow.wait_condition(
                        lambda: all(i.id in self._answers for i in self._pending),
                        timeout=definition.answer_timeout,
                    )
                except asyncio.TimeoutError:
                    raise ApplicationError(
                        f"no answer to interrupts {[i.id for i in self._pending]} within "
                        f"{definition.answer_timeout}",
                        type="InterruptTimeout",
                        non_retryable=True,
                    ) from None
                responses = [
                    {"interruptResponse": {"interruptId": i.id, "response": self._answers[i.id]}}
                    for i in self._pending
                ]
                self._pending = []
                self._answers = {}
                result = await agent.invoke_async(responses, **state)
        except ActivityError as failed:
            # A model call failed for good (its retry policy gave up): end the run, rather than
            # failing workflow tasks for ever.
            cause = failed.cause
            raise ApplicationError(
                f"the model call failed after its retries: {cause}",
                type="ModelCallFailed",
                non_retryable=True,
            ) from failed
        await workflow.wait_condition(workflow.all_handlers_finished)
        return RunOutput(
            stop_reason=result.stop_reason,
            message=cast("dict[str, Any]", result.message),
            messages=cast("list[dict[str, Any]]", agent.messages),
            usage=cast("dict[str, int]", dict(result.usage)),
            interrupts_asked=list(self._asked),
        )

    @workflow.query(name=PENDING_QUERY)
    def pending_interrupts(self) -> list[dict[str, Any]]:
        """The interrupts waiting for an answer: ``id``, ``name`` and ``reason`` of each."""
        return [
            {"id": i.id, "name": i.name, "reason": i.reason}
            for i in self._pending
            if i.id not in self._answers
        ]

    @workflow.update(name=ANSWER_UPDATE)
    def answer_interrupt(self, answer: Any) -> str:
        """Answer one pending interrupt; returns its id."""
        interrupt_id = check_answer(self._pending, self._answers, answer)
        self._answers[interrupt_id] = answer["response"]  # checked in full by the validator
        return interrupt_id

    @answer_interrupt.validator
    def _validate_answer(self, answer: Any) -> None:
        check_answer(self._pending, self._answers, answer, registered_agent(self._agent_name))
