"""A LangChain ``create_agent`` agent with the bridge, behind the reference agent's interface.

Used by the parity tests (``HOSTS["langchain"]``) and the catalog tests
(``AGENTS["langchain"]``): construction with the reference agent's keywords, calling it (sync
and async; a sync call runs ``ainvoke`` in a fresh event loop, since LangChain runs async
middleware only through ``ainvoke``), ``messages`` as Converse, ``model``, ``use()``. A prompt of
``interruptResponse`` blocks resumes the paused run with `resume_command`. Results come back as
the reference agent's `AgentResult`, with this invocation's usage.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_langchain_tool
from langgraph.checkpoint.memory import InMemorySaver

from strands_middleware.agent import AgentResult
from strands_middleware.bridges.langchain import (
    LangChainBridge,
    LibraryChatModel,
    LibraryTool,
    interrupts_of,
    resume_command,
)
from strands_middleware.bridges.langchain._converse import Shown, converse_messages, host_messages
from strands_middleware.engine._registry import MiddlewareSource
from strands_middleware.tools import AgentTool


class LangChainHostAgent:
    """``create_agent`` with `LangChainBridge`, an in-memory checkpointer and a thread."""

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
        chat_model = (
            model if isinstance(model, BaseChatModel) else LibraryChatModel(library_model=model)
        )
        self.bridge = LangChainBridge(*middleware)
        self.agent: Any = create_agent(
            chat_model,
            tools=[_tool(t) for t in tools],
            system_prompt=system_prompt,
            middleware=[self.bridge],
            checkpointer=InMemorySaver(),
        )
        self.config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
        self._seed = list(messages or [])
        self._paused: Any = None

    def use(self, *middleware: MiddlewareSource) -> LangChainHostAgent:
        self.bridge.use(*middleware)
        return self

    def __call__(self, prompt: Any = None) -> AgentResult:
        return asyncio.run(self.invoke_async(prompt))

    async def invoke_async(self, prompt: Any = None) -> AgentResult:
        if isinstance(prompt, list) and any("interruptResponse" in b for b in prompt):
            given: Any = resume_command(self._paused, prompt)
        else:
            seed = _host_messages(self._seed)
            self._seed = []
            given = {"messages": [*seed, HumanMessage(content=prompt)]}
        before = len(await self._history())
        result = await self.agent.ainvoke(given, self.config)
        return self._result(result, before)

    async def _history(self) -> list[Any]:
        state = await self.agent.aget_state(self.config)
        return list(state.values.get("messages", []))

    def _result(self, result: Any, before: int) -> AgentResult:
        history = list(result["messages"])
        interrupts = interrupts_of(result) if "__interrupt__" in result else []
        self._paused = result if interrupts else None
        answers = [m for m in history[before:] if isinstance(m, AIMessage)]
        usage = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        for answer in answers:
            for ours, theirs in (
                ("inputTokens", "input_tokens"),
                ("outputTokens", "output_tokens"),
                ("totalTokens", "total_tokens"),
            ):
                usage[ours] += int((answer.usage_metadata or {}).get(theirs, 0))
        last = next((m for m in reversed(history) if isinstance(m, AIMessage)), None)
        message: Any = {"role": "assistant", "content": []}
        if last is not None and not interrupts:
            message = converse_messages([last])[0][0]
        stop_reason = "end_turn"
        if last is not None:  # an Output handler's stop reason, which the bridge keeps there
            stop_reason = str(last.response_metadata.get("stop_reason", stop_reason))
        return AgentResult(
            stop_reason="interrupt" if interrupts else stop_reason,
            message=message,
            interrupts=interrupts,
            usage=usage,  # type: ignore[typeddict-item]
        )

    @property
    def messages(self) -> list[Any]:
        state = self.agent.get_state(self.config)
        return _History(self, converse_messages(list(state.values.get("messages", [])))[0])

    def forget(self) -> None:
        """Start a fresh thread: the history is empty again."""
        self.config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        self._paused = None


class _History(list[Any]):
    """The thread's history as Converse messages; ``clear()`` starts a fresh thread."""

    def __init__(self, agent: LangChainHostAgent, messages: list[Any]) -> None:
        super().__init__(messages)
        self._agent = agent

    def clear(self) -> None:
        super().clear()
        self._agent.forget()


def _tool(given: Any) -> Any:
    if hasattr(given, "tool_spec") and hasattr(given, "stream"):  # a tool of this library
        tool: AgentTool = given
        return LibraryTool(tool)
    if isinstance(given, BaseTool):
        return given
    return LibraryTool(tool(given))  # a plain function, as the reference agent takes it


def _host_messages(messages: list[Any]) -> list[Any]:
    return list(host_messages(messages, Shown([])))


def langchain_agent(
    turns: Any,
    functions: Any,
    middleware: Any,
    *,
    system_prompt: str | None = None,
) -> Any:
    """The parity tests' builder: an agent of `LangChainHostAgent` on the script, as a `Run`."""
    from .hosts import Run, _script

    script = _script(turns)
    # The tools are LangChain's own, made as a LangChain user makes them.
    tools = [as_langchain_tool(f) for f in functions]
    agent = LangChainHostAgent(
        model=script, tools=tools, middleware=middleware, system_prompt=system_prompt
    )
    return Run(agent, script)
