"""Driving any host's harness from a synchronous test: the tests' one way onto a host.

`drive` builds an agent of a host through its harness (`Harness.build`) and `Driven` runs it,
one prompt at a time, through `HostAgent`: nothing here knows a framework. A test of a catalog
item or of a bridge's own behaviour parametrizes over `HOSTS` and drives each host the same way;
what only one host can show it reads off ``Driven.host`` (the `HostAgent`, and its ``agent``,
the framework's own agent object).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import functools
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any, TypeVar, cast

from strands_middleware.agent import AgentResult
from strands_middleware.conformance import (
    BUILT_IN_HOSTS,
    AgentSetup,
    Harness,
    HostAgent,
    RunReport,
    load_harness,
)
from strands_middleware.content import Messages, SystemPrompt
from strands_middleware.engine._registry import MiddlewareSource
from strands_middleware.models import Model
from strands_middleware.testing import ScriptedModel, ScriptedTurn
from strands_middleware.tools import AgentTool

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
    script_usage: bool = False,
) -> Driven:
    """An agent of ``host`` playing ``turns`` (a `ScriptedModel` is shared as it is), with
    ``functions`` as the host's own tools and ``middleware`` registered in order.

    ``script_usage=True`` builds it so that the host reports the script's own usage where the
    harness can choose (the pydantic-ai one asks without streaming then, see
    `_catalog_harness`)."""
    script = turns if isinstance(turns, ScriptedModel) else ScriptedModel(turns)
    setup = AgentSetup(
        script=script,
        tools=tuple(functions),
        middleware=tuple(middleware),
        system_prompt=system_prompt,
    )
    harness = _catalog_harness(HOSTS[host]) if script_usage else HOSTS[host]
    return Driven(harness.build(setup), script)


# ---- an agent of any host with the reference agent's keywords (the catalog's tests) --------

T = TypeVar("T")


def run_to_end(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` in an event loop of its own (in a thread when one is running here)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _is_resume(prompt: object) -> bool:
    if not isinstance(prompt, list) or not prompt:
        return False
    blocks = cast("list[object]", prompt)
    return all(isinstance(block, dict) and "interruptResponse" in block for block in blocks)


class HarnessAgent:
    """An agent of a host, built through its harness from the reference agent's keywords.

    Called (or ``invoke_async``) with a prompt, or with ``interruptResponse`` blocks to resume;
    answers with the reference agent's `AgentResult`. ``agent`` is what handlers see as
    ``context.agent`` there: what a catalog item keeps per-agent state by.

    Attributes:
        model: The model given.
        host: The agent, as its harness built it.
    """

    def __init__(
        self,
        harness: Harness,
        *,
        model: Model,
        tools: Iterable[Callable[..., Any] | AgentTool] = (),
        system_prompt: SystemPrompt = None,
        middleware: Iterable[MiddlewareSource] = (),
        messages: Messages | None = None,
    ) -> None:
        self.model = model
        setup = AgentSetup(
            script=model,
            tools=tuple(tools),
            middleware=tuple(middleware),
            system_prompt=system_prompt,
            messages=copy.deepcopy(list(messages or [])),
        )
        self.host = harness.build(setup)

    @property
    def agent(self) -> object:
        """What the host hands handlers as ``context.agent``."""
        return self.host.handlers_agent

    def use(self, *middleware: MiddlewareSource) -> HarnessAgent:
        self.host.use(*middleware)
        return self

    def __call__(self, prompt: Any = None) -> AgentResult:
        return run_to_end(self.invoke_async(prompt))

    async def invoke_async(self, prompt: Any = None) -> AgentResult:
        if _is_resume(prompt):
            report = await self.host.resume(prompt)
        else:
            report = await self.host.run(prompt)
        usage: Any = dict(report.usage or {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0})
        return AgentResult(
            stop_reason=report.stop_reason,
            message=report.message,
            interrupts=list(report.interrupts),
            usage=usage,
            metrics={"latencyMs": 0},
        )

    @property
    def messages(self) -> Messages:
        """The history as Converse; ``clear()`` starts a fresh conversation."""
        return _History(self.host)


class _History(list[Any]):
    """A host's history as Converse; ``clear()`` empties the host's own (`HostAgent.forget`)."""

    def __init__(self, host: HostAgent) -> None:
        super().__init__(host.messages)
        self._host = host

    def clear(self) -> None:
        super().clear()
        self._host.forget()


AgentFactory = Callable[..., HarnessAgent]


def _catalog_harness(harness: Harness) -> Harness:
    """The harness the catalog's agents are built with: one that asks the model without
    streaming where the harness can (the pydantic-ai one), since the catalog's usage checks
    read the script's own figures, which pydantic-ai estimates for a streamed FunctionModel."""
    if getattr(harness, "streamed", False):
        make: Any = type(harness)
        unstreamed: Harness = make(streamed=False)
        return unstreamed
    return harness


NOT_DRIVEN_BY_CATALOG_TESTS: dict[str, str] = {
    "openai_agents": (
        "the OpenAI Agents SDK keeps a tool's output as a function_call_output item with no "
        "error status, and reports stop reasons and usage its own way, which most catalog tests "
        "read; the catalog runs there through the kit's catalog clauses (python -m "
        "strands_middleware.conformance openai_agents) and the bridge's own tests"
    ),
}
"""Hosts the catalog's own tests do not drive, each with why (the kit still covers them)."""

CATALOG_HOSTS: list[str] = [name for name in HOSTS if name not in NOT_DRIVEN_BY_CATALOG_TESTS]
"""The hosts the catalog's tests drive."""

AGENTS: dict[str, AgentFactory] = {
    name: functools.partial(HarnessAgent, _catalog_harness(harness))
    for name, harness in HOSTS.items()
    if name not in NOT_DRIVEN_BY_CATALOG_TESTS
}
"""Build an agent on any installed host the catalog's tests drive, with the reference agent's
keywords."""
