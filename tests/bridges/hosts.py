"""The two hosts the parity tests run on, behind one small interface.

Each builds an agent from the same script, plain-function tools and middleware; the reference
agent uses this library's ``@tool`` and `ScriptedModel`, the strands host wraps the same script
in a ``strands.models.Model`` and the same functions in ``strands.tool``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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


class Run:
    """One agent on one host."""

    def __init__(self, agent: Any, script: ScriptedModel) -> None:
        self.agent = agent
        self.script = script

    def __call__(self, prompt: Any) -> Outcome:
        result = self.agent(prompt)
        text = "".join(block.get("text", "") for block in result.message["content"])
        return Outcome(str(result.stop_reason), text, list(result.interrupts or []))

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


Builder = Callable[
    [Sequence[ScriptedTurn], Sequence[Callable[..., Any]], Sequence[MiddlewareSource]], Run
]


def reference(
    turns: Sequence[ScriptedTurn],
    functions: Sequence[Callable[..., Any]],
    middleware: Sequence[MiddlewareSource],
) -> Run:
    script = ScriptedModel(turns)
    agent = Agent(model=script, tools=[tool(f) for f in functions], middleware=middleware)
    return Run(agent, script)


def strands_agent(
    turns: Sequence[ScriptedTurn],
    functions: Sequence[Callable[..., Any]],
    middleware: Sequence[MiddlewareSource],
) -> Run:
    script = ScriptedModel(turns)
    agent = strands.Agent(
        model=ScriptedStrandsModel(script),
        tools=[strands.tool(f) for f in functions],
        callback_handler=None,
    )
    StrandsBridge.of(agent).use(*middleware)
    return Run(agent, script)


HOSTS: dict[str, Builder] = {"reference": reference, "strands": strands_agent}
