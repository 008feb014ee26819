"""The harness of the reference agent (`strands_middleware.agent.Agent`)."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, cast

from ...agent import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    Agent,
    AgentResult,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookEvent,
)
from ...content import Messages
from ...engine._registry import MiddlewareSource
from ...host._interrupt_state import InterruptState
from ...models import Model
from ...tools import AgentTool, tool
from .._harness import AgentSetup, Capability, HookName, HookRecorder, RunReport, is_agent_tool

__all__ = ["ReferenceAgent", "ReferenceHarness", "as_agent_tool"]

_HOOKS: dict[type[HookEvent], HookName] = {
    BeforeModelCallEvent: "before_model_call",
    AfterModelCallEvent: "after_model_call",
    BeforeToolCallEvent: "before_tool_call",
    AfterToolCallEvent: "after_tool_call",
}


class ReferenceAgent:
    """A reference `Agent` behind the kit's `HostAgent` interface."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._hooks: list[HookName] = []
        for event_type, name in _HOOKS.items():
            agent.add_hook(event_type, HookRecorder(self._hooks, name))

    async def run(self, prompt: str) -> RunReport:
        return _report(await self.agent.invoke_async(prompt))

    async def run_with_state(self, prompt: str, values: Mapping[str, Any]) -> RunReport:
        return _report(await self.agent.invoke_async(prompt, **values))

    async def resume(self, responses: list[dict[str, Any]]) -> RunReport:
        return _report(await self.agent.invoke_async(responses))

    def forget(self) -> None:
        self.agent.messages.clear()

    @property
    def handlers_agent(self) -> object:
        return self.agent

    def use(self, *middleware: MiddlewareSource) -> ReferenceAgent:
        self.agent.use(*middleware)
        return self

    def cancel(self) -> None:
        self.agent.cancel()

    def stream(self, prompt: str) -> AsyncIterator[object]:
        return self.agent.stream_async(prompt)

    @property
    def messages(self) -> Messages:
        return self.agent.messages

    def hook_events(self) -> list[HookName]:
        return list(self._hooks)

    def save(self) -> Mapping[str, Any]:
        return {
            "messages": copy.deepcopy(self.agent.messages),
            "interrupt_state": self.agent.interrupt_state.to_dict(),
        }


class ReferenceHarness:
    """The reference agent, playing the script itself (it is a `Model` already)."""

    name = "reference"
    capabilities = frozenset(Capability)
    known_failures: Mapping[str, str] = {}

    def model(self, script: Model) -> object:
        return script

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        return ReferenceAgent(self._agent(setup))

    def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> ReferenceAgent:
        return ReferenceAgent(
            self._agent(
                setup,
                messages=copy.deepcopy(saved["messages"]),
                interrupt_state=InterruptState.from_dict(saved["interrupt_state"]),
            )
        )

    def _agent(self, setup: AgentSetup, **restored: Any) -> Agent:
        model: Any = setup.model if setup.model is not None else setup.script
        restored.setdefault("messages", copy.deepcopy(list(setup.messages)))
        return Agent(
            model=model,
            tools=[as_agent_tool(each) for each in setup.tools],
            system_prompt=setup.system_prompt,
            tool_choice=setup.tool_choice,
            middleware=setup.middleware,
            **restored,
        )


def as_agent_tool(given: Callable[..., Any] | AgentTool) -> AgentTool:
    """``given`` as a tool of this library: a plain function through ``@tool``."""
    if is_agent_tool(given):
        return given
    return tool(cast("Callable[..., Any]", given))


def _report(result: AgentResult) -> RunReport:
    return RunReport(result.stop_reason, result.message, tuple(result.interrupts), result.usage)
