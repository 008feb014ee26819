"""A LangChain model call no one watches runs in the chain's own task, with the chat model itself.

`asked_whole` decides, before the call, whether anything but the agent reads the model's reply;
only then does the bridge let LangChain call the model itself. The first test checks that
decision against what LangChain does on each way to run an agent, so a LangChain release that
streams in a new case (or renames the model node's own handler) fails here, rather than showing
a caller a reply the handlers have not seen. The others check that the answer the agent keeps,
and what callbacks see, are what the relay's path gives.
"""

from __future__ import annotations

import contextlib
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
from pydantic import BaseModel, Field

from strands_middleware import InvokeModelStage, ModelStopReason
from strands_middleware.bridges.langchain import LangChainBridge
from strands_middleware.bridges.langchain._model_reply import WHOLE_WHEN_ASKED
from strands_middleware.bridges.langchain._whole_call import _checked_events, reply_events
from strands_middleware.events import (
    ModelMessageEvent,
    ModelStreamEvent,
    TextDeltaEvent,
    ToolUseDeltaEvent,
)
from strands_middleware.exceptions import ModelStreamError


class AskedModel(BaseChatModel):
    """Answers with ``reply``, noting each call: how it was asked (``whole`` or ``streamed``)
    and whether LangChain's own call machinery asked (``by LangChain``) or the bridge's relay
    called it itself (``by the relay``)."""

    asked: list[tuple[str, str]] = Field(default_factory=list)
    reply: Any = "the model's words"
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
        self.asked.append(("whole", "by LangChain" if run_manager else "by the relay"))
        message = self.reply if isinstance(self.reply, AIMessage) else AIMessage(self.reply)
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        self.asked.append(("streamed", "by LangChain" if run_manager else "by the relay"))
        if isinstance(self.reply, AIMessage):
            reply = self.reply
            chunk = AIMessageChunk(content=reply.content, additional_kwargs=reply.additional_kwargs)
            yield ChatGenerationChunk(message=chunk)
            return
        words = self.reply.split(" ")
        for position, word in enumerate(words):
            text = word if position == len(words) - 1 else f"{word} "
            yield ChatGenerationChunk(message=AIMessageChunk(content=text))


class TakesTokens(AsyncCallbackHandler):
    """A callback handler of the caller's own that wants the model's tokens as they come."""

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]) -> AsyncIterator[Any]:
        return output

    def tap_output_iter(self, run_id: UUID, output: Any) -> Any:
        return output


class NotesReplies(AsyncCallbackHandler):
    """Notes the reply of each chat model run, as a tracer records it."""

    def __init__(self) -> None:
        self.replies: list[str] = []

    async def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        self.replies.append(response.generations[0][0].text)


async def _run(agent: Any, way: str) -> Any:
    given = {"messages": [HumanMessage("hi")]}
    if way == "ainvoke":
        return await agent.ainvoke(given)
    if way == "ainvoke, a handler taking tokens":
        return await agent.ainvoke(given, {"callbacks": [TakesTokens()]})
    if way == "ainvoke, a tracer":
        return await agent.ainvoke(given, {"callbacks": [NotesReplies()]})
    if way == "astream_events":
        async for _ in agent.astream_events(given, version="v2"):
            pass
        return None
    modes = way.removeprefix("astream ").split("+")
    state = None
    async for mode, part in agent.astream(given, stream_mode=[*modes, "values"]):
        if mode == "values":
            state = part
    return state


# The ways that put no callback handler on the run: nothing but the agent reads the reply.
UNWATCHED = ["ainvoke", "astream values", "astream updates", "astream custom"]
WAYS = [
    *UNWATCHED,
    "ainvoke, a handler taking tokens",
    "ainvoke, a tracer",
    "astream messages",
    "astream_events",
]


async def _passthrough(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        yield event


@pytest.mark.parametrize(
    "settings",
    [{}, {"streaming": True}, {"streaming": False}],
    ids=["plain model", "streaming=True", "streaming=False"],
)
@pytest.mark.parametrize("way", WAYS)
async def test_the_bridge_lets_langchain_call_the_model_only_when_no_one_watches(
    way: str, settings: dict[str, Any]
) -> None:
    native = AskedModel(**settings)
    await _run(create_agent(native), way)
    bridged = AskedModel(**settings)
    await _run(
        create_agent(bridged, middleware=[LangChainBridge(InvokeModelStage.wrap(_passthrough))]),
        way,
    )

    assert len(native.asked) == len(bridged.asked) == 1, (native.asked, bridged.asked)
    langchain_asked, _ = native.asked[0]
    if not WHOLE_WHEN_ASKED:  # Python 3.10: the relay streams every model to the handlers
        assert bridged.asked == [("streamed", "by the relay")]
        return
    if way in UNWATCHED and langchain_asked == "whole":
        expected = ("whole", "by LangChain")
    else:
        expected = (langchain_asked if way in UNWATCHED else bridged.asked[0][0], "by the relay")
    assert bridged.asked == [expected], (
        f"{way}: LangChain asked the model {langchain_asked}; the bridge was expected to have "
        f"it asked {expected[0]} {expected[1]}, but it was asked {bridged.asked[0]}: update "
        "asked_whole in src/strands_middleware/bridges/langchain/_whole_call.py"
    )


class Checks(AgentMiddleware[Any, Any, Any]):
    """A LangChain middleware that adds to the reply."""

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        response: ModelResponse[Any] = await handler(request)
        ai: Any = response.result[-1]
        return ModelResponse(result=[AIMessage(f"{ai.content} (checked)", id=ai.id)])


class Answer(BaseModel):
    """The answer, structured."""

    text: str


@pytest.mark.parametrize("around", ["LangChain middleware inside", "structured output"])
async def test_what_acts_on_the_reply_inside_langchains_call_keeps_the_relay(
    around: str,
) -> None:
    """Inside LangChain's call the reply is read by LangChain middleware registered after the
    bridge, or turned into structured output: the relay's path runs it on what handlers let out,
    so the bridge keeps that path for them."""
    model = AskedModel()
    bridge = LangChainBridge(InvokeModelStage.wrap(_passthrough))
    if around == "structured output":
        agent = create_agent(model, middleware=[bridge], response_format=Answer)
    else:
        agent = create_agent(model, middleware=[bridge, Checks()])
    # The model gives no structured answer: how it was asked is what counts here.
    with contextlib.suppress(Exception):
        await _run(agent, "ainvoke")
    assert model.asked[0][1] == "by the relay"


async def _upper_deltas(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        yield TextDeltaEvent(event.text.upper()) if isinstance(event, TextDeltaEvent) else event


async def _drop_deltas(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        if not isinstance(event, TextDeltaEvent):
            yield event


async def _rewrite(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        if isinstance(event, ModelStopReason):
            message: Any = {"role": "assistant", "content": [{"text": "rewritten"}]}
            yield ModelStopReason(event.stop_reason, message, event.usage, event.metrics)
        else:
            yield event


@pytest.mark.parametrize(
    ("handler", "kept"),
    [
        (_passthrough, "the model's words"),
        (_upper_deltas, "THE MODEL'S WORDS"),
        (_drop_deltas, ""),
        (_rewrite, "rewritten"),
    ],
    ids=["unchanged", "deltas changed", "deltas dropped", "result changed"],
)
@pytest.mark.parametrize("way", ["ainvoke", "astream values", "astream messages"])
async def test_the_answer_kept_is_the_same_however_the_agent_runs(
    way: str, handler: Any, kept: str
) -> None:
    """The deltas a handler lets out make the answer unless it changed the result, whether the
    bridge called LangChain itself (``ainvoke``, ``values``) or relayed (``messages``)."""
    agent = create_agent(AskedModel(), middleware=[LangChainBridge(InvokeModelStage.wrap(handler))])
    state = await _run(agent, way)
    assert state["messages"][-1].content == kept


async def test_a_tracer_on_the_run_sees_only_what_handlers_let_out() -> None:
    """A callback handler on the run would see the model's own reply on a call LangChain makes
    itself, so the bridge relays: the model's run it records holds the handlers' deltas."""
    notes = NotesReplies()
    agent = create_agent(
        AskedModel(), middleware=[LangChainBridge(InvokeModelStage.wrap(_upper_deltas))]
    )
    result = await agent.ainvoke({"messages": [HumanMessage("hi")]}, {"callbacks": [notes]})
    assert result["messages"][-1].content == "THE MODEL'S WORDS"
    if WHOLE_WHEN_ASKED:  # on Python 3.10 an async node's model call gets no callbacks
        assert notes.replies == ["THE MODEL'S WORDS"]


@pytest.mark.parametrize(
    "reply",
    [
        AIMessage(
            [
                {"type": "reasoning", "reasoning": "the user is alice"},
                {"type": "text", "text": "Hello."},
            ]
        ),
        AIMessage("Hello.", additional_kwargs={"reasoning_content": "the user is alice"}),
    ],
    ids=["a reasoning block", "a provider's extra"],
)
async def test_what_handlers_were_not_shown_is_not_kept(reply: AIMessage) -> None:
    """As on the relay's path: the answer holds what the handlers saw (text and tool calls)."""
    agent = create_agent(
        AskedModel(reply=reply), middleware=[LangChainBridge(InvokeModelStage.wrap(_passthrough))]
    )
    result = await agent.ainvoke({"messages": [HumanMessage("hi")]})
    answer = result["messages"][-1]
    assert answer.content == "Hello."
    assert "alice" not in str(answer.model_dump())


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
