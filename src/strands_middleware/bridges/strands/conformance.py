"""The harness of a ``strands.Agent`` running this library's middleware through `StrandsBridge`.

This module imports ``strands``: only ``load_harness("strands")`` imports it, so the rest of the
kit runs without strands-agents installed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import strands
from strands.hooks import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
)

from ...conformance.harness import AgentSetup, Capability, HookName, HookRecorder, RunReport
from ...content import Messages
from ...interrupts import Interrupt
from ...testing import ScriptedModel
from ._bridge import StrandsBridge
from .testing import ScriptedStrandsModel

__all__ = ["StrandsAgent", "StrandsHarness"]

_HOOKS: dict[type[Any], HookName] = {
    BeforeModelCallEvent: "before_model_call",
    AfterModelCallEvent: "after_model_call",
    BeforeToolCallEvent: "before_tool_call",
    AfterToolCallEvent: "after_tool_call",
}


class StrandsAgent:
    """A ``strands.Agent`` behind the kit's `HostAgent` interface."""

    def __init__(self, agent: strands.Agent) -> None:
        self.agent = agent
        self._hooks: list[HookName] = []
        for event_type, name in _HOOKS.items():
            agent.add_hook(HookRecorder(self._hooks, name), event_type)

    async def run(self, prompt: str) -> RunReport:
        return _report(await self.agent.invoke_async(prompt))

    async def resume(self, responses: list[dict[str, Any]]) -> RunReport:
        prompt: Any = responses
        return _report(await self.agent.invoke_async(prompt))

    def stream(self, prompt: str) -> AsyncIterator[object]:
        return self.agent.stream_async(prompt)

    @property
    def messages(self) -> Messages:
        messages: Any = self.agent.messages
        return list(messages)

    def hook_events(self) -> list[HookName]:
        return list(self._hooks)

    def save(self) -> Mapping[str, Any]:
        # The snapshot's creation time is left out: two saves of one state are equal.
        snapshot = self.agent.take_snapshot(preset="session")
        return {"schema_version": snapshot.schema_version, "data": snapshot.data}


class StrandsHarness:
    """``strands.Agent`` with `ScriptedStrandsModel`, ``strands.tool`` tools and the bridge."""

    name = "strands"
    capabilities = frozenset(Capability)

    def model(self, script: ScriptedModel) -> object:
        return ScriptedStrandsModel(script)

    def build(self, setup: AgentSetup) -> StrandsAgent:
        return StrandsAgent(self._agent(setup))

    def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> StrandsAgent:
        agent = self._agent(setup)
        agent.load_snapshot(
            strands.Snapshot.from_dict(
                {
                    "scope": "agent",
                    "schema_version": saved["schema_version"],
                    "created_at": "",
                    "data": saved["data"],
                    "app_data": {},
                }
            )
        )
        return StrandsAgent(agent)

    def _agent(self, setup: AgentSetup) -> strands.Agent:
        # strands' own decorator; its type is only partly annotated.
        as_tool: Any = strands.tool  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        agent = strands.Agent(
            model=ScriptedStrandsModel(setup.script),
            tools=[as_tool(function) for function in setup.tools],
            system_prompt=setup.system_prompt,
            callback_handler=None,
        )
        StrandsBridge.of(agent).use(*setup.middleware)
        return agent


def _report(result: Any) -> RunReport:
    interrupts = tuple(
        Interrupt(id=i.id, name=i.name, reason=i.reason, response=i.response)
        for i in result.interrupts or ()
    )
    return RunReport(str(result.stop_reason), result.message, interrupts)
