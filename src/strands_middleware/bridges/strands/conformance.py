"""The harness of a ``strands.Agent`` running this library's middleware through `StrandsBridge`.

This module imports ``strands``: only ``load_harness("strands")`` imports it, so the rest of the
kit runs without strands-agents installed.

The scripted path hands strands this library's `ScriptedModel` itself (strands runs any model of
its ``stream`` shape); the native one, `ScriptedStrandsModel`, is a ``strands.models.Model``
subclass playing the same script. Not declared: an agent-level tool choice (``strands.Agent``
has none, so a setup with one is refused).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import AsyncIterator, Generator, Mapping
from typing import Any, cast

import strands
from strands.hooks import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
)
from strands.types.exceptions import EventLoopException

from ...conformance import (
    AgentSetup,
    Capability,
    HookName,
    HookRecorder,
    RunReport,
    is_agent_tool,
)
from ...content import Messages
from ...engine._registry import MiddlewareSource
from ...interrupts import Interrupt
from ...models import Model
from ...testing import ScriptedModel
from ._bridge import StrandsBridge
from ._tools import LibraryTool
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
        with _unwrapped():
            return _report(await self.agent.invoke_async(prompt))

    async def run_with_state(self, prompt: str, values: Mapping[str, Any]) -> RunReport:
        with _unwrapped():
            return _report(await self.agent.invoke_async(prompt, invocation_state=dict(values)))

    async def resume(self, responses: list[dict[str, Any]]) -> RunReport:
        prompt: Any = responses
        with _unwrapped():
            return _report(await self.agent.invoke_async(prompt))

    def forget(self) -> None:
        self.agent.messages.clear()

    @property
    def handlers_agent(self) -> object:
        return self.agent

    def use(self, *middleware: MiddlewareSource) -> StrandsAgent:
        StrandsBridge.of(self.agent).use(*middleware)
        return self

    def cancel(self) -> None:
        self.agent.cancel()

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
    capabilities = frozenset(Capability) - {Capability.TOOL_CHOICE}
    known_failures: Mapping[str, str] = {
        "handlers_closed_innermost_first_on_early_stop": (
            "strands-agents (1.62 and newest tested): when the caller closes stream_async early, "
            "strands' event loop leaves the model-stage chain suspended; it is closed only when "
            "the asyncio event loop shuts down"
        ),
        "handlers_closed_innermost_first_on_early_stop[native model]": (
            "strands-agents: as above, whatever the model (the chain is left suspended by "
            "strands' event loop when stream_async is closed early)"
        ),
    }

    def model(self, script: Model) -> object:
        # strands reads ``stateful`` off its model; this library's models do not have it.
        played: Any = script
        if not hasattr(played, "stateful"):
            played.stateful = False
        return played

    def native_model(self, script: ScriptedModel) -> object:
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
        if setup.tool_choice is not None:
            raise ValueError(
                "strands.Agent has no agent-level tool choice: set one per call with an "
                "InvokeModelStage Input handler (context.replace(tool_choice=...))"
            )
        model: Any = setup.model if setup.model is not None else self.model(setup.script)
        agent = strands.Agent(
            model=model,
            tools=[LibraryTool(t) if is_agent_tool(t) else as_tool(t) for t in setup.tools],
            messages=cast(Any, copy.deepcopy(list(setup.messages))),
            system_prompt=setup.system_prompt,
            callback_handler=None,
        )
        StrandsBridge.of(agent).use(*setup.middleware)
        return agent


@contextlib.contextmanager
def _unwrapped() -> Generator[None, None, None]:
    """Raise what the middleware or the model raised, as the reference agent does.

    strands wraps an exception from a cycle after a tool round in its ``EventLoopException``
    (a documented difference); the original is what a caller of the kit compares.
    """
    try:
        yield
    except EventLoopException as error:
        raise error.original_exception from None


def _report(result: Any) -> RunReport:
    interrupts = tuple(
        Interrupt(id=i.id, name=i.name, reason=i.reason, response=i.response)
        for i in result.interrupts or ()
    )
    # The figures of this invocation, as strands' telemetry reports them.
    invocation = result.metrics.latest_agent_invocation
    usage: Any = None if invocation is None else dict(invocation.usage)
    return RunReport(str(result.stop_reason), result.message, interrupts, usage)
