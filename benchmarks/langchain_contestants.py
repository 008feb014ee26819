"""The LangChain contestants of ``bench_e2e.py``: the same conversation on ``create_agent``.

The model is a plain ``BaseChatModel`` subclass of the benchmark's own (not this library's
`LibraryChatModel`, which the bridge streams on a shorter path): ``_agenerate`` answers a turn in
one message, ``_astream`` streams it as one chunk per text delta, then the tool call, then the
usage. A run ``ainvoke``s the agent (LangChain calls ``_agenerate``) or, streamed, ``astream``s
it with ``stream_mode="messages"`` (LangChain calls ``_astream`` and every delta reaches the
caller). The native contestants are what a LangChain user writes by hand: ``AgentMiddleware``
whose ``awrap_model_call`` and/or ``awrap_tool_call`` hand the call on unchanged.

The floor contestant runs this library's Wrap handler functions themselves in one
``AgentMiddleware``, on LangChain's own request and response, nothing translated: around each
``awrap_model_call`` and ``awrap_tool_call`` handler call, the reply one event (``ainvoke``,
where LangChain asks the model for its reply whole). Under ``astream`` handlers see every delta,
which those hooks never show: there the middleware hands LangChain, once per agent, a chat model
of the floor's own (`_HandlersModel`) whose ``_astream`` runs the handler functions around the
real model's ``_astream``, in LangChain's call, on LangChain's own chunks. The translating floor
(``astream`` only) is that with every chunk crossing as this library's events both ways: a
``contentBlockDelta`` Converse chunk in a `ModelStreamEvent` and a `TextDeltaEvent` per text
chunk, LangChain's own chunk handed back where the handlers left the text as it was. It is the
least an adapter showing handlers this library's events of every delta can do on LangChain.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
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

from floor_chain import Handler, around, around_call
from strands_middleware.bridges.langchain import LangChainBridge
from strands_middleware.bridges.langchain._converse import converse_messages
from strands_middleware.content import Messages, StreamEvent
from strands_middleware.events import ModelStreamEvent, TextDeltaEvent, TypedEvent

__all__ = [
    "PlainChatModel",
    "bridged_langchain",
    "floor_langchain",
    "native_langchain",
    "translating_floor_langchain",
]

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


class _Floor(AgentMiddleware[Any, Any, Any]):
    """One LangChain middleware running this library's handler functions on LangChain's objects."""

    def __init__(self, model: Sequence[Handler], tools: Sequence[Handler]) -> None:
        super().__init__()
        self._model = model
        self._tools = tools

    @property
    def name(self) -> str:
        return "floor"

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await around_call(self._model, request, handler)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        return await around_call(self._tools, request, handler)


class _HandlersModel(BaseChatModel):
    """The streaming floor's chat model: the real one's chunks through the handler functions."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any
    handlers: Any
    translating: bool = False

    @property
    def _llm_type(self) -> str:
        return "bench-floor"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        """The tools' OpenAI form bound, as the real model binds them."""
        return self.bind(tools=[convert_to_openai_tool(each) for each in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:  # pragma: no cover - the agents run asynchronously
        raise NotImplementedError("the benchmark runs asynchronously")

    def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        inner = self.inner

        def call(_: Any) -> AsyncIterator[Any]:
            chunks = inner._astream(messages, stop, **kwargs)
            return _events_in(chunks) if self.translating else chunks

        through = around(self.handlers, None, call)
        return _chunks_out(through) if self.translating else through


class _Delta(ModelStreamEvent):
    __slots__ = ()


class _Text(TextDeltaEvent):
    __slots__ = ("host", "value")


class _Other(TypedEvent):
    __slots__ = ("host",)


for _class in (_Delta, _Text, _Other):
    # dict's own __init__: making one runs no Python code, the cheapest way there is.
    type.__setattr__(_class, "__init__", dict.__init__)


async def _events_in(chunks: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """LangChain's chunks as this library's events: two per text chunk, one per other."""
    async for piece in chunks:
        content = piece.message.content
        if content.__class__ is str and content:
            delta = _Delta()
            fragment = {"text": content}
            delta["event"] = {"contentBlockDelta": {"contentBlockIndex": 0, "delta": fragment}}
            yield delta
            text = _Text()
            text["data"] = content
            text.host = piece
            text.value = content
            yield text
        else:
            other = _Other()
            other.host = piece
            yield other


async def _chunks_out(events: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """The handlers' events back as LangChain's chunks: its own where the text is unchanged."""
    async for ours in events:
        cls = ours.__class__
        if cls is _Text:
            text = ours["data"]
            yield (
                ours.host
                if text is ours.value
                else ChatGenerationChunk(message=AIMessageChunk(content=text))
            )
        elif cls is _Other:
            yield ours.host


class _StreamingFloor(_Floor):
    """`_Floor`, handing LangChain the floor's chat model for the model call."""

    def __init__(self, model: Any, handlers: Sequence[Handler], tools: Sequence[Handler]) -> None:
        super().__init__((), tools)
        self._model = model

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(request.override(model=self._model))


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


def floor_langchain(
    turns: Any,
    handlers: Sequence[Handler],
    *,
    model: bool = True,
    tools: bool = True,
    streamed: bool = False,
    translating: bool = False,
) -> Callable[[], Any] | None:
    """Agents with one `_Floor` running ``handlers`` on the chosen stages (streamed, with the
    floor's own chat model; ``translating``, every chunk crossing as this library's events)."""
    model_handlers, tool_handlers = handlers if model else (), handlers if tools else ()
    if not streamed:
        return _agent(turns, lambda: [_Floor(model_handlers, tool_handlers)], streamed)
    real = PlainChatModel(turns=turns)
    chosen = _HandlersModel(inner=real, handlers=list(model_handlers), translating=translating)
    middleware = (
        (lambda: [_StreamingFloor(chosen, model_handlers, tool_handlers)])
        if model_handlers
        else (lambda: [_Floor((), tool_handlers)])
    )
    return _agent(turns, middleware, streamed)


def translating_floor_langchain(
    turns: Any,
    handlers: Sequence[Handler],
    *,
    model: bool = True,
    tools: bool = True,
    streamed: bool = False,
) -> Callable[[], Any] | None:
    """The streaming floor with every chunk crossing as this library's events; None unstreamed
    (a reply asked whole is one chunk a call: the bridge's own events are the whole cost)."""
    if not streamed:
        return None
    return floor_langchain(
        turns, handlers, model=model, tools=tools, streamed=True, translating=True
    )
