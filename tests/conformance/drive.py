"""Driving any host's harness from a synchronous test: the tests' one way onto a host.

`drive` builds an agent of a host through its harness (`Harness.build`) and `Driven` runs it,
one prompt at a time, through `HostAgent`: nothing here knows a framework. A test of a catalog
item or of a bridge's own behaviour parametrizes over `HOSTS` and drives each host the same way;
what only one host can show it reads off ``Driven.host`` (the `HostAgent`, and its ``agent``,
the framework's own agent object).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from strands_middleware.conformance import (
    BUILT_IN_HOSTS,
    AgentSetup,
    Harness,
    HostAgent,
    RunReport,
    load_harness,
)
from strands_middleware.content import Messages
from strands_middleware.engine.registry import MiddlewareSource
from strands_middleware.testing import ScriptedModel, ScriptedTurn

HOSTS: dict[str, Harness] = {
    name: load_harness(name) for name, host in BUILT_IN_HOSTS.items() if host.installed
}
"""Every host of this repository whose framework is installed, by name."""


class Driven:
    """An agent of a host, built from a script, driven one prompt at a time.

    Attributes:
        host: The agent, as its harness built it.
        script: The model's turns; ``script.requests`` records what the host sent the model.
    """

    def __init__(self, host: HostAgent, script: ScriptedModel) -> None:
        self.host = host
        self.script = script

    def __call__(self, prompt: str) -> RunReport:
        """Run ``prompt`` to the end of the run (or its pause)."""
        return asyncio.run(self.host.run(prompt))

    def answer(self, paused: RunReport, response: Any) -> RunReport:
        """Resume a paused run, answering every interrupt it owes with ``response``."""
        blocks = [
            {"interruptResponse": {"interruptId": interrupt.id, "response": response}}
            for interrupt in paused.interrupts
        ]
        return asyncio.run(self.host.resume(blocks))

    @property
    def messages(self) -> Messages:
        """The agent's history, as Converse."""
        return self.host.messages


def drive(
    host: str,
    turns: Sequence[ScriptedTurn] | ScriptedModel,
    functions: Sequence[Callable[..., Any]],
    middleware: Sequence[MiddlewareSource],
    *,
    system_prompt: str | None = None,
) -> Driven:
    """An agent of ``host`` playing ``turns`` (a `ScriptedModel` is shared as it is), with
    ``functions`` as the host's own tools and ``middleware`` registered in order."""
    script = turns if isinstance(turns, ScriptedModel) else ScriptedModel(turns)
    setup = AgentSetup(
        script=script,
        tools=tuple(functions),
        middleware=tuple(middleware),
        system_prompt=system_prompt,
    )
    return Driven(HOSTS[host].build(setup), script)
