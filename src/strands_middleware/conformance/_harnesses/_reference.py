"""The harness of the reference agent (`strands_middleware.agent.Agent`)."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Mapping
from typing import Any

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
from ...host.interrupt_state import InterruptState
from ...testing import ScriptedModel
from ...tools import tool
from .._harness import AgentSetup, Capability, HookName, HookRecorder, RunReport

__all__ = ["ReferenceAgent", "ReferenceHarness"]

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

    async def resume(self, responses: list[dict[str, Any]]) -> RunReport:
        return _report(await self.agent.invoke_async(responses))

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

    def model(self, script: ScriptedModel) -> object:
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
        return Agent(
            model=model,
            tools=[tool(function) for function in setup.tools],
            system_prompt=setup.system_prompt,
            tool_choice=setup.tool_choice,
            middleware=setup.middleware,
            **restored,
        )


def _report(result: AgentResult) -> RunReport:
    return RunReport(
        result.stop_reason, result.message, tuple(result.interrupts), dict(result.usage)
    )
