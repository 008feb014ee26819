"""The harness of a pydantic-ai ``Agent`` running this library's middleware.

This module imports ``pydantic_ai``: only ``load_harness("pydantic_ai")`` imports it, so the rest
of the kit runs without pydantic-ai installed.

Runs stream (an event-stream handler is given), so the model is asked through
``request_stream`` and handlers see the script's deltas. A paused run's state is pydantic-ai's
own: the message history and the ``DeferredToolRequests`` as JSON.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    ToolCallPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import DeferredToolRequests, ToolDefinition

from ...conformance.harness import AgentSetup, Capability, HookName, RunReport
from ...content import Message, Messages
from ...testing import ScriptedModel
from ._capability import PydanticAIMiddleware
from ._interrupts import interrupts_of, resume_results
from ._messages import converse_message, converse_messages
from .testing import ScriptedPydanticAIModel

__all__ = ["PydanticAIAgent", "PydanticAIHarness"]

_PAUSABLE: Any = [str, DeferredToolRequests]
_REQUESTS = TypeAdapter(DeferredToolRequests)


class _HookLog(AbstractCapability[Any]):
    """pydantic-ai's before/after hooks around model requests and tool execution, noted in a log."""

    def __init__(self, log: list[HookName]) -> None:
        super().__init__()
        self.log = log

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self.log.append("before_model_call")
        return request_context

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        self.log.append("after_model_call")
        return response

    async def before_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
    ) -> dict[str, Any]:
        self.log.append("before_tool_call")
        return args

    async def after_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        result: Any,
    ) -> Any:
        self.log.append("after_tool_call")
        return result


async def _drain(ctx: RunContext[Any], events: AsyncIterable[Any]) -> None:
    async for _event in events:
        pass


class PydanticAIAgent:
    """A pydantic-ai ``Agent`` behind the kit's `HostAgent` interface, with its run state."""

    def __init__(
        self,
        agent: Agent[None, Any],
        hooks: list[HookName],
        history: list[ModelMessage] | None = None,
        paused: DeferredToolRequests | None = None,
    ) -> None:
        self.agent = agent
        self.history: list[ModelMessage] = history or []
        self.paused = paused
        self._hooks = hooks

    async def run(self, prompt: str) -> RunReport:
        if self.paused is not None:
            raise RuntimeError(
                "the run is paused on interrupts: resume it with their answers first"
            )
        result = await self.agent.run(
            prompt, message_history=self.history, event_stream_handler=_drain
        )
        return self._report(result.all_messages(), result.output)

    async def resume(self, responses: list[dict[str, Any]]) -> RunReport:
        if self.paused is None:
            raise RuntimeError("nothing is paused: there is no interrupt to answer")
        results = resume_results(self.paused, responses)
        result = await self.agent.run(
            message_history=self.history,
            deferred_tool_results=results,
            event_stream_handler=_drain,
        )
        return self._report(result.all_messages(), result.output)

    def _report(self, history: list[ModelMessage], output: Any) -> RunReport:
        self.history = history
        last = next((m for m in reversed(history) if isinstance(m, ModelResponse)), None)
        message: Message = (
            converse_message(last) if last is not None else {"role": "assistant", "content": []}
        )
        if isinstance(output, DeferredToolRequests):
            self.paused = output
            return RunReport("interrupt", message, tuple(interrupts_of(output)))
        self.paused = None
        return RunReport("end_turn", message)

    def stream(self, prompt: str) -> AsyncIterator[object]:
        return self._stream(prompt)

    async def _stream(self, prompt: str) -> AsyncIterator[object]:
        async with self.agent.run_stream_events(prompt, message_history=self.history) as events:
            async for event in events:
                yield event

    @property
    def messages(self) -> Messages:
        return converse_messages(self.history)

    def hook_events(self) -> list[HookName]:
        return list(self._hooks)

    def save(self) -> Mapping[str, Any]:
        return {
            "history": ModelMessagesTypeAdapter.dump_python(self.history, mode="json"),
            "paused": None
            if self.paused is None
            else _REQUESTS.dump_python(self.paused, mode="json"),
        }


class PydanticAIHarness:
    """pydantic-ai's ``Agent`` with `ScriptedPydanticAIModel`, function tools and the bridge."""

    name = "pydantic_ai"
    capabilities = frozenset(
        {
            Capability.EVENT_STREAMING,
            Capability.HOOKS,
            Capability.RESUME_IN_ANOTHER_PROCESS,
        }
    )

    def model(self, script: ScriptedModel) -> object:
        return ScriptedPydanticAIModel(script)

    def build(self, setup: AgentSetup) -> PydanticAIAgent:
        agent, hooks = self._agent(setup)
        return PydanticAIAgent(agent, hooks)

    def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> PydanticAIAgent:
        agent, hooks = self._agent(setup)
        paused = saved["paused"]
        return PydanticAIAgent(
            agent,
            hooks,
            ModelMessagesTypeAdapter.validate_python(saved["history"]),
            None if paused is None else _REQUESTS.validate_python(paused),
        )

    def _agent(self, setup: AgentSetup) -> tuple[Agent[None, Any], list[HookName]]:
        hooks: list[HookName] = []
        middleware = PydanticAIMiddleware(*setup.middleware)
        agent: Agent[None, Any] = Agent(
            ScriptedPydanticAIModel(setup.script),
            tools=list(setup.tools),
            instructions=setup.system_prompt,
            capabilities=[_HookLog(hooks), middleware],
            output_type=_PAUSABLE,
        )
        return agent, hooks
