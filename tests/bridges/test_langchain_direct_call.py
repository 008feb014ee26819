"""The one private seam of the LangChain bridge: it calls a chat model's own ``_astream`` or
``_agenerate`` (`bridges/langchain/_model_reply.py`, `_called_directly`), not ``astream`` again.

These are the methods a ``BaseChatModel`` subclass implements; LangChain's public ``astream`` and
``ainvoke`` wrap them in callbacks, a cache and the rate limiter, which the relay's own call has
already gone through. When a LangChain release renames them or changes how they are called, a
test here fails and names the place to update, instead of the bridge calling the model wrongly.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from importlib import metadata
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from pydantic import Field

from strands_middleware import InvokeModelStage
from strands_middleware.bridges.langchain import LangChainBridge
from strands_middleware.bridges.langchain._converse import (
    _TRANSLATED,
    converse_messages,
    host_messages,
)
from strands_middleware.bridges.langchain._model_events import _one_call_delta, _only_text
from strands_middleware.bridges.langchain._model_reply import _called_directly
from strands_middleware.bridges.langchain._relay_chunks import call_chunk, last_chunk, own_closing
from strands_middleware.bridges.langchain._streaming import Relay
from strands_middleware.events import ModelStopReason, TextDeltaEvent

from .test_langchain_native_model import _STREAMS_INSIDE_THE_AGENT, ReplyModel, prompt

LANGCHAIN_CORE = metadata.version("langchain-core")

_USAGE: Any = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}


def _moved(what: str) -> str:
    return (
        f"langchain-core {LANGCHAIN_CORE} changed {what}, which the LangChain bridge calls "
        "directly: update _called_directly and direct_pieces in "
        "src/strands_middleware/bridges/langchain/_model_reply.py"
    )


def test_the_methods_a_chat_model_implements_take_what_the_bridge_passes() -> None:
    for name in ("_astream", "_agenerate"):
        method = getattr(BaseChatModel, name, None)
        assert method is not None, _moved(f"BaseChatModel.{name} (it is gone)")
        parameters = inspect.signature(method).parameters
        assert list(parameters)[:3] == ["self", "messages", "stop"], _moved(
            f"the parameters of BaseChatModel.{name}: {list(parameters)}"
        )
        assert any(p.kind is p.VAR_KEYWORD for p in parameters.values()), _moved(
            f"BaseChatModel.{name}, which no longer takes the bound keywords"
        )


def test_a_plain_model_is_called_directly_and_one_with_callbacks_is_not() -> None:
    plain = ReplyModel(replies=["hello"])
    assert _called_directly(plain, whole=False) == "_astream"
    assert _called_directly(plain, whole=True) == "_agenerate"
    watched = ReplyModel(replies=["hello"], callbacks=[AsyncCallbackHandler()])
    assert _called_directly(watched, whole=False) is None


class _CountingModel(ReplyModel):
    """A `ReplyModel` noting which of LangChain's public entry points the bridge called."""

    public: list[str] = Field(default_factory=list)

    async def ainvoke(self, *args: Any, **kwargs: Any) -> Any:
        self.public.append("ainvoke")
        return await super().ainvoke(*args, **kwargs)

    async def astream(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        self.public.append("astream")
        async for chunk in super().astream(*args, **kwargs):
            yield chunk


async def test_each_model_call_runs_the_model_once_through_its_own_method() -> None:
    seen: list[str] = []

    @InvokeModelStage.wrap
    async def listen(context: Any, next_fn: Any) -> Any:
        async for event in next_fn(context):
            if isinstance(event, TextDeltaEvent):
                seen.append(event.text)
            yield event

    model = _CountingModel(replies=["one two three"])
    agent = create_agent(model, middleware=[LangChainBridge(listen)])
    chunks = [chunk async for chunk, _ in agent.astream(prompt(), stream_mode="messages")]
    assert model.calls == 1
    assert model.public == [], "the bridge went through LangChain's call machinery again"
    assert "".join(seen) == "one two three"
    assert "".join(str(c.content) for c in chunks) == "one two three"


def test_a_chunk_passed_on_as_it_is_equals_the_one_the_relay_would_build() -> None:
    """The relay hands LangChain a model's own chunk for a delta let out unchanged only when it
    equals ``AIMessageChunk(content=text)`` in every field (`_only_text`)."""
    filled_metadata = AIMessageChunk(content="metadata filled in place")
    filled_metadata.response_metadata["model"] = "m"
    filled_kwargs = AIMessageChunk(content="kwargs filled in place")
    filled_kwargs.additional_kwargs["refusal"] = "no"
    filled_calls = AIMessageChunk(content="call filled in place")
    filled_calls.tool_call_chunks.append({"name": "f", "args": "", "id": "1", "index": 0})
    assigned = AIMessageChunk(content="assigned an id")
    assigned.id = "run-2"
    chunks = [
        AIMessageChunk(content="plain"),
        AIMessageChunk(content="with an id", id="run-1"),
        AIMessageChunk(content="with metadata", response_metadata={"model": "m"}),
        AIMessageChunk(content="with usage", usage_metadata=_USAGE),
        AIMessageChunk(content="last", chunk_position="last"),
        AIMessageChunk(content="named", name="bot"),
        AIMessageChunk(content="extra", additional_kwargs={"refusal": None}),
        AIMessageChunk(content="", tool_call_chunks=[{"name": "f", "args": "", "id": "1"}]),
        AIMessageChunk(content=[{"type": "text", "text": "blocks"}]),
        AIMessageChunk(content=""),
        filled_metadata,
        filled_kwargs,
        filled_calls,
        assigned,
    ]
    for chunk in chunks:
        content = chunk.content
        equal = isinstance(content, str) and chunk == AIMessageChunk(content=content)
        assert _only_text(chunk) == (equal and bool(content)), chunk
    # A field given its default explicitly counts as set: such a chunk is rebuilt, equal.
    assert not _only_text(AIMessageChunk(content="x", id=None))


def _call(**given: Any) -> Any:
    return AIMessageChunk(content="", tool_call_chunks=[given])


def test_a_tool_call_chunk_passed_on_as_it_is_equals_the_one_the_relay_would_build() -> None:
    """The relay hands LangChain a model's own chunk for a tool call's delta let out unchanged
    only when it equals the chunk the relay builds for that delta (`_one_call_delta`)."""
    extra_key = _call(name="f", args="{}", id="1", index=0)
    extra_key.tool_call_chunks[0]["extra"] = 1  # type: ignore[typeddict-unknown-key]
    kept = [
        _call(name="f", args='{"a": 1}', id="call-1", index=0),
        _call(args="1}", index=0),  # a later piece: no id, no name
        _call(name="g", args="{}", id="call-2", index=1),
    ]
    passed_over = [
        _call(name="f", args="", id="1", index=0),  # no input: no delta streams for it
        _call(name="f", args="{}", id="1"),  # no index
        AIMessageChunk(content="text too", tool_call_chunks=[{"args": "{}", "index": 0}]),
        AIMessageChunk(
            content="",
            tool_call_chunks=[{"args": "{}", "index": 0}, {"args": "{}", "index": 1}],
        ),
        AIMessageChunk(content="", tool_call_chunks=[{"args": "{}", "index": 0}], id="run-1"),
        AIMessageChunk(
            content="",
            tool_call_chunks=[{"args": "{}", "index": 0}],
            response_metadata={"model": "m"},
        ),
        AIMessageChunk(
            content="", tool_call_chunks=[{"args": "{}", "index": 0}], usage_metadata=_USAGE
        ),
        extra_key,
        AIMessageChunk(content="plain text"),
    ]
    for chunk in kept:
        delta = _one_call_delta(chunk)
        assert delta is not None, chunk
        assert chunk == call_chunk(delta, None, None), chunk
    for chunk in passed_over:
        assert _one_call_delta(chunk) is None, chunk


def _settled_relay(usage: Any, *, reason: str = "end_turn", **noted: Any) -> Relay:
    relay = Relay()
    message: Any = {"role": "assistant", "content": [{"text": "hi"}]}
    counts = {
        "inputTokens": usage["input_tokens"],
        "outputTokens": usage["output_tokens"],
        "totalTokens": usage["total_tokens"],
    }
    relay.stop = ModelStopReason(reason, message, counts, {"latencyMs": 0})
    for name, value in noted.items():
        setattr(relay, name, value)
    return relay


def _closing_of(relay: Relay) -> Any:
    return own_closing(relay.closing, relay.stop, relay.metadata, relay.reply_id, relay.reply_name)


def test_a_closing_chunk_passed_on_as_it_is_equals_the_one_the_relay_would_build() -> None:
    """The relay closes LangChain's stream with the model's own last chunk only when it equals
    the closing chunk the relay builds from the chain's result (`own_closing`)."""
    last: Any = {"usage_metadata": _USAGE, "chunk_position": "last"}
    closing = AIMessageChunk(content="", **last)
    cases: list[tuple[Relay, Any, bool]] = [
        (_settled_relay(_USAGE), closing, True),
        (_settled_relay(_USAGE, reason="tool_use"), closing, True),
        (
            _settled_relay(_USAGE, reply_id="chatcmpl-7", reply_name="bot", metadata={"m": 1}),
            AIMessageChunk(
                content="", id="chatcmpl-7", name="bot", response_metadata={"m": 1}, **last
            ),
            True,
        ),
        # The result's usage differs (a handler changed it), or the model's has more in it.
        (_settled_relay({**_USAGE, "total_tokens": 3}), closing, False),
        (
            _settled_relay(_USAGE),
            AIMessageChunk(
                content="",
                usage_metadata={**_USAGE, "input_token_details": {"cache_read": 1}},
                chunk_position="last",
            ),
            False,
        ),
        # A stop reason LangChain has no field for travels in the metadata the relay adds.
        (_settled_relay(_USAGE, reason="max_tokens"), closing, False),
        # Metadata from earlier chunks, an id or name of the reply's that the chunk lacks.
        (_settled_relay(_USAGE, metadata={"m": 1}), closing, False),
        (_settled_relay(_USAGE, reply_id="chatcmpl-7"), closing, False),
        (_settled_relay(_USAGE, reply_name="bot"), closing, False),
        # Not the closing chunk's shape: text in it, not marked last, a tool call in it.
        (_settled_relay(_USAGE), AIMessageChunk(content=".", **last), False),
        (_settled_relay(_USAGE), AIMessageChunk(content="", usage_metadata=_USAGE), False),
        (
            _settled_relay(_USAGE),
            AIMessageChunk(content="", tool_call_chunks=[{"args": "{}", "index": 0}], **last),
            False,
        ),
    ]
    for relay, message, handed_on in cases:
        piece = ChatGenerationChunk(message=message)
        relay.closing = piece
        built = last_chunk(
            relay.stop,
            relay.metadata,
            "",
            [],
            reply_id=relay.reply_id,
            reply_name=relay.reply_name,
        )
        assert (message == built) is handed_on, message
        assert (_closing_of(relay) is piece) is handed_on, message
    # Generation info LangChain would fold into the metadata again, or no result at all.
    relay = _settled_relay(_USAGE)
    relay.closing = ChatGenerationChunk(message=closing, generation_info={"m": 1})
    assert _closing_of(relay) is None
    relay = Relay()
    relay.closing = ChatGenerationChunk(message=closing)
    assert _closing_of(relay) is None


class _LabelledModel(ReplyModel):
    """A `ReplyModel` whose chunks carry the provider's id and a name, as some providers' do."""

    async def _astream(
        self, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        async for chunk in super()._astream(messages, stop, **kwargs):
            chunk.message.id = "chatcmpl-7"
            chunk.message.name = "bot"
            yield chunk


@_STREAMS_INSIDE_THE_AGENT
async def test_labelled_chunks_of_a_reply_stream_under_one_id_when_a_handler_rewrites_one() -> None:
    """Chunks carrying the provider's id and a name are rebuilt like the chunk of a rewritten
    delta, and every chunk the relay builds carries the model's id and name: the chunks LangChain
    streams for one reply never mix two ids, and they are the model's, as without the bridge."""

    @InvokeModelStage.wrap
    async def shout_two(context: Any, next_fn: Any) -> Any:
        async for event in next_fn(context):
            if isinstance(event, TextDeltaEvent) and event.text == "two ":
                event["data"] = "TWO "
            yield event

    agent = create_agent(
        _LabelledModel(replies=["one two three"]), middleware=[LangChainBridge(shout_two)]
    )
    chunks = [
        chunk async for chunk, _ in agent.astream(prompt(), stream_mode="messages") if chunk.content
    ]
    assert "".join(str(chunk.content) for chunk in chunks) == "one TWO three"
    assert {chunk.id for chunk in chunks} == {"chatcmpl-7"}, [chunk.id for chunk in chunks]
    assert {chunk.name for chunk in chunks} == {"bot"}, [chunk.name for chunk in chunks]


class _ScriptedChunksModel(ReplyModel):
    """Streams each call's chunks of ``chunk_turns`` as they are, noting every one it yields."""

    chunk_turns: list[list[AIMessageChunk]] = Field(default_factory=list)
    yielded: list[AIMessageChunk] = Field(default_factory=list)

    async def _astream(
        self, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        turn = self.chunk_turns[self.calls]
        self.log.append("call")
        for message in turn:
            self.yielded.append(message)
            yield ChatGenerationChunk(message=message)


def _tool_then_text() -> list[list[AIMessageChunk]]:
    last: Any = {"usage_metadata": _USAGE, "chunk_position": "last"}
    call: Any = {"name": "echo", "args": '{"text": "x"}', "id": "call-1", "index": 0}
    return [
        [
            AIMessageChunk(content="Let me check."),
            AIMessageChunk(content="", tool_call_chunks=[call]),
            AIMessageChunk(content="", **last),
        ],
        [AIMessageChunk(content="Done."), AIMessageChunk(content="", **last)],
    ]


@tool
def _echo(text: str) -> str:
    """Echo the text."""
    return text


async def _model_chunks(handler: Any) -> tuple[_ScriptedChunksModel, list[Any]]:
    """The model `_tool_then_text` scripts, and what LangChain streams of its node under
    ``astream`` through a bridge of ``handler``."""
    model = _ScriptedChunksModel(replies=[], chunk_turns=_tool_then_text())
    agent = create_agent(model, tools=[_echo], middleware=[LangChainBridge(handler)])
    streamed = [
        chunk
        async for chunk, meta in agent.astream(prompt(), stream_mode="messages")
        if meta["langgraph_node"] == "model"
    ]
    return model, streamed


@_STREAMS_INSIDE_THE_AGENT
async def test_chunks_let_out_unchanged_stream_as_the_models_own() -> None:
    """Under ``astream`` LangChain streams the model's own chunk objects for what handlers let
    through unchanged (the text, the tool call, the closing chunk with the usage), as without
    the bridge; the chunks of what a handler changed are built, carrying the change."""

    @InvokeModelStage.wrap
    async def passing(context: Any, next_fn: Any) -> Any:
        async for event in next_fn(context):
            yield event

    model, streamed = await _model_chunks(passing)
    assert [id(chunk) for chunk in streamed] == [id(chunk) for chunk in model.yielded]

    @InvokeModelStage.wrap
    async def counting_twice(context: Any, next_fn: Any) -> Any:
        async for event in next_fn(context):
            if isinstance(event, ModelStopReason):
                doubled = {key: 2 * value for key, value in event.usage.items()}
                yield ModelStopReason(event.stop_reason, event.message, doubled, event.metrics)
            else:
                yield event

    model, streamed = await _model_chunks(counting_twice)
    closings = [chunk for chunk in streamed if getattr(chunk, "chunk_position", None) == "last"]
    assert len(closings) == 2
    for closing in closings:
        assert all(closing is not own for own in model.yielded)
        assert closing.usage_metadata == {"input_tokens": 2, "output_tokens": 2, "total_tokens": 4}
    # The rest (text and tool call) are still the model's own.
    rest = [chunk for chunk in streamed if all(chunk is not each for each in closings)]
    assert [id(chunk) for chunk in rest] == [
        id(own) for own in model.yielded if own.chunk_position != "last"
    ]


def test_a_history_translated_once_still_hands_each_call_its_own_copy() -> None:
    """A message's Converse form is kept between model calls (`_converse._TRANSLATED`); each
    call's handlers still get a copy of their own, and a copy edited in place changes nothing
    the next call sees."""
    history = [
        HumanMessage(content="hello"),
        AIMessage(content="", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}]),
        ToolMessage(content="one", tool_call_id="c1"),
        ToolMessage(content="two", tool_call_id="c1"),
    ]
    first, shown = converse_messages(history)
    first[0]["content"].append({"text": "edited"})
    first[1]["content"][0]["toolUse"]["input"]["a"] = 2
    first[2]["content"].clear()
    second, again = converse_messages(history)
    assert second == again.messages == shown.messages
    assert second[0] == {"role": "user", "content": [{"text": "hello"}]}
    assert second[1]["content"][0]["toolUse"]["input"] == {"a": 1}
    assert len(second[2]["content"]) == 2  # the two tool results, merged into one user message
    assert all(mine is not kept for mine, kept in zip(second, again.messages, strict=True))
    assert host_messages(second, again) is history


def test_a_large_message_is_translated_on_each_call_rather_than_kept() -> None:
    small, large = HumanMessage(content="short"), HumanMessage(content="x" * 20_000)
    copies, _ = converse_messages([small, AIMessage(content="ok"), large])
    assert copies[2] == {"role": "user", "content": [{"text": "x" * 20_000}]}
    assert _TRANSLATED.find(small) is not None
    assert _TRANSLATED.find(large) is None


def test_a_message_given_new_content_is_translated_again() -> None:
    """A kept translation follows the message: LangChain messages are mutable, and one given new
    content or new tool calls between two model calls is seen as it is now."""
    human = HumanMessage(content="first")
    asked = AIMessage(content="", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}])
    converse_messages([human, asked])
    human.content = "second"
    asked.tool_calls = [{"name": "g", "args": {}, "id": "c2"}]
    again, _ = converse_messages([human, asked])
    assert again[0] == {"role": "user", "content": [{"text": "second"}]}
    assert again[1]["content"][0]["toolUse"]["name"] == "g"
