"""The hosts the parity and catalog tests run on, behind one small interface.

Each builds an agent from the same script, plain-function tools and middleware; the reference
agent uses this library's ``@tool`` and `ScriptedModel`, the strands host wraps the same script
in a ``strands.models.Model`` and the same functions in ``strands.tool``, and the pydantic-ai and
LangChain hosts (where their extras are installed) do the same with their own model and tool
types. Passing a
`ScriptedModel` instead of a list of turns shares that one script (and its recorded requests)
between several agents.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import strands
from strands.models import Model as StrandsModel
from strands.tools.executors import SequentialToolExecutor
from strands.types.exceptions import EventLoopException

from strands_middleware.agent import Agent, AgentResult
from strands_middleware.bridges.strands import StrandsBridge
from strands_middleware.bridges.strands._interrupts import interrupt_in
from strands_middleware.bridges.strands._tools import LibraryTool
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
        if isinstance(result, AgentResult):
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

REFUSES_AGENT_STREAM: set[str] = set()
"""Hosts with no hook around a whole agent pass: AgentStreamStage middleware is refused there."""


# ---- any agent of the catalog tests, on either host ----------------------------------------


def strands_model(model: Any) -> Any:
    """``model`` as a ``strands.Agent``'s model: the very object.

    Besides ``stream``, strands reads one member of its model when it builds an agent,
    ``stateful`` (token counting is optional: strands carries on without it). Giving a model of
    this library's shape that member lets the strands agent run it as it is, so what a handler
    reads off ``context.model`` (its class, its config, its identity) is what it reads on the
    reference agent.
    """
    if not isinstance(model, StrandsModel) and not hasattr(model, "stateful"):
        model.stateful = False
    return model


class StrandsHostAgent:
    """A ``strands.Agent`` with the bridge, behind the reference agent's interface.

    Only what the catalog tests use: construction with the same keywords, calling it (sync and
    async), ``messages`` (as Converse: strands' own keys left out), ``model``, ``use()``. Tools
    of this library reach strands through the bridge's adapter, so a tool behaves the same on
    both hosts and the tests exercise the middleware, not two tool implementations. Results
    come back as the reference agent's `AgentResult`, with this invocation's usage.
    """

    def __init__(
        self,
        *,
        model: Any,
        tools: Iterable[Any] = (),
        system_prompt: Any = None,
        middleware: Iterable[MiddlewareSource] = (),
        messages: Any = None,
        sequential_tools: bool = False,
    ) -> None:
        self.model = model
        self.agent = strands.Agent(
            model=strands_model(model),
            tools=[LibraryTool(t) for t in tools],
            system_prompt=system_prompt,
            messages=copy.deepcopy(list(messages or [])),
            tool_executor=SequentialToolExecutor() if sequential_tools else None,
            callback_handler=None,
        )
        self.bridge = StrandsBridge.of(self.agent).use(*middleware)

    def use(self, *middleware: MiddlewareSource) -> StrandsHostAgent:
        self.bridge.use(*middleware)
        return self

    def __call__(self, prompt: Any = None) -> AgentResult:
        with _unwrapped():
            return _result(self.agent(prompt))

    async def invoke_async(self, prompt: Any = None) -> AgentResult:
        with _unwrapped():
            return _result(await self.agent.invoke_async(prompt))

    @property
    def messages(self) -> list[Any]:
        return _History(self.agent.messages)


class _History(list[Any]):
    """strands' history as Converse messages; ``clear()`` clears strands' own list."""

    def __init__(self, messages: list[Any]) -> None:
        super().__init__({"role": m["role"], "content": m["content"]} for m in messages)
        self._messages = messages

    def clear(self) -> None:
        super().clear()
        self._messages.clear()


def host_agent(agent: Any) -> Any:
    """The host's own agent object: what a catalog item's per-agent state is keyed by."""
    if _LANGCHAIN_AGENT is not None and isinstance(agent, _LANGCHAIN_AGENT):
        return agent.bridge  # the bridge is what handlers see as the agent there
    return agent if isinstance(agent, Agent) else getattr(agent, "agent", agent)


@contextlib.contextmanager
def _unwrapped() -> Iterator[None]:
    """Raise what the middleware raised, as the reference agent does.

    strands wraps an exception from a cycle after a tool round in its ``EventLoopException``
    (a documented divergence, see the README's bridge section); the original is its cause.
    """
    try:
        yield
    except EventLoopException as error:
        raise error.original_exception from None


def _result(result: Any) -> AgentResult:
    invocation = result.metrics.latest_agent_invocation
    return AgentResult(
        stop_reason=str(result.stop_reason),
        message={"role": result.message["role"], "content": result.message["content"]},
        interrupts=[interrupt_in(i) for i in result.interrupts or []],
        usage=dict(invocation.usage) if invocation is not None else {},
        metrics={"latencyMs": result.metrics.accumulated_metrics.get("latencyMs", 0)},
    )


AgentFactory = Callable[..., Any]

AGENTS: dict[str, AgentFactory] = {"reference": Agent, "strands": StrandsHostAgent}
"""Build an agent on either host with the reference agent's keywords."""


# ---- LangChain v1's create_agent (where the langchain extra is installed) --------------------

_LANGCHAIN_AGENT: type | None = None

if importlib.util.find_spec("langchain") is not None:
    from .langchain_host import LangChainHostAgent, langchain_agent

    HOSTS["langchain"] = langchain_agent
    AGENTS["langchain"] = LangChainHostAgent
    REFUSES_AGENT_STREAM.add("langchain")
    _LANGCHAIN_AGENT = LangChainHostAgent


# ---- pydantic-ai (Python 3.11 and newer, as pydantic-ai itself) ----------------------------

KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}
"""(host, parity test) to why the host behaves otherwise by design; such a test must fail there."""

if importlib.util.find_spec("pydantic_ai") is not None:
    from .on_pydantic_ai.host import (
        KNOWN_DIFFERENCES as PYDANTIC_AI_DIFFERENCES,
    )
    from .on_pydantic_ai.host import (
        PydanticAIHostAgent,
        pydantic_ai_run,
    )

    HOSTS["pydantic_ai"] = pydantic_ai_run
    AGENTS["pydantic_ai"] = PydanticAIHostAgent
    KNOWN_DIFFERENCES.update(PYDANTIC_AI_DIFFERENCES)
    REFUSES_AGENT_STREAM.add("pydantic_ai")
