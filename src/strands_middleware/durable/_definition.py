"""`DurableAgent`: what a worker runs for a durable run of the reference agent.

The definition lives on the workers, not in history: the model, the tools and the middleware are
objects of the worker process, found by the agent's name. Every worker on a task queue must hold
the same definition under a name (Temporal's rule for workflow code: the same code everywhere).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from temporalio.common import RetryPolicy

from ..content import SystemPrompt, ToolChoice
from ..engine._registry import MiddlewareRegistry, MiddlewareSource
from ..interrupts import Interrupt
from ..models import Model
from ..tools import AgentTool
from ._placement import Placed, split_middleware

__all__ = ["ActivityOptions", "DurableAgent", "registered_agent"]


@dataclass(frozen=True)
class ActivityOptions:
    """How the model or tool activities of a durable run are scheduled.

    Attributes:
        start_to_close_timeout: How long one attempt may take before Temporal retries it.
        heartbeat_timeout: How soon a dead worker is noticed: the activity heartbeats in the
            background at a third of it, and an attempt whose heartbeats stop is retried
            elsewhere. None waits out ``start_to_close_timeout`` instead.
        retry_policy: Temporal's retry policy; None is Temporal's default (retries without
            limit, from 1 s, doubling up to 100 s).
    """

    start_to_close_timeout: timedelta = timedelta(minutes=5)
    heartbeat_timeout: timedelta | None = timedelta(seconds=30)
    retry_policy: RetryPolicy | None = None


_AGENTS: dict[str, DurableAgent] = {}


def registered_agent(name: str) -> DurableAgent:
    """The `DurableAgent` registered under ``name`` in this worker process.

    Raises:
        LookupError: none is; the worker was started without it.
    """
    try:
        return _AGENTS[name]
    except KeyError:
        known = ", ".join(sorted(_AGENTS)) or "none"
        raise LookupError(
            f"no DurableAgent named {name!r} is registered in this worker process (registered: "
            f"{known}); pass it to create_worker(..., agents=[...]) on every worker of the "
            "task queue"
        ) from None


class DurableAgent:
    """The reference agent's definition for durable runs: a model, tools and middleware.

    A run (`start_run`) is a Temporal workflow running the reference agent's loop. Every model
    call is one activity and every tool call is one activity, so a run survives a worker's
    crash: on another worker the workflow replays its history (no model is asked again, no
    completed tool runs again) and goes on from where it was.

    Each middleware runs on one side of the activity (see `strands_middleware.durable` and
    `PLACEMENTS`): catalog items where they declare, your own `Middleware` where you place it
    with `in_workflow` or `in_activity`.

    Example:
        ```python
        agent = DurableAgent(
            "support",
            model=ScriptedModel([text_turn("Hello")]),
            middleware=[ToolApproval(tools=["refund"]), Timeout(tool_seconds=30)],
        )
        ```

    Args:
        name: The name runs ask for; unique among the agents of a worker process.
        model: The model, called inside the model activity.
        tools: The tools, each called inside a tool activity.
        system_prompt: A string or a list of system content blocks.
        middleware: Catalog items, or `Middleware` placed with `in_workflow`/`in_activity`.
        tool_choice: Passed to every model call.
        sequential_tools: Run the tool uses of one turn one after another instead of together.
        model_activity: How model activities are scheduled.
        tool_activity: How tool activities are scheduled.
        answer_timeout: How long a run waits for interrupt answers; None waits for ever.
        answer_check: Called by the answer update's validator with the pending `Interrupt` and
            the response; raise (a ``ValueError`` with a message saying what is accepted) to
            reject the answer before it is recorded. It must not change anything.

    Raises:
        PlacementError: a middleware cannot run where it is placed, or is not placed.
        ValueError: two tools share a name, or ``name`` is empty.
    """

    def __init__(
        self,
        name: str,
        *,
        model: Model,
        tools: Iterable[AgentTool] = (),
        system_prompt: SystemPrompt = None,
        middleware: MiddlewareSource | Placed | Iterable[MiddlewareSource | Placed] = (),
        tool_choice: ToolChoice | None = None,
        sequential_tools: bool = False,
        model_activity: ActivityOptions | None = None,
        tool_activity: ActivityOptions | None = None,
        answer_timeout: timedelta | None = None,
        answer_check: Callable[[Interrupt, Any], None] | None = None,
    ) -> None:
        if not isinstance(cast(object, name), str) or not name:
            raise ValueError(f"DurableAgent(name=...) must be a non-empty string, got {name!r}")
        self.name = name
        self.model = model
        self.tools: dict[str, AgentTool] = {}
        for tool in tools:
            if tool.tool_name in self.tools:
                raise ValueError(
                    f"two tools are named {tool.tool_name!r}; tool names must be unique"
                )
            self.tools[tool.tool_name] = tool
        self.system_prompt = system_prompt
        self.tool_choice = tool_choice
        self.sequential_tools = sequential_tools
        self.model_activity = model_activity or ActivityOptions()
        self.tool_activity = tool_activity or ActivityOptions()
        self.answer_timeout = answer_timeout
        self.answer_check = answer_check
        workflow_side, activity_side = split_middleware(middleware)
        self.workflow_middleware: list[MiddlewareSource] = workflow_side
        """What runs in workflow code, in order; a fresh agent per run registers it."""
        self.activity_registry = MiddlewareRegistry()
        """What runs inside the activities, shared by every call in this worker process."""
        self.activity_registry.use(*activity_side)

    def __repr__(self) -> str:
        return f"DurableAgent({self.name!r})"

    def register(self) -> None:
        """Make this agent the one its name finds in this worker process.

        Raises:
            ValueError: another agent is registered under the name.
        """
        known = _AGENTS.get(self.name)
        if known is not None and known is not self:
            raise ValueError(
                f"another DurableAgent is registered as {self.name!r} in this process; give "
                "each agent a name of its own"
            )
        _AGENTS[self.name] = self

    def unregister(self) -> None:
        """Forget this agent in this worker process (a no-op if it was not registered)."""
        if _AGENTS.get(self.name) is self:
            del _AGENTS[self.name]
