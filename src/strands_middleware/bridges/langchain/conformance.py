"""The harness of a LangChain ``create_agent`` agent running this library's middleware.

This module imports ``langchain``: only ``load_harness("langchain")`` imports it, so the rest of
the kit runs without LangChain installed.

What the harness declares: hooks (LangChain's own middleware around the model and tool calls,
registered outside the bridge), event-level streaming (the bridge streams the model through the
chain: Wrap handlers see each delta) and resuming in another process (the run's checkpoints,
saved as JSON, restored into a fresh checkpointer). Not declared: the agent-stream stage
(LangChain has no hook around a whole agent pass, so the bridge refuses it at registration).
"""

from __future__ import annotations

import base64
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, cast

from langchain import agents as langchain_agents
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool as as_langchain_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from ...conformance.harness import AgentSetup, Capability, HookName, RunReport
from ...content import Messages
from ...testing import ScriptedModel
from ._bridge import LangChainBridge
from ._converse import converse_messages
from ._interrupts import interrupts_of, resume_command
from .testing import ScriptedChatModel

__all__ = ["LangChainAgent", "LangChainHarness"]

# LangChain's own factory; its overloads are only partly annotated.
_create_agent: Any = langchain_agents.create_agent  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


class _HookRecorder(AgentMiddleware[Any, Any, Any]):
    """LangChain middleware noting each model and tool call it surrounds."""

    def __init__(self, log: list[HookName]) -> None:
        super().__init__()
        self._log = log

    @property
    def name(self) -> str:
        return "hook_recorder"

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        self._log.append("before_model_call")
        try:
            return await handler(request)
        finally:
            self._log.append("after_model_call")

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        self._log.append("before_tool_call")
        try:
            return await handler(request)
        finally:
            self._log.append("after_tool_call")


class LangChainAgent:
    """A ``create_agent`` agent behind the kit's `HostAgent` interface (one thread)."""

    def __init__(self, agent: Any, saver: InMemorySaver, thread_id: str, hooks: list[HookName]):
        self.agent = agent
        self._saver = saver
        self._config: Any = {"configurable": {"thread_id": thread_id}}
        self._thread_id = thread_id
        self._hooks = hooks
        self._paused: Any = None

    async def run(self, prompt: str) -> RunReport:
        if self._paused is not None:
            raise RuntimeError(
                "the run is paused on interrupts: resume it with their answers first"
            )
        result = await self.agent.ainvoke(
            {"messages": [HumanMessage(content=prompt)]}, self._config
        )
        return self._report(result)

    async def resume(self, responses: list[dict[str, Any]]) -> RunReport:
        paused = self._paused
        if paused is None:
            paused = await self.agent.aget_state(self._config)
        command = resume_command(paused, responses)
        return self._report(await self.agent.ainvoke(command, self._config))

    def stream(self, prompt: str) -> AsyncIterator[object]:
        return cast(
            "AsyncIterator[object]",
            self.agent.astream({"messages": [HumanMessage(content=prompt)]}, self._config),
        )

    @property
    def messages(self) -> Messages:
        checkpoint = self._saver.get_tuple(self._config)
        if checkpoint is None:
            return []
        held: Any = checkpoint.checkpoint["channel_values"].get("messages", [])
        return converse_messages(list(held))[0]

    def hook_events(self) -> list[HookName]:
        return list(self._hooks)

    def save(self) -> Mapping[str, Any]:
        return {"thread_id": self._thread_id, "saver": _encode(_saver_data(self._saver))}

    def _report(self, result: Any) -> RunReport:
        interrupts = interrupts_of(result) if "__interrupt__" in result else []
        self._paused = result if interrupts else None
        history = list(result["messages"])
        last = history[-1] if history else None
        message: Any = {"role": "assistant", "content": []}
        if last is not None and not interrupts and last.type == "ai":
            message = converse_messages([last])[0][0]
        stop_reason = "interrupt" if interrupts else "end_turn"
        return RunReport(stop_reason, message, tuple(interrupts))


class LangChainHarness:
    """``create_agent`` with `ScriptedChatModel`, LangChain's ``@tool`` tools and the bridge."""

    name = "langchain"
    capabilities = frozenset(
        {Capability.EVENT_STREAMING, Capability.HOOKS, Capability.RESUME_IN_ANOTHER_PROCESS}
    )

    def model(self, script: ScriptedModel) -> object:
        return ScriptedChatModel(script)

    def build(self, setup: AgentSetup) -> LangChainAgent:
        return self._agent(setup, InMemorySaver(), uuid.uuid4().hex)

    def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> LangChainAgent:
        saver = InMemorySaver()
        _load_saver(saver, _decode(saved["saver"]))
        agent = self._agent(setup, saver, str(saved["thread_id"]))
        return agent

    def _agent(self, setup: AgentSetup, saver: InMemorySaver, thread_id: str) -> LangChainAgent:
        hooks: list[HookName] = []
        bridge = LangChainBridge(*setup.middleware)
        agent = _create_agent(
            ScriptedChatModel(setup.script),
            tools=[as_langchain_tool(function) for function in setup.tools],
            system_prompt=setup.system_prompt,
            middleware=[_HookRecorder(hooks), bridge],
            checkpointer=saver,
        )
        return LangChainAgent(agent, saver, thread_id, hooks)


# ---- an in-memory checkpointer's content as JSON, and back --------------------------------


def _saver_data(saver: InMemorySaver) -> dict[str, Any]:
    return {
        "storage": {thread: dict(spaces) for thread, spaces in saver.storage.items()},
        "writes": list(saver.writes.items()),
        "blobs": list(saver.blobs.items()),
    }


def _load_saver(saver: InMemorySaver, data: dict[str, Any]) -> None:
    for thread, spaces in data["storage"].items():
        saver.storage[thread] = defaultdict(dict, spaces)
    for key, value in data["writes"]:
        saver.writes[key] = value
    for key, value in data["blobs"]:
        saver.blobs[key] = value


def _encode(value: object) -> object:
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode()}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in cast("tuple[object, ...]", value)]}
    if isinstance(value, list):
        return [_encode(v) for v in cast("list[object]", value)]
    if isinstance(value, dict):
        pairs = cast("dict[object, object]", value).items()
        return {"dict": [[_encode(k), _encode(v)] for k, v in pairs]}
    return value


def _decode(value: object) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in cast("list[object]", value)]
    if isinstance(value, dict):
        given = cast("dict[str, Any]", value)
        if "bytes" in given:
            return base64.b64decode(given["bytes"])
        if "tuple" in given:
            return tuple(_decode(v) for v in given["tuple"])
        return {_decode(k): _decode(v) for k, v in given["dict"]}
    return value
