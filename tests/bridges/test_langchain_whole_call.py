"""A LangChain model call no one streams runs in the chain's own task, with the chat model itself.

`asked_whole` predicts, before the call, whether LangChain will ask the chat model for its reply
whole; it reads the run's handlers as LangChain does. The first test checks that prediction
against what LangChain does on each way to run an agent, so a LangChain release that streams in
a new case fails here rather than streaming a reply the handlers have not seen.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any
from uuid import UUID

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelResponse
from langchain_core.callbacks import (
    AsyncCallbackHandler,
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult, LLMResult
from langchain_core.tools import BaseTool
from pydantic import Field

from strands_middleware import InvokeModelStage, ModelStopReason
from strands_middleware.bridges.langchain import LangChainBridge
from strands_middleware.bridges.langchain._model_reply import WHOLE_WHEN_ASKED
from strands_middleware.bridges.langchain._streaming import RelayChatModel
from strands_middleware.bridges.langchain._whole_call import _checked_events, reply_events
from strands_middleware.events import (
    ModelMessageEvent,
    ModelStreamEvent,
    TextDeltaEvent,
    ToolUseDeltaEvent,
)
from strands_middleware.exceptions import ModelStreamError


class AskedModel(BaseChatModel):
    """Answers "the model's words", noting how LangChain asked: ``whole`` or ``streamed``."""

    asked: list[str] = Field(default_factory=list)
    streaming: bool = False  # LangChain reads it only when it is given

    @property
    def _llm_type(self) -> str:
        return "asked-model"

    def bind_tools(
        self, tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool], **kw: Any
    ) -> Any:
        return self.bind(**kw)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.asked.append("whole")
        return ChatResult(generations=[ChatGeneration(message=AIMessage("the model's words"))])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        self.asked.append("streamed")
        for word in ("the ", "model's ", "words"):
            yield ChatGenerationChunk(message=AIMessageChunk(content=word))


class TakesTokens(AsyncCallbackHandler):
    """A callback handler of the caller's own that wants the model's tokens as they come."""

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]) -> AsyncIterator[Any]:
        return output

    def tap_output_iter(self, run_id: UUID, output: Any) -> Any:
        return output


class SeesTheModel(AgentMiddleware[Any, Any, Any]):
    """A LangChain middleware inside the bridge: notes the chat model it is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.models: list[Any] = []

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        self.models.append(request.model)
        return await handler(request)


async def _run(agent: Any, way: str) -> None:
    given = {"messages": [HumanMessage("hi")]}
    if way == "ainvoke":
        await agent.ainvoke(given)
    elif way == "ainvoke, a handler taking tokens":
        await agent.ainvoke(given, {"callbacks": [TakesTokens()]})
    elif way == "astream_events":
        async for _ in agent.astream_events(given, version="v2"):
            pass
    else:
        modes = way.removeprefix("astream ").split("+")
        async for _ in agent.astream(given, stream_mode=modes):
            pass


WAYS = [
    "ainvoke",
    "ainvoke, a handler taking tokens",
    "astream values",
    "astream updates",
    "astream custom",
    "astream messages",
    "astream messages+values",
    "astream_events",
]


async def _passthrough(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        yield event


# The ways a handler on the run takes the model's tokens: the bridge relays the call whatever the
# model does (LangGraph's message stream shows a reply asked whole too, at its end).
TAKING_TOKENS = {
    "ainvoke, a handler taking tokens",
    "astream messages",
    "astream messages+values",
    "astream_events",
}


@pytest.mark.parametrize(
    "settings",
    [{}, {"streaming": True}, {"streaming": False}],
    ids=["plain model", "streaming=True", "streaming=False"],
)
@pytest.mark.parametrize("way", WAYS)
async def test_the_bridge_calls_the_model_itself_only_when_nothing_streams_it(
    way: str, settings: dict[str, Any]
) -> None:
    native = AskedModel(**settings)
    await _run(create_agent(native), way)
    inside = SeesTheModel()
    bridged = AskedModel(**settings)
    bridge = LangChainBridge(InvokeModelStage.wrap(_passthrough))
    await _run(create_agent(bridged, middleware=[bridge, inside]), way)

    relayed = [isinstance(model, RelayChatModel) for model in inside.models]
    assert len(relayed) == 1, inside.models
    if not WHOLE_WHEN_ASKED:  # Python 3.10: the relay streams every model to the handlers
        assert relayed == [True]
        return
    langchain_asked = native.asked
    assert langchain_asked in (["whole"], ["streamed"]), langchain_asked
    expected = langchain_asked == ["streamed"] or way in TAKING_TOKENS
    assert relayed == [expected], (
        f"{way}: LangChain asked the model {langchain_asked[0]}, but the bridge "
        f"{'relayed the call' if relayed[0] else 'called the model itself'}: update "
        "asked_whole in src/strands_middleware/bridges/langchain/_whole_call.py"
    )
    if not relayed[0]:
        assert inside.models == [bridged]


class NotesReplies(AsyncCallbackHandler):
    """Notes the reply of each chat model run, as a tracer records it."""

    def __init__(self) -> None:
        self.replies: list[str] = []

    async def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        self.replies.append(response.generations[0][0].text)


async def _rewrite(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        if isinstance(event, ModelStopReason):
            message: Any = {"role": "assistant", "content": [{"text": "rewritten"}]}
            yield ModelStopReason(event.stop_reason, message, event.usage, event.metrics)
        else:
            yield event


async def test_the_models_run_records_its_own_reply_and_the_agent_keeps_the_handlers() -> None:
    """As with a LangChain middleware: the handlers change what the model node returns (on
    Python 3.10 LangGraph gives an async node's model call no callbacks: none record it)."""
    notes = NotesReplies()
    agent = create_agent(
        AskedModel(), middleware=[LangChainBridge(InvokeModelStage.wrap(_rewrite))]
    )
    result = await agent.ainvoke({"messages": [HumanMessage("hi")]}, {"callbacks": [notes]})
    assert result["messages"][-1].content == "rewritten"
    assert notes.replies == (["the model's words"] if WHOLE_WHEN_ASKED else [])


class Checks(AgentMiddleware[Any, Any, Any]):
    """A LangChain middleware inside the bridge that adds to the reply."""

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        response: ModelResponse[Any] = await handler(request)
        ai: Any = response.result[-1]
        return ModelResponse(result=[AIMessage(f"{ai.content} (checked)", id=ai.id)])


async def test_handlers_see_the_reply_langchain_middleware_inside_the_bridge_returned() -> None:
    """On Python 3.10, where every call is relayed, they see the model's own deltas instead."""
    seen: list[str] = []

    async def note_text(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
        async for event in next_fn(context):
            if isinstance(event, TextDeltaEvent):
                seen.append(event.text)
            yield event

    bridge = LangChainBridge(InvokeModelStage.wrap(note_text))
    agent = create_agent(AskedModel(), middleware=[bridge, Checks()])
    result = await agent.ainvoke({"messages": [HumanMessage("hi")]})
    assert seen == (
        ["the model's words (checked)"] if WHOLE_WHEN_ASKED else ["the ", "model's ", "words"]
    )
    assert result["messages"][-1].content == "the model's words (checked)"


def test_a_whole_reply_is_one_streamed_chunk_of_events() -> None:
    ai = AIMessage(
        "Adding.",
        tool_calls=[
            {"name": "add", "args": {"a": 1}, "id": "t1"},
            {"name": "add", "args": {"a": 2}, "id": "t2"},
        ],
        usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
    )
    events = reply_events(ModelResponse(result=[ai]))
    kinds = [type(event).__name__ for event in events]
    assert kinds == [
        "ModelStreamEvent",  # messageStart
        "ModelStreamEvent",  # the text block
        "ModelStreamEvent",
        "TextDeltaEvent",
        "ModelStreamEvent",
        "ModelStreamEvent",  # the first tool call
        "ModelStreamEvent",
        "ToolUseDeltaEvent",
        "ModelStreamEvent",
        "ModelStreamEvent",  # the second
        "ModelStreamEvent",
        "ToolUseDeltaEvent",
        "ModelStreamEvent",
        "ModelStreamEvent",  # messageStop
        "ModelStreamEvent",  # metadata
        "ModelMessageEvent",
        "ModelStopReason",
    ]
    deltas = [e for e in events if isinstance(e, (TextDeltaEvent, ToolUseDeltaEvent))]
    assert isinstance(deltas[0], TextDeltaEvent) and deltas[0].text == "Adding."
    assert [d.input_fragment for d in deltas[1:] if isinstance(d, ToolUseDeltaEvent)] == [
        '{"a": 1}',
        '{"a": 2}',
    ]
    stop = events[-1]
    assert isinstance(stop, ModelStopReason) and isinstance(events[-2], ModelMessageEvent)
    assert stop.stop_reason == "tool_use"
    assert stop.usage == {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}
    assert stop.message["content"] == [
        {"text": "Adding."},
        {"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 1}}},
        {"toolUse": {"toolUseId": "t2", "name": "add", "input": {"a": 2}}},
    ]
    assert all(isinstance(e, ModelStreamEvent) for e in events[:3])


def test_a_response_without_an_ai_message_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="returned no AIMessage"):
        reply_events(ModelResponse(result=[HumanMessage("not a reply")]))


REPLIES = [
    AIMessage("Hello."),
    AIMessage(""),
    AIMessage("", tool_calls=[{"name": "add", "args": {}, "id": "t1"}]),
    AIMessage(
        "Two calls.",
        tool_calls=[
            {"name": "add", "args": {"a": [1, 2]}, "id": "t1"},
            {"name": "mul", "args": {"b": "x"}, "id": "t2"},
        ],
        usage_metadata={"input_tokens": 7, "output_tokens": 1, "total_tokens": 8},
    ),
    AIMessage("Cut short", response_metadata={"finish_reason": "length"}),
    AIMessage("Stopped", response_metadata={"stop_reason": "max_tokens"}),
]


def _shown(events: list[Any]) -> list[tuple[str, Any]]:
    return [(type(event).__name__, dict(event)) for event in events]


@pytest.mark.parametrize("reply", REPLIES, ids=lambda reply: repr(reply.content)[:20])
def test_the_one_pass_translation_gives_what_the_checked_translation_gives(
    reply: AIMessage,
) -> None:
    assert _shown(reply_events(ModelResponse(result=[reply]))) == _shown(_checked_events(reply))


def test_a_reply_of_content_blocks_takes_the_checked_translation() -> None:
    reply = AIMessage([{"type": "text", "text": "one "}, {"type": "text", "text": "two"}])
    events = reply_events(ModelResponse(result=[reply]))
    assert [e.text for e in events if isinstance(e, TextDeltaEvent)] == ["one ", "two"]
    stop = events[-1]
    assert isinstance(stop, ModelStopReason)
    assert stop.message["content"] == [{"text": "one two"}]


def test_a_tool_call_without_an_id_is_a_malformed_reply() -> None:
    reply = AIMessage("", tool_calls=[{"name": "add", "args": {}, "id": None}])
    with pytest.raises(ModelStreamError, match="toolUseId"):
        reply_events(ModelResponse(result=[reply]))
