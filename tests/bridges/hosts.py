"""The two hosts the parity tests run on, behind one small interface.

Each builds an agent from the same script, plain-function tools and middleware; the reference
agent uses this library's ``@tool`` and `ScriptedModel`, the strands host wraps the same script
in a ``strands.models.Model`` and the same functions in ``strands.tool``. Passing a
`ScriptedModel` instead of a list of turns shares that one script (and its recorded requests)
between several agents.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import strands

from strands_middleware.agent import Agent
from strands_middleware.bridges.strands import StrandsBridge
from strands_middleware.bridges.strands.testing import ScriptedStrandsModel
from strands_middleware.engine.registry import MiddlewareSource
from strands_middleware.testing import ScriptedModel, ScriptedTurn
from strands_middleware.tools import tool


@dataclass
class Outcome:
    stop_reason: str
    text: str
    interrupts: list[Any]
    usage: dict[str, Any]
    """Tokens the invocation consumed, as the host's own result reports them."""


class Run:
    """One agent on one host."""

    def __init__(self, agent: Any, script: ScriptedModel) -> None:
        self.agent = agent
        self.script = script

    def __call__(self, prompt: Any) -> Outcome:
        result = self.agent(prompt)
        text = "".join(block.get("text", "") for block in result.message["content"])
        if isinstance(self.agent, Agent):
            usage = dict(result.usage)
        else:  # strands: the figures of this invocation, as its telemetry reports them
            invocation = result.metrics.latest_agent_invocation
            usage = {} if invocation is None else dict(invocation.usage)
        return Outcome(str(result.stop_reason), text, list(result.interrupts or []), usage)

    @property
    def messages(self) -> list[Any]:
        return list(self.agent.messages)

    def answer(self, outcome: Outcome, response: Any) -> Outcome:
        return self(
            [
                {"interruptResponse": {"interruptId": i.id, "response": response}}
                for i in outcome.interrupts
            ]
        )


class Builder(Protocol):
    def __call__(
        self,
        turns: Sequence[ScriptedTurn] | ScriptedModel,
        functions: Sequence[Callable[..., Any]],
        middleware: Sequence[MiddlewareSource],
        *,
        system_prompt: str | None = None,
    ) -> Run: ...


def _script(turns: Sequence[ScriptedTurn] | ScriptedModel) -> ScriptedModel:
    return turns if isinstance(turns, ScriptedModel) else ScriptedModel(turns)


def reference(
    turns: Sequence[ScriptedTurn] | ScriptedModel,
    functions: Sequence[Callable[..., Any]],
    middleware: Sequence[MiddlewareSource],
    *,
    system_prompt: str | None = None,
) -> Run:
    script = _script(turns)
    agent = Agent(
        model=script,
        tools=[tool(f) for f in functions],
        middleware=middleware,
        system_prompt=system_prompt,
    )
    return Run(agent, script)


def strands_agent(
    turns: Sequence[ScriptedTurn] | ScriptedModel,
    functions: Sequence[Callable[..., Any]],
    middleware: Sequence[MiddlewareSource],
    *,
    system_prompt: str | None = None,
) -> Run:
    script = _script(turns)
    agent = strands.Agent(
        model=ScriptedStrandsModel(script),
        tools=[strands.tool(f) for f in functions],
        system_prompt=system_prompt,
        callback_handler=None,
    )
    StrandsBridge.of(agent).use(*middleware)
    return Run(agent, script)


HOSTS: dict[str, Builder] = {"reference": reference, "strands": strands_agent}
