"""The quickstart's middleware, unchanged, inside a LangChain v1 agent (``create_agent``).

Needs the langchain extra (``pip install "strands-middleware[langchain]"``). The model is the
quickstart's script in a ``ScriptedChatModel`` (a LangChain chat model), so this runs with no
network; LangChain does the model calls and tool calls, and the bridge runs this library's
middleware around them. `langchain_agent` builds such an agent from any list of middleware, with
plain functions as its tools; `LangChainSession` asks it and resumes it after an interrupt.

Run: ``python examples/langchain_quickstart.py``
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain import agents as langchain_agents
from langchain_core.tools import tool as langchain_tool
from langgraph.checkpoint.memory import InMemorySaver

from quickstart import add, audit, concise, label, timing
from strands_middleware.bridges.langchain import LangChainBridge, interrupts_of, resume_command
from strands_middleware.bridges.langchain.testing import ScriptedChatModel
from strands_middleware.engine._registry import MiddlewareSource
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

# LangChain's own factory (its overloads are only partly annotated).
create_agent: Any = langchain_agents.create_agent  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def langchain_agent(
    script: ScriptedModel,
    middleware: Sequence[MiddlewareSource],
    tools: Sequence[Callable[..., Any]] = (),
) -> Any:
    """A LangChain agent playing ``script``, with ``middleware`` on it through the bridge.

    The tools are LangChain's own (``langchain_core.tools.tool``); an in-memory checkpointer
    keeps a paused run for its resume, guarded by the bridge so that a new prompt on a paused
    thread is refused instead of dropping what the run asked.
    """
    bridge = LangChainBridge(*middleware)
    return create_agent(
        ScriptedChatModel(script),
        tools=[langchain_tool(function) for function in tools],
        middleware=[bridge],
        checkpointer=bridge.guard_paused_threads(InMemorySaver()),
    )


class LangChainSession:
    """One conversation (a LangGraph thread) with a `langchain_agent`, asked synchronously."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
        self.paused: Any = None

    def ask(self, prompt: str) -> tuple[str, list[Interrupt]]:
        """Run the agent on ``prompt``: its answer, and what it asks when it paused."""
        return self._run({"messages": [("user", prompt)]})

    def resume(self, responses: list[dict[str, Any]]) -> tuple[str, list[Interrupt]]:
        """Resume the paused run with ``interruptResponse`` answers."""
        return self._run(resume_command(self.paused, responses))

    def _run(self, given: Any) -> tuple[str, list[Interrupt]]:
        result = asyncio.run(self.agent.ainvoke(given, self.config))
        interrupts = interrupts_of(result)
        self.paused = result if interrupts else None
        answer = "" if interrupts else str(result["messages"][-1].content)
        return answer, interrupts


def main() -> None:
    script = ScriptedModel(
        [tool_turn("add", {"a": 2, "b": 40}, tool_use_id="t1"), text_turn("2 + 40 is 42.")]
    )
    session = LangChainSession(langchain_agent(script, [concise, timing, audit], tools=[add]))
    answer, interrupts = session.ask("What is 2 + 40?")
    print(f"{label('agent result')} interrupts={len(interrupts)} answer={answer.strip()}")
    print(f"{label('model request')} system prompt: {script.requests[-1].system_prompt!r}")


if __name__ == "__main__":
    main()
