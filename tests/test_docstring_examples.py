"""Every example in a docstring under src/ runs, as written, against real parts.

Each fenced ``python`` block (and each ``Example::`` block) of a module, class or function
docstring is one test. It runs in a fresh namespace holding the package's public names and the
few objects examples take for granted (an ``agent``, a ``model``, a tool ``delete_file``, a
handler ``timing``...), built by `scene` with real parts: reference agents and scripted models,
and for the framework bridges the framework's own agent with its scripted model. An example
with a top-level ``await`` runs in an event loop. An example that saves to a Redis server is run
with the in-memory store behind the same protocols (`NEEDS_A_SERVER`): building a `RedisStore`
from a URL connects to nothing, and the Redis store itself is tested against a real server in
``tests/stores``.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import importlib.util
import inspect
import pathlib
import re
import textwrap
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

import strands_middleware
from strands_middleware import InvokeModelContext, InvokeModelStage, MiddlewareNext, TypedEvent
from strands_middleware.agent import Agent
from strands_middleware.stores import InMemoryStore
from strands_middleware.stores.redis import RedisStore
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

SOURCE = pathlib.Path(strands_middleware.__file__).parent
FENCE = re.compile(r"```python\n(.*?)```", re.S)
LITERAL = re.compile(r"Example::\n\n((?:[ \t]+.*\n|\n)+)")

FRAMEWORK_MODULES = {"openai_agents": "agents"}
"""A bridge's folder name and the module its framework installs, where the two differ."""

NEEDS_TEMPORAL = ("strands_middleware.durable",)
"""Examples that need a Temporal server: compiled here, run against one in tests/durable."""

PUBLIC = (
    "strands_middleware",
    "strands_middleware.agent",
    "strands_middleware.catalog",
    "strands_middleware.content",
    "strands_middleware.events",
    "strands_middleware.exceptions",
    "strands_middleware.interrupts",
    "strands_middleware.stores",
    "strands_middleware.stores.redis",
    "strands_middleware.testing",
    "strands_middleware.conformance",
)


@dataclass(frozen=True)
class Example:
    """One example: where it is and its code."""

    where: str
    code: str


def examples() -> list[Example]:
    found: list[Example] = []
    for path in sorted(SOURCE.rglob("*.py")):
        module = ".".join(path.relative_to(SOURCE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(
                node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
            ):
                continue
            docstring = ast.get_docstring(node, clean=True)
            if not docstring:
                continue
            name = getattr(node, "name", "")
            blocks = [m.group(1) for m in FENCE.finditer(docstring)]
            blocks += [m.group(1) for m in LITERAL.finditer(docstring)]
            for index, block in enumerate(blocks):
                where = f"{module}:{name}" if name else module
                found.append(Example(f"{where}[{index}]", textwrap.dedent(block)))
    return found


# ---- the scene the examples take for granted -------------------------------------------------


@tool
def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@InvokeModelStage.wrap
async def timing(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


def replies(count: int = 40) -> ScriptedModel:
    return ScriptedModel([text_turn(f"reply {n}") for n in range(count)])


def deleting() -> ScriptedModel:
    """A model that asks to delete the report, then says it is done."""
    return ScriptedModel(
        [tool_turn("delete_file", {"path": "/tmp/report.txt"}, tool_use_id="t1")]
        + [text_turn("Done.") for _ in range(5)]
    )


def scene() -> dict[str, Any]:
    """The names every example may use."""
    names: dict[str, Any] = {"__name__": "docstring_example"}
    for module_name in PUBLIC:
        module = importlib.import_module(module_name)
        names.update({name: getattr(module, name) for name in module.__all__})
    from strands_middleware.agent import AfterToolCallEvent

    names.update(
        pytest=pytest,
        tool=tool,
        add=add,
        delete_file=delete_file,
        timing=timing,
        AfterToolCallEvent=AfterToolCallEvent,
        model=replies(),
        agent=Agent(model=replies(), tools=[add, delete_file]),
        other_agent=Agent(model=replies()),
        small_model=replies(),
        primary=replies(),
        backup=replies(),
        last_resort=replies(),
        my_counter=lambda message: 10,
        house_style="Summarize in bullet points.",
        context=strands_middleware.testing.model_context(),
        retagged=lambda stop: stop,
    )
    return names


def _concise(names: dict[str, Any]) -> None:
    @InvokeModelStage.input
    def concise(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(system_prompt="Answer in one sentence.")

    names["concise"] = concise


def _approval(names: dict[str, Any]) -> None:
    names["model"] = deleting()


def _paused(names: dict[str, Any]) -> None:
    from strands_middleware.catalog import ToolApproval
    from strands_middleware.stores import SessionStore

    model = deleting()
    names.update(
        model=model,
        tools=[delete_file],
        agent=Agent(model=model, tools=[delete_file], middleware=[ToolApproval()]),
        sessions=SessionStore(InMemoryStore(), ttl=60),
        run_id="run-1",
    )


def _weather(names: dict[str, Any]) -> None:
    names["model"] = ScriptedModel(
        [tool_turn("get_weather", {"city": "Paris"}), text_turn("Sunny.")]
    )


def _tracing(names: dict[str, Any]) -> None:
    from opentelemetry.sdk.trace import TracerProvider

    names["provider"] = TracerProvider()


def _outbound(names: dict[str, Any]) -> None:
    from strands_middleware import MiddlewareRegistry
    from strands_middleware.events import ModelStopReason
    from strands_middleware.testing import model_context

    async def terminal(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        yield ModelStopReason(
            "end_turn",
            text_turn("hi"),
            {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
            {"latencyMs": 0},
        )

    registry = MiddlewareRegistry()
    registry.use(timing)
    names.update(
        registry=registry,
        stage=InvokeModelStage,
        context=model_context(),
        terminal=terminal,
        to_host_event=lambda event: event,
        to_host_error=lambda error: error,
    )


def _search_stage(names: dict[str, Any]) -> None:
    class SearchContext: ...

    class SearchDone: ...

    class SearchEvent: ...

    names.update(SearchContext=SearchContext, SearchDone=SearchDone, SearchEvent=SearchEvent)


def _harness(names: dict[str, Any]) -> None:
    from strands_middleware.conformance._harnesses._reference import ReferenceHarness

    names["MyHarness"] = ReferenceHarness


def _delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def _strands(names: dict[str, Any]) -> None:
    import strands

    from strands_middleware.bridges.strands.testing import ScriptedStrandsModel

    model = ScriptedStrandsModel([text_turn("Done.") for _ in range(5)])
    names.update(
        ScriptedStrandsModel=ScriptedStrandsModel,
        strands=strands,
        model=model,
        agent=strands.Agent(model=model, callback_handler=None),
        delete_file=strands.tool(name="delete_file")(_delete),
    )


def _pydantic_ai(names: dict[str, Any]) -> None:
    import pydantic_ai
    from pydantic_ai import DeferredToolRequests

    from strands_middleware.bridges.pydantic_ai import (
        PydanticAIMiddleware,
        interrupts_of,
        resume_results,
    )
    from strands_middleware.bridges.pydantic_ai.testing import ScriptedPydanticAIModel
    from strands_middleware.catalog import ToolApproval

    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    model = ScriptedPydanticAIModel(deleting())
    names.update(
        ScriptedPydanticAIModel=ScriptedPydanticAIModel,
        pydantic_ai=pydantic_ai,
        model=model,
        delete_file=delete_file,
        DeferredToolRequests=DeferredToolRequests,
        interrupts_of=interrupts_of,
        resume_results=resume_results,
        agent=pydantic_ai.Agent(
            model,
            tools=[delete_file],
            capabilities=[PydanticAIMiddleware(ToolApproval())],
        ),
    )


def _langchain(names: dict[str, Any]) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from strands_middleware.bridges.langchain.testing import (
        PlainScriptedChatModel,
        ScriptedChatModel,
    )

    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    from langchain.agents import create_agent

    from strands_middleware.bridges.langchain import (
        LangChainBridge,
        LibraryTool,
        interrupts_of,
        resume_command,
    )

    saver = InMemorySaver()
    names.update(
        create_agent=create_agent,
        LibraryTool=LibraryTool,
        interrupts_of=interrupts_of,
        resume_command=resume_command,
        ScriptedChatModel=ScriptedChatModel,
        PlainScriptedChatModel=PlainScriptedChatModel,
        model=ScriptedChatModel(deleting()),
        delete_file=delete_file,
        saver=saver,
        checkpointer=saver,
        config={"configurable": {"thread_id": "docs"}},
        bridge=LangChainBridge(timing),
    )


def _openai_agents(names: dict[str, Any]) -> None:
    import agents
    from agents import function_tool, set_tracing_disabled

    from strands_middleware.bridges.openai_agents.testing import ScriptedOpenAIModel

    set_tracing_disabled(True)  # the SDK exports traces by default; these runs stay offline

    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    names.update(
        agents=agents,
        ScriptedOpenAIModel=ScriptedOpenAIModel,
        model=ScriptedOpenAIModel(deleting()),
        delete_file=function_tool(delete_file),
    )


def _library_tool_on_langchain(names: dict[str, Any]) -> None:
    _langchain(names)
    names["delete_file"] = delete_file  # LibraryTool wraps this library's own tools


def _paused_agent(names: dict[str, Any]) -> None:
    _paused(names)
    assert names["agent"]("Delete the report").stop_reason == "interrupt"


SETTINGS: dict[str, Callable[[dict[str, Any]], None]] = {
    "strands_middleware.testing._contexts:model_context": _concise,
    "strands_middleware.catalog._tool_approval:ToolApproval": _approval,
    "strands_middleware.stores._sessions:PausedRun": _paused,
    "strands_middleware.stores._sessions:SessionStore": _paused_agent,
    "strands_middleware.catalog._tool_mock:ToolMock": _weather,
    "strands_middleware.catalog._tracing:Tracing": _tracing,
    "strands_middleware.engine._chain:Outbound": _outbound,
    "strands_middleware.engine._stage:MiddlewareStage": _search_stage,
    "strands_middleware.conformance.suite": _harness,
    "strands_middleware.bridges.strands": _strands,
    "strands_middleware.bridges.pydantic_ai": _pydantic_ai,
    "strands_middleware.bridges.langchain": _langchain,
    "strands_middleware.bridges.openai_agents": _openai_agents,
    "strands_middleware.bridges.langchain._tools:LibraryTool": _library_tool_on_langchain,
}
"""What an example needs beyond `scene`, by the longest prefix of where it is."""

NEEDS_A_SERVER = ("strands_middleware.stores._sessions:SessionStore",)
"""Examples whose ``RedisStore.from_url(...)`` store is used, not only built: run in memory."""


def setting(where: str) -> Callable[[dict[str, Any]], None] | None:
    matches = [prefix for prefix in SETTINGS if where.startswith(prefix)]
    return SETTINGS[max(matches, key=len)] if matches else None


def runnable_here(example: Example) -> bool:
    """pydantic-ai's examples run where pydantic-ai installs (Python 3.11+), like its tests."""
    if example.where.startswith("strands_middleware.bridges.pydantic_ai"):
        return importlib.util.find_spec("pydantic_ai") is not None
    return True


ALL = [example for example in examples() if runnable_here(example)]


def test_examples_are_found() -> None:
    assert len(ALL) >= 45 if importlib.util.find_spec("pydantic_ai") else len(ALL) >= 40
    assert any(example.where.startswith("strands_middleware.testing") for example in ALL)


@pytest.mark.parametrize("example", ALL, ids=[example.where for example in ALL])
def test_the_example_runs(example: Example) -> None:
    if example.where.startswith("strands_middleware.bridges."):
        framework = re.split(r"[.:\[]", example.where)[2]
        framework = FRAMEWORK_MODULES.get(framework, framework)
        if importlib.util.find_spec(framework) is None:  # pragma: no cover
            pytest.fail(f"{framework} is not installed: run `make install` (the dev extra)")
    if any(example.where.startswith(prefix) for prefix in NEEDS_TEMPORAL):
        # Compiled, not run: it talks to a Temporal server and its workers. tests/durable makes
        # the same calls against a real `temporal server start-dev`.
        compile(example.code, example.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        return
    names = scene()
    extra = setting(example.where)
    if extra is not None:
        extra(names)
    if any(example.where.startswith(prefix) for prefix in NEEDS_A_SERVER):
        names["RedisStore"] = _InMemoryAtAnyUrl
    code = compile(example.code, example.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    outcome = eval(code, names)
    if inspect.iscoroutine(outcome):
        asyncio.run(outcome)


class _InMemoryAtAnyUrl:
    """``RedisStore.from_url(url)`` for an example that uses the store: the in-memory store."""

    @staticmethod
    def from_url(url: str, **options: Any) -> InMemoryStore:
        RedisStore.from_url(url, **options)  # the URL is read as the real store reads it
        return InMemoryStore()
