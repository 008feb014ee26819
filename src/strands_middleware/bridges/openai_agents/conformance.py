"""The harness of an OpenAI Agents SDK ``Agent`` running this library's middleware.

This module imports ``agents``: only ``load_harness("openai_agents")`` imports it, so the rest
of the kit runs without the SDK installed. It turns the SDK's tracing off (the kit runs
offline). A paused run's state is the SDK's own: ``RunState.to_json()``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, cast

from agents import (
    Agent,
    ModelResponse,
    ModelSettings,
    RunConfig,
    RunContextWrapper,
    RunHooks,
    Runner,
    RunResult,
    RunResultStreaming,
    RunState,
    Tool,
    function_tool,
    set_tracing_disabled,
)
from agents.items import TResponseInputItem

from ...conformance import AgentSetup, Capability, HookName, RunReport, is_agent_tool
from ...content import Message, Messages
from ...models import Model
from ...tools import AgentTool
from ._converse import converse_message, converse_messages, host_input, host_tool_choice
from ._middleware import OpenAIAgentsMiddleware
from .testing import ScriptedOpenAIModel

__all__ = ["OpenAIAgentsAgent", "OpenAIAgentsHarness"]


class _HookLog(RunHooks[Any]):
    """The SDK's run hooks around model and tool calls, noted in a log."""

    def __init__(self, log: list[HookName]) -> None:
        self.log = log

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        self.log.append("before_model_call")

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        self.log.append("after_model_call")

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Any, tool: Any) -> None:
        self.log.append("before_tool_call")

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Any, tool: Any, result: Any
    ) -> None:
        self.log.append("after_tool_call")


_CONFIG = RunConfig(tracing_disabled=True)


def _user(prompt: str) -> TResponseInputItem:
    """A user prompt as the SDK's input item."""
    return {"role": "user", "content": prompt}


class OpenAIAgentsAgent:
    """An SDK ``Agent`` with the bridge, behind the kit's `HostAgent` interface."""

    def __init__(
        self,
        agent: Agent[Any],
        middleware: OpenAIAgentsMiddleware,
        saved: Mapping[str, Any] | None = None,
        history: Sequence[Any] = (),
    ) -> None:
        self.agent = agent
        self.middleware = middleware
        self._hooks: list[HookName] = []
        self.history: list[Any] = list((saved or {}).get("history", history))
        self._state_json: Mapping[str, Any] | None = (saved or {}).get("state")
        self._state: RunState[Any] | None = None
        # The last paused run's state: what a caller holds to answer, even once stale.
        self._asked: Mapping[str, Any] | None = self._state_json

    async def _paused_state(self) -> RunState[Any] | None:
        if self._state is None and self._state_json is not None:
            self._state = await RunState.from_json(self.agent, dict(self._state_json))
        return self._state

    async def run(self, prompt: str) -> RunReport:
        # Sent as a caller would, paused or not: the bridge refuses it while a run is paused.
        return self._report(await self._streamed([*self.history, _user(prompt)]))

    async def resume(self, responses: list[dict[str, Any]]) -> RunReport:
        state = await self._paused_state()
        if state is None and self._asked is not None:
            state = await RunState.from_json(self.agent, dict(self._asked))
        if state is None:
            raise RuntimeError("nothing is paused: there is no interrupt to answer")
        self.middleware.resume(state, responses)
        return self._report(await self._streamed(state))

    async def _streamed(self, prompt: Any) -> RunResultStreaming:
        # Streamed, so the model is asked through stream_response and handlers see its deltas.
        result = Runner.run_streamed(
            self.agent,
            prompt,
            run_config=self.middleware.run_config(_CONFIG),
            hooks=_HookLog(self._hooks),
        )
        async for _event in result.stream_events():
            pass
        return result

    def _report(self, result: RunResult | RunResultStreaming) -> RunReport:
        self.history = result.to_input_list()
        responses = result.raw_responses
        message: Message = (
            converse_message(responses[-1].output)
            if responses
            else {"role": "assistant", "content": []}
        )
        if result.interruptions:
            state = result.to_state()
            self._state = state
            self._state_json = self._asked = state.to_json()
            return RunReport("interrupt", message, tuple(self.middleware.interrupts(result)))
        self._state = None
        self._state_json = None
        return RunReport("end_turn", message)

    def stream(self, prompt: str) -> AsyncIterator[object]:
        return self._stream(prompt)

    async def _stream(self, prompt: str) -> AsyncIterator[object]:
        result = Runner.run_streamed(
            self.agent,
            [*self.history, _user(prompt)],
            run_config=self.middleware.run_config(_CONFIG),
            hooks=_HookLog(self._hooks),
        )
        try:
            async for event in result.stream_events():
                yield event
        finally:
            result.cancel()
            # The run ends (and closes what it opened) once its task is done.
            async for _event in result.stream_events():
                pass

    @property
    def messages(self) -> Messages:
        return converse_messages(self.history)

    @property
    def handlers_agent(self) -> object:
        # The bridge hands every handler the middleware object as ``context.agent``.
        return self.middleware

    def forget(self) -> None:
        self.history = []
        self._state = None
        self._state_json = self._asked = None

    def hook_events(self) -> list[HookName]:
        return list(self._hooks)

    def save(self) -> Mapping[str, Any]:
        return {"history": list(self.history), "state": self._state_json}


class OpenAIAgentsHarness:
    """The SDK's ``Agent`` with `ScriptedOpenAIModel`, function tools and the bridge."""

    name = "openai_agents"
    capabilities = frozenset(
        {
            Capability.EVENT_STREAMING,
            Capability.HOOKS,
            Capability.RESUME_IN_ANOTHER_PROCESS,
            Capability.TOOL_CHOICE,
        }
    )
    known_failures: Mapping[str, str] = MappingProxyType(
        {
            "unknown_tool_runs_the_chain_with_tool_none": (
                "openai-agents (0.19 to 0.24) returns a tool error formatter's text as the "
                "call's function_call_output item, and that item (the Responses API's) has no "
                "error status: the chain's error result reaches the model as its text, not "
                "as an error"
            ),
            "system_prompt_blocks_reach_the_model": (
                "openai-agents (0.19 to 0.24) hands a Model its instructions as one string "
                "(get_response and stream_response take system_instructions: str | None), so "
                "system prompt blocks reach the model joined into one"
            ),
            "raising_tool_becomes_an_error_result": (
                "openai-agents (0.19 to 0.24) keeps a function tool's output as a "
                "function_call_output item, which has no error status in the Responses API: "
                "a failed call reaches the model as its text, not as an error"
            ),
            "catalog_tool_approval_gates_the_tool": (
                "openai-agents (0.19 to 0.24) keeps a function tool's output as a "
                "function_call_output item, which has no error status in the Responses API: "
                "a denied call reaches the model as its text, not as an error"
            ),
        }
    )

    def __init__(self) -> None:
        # Offline: the SDK's tracing exports to the provider by default.
        os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
        set_tracing_disabled(True)

    def model(self, script: Model) -> object:
        return ScriptedOpenAIModel(script)

    def build(self, setup: AgentSetup) -> OpenAIAgentsAgent:
        agent, middleware = self._agent(setup)
        history = host_input(list(setup.messages)) if setup.messages else []
        return OpenAIAgentsAgent(agent, middleware, history=history)

    def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> OpenAIAgentsAgent:
        agent, middleware = self._agent(setup)
        return OpenAIAgentsAgent(agent, middleware, saved)

    def _agent(self, setup: AgentSetup) -> tuple[Agent[Any], OpenAIAgentsMiddleware]:
        if isinstance(setup.system_prompt, list):
            raise ValueError(
                "the OpenAI Agents SDK takes an agent's instructions as one string, so system "
                "prompt blocks would reach the model joined into one: give the system prompt as "
                "a string"
            )
        middleware = OpenAIAgentsMiddleware(*setup.middleware)
        tools: list[Tool] = [_tool(each) for each in setup.tools]
        model: Any = setup.model if setup.model is not None else self.model(setup.script)
        agent: Agent[Any] = Agent(
            "conformance",
            model=model,
            tools=tools,
            instructions=setup.system_prompt,
            model_settings=ModelSettings(tool_choice=host_tool_choice(setup.tool_choice)),
            # The configured choice holds on every call, as on the other hosts: the SDK would
            # drop it after the first tool call otherwise.
            reset_tool_choice=False,
        )
        return middleware.wrap(agent), middleware


def _tool(given: Callable[..., Any] | AgentTool) -> Tool:
    """A plain function as the SDK's function tool; a ``@tool`` of this library is the function
    it decorates (the SDK makes its own tool of it); any other tool of this library is refused."""
    if is_agent_tool(given):
        decorated = cast(object, getattr(given, "__wrapped__", None))
        if not callable(decorated):
            raise TypeError(
                f"the OpenAI Agents bridge has no adapter for this library's tools ({given!r}): "
                "give the harness a plain function or a @tool-decorated one"
            )
        given = cast("Callable[..., Any]", decorated)
    # No failure_error_function: a tool's exception reaches the chain, which makes it the
    # error result (the SDK's default turns it into a fixed message first).
    function = cast("Callable[..., Any]", given)
    return function_tool(function, failure_error_function=None)
