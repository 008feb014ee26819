"""`PydanticAIMiddleware`: this library's registry as a pydantic-ai capability.

A pydantic-ai user adds behaviour by passing capabilities to their ``Agent``; this one runs this
library's middleware at two of pydantic-ai's points:

* **model calls** (`InvokeModelStage`): a wrapper model around the model serving each request
  (`_model`), so a Wrap handler may call ``next_fn`` as often as it likes;
* **tool calls** (`ExecuteToolStage`): the tool-execution hook (`_tools`), with interrupts as
  pydantic-ai's approval deferral (`_interrupts`).

pydantic-ai has no pass of its loop a handler could pause and resume, so the provisional
`AgentStreamStage` is refused at registration.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from types import MappingProxyType
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition

from ...content import ToolUse
from ...engine._registry import MiddlewareSource
from ...exceptions import InterruptException, UnsupportedStageError
from ...host._mixin import UNKNOWN_TOOLS, MiddlewareHostMixin
from ...host._tool_call import ToolStagePoint, copy_tool_use, make_tool_terminal
from ...stages._agent_stream import AgentStreamStage
from ...stages._execute_tool import ExecuteToolStage
from ...stages._invoke_model import InvokeModelStage
from ._interrupts import answers_of, deferral
from ._model import MiddlewareModel
from ._tools import PydanticAITool, cancel_signal, host_result

__all__ = ["PydanticAIMiddleware", "UnsupportedStageError"]

_REFUSAL = (
    "AgentStreamStage is not supported on pydantic-ai: pydantic-ai's loop has no pass a "
    "handler could pause and resume, so AgentStreamStage handlers would never run. Use "
    "InvokeModelStage or ExecuteToolStage handlers instead."
)


class PydanticAIMiddleware(AbstractCapability[Any], MiddlewareHostMixin):
    """This library's middleware on a pydantic-ai ``Agent``, as one of its capabilities.

    Example:
        ```python
        from pydantic_ai import Agent
        from strands_middleware.bridges.pydantic_ai import PydanticAIMiddleware

        agent = Agent(model, tools=[delete_file],
                      capabilities=[PydanticAIMiddleware(timing, ToolApproval())])
        ```

    ``context.invocation_state`` is one dict per run, shared by every stage of it; it holds
    the entries of the run's metadata (``agent.run(..., metadata={"context_window": 32_000})``
    gives ``context.invocation_state["context_window"] == 32_000``, the way a strands caller
    sets a per-call value) and the run's pydantic-ai dependencies under ``"deps"``
    (``agent.run(..., deps=db)`` gives ``context.invocation_state["deps"] is db``; no key when
    the run has none). What a handler writes there lasts for the run, and never reaches the
    run's metadata. A call to a tool the agent does not have is answered by
    pydantic-ai before any hook, so `ToolMock` fixtures for such tools warn when registered.

    Args:
        middleware: What to register, in order (as ``use()`` takes it).

    Raises:
        TypeError: an argument is not middleware, or it is an ``AgentStreamStage`` handler.
    """

    refused_stages = MappingProxyType({AgentStreamStage: _REFUSAL})
    lacks = MappingProxyType(
        {
            UNKNOWN_TOOLS: "pydantic-ai answers a call to a tool the agent does not have "
            "itself, before any hook runs"
        }
    )

    def __init__(self, *middleware: MiddlewareSource) -> None:
        super().__init__()
        self._agent: Any = None
        # The run's invocation_state: for_run gives each run its own, so an agent's capability
        # holds none until a call needs one outside a run (see `_run_state`).
        self._state: dict[str, Any] | None = None
        self.use(*middleware)

    # ---- pydantic-ai's side ------------------------------------------------------------------

    def for_agent(self, agent: AbstractAgent[Any, Any]) -> AbstractCapability[Any]:
        # The capability is bound to its first agent itself (one object per agent, not two);
        # given to a second agent, it is copied for that one.
        if self._agent is None or self._agent is agent:
            self._agent = agent
            return self
        bound = copy.copy(self)
        bound._agent = agent
        return bound

    async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
        run = copy.copy(self)
        # invocation_state: one dict for every stage of the run, holding the run's metadata
        # (what a caller gives the run, as a strands caller gives invocation_state) and deps.
        state: dict[str, Any] = dict(ctx.metadata or {})
        if ctx.deps is not None:
            state["deps"] = ctx.deps
        run._state = state
        return run

    def _run_state(self) -> dict[str, Any]:
        state = self._state
        if state is None:
            state = self._state = {}
        return state

    def get_wrapper_model(self, model: Model) -> Model | None:
        registry = self.middleware_registry
        if not registry.has_handlers(InvokeModelStage):
            return None
        return MiddlewareModel(model, registry, self._agent, self._run_state())

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        registry = self.middleware_registry
        if not registry.has_handlers(ExecuteToolStage):
            return await handler(args)
        # The stage point hands handlers a copy of the call; the tool keeps one of its own.
        tool_use: ToolUse = {"toolUseId": call.tool_call_id, "name": call.tool_name, "input": args}
        tool = PydanticAITool(tool_def, handler, args, copy_tool_use(tool_use)["input"])
        answered = answers_of(ctx.tool_call_metadata) if ctx.tool_call_approved else {}
        signal = cancel_signal()
        point = ToolStagePoint(
            registry,
            agent=self._agent,
            tool=tool,
            tool_use=tool_use,
            invocation_state=self._run_state(),
            cancel_signal=signal,
            interrupts=answered,
            tracks_changes=False,  # the tool compares the call's input itself
        )
        try:
            result = await point.result(make_tool_terminal(signal))
        except InterruptException as paused:
            raise deferral(paused.interrupt, answered) from None
        return host_result(result, tool)
