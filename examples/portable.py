"""One middleware stack, unchanged, on every agent framework this library runs on.

The stack logs every model call (a Wrap handler), mocks a tool that needs a database, retries a
throttled model call, caches model calls, and asks a human before a file is deleted. It runs on
the reference agent, on a ``strands.Agent``, on a pydantic-ai ``Agent`` and on a LangChain agent
(``create_agent``), each with the same scripted model (no network), and each host prints what it
saw: the same lines.

A host is one small function in ``HOSTS``: it builds that framework's agent with the stack and
returns a `Session` (ask, resume). Adding a framework is adding one more function to the list.
The pydantic-ai host needs Python 3.11 or newer (as pydantic-ai does) and runs where its extra is
installed, the LangChain host where the langchain extra is
(``pip install "strands-middleware[strands,pydantic-ai,langchain]"``).

Run: ``python examples/portable.py``
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from strands_middleware import InvokeModelContext, InvokeModelStage, ModelStopReason, TypedEvent
from strands_middleware.catalog import Cache, Retry, ToolApproval, ToolMock
from strands_middleware.engine._handlers import MiddlewareNext
from strands_middleware.engine._registry import MiddlewareSource
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn


def lookup_owner(path: str) -> str:
    """Look up who owns a file.

    Args:
        path: The file.
    """
    raise RuntimeError("no owner database here: the stack's ToolMock answers this tool")


DELETED: list[str] = []


def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    DELETED.append(path)
    return f"deleted {path}"


TOOLS: list[Callable[..., Any]] = [lookup_owner, delete_file]


def stack(log: list[str], cache: Cache) -> list[MiddlewareSource]:
    """The middleware every host runs: built once per host, written once for all of them."""

    @InvokeModelStage.wrap
    async def log_calls(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if isinstance(event, ModelStopReason):
                log.append(f"{len(context.messages)} messages -> {event.stop_reason}")
            yield event

    return [
        log_calls,
        Retry(attempts=3, backoff=0.01, on=ConnectionError),
        cache,
        ToolMock({"lookup_owner": "alice"}),
        ToolApproval(tools=["delete_file"]),
    ]


@dataclass
class Outcome:
    """How one run ended, in this library's words."""

    stop_reason: str
    text: str
    interrupt_ids: list[str]
    interrupt_names: list[str]


class Session(Protocol):
    """One agent of one framework, with the stack on it."""

    def ask(self, prompt: str) -> Outcome: ...

    def resume(self, responses: list[dict[str, Any]]) -> Outcome: ...


Host = Callable[[ScriptedModel, Sequence[MiddlewareSource]], Session]


# ---- the hosts -------------------------------------------------------------------------------


def reference_agent(script: ScriptedModel, middleware: Sequence[MiddlewareSource]) -> Session:
    from strands_middleware.agent import Agent, AgentResult
    from strands_middleware.tools import tool

    agent = Agent(model=script, tools=[tool(f) for f in TOOLS], middleware=middleware)

    def outcome(result: AgentResult) -> Outcome:
        ids = [i.id for i in result.interrupts]
        return Outcome(result.stop_reason, str(result), ids, [i.name for i in result.interrupts])

    class Reference:
        def ask(self, prompt: str) -> Outcome:
            return outcome(agent(prompt))

        def resume(self, responses: list[dict[str, Any]]) -> Outcome:
            return outcome(agent(responses))

    return Reference()


def strands_agent(script: ScriptedModel, middleware: Sequence[MiddlewareSource]) -> Session:
    import strands

    from strands_middleware.bridges.strands import StrandsBridge
    from strands_middleware.bridges.strands.testing import ScriptedStrandsModel

    as_tool: Any = strands.tool  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    agent = strands.Agent(
        model=ScriptedStrandsModel(script),
        tools=[as_tool(f) for f in TOOLS],
        callback_handler=None,
    )
    StrandsBridge.of(agent).use(*middleware)

    def outcome(result: Any) -> Outcome:
        interrupts: list[Any] = list(result.interrupts or [])
        text = "".join(b.get("text", "") for b in result.message["content"])
        return Outcome(
            str(result.stop_reason), text, [i.id for i in interrupts], [i.name for i in interrupts]
        )

    class Strands:
        def ask(self, prompt: str) -> Outcome:
            return outcome(agent(prompt))

        def resume(self, responses: list[dict[str, Any]]) -> Outcome:
            prompt: Any = responses
            return outcome(agent(prompt))

    return Strands()


def pydantic_ai_agent(script: ScriptedModel, middleware: Sequence[MiddlewareSource]) -> Session:
    import asyncio

    import pydantic_ai
    from pydantic_ai.tools import DeferredToolRequests

    from strands_middleware.bridges.pydantic_ai import (
        PydanticAIMiddleware,
        interrupts_of,
        resume_results,
    )
    from strands_middleware.bridges.pydantic_ai.testing import ScriptedPydanticAIModel

    output: Any = [str, DeferredToolRequests]
    agent: pydantic_ai.Agent[None, Any] = pydantic_ai.Agent(
        ScriptedPydanticAIModel(script),
        tools=TOOLS,
        capabilities=[PydanticAIMiddleware(*middleware)],
        output_type=output,
    )
    state: dict[str, Any] = {"history": [], "paused": None}  # plain data: JSON-ready

    def outcome(result: Any) -> Outcome:
        state["history"] = result.all_messages()
        if isinstance(result.output, DeferredToolRequests):
            state["paused"] = result.output
            interrupts = interrupts_of(result.output)
            return Outcome(
                "interrupt", "", [i.id for i in interrupts], [i.name for i in interrupts]
            )
        return Outcome("end_turn", str(result.output), [], [])

    class PydanticAI:
        def ask(self, prompt: str) -> Outcome:
            run = agent.run(prompt, message_history=state["history"])
            return outcome(asyncio.run(run))

        def resume(self, responses: list[dict[str, Any]]) -> Outcome:
            results = resume_results(state["paused"], responses)
            run = agent.run(message_history=state["history"], deferred_tool_results=results)
            return outcome(asyncio.run(run))

    return PydanticAI()


def langchain_agent(script: ScriptedModel, middleware: Sequence[MiddlewareSource]) -> Session:
    from langchain_quickstart import LangChainSession
    from langchain_quickstart import langchain_agent as build

    session = LangChainSession(build(script, middleware, tools=TOOLS))

    def outcome(answer: str, interrupts: list[Any]) -> Outcome:
        if interrupts:
            return Outcome(
                "interrupt", "", [i.id for i in interrupts], [i.name for i in interrupts]
            )
        return Outcome("end_turn", answer, [], [])

    class LangChain:
        def ask(self, prompt: str) -> Outcome:
            return outcome(*session.ask(prompt))

        def resume(self, responses: list[dict[str, Any]]) -> Outcome:
            return outcome(*session.resume(responses))

    return LangChain()


HOSTS: list[tuple[str, Host]] = [
    ("reference agent", reference_agent),
    ("strands.Agent", strands_agent),
]
if importlib.util.find_spec("pydantic_ai") is not None:  # Python 3.11+, the pydantic-ai extra
    HOSTS.append(("pydantic-ai Agent", pydantic_ai_agent))
if importlib.util.find_spec("langchain") is not None:  # the langchain extra
    HOSTS.append(("LangChain agent", langchain_agent))


# ---- the same story on each --------------------------------------------------------------------


def main() -> None:
    for name, host in HOSTS:
        DELETED.clear()
        log: list[str] = []
        cache = Cache()
        script = ScriptedModel(
            [
                ConnectionError("throttled"),
                tool_turn("lookup_owner", {"path": "/tmp/report.txt"}, tool_use_id="call-1"),
                tool_turn("delete_file", {"path": "/tmp/report.txt"}, tool_use_id="call-2"),
                text_turn("Deleted alice's report."),
            ]
        )
        session = host(script, stack(log, cache))
        paused = session.ask("Delete /tmp/report.txt after checking who owns it")
        print(f"[{name}] paused: {paused.stop_reason}, asks {paused.interrupt_names}")
        answers = [
            {"interruptResponse": {"interruptId": i, "response": "approve"}}
            for i in paused.interrupt_ids
        ]
        done = session.resume(answers)
        print(f"[{name}] done: {done.stop_reason}, answer {done.text!r}, deleted {DELETED}")
        print(f"[{name}] model calls logged: {log}")
        print(f"[{name}] model requests: {len(script.requests)} (one throttled, retried)")
        # Two fresh agents of the host ask the same question: the second is a cache hit.
        trivia = ScriptedModel([text_turn("Paris.")])
        for _ in range(2):
            host(trivia, stack([], cache)).ask("Capital of France?")
        print(f"[{name}] cache: {cache.hits} hit(s); trivia model calls: {len(trivia.requests)}")


if __name__ == "__main__":
    main()
