"""The harness of a pydantic-ai ``Agent`` running this library's middleware.

This module imports ``pydantic_ai``: only ``load_harness("pydantic_ai")`` imports it, so the rest
of the kit runs without pydantic-ai installed.

Runs stream (an event-stream handler is given), so the model is asked through
``request_stream`` and handlers see the script's deltas. A paused run's state is pydantic-ai's
own: the message history and the ``DeferredToolRequests`` as JSON.

The scripted path is `ScriptedPydanticAIModel`; the native one pydantic-ai's own
``FunctionModel`` playing the same script (`scripted_function_model`). Not declared: cancelling a
run (pydantic-ai stops a run by cancelling its task; there is no run-wide signal for tools to
watch) and the agent-stream stage.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    ToolCallPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import DeferredToolRequests, ToolDefinition

from ...conformance import AgentSetup, Capability, HookName, RunReport, is_agent_tool
from ...content import Message, Messages, ToolChoice, Usage
from ...engine._registry import MiddlewareSource
from ...events import ToolResultEvent
from ...models import Model
from ...testing import ScriptedModel
from ...tools import AgentTool
from ._capability import PydanticAIMiddleware
from ._interrupts import interrupts_of, resume_results
from ._messages import converse_message, converse_messages, host_messages, stop_reason_of
from .testing import ScriptedPydanticAIModel, scripted_function_model

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
        bridge: PydanticAIMiddleware,
        history: list[ModelMessage] | None = None,
        paused: DeferredToolRequests | None = None,
        *,
        streamed: bool = True,
    ) -> None:
        self.agent = agent
        self.bridge = bridge
        # Streamed runs ask the model through request_stream (handlers see its deltas).
        self._handler: Any = _drain if streamed else None
        self.history: list[ModelMessage] = history or []
        self.paused = paused
        # The last requests a run paused on: what a caller holds to answer, even once stale.
        self._asked = paused
        self._hooks = hooks

    async def run(self, prompt: str) -> RunReport:
        return await self.run_with_state(prompt, {})

    async def run_with_state(self, prompt: str, values: Mapping[str, Any]) -> RunReport:
        # Sent as a caller would, paused or not: pydantic-ai refuses a new prompt while the
        # history ends in tool calls without results. A run's metadata is what the bridge
        # hands its handlers in invocation_state.
        result = await self.agent.run(
            prompt,
            message_history=self.history,
            event_stream_handler=self._handler,
            metadata=dict(values) or None,
        )
        return self._report(result.all_messages(), result.output, result.usage)

    async def resume(self, responses: list[dict[str, Any]]) -> RunReport:
        # A caller answers the requests it holds, stale or not: pydantic-ai refuses results
        # when the history has no tool calls waiting for them.
        asked = self.paused or self._asked
        if asked is None:
            raise RuntimeError("no run of this agent has paused: there is no interrupt to answer")
        results = resume_results(asked, responses, middleware=self.bridge)
        result = await self.agent.run(
            message_history=self.history,
            deferred_tool_results=results,
            event_stream_handler=self._handler,
        )
        return self._report(result.all_messages(), result.output, result.usage)

    def forget(self) -> None:
        self.history = []
        self.paused = self._asked = None

    @property
    def handlers_agent(self) -> object:
        return self.agent

    def use(self, *middleware: MiddlewareSource) -> PydanticAIAgent:
        self.bridge.use(*middleware)
        return self

    def _report(self, history: list[ModelMessage], output: Any, counted: Any) -> RunReport:
        self.history = history
        usage: Usage = {
            "inputTokens": int(counted.input_tokens),
            "outputTokens": int(counted.output_tokens),
            "totalTokens": int(counted.input_tokens + counted.output_tokens),
        }
        last = next((m for m in reversed(history) if isinstance(m, ModelResponse)), None)
        message: Message = (
            converse_message(last) if last is not None else {"role": "assistant", "content": []}
        )
        if isinstance(output, DeferredToolRequests):
            self.paused = self._asked = output
            return RunReport("interrupt", message, tuple(interrupts_of(output)), usage)
        self.paused = None
        stop_reason = stop_reason_of(last) if last is not None else "end_turn"
        return RunReport(stop_reason, message, (), usage)

    def cancel(self) -> None:
        raise NotImplementedError(
            "a pydantic-ai agent has no run-wide cancel: cancel the task awaiting the run"
        )

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
    """pydantic-ai's ``Agent`` with `ScriptedPydanticAIModel`, function tools and the bridge.

    Args:
        streamed: Run with an event-stream handler, so the model is asked through
            ``request_stream`` (the kit's way: Wrap handlers see the deltas). False asks it
            through ``request``, where a ``FunctionModel`` reports the script's own usage
            (streamed, pydantic-ai estimates it).
    """

    def __init__(self, *, streamed: bool = True) -> None:
        self.streamed = streamed

    name = "pydantic_ai"
    capabilities = frozenset(
        {
            Capability.EVENT_STREAMING,
            Capability.HOOKS,
            Capability.RESUME_IN_ANOTHER_PROCESS,
            Capability.RUN_STATE,
            Capability.TOOL_CHOICE,
            Capability.CALLER_STATE,
        }
    )
    known_failures: Mapping[str, str] = {
        "unknown_tool_runs_the_chain_with_tool_none": (
            "pydantic-ai (2.62 and newest tested) answers a call to a tool the agent does not "
            "have itself, before any tool hook runs, so the chain never sees it"
        ),
        "unknown_tool_can_be_answered_by_middleware": (
            "pydantic-ai answers a call to an unknown tool before any tool hook runs, so "
            "middleware cannot answer it"
        ),
        "middleware_retry_is_one_hook_pair": (
            "pydantic-ai's before/after tool-execute hooks run inside the handler its execution "
            "hook is given, so a Wrap handler calling next_fn twice fires them twice"
        ),
        "middleware_retry_is_one_hook_pair[native model]": (
            "pydantic-ai's tool-execute hooks fire twice for a Wrap handler calling next_fn "
            "twice, whatever the model (see above)"
        ),
    }

    def model(self, script: Model) -> object:
        return ScriptedPydanticAIModel(script)

    def native_model(self, script: ScriptedModel) -> object:
        return scripted_function_model(script)

    def build(self, setup: AgentSetup) -> PydanticAIAgent:
        agent, hooks, bridge = self._agent(setup)
        history = host_messages(list(setup.messages), (), (), []) if setup.messages else []
        return PydanticAIAgent(agent, hooks, bridge, history, streamed=self.streamed)

    def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> PydanticAIAgent:
        agent, hooks, bridge = self._agent(setup)
        paused = saved["paused"]
        return PydanticAIAgent(
            agent,
            hooks,
            bridge,
            ModelMessagesTypeAdapter.validate_python(saved["history"]),
            None if paused is None else _REQUESTS.validate_python(paused),
            streamed=self.streamed,
        )

    def _agent(
        self, setup: AgentSetup
    ) -> tuple[Agent[None, Any], list[HookName], PydanticAIMiddleware]:
        hooks: list[HookName] = []
        middleware = PydanticAIMiddleware(*setup.middleware)
        if isinstance(setup.system_prompt, list):
            raise ValueError(
                "pydantic-ai joins an agent's instructions into one text, so system prompt "
                "blocks would reach the model as one block: give the system prompt as a string, "
                "or set blocks per call with an InvokeModelStage Input handler"
            )
        model: Any = setup.model if setup.model is not None else self.model(setup.script)
        agent: Agent[None, Any] = Agent(
            model,
            tools=[_tool(each) for each in setup.tools],
            instructions=setup.system_prompt,
            capabilities=[_HookLog(hooks), middleware],
            output_type=_PAUSABLE,
            model_settings=_settings(setup.tool_choice),
        )
        return agent, hooks, middleware


def _settings(choice: ToolChoice | None) -> ModelSettings | None:
    """pydantic-ai's model settings carrying a Converse tool choice (None for none)."""
    if choice is None:
        return None
    given: Any = choice
    if "auto" in given:
        return {"tool_choice": "auto"}
    if "any" in given:
        return {"tool_choice": "required"}
    return {"tool_choice": [str(given["tool"]["name"])]}


def _tool(given: Callable[..., Any] | AgentTool) -> Any:
    """A plain function as it is (pydantic-ai makes it a tool); a tool of this library as a
    pydantic-ai tool running the tool's own ``stream``."""
    if not is_agent_tool(given):
        return given
    agent_tool: AgentTool = given

    async def run(ctx: RunContext[Any], **arguments: Any) -> Any:
        tool_use: Any = {
            "toolUseId": ctx.tool_call_id or "",
            "name": agent_tool.tool_name,
            "input": arguments,
        }
        result: ToolResultEvent | None = None
        async for event in agent_tool.stream(tool_use, {}):
            if isinstance(event, ToolResultEvent):
                result = event
        if result is None:
            raise RuntimeError(f"the tool {agent_tool.tool_name} ended without a result")
        contents = result.tool_result["content"]
        if result.tool_result["status"] == "error":
            # What the tool raised, as pydantic-ai would see it raised.
            text = "".join(str(item.get("text", "")) for item in contents)
            raise result.exception or ToolFailed(text)
        if len(contents) == 1 and "json" in contents[0]:
            return contents[0]["json"]
        return "".join(str(item.get("text", "")) for item in contents)

    spec = agent_tool.tool_spec
    # pydantic-ai's own constructor; its return type is only partly annotated.
    from_schema: Any = Tool.from_schema  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return from_schema(
        run,
        name=spec["name"],
        description=spec.get("description"),
        json_schema=spec["inputSchema"]["json"],
        takes_ctx=True,
    )
