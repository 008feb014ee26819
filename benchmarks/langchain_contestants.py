"""The LangChain contestants of ``bench_e2e.py``: the same conversation on ``create_agent``.

The model is a plain ``BaseChatModel`` subclass of the benchmark's own (not this library's
`LibraryChatModel`, which the bridge streams on a shorter path): ``_agenerate`` answers a turn in
one message, ``_astream`` streams it as one chunk per text delta, then the tool call, then the
usage. A run ``ainvoke``s the agent (LangChain calls ``_agenerate``) or, streamed, ``astream``s
it with ``stream_mode="messages"`` (LangChain calls ``_astream`` and every delta reaches the
caller). The native contestants are what a LangChain user writes by hand: ``AgentMiddleware``
whose ``awrap_model_call`` and/or ``awrap_tool_call`` hand the call on unchanged.

The floor contestant (`floor_langchain`) is what any middleware that shows each delta of the
model's reply to code around the call must add on LangChain, with none of this library: LangChain
calls the model inside the handler ``awrap_model_call`` is given, and returns only when the
reply is whole, so the deltas are seen only by handing LangChain a stand-in chat model (LangChain
runs its model-call machinery on it, as it would on the model) that reads the real model (its
own ``_astream``/``_agenerate``, as the bridge does) and hands each chunk, untranslated, to the
middleware, which reads them while LangChain's call runs in a task of its own. What a bridged row
costs above the floor is this library's (its chain, the Converse translation both ways, its
events); the floor above native is LangChain's.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextvars import ContextVar
from typing import Any

from langchain import agents as langchain_agents
from langchain.agents.middleware import AgentMiddleware
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool as langchain_tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from strands_middleware.bridges.langchain import LangChainBridge
from strands_middleware.bridges.langchain._converse import converse_messages
from strands_middleware.content import Messages, StreamEvent

__all__ = ["PlainChatModel", "bridged_langchain", "floor_langchain", "native_langchain"]

create_agent: Any = langchain_agents.create_agent


class PlainChatModel(BaseChatModel):
    """A chat model as a LangChain user writes one: replays the benchmark's two turns."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    turns: Any

    @property
    def _llm_type(self) -> str:
        return "bench-plain"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        """The model with the tools' OpenAI form bound (a real provider sends them along)."""
        return self.bind(tools=[convert_to_openai_tool(each) for each in tools], **kwargs)

    def _turn(self, messages: list[BaseMessage]) -> list[StreamEvent]:
        answered = bool(messages) and isinstance(messages[-1], ToolMessage)
        turn: list[StreamEvent] = self.turns.text_turn if answered else self.turns.tool_turn
        return turn

    def _pieces(self, messages: list[BaseMessage]) -> tuple[list[str], list[dict[str, Any]]]:
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for chunk in self._turn(messages):
            delta: Any = chunk.get("contentBlockDelta", {}).get("delta", {})
            start: Any = chunk.get("contentBlockStart", {}).get("start", {})
            if "text" in delta:
                texts.append(delta["text"])
            elif "toolUse" in start:
                use = start["toolUse"]
                calls.append({"name": use["name"], "id": use["toolUseId"], "args": ""})
            elif "toolUse" in delta:
                calls[-1]["args"] += delta["toolUse"]["input"]
        return texts, calls

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:  # pragma: no cover - the agents run asynchronously
        raise NotImplementedError("the benchmark runs asynchronously")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        texts, calls = self._pieces(messages)
        chunk = AIMessageChunk(
            content="".join(texts),
            tool_call_chunks=[{**call, "index": 0} for call in calls],
            usage_metadata={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
        )
        message = AIMessage(
            content=chunk.content,
            tool_calls=chunk.tool_calls,
            usage_metadata=chunk.usage_metadata,
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        texts, calls = self._pieces(messages)
        for text in texts:
            yield ChatGenerationChunk(message=AIMessageChunk(content=text))
        for call in calls:
            yield ChatGenerationChunk(
                message=AIMessageChunk(content="", tool_call_chunks=[{**call, "index": 0}])
            )
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
                chunk_position="last",
            )
        )


class _Both(AgentMiddleware[Any, Any, Any]):
    """A pass-through LangChain middleware around the model call and the tool call."""

    def __init__(self, number: int) -> None:
        super().__init__()
        self._name = f"passthrough_{number}"

    @property
    def name(self) -> str:
        return self._name

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)


class _ModelOnly(AgentMiddleware[Any, Any, Any]):
    """A pass-through LangChain middleware around the model call only."""

    def __init__(self, number: int) -> None:
        super().__init__()
        self._name = f"model_passthrough_{number}"

    @property
    def name(self) -> str:
        return self._name

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)


class _ToolOnly(AgentMiddleware[Any, Any, Any]):
    """A pass-through LangChain middleware around the tool call only."""

    def __init__(self, number: int) -> None:
        super().__init__()
        self._name = f"tool_passthrough_{number}"

    @property
    def name(self) -> str:
        return self._name

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)


class _Handoff:
    """The chunks of one model call, from the stand-in model's task to the middleware's."""

    def __init__(self) -> None:
        self.chunks: deque[Any] = deque()
        self.arrived: asyncio.Future[None] | None = None

    def put(self, chunk: Any) -> None:
        self.chunks.append(chunk)
        if self.arrived is not None and not self.arrived.done():
            self.arrived.set_result(None)

    async def read(self) -> AsyncIterator[Any]:
        while True:
            while not self.chunks:
                self.arrived = asyncio.get_running_loop().create_future()
                await self.arrived
            chunk = self.chunks.popleft()
            if chunk is None:
                return
            yield chunk


_CALL: ContextVar[_Handoff] = ContextVar("bench_floor_call")


class _StandIn(BaseChatModel):
    """The chat model LangChain calls in the floor: reads the real one, hands each chunk on."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any

    @property
    def _llm_type(self) -> str:
        return "bench-stand-in"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        """The stand-in, with the real model's own bound keywords."""
        return self.bind(**self.inner.bind_tools(tools, tool_choice=tool_choice).kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:  # pragma: no cover - the agents run asynchronously
        raise NotImplementedError("the benchmark runs asynchronously")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        result: ChatResult = await self.inner._agenerate(messages, **kwargs)
        _CALL.get().put(result)
        return result

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        handoff = _CALL.get()
        async for chunk in self.inner._astream(messages, **kwargs):
            handoff.put(chunk)
            yield chunk


class _Floor(AgentMiddleware[Any, Any, Any]):
    """The floor's middleware: the model call through a stand-in, each chunk read beside it."""

    def __init__(self, stand_in: _StandIn) -> None:
        super().__init__()
        self._stand_in = stand_in

    @property
    def name(self) -> str:
        return "floor"

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        handoff = _Handoff()
        token = _CALL.set(handoff)
        try:
            call = asyncio.ensure_future(handler(request.override(model=self._stand_in)))
        finally:
            _CALL.reset(token)
        call.add_done_callback(lambda _: handoff.put(None))
        async for _chunk in handoff.read():
            pass
        return await call

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)


def floor_langchain(turns: Any, *, streamed: bool = False) -> Callable[[], Any]:
    """Agents with the floor's middleware (see the module's docstring): one per stage."""
    model = PlainChatModel(turns=turns)
    stand_in = _StandIn(inner=model)
    add_tool = langchain_tool(add)
    return lambda: _Run(
        create_agent(model, tools=[add_tool], middleware=[_Floor(stand_in)]), streamed
    )


class _Run:
    """A LangChain agent behind the benchmark's interface: ``invoke_async`` and ``messages``."""

    def __init__(self, agent: Any, streamed: bool) -> None:
        self.agent = agent
        self.streamed = streamed
        self.history: list[Any] = []

    async def invoke_async(self, prompt: str) -> None:
        given = {"messages": [("user", prompt)]}
        if not self.streamed:
            result = await self.agent.ainvoke(given)
            self.history = list(result["messages"])
            return
        state: Any = None
        async for mode, part in self.agent.astream(given, stream_mode=["messages", "values"]):
            if mode == "values":
                state = part
        self.history = list(state["messages"])

    @property
    def messages(self) -> Messages:
        return converse_messages(self.history)[0]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _agent(turns: Any, middleware: Callable[[], Sequence[Any]], streamed: bool) -> Any:
    model = PlainChatModel(turns=turns)
    add_tool = langchain_tool(add)
    return lambda: _Run(
        create_agent(model, tools=[add_tool], middleware=list(middleware())), streamed
    )


def native_langchain(
    turns: Any, count: int, *, model: bool = True, tools: bool = True, streamed: bool = False
) -> Callable[[], Any]:
    """Agents with ``count`` native pass-through middlewares on the chosen stages."""
    kind = _Both if model and tools else _ModelOnly if model else _ToolOnly
    return _agent(turns, lambda: [kind(n) for n in range(count)], streamed)


def bridged_langchain(
    turns: Any, middleware: Callable[[], Sequence[Any]], *, streamed: bool = False
) -> Callable[[], Any]:
    """Agents with one `LangChainBridge` holding ``middleware()``."""
    return _agent(turns, lambda: [LangChainBridge(*middleware())], streamed)
