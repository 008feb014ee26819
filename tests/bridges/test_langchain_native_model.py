"""The LangChain bridge with a chat model of LangChain's own kind: as with the scripted one.

`ReplyModel` is a plain ``BaseChatModel`` subclass, as a user's own or a provider's would be: it
knows nothing of this library. Every test here drives ``create_agent`` with it.
"""

from __future__ import annotations

import gc
import sys
import uuid
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import Field

from strands_middleware import (
    InvokeModelStage,
    MiddlewareResult,
    ModelStopReason,
)
from strands_middleware.bridges.langchain import LangChainBridge, SyncInvokeError
from strands_middleware.catalog import Cache, ModelFallback, Retry
from strands_middleware.events import ModelStreamEvent, TextDeltaEvent
from strands_middleware.testing import ScriptedModel, text_turn


class ReplyModel(BaseChatModel):
    """Answers each call with the next of ``replies``, raising it when it is an exception.

    Streaming sends the reply's text word by word; ``log`` notes each call made.
    """

    replies: list[Any]
    log: list[str] = Field(default_factory=list)
    temperature: float = 0.0

    @property
    def calls(self) -> int:
        return len(self.log)

    @property
    def _llm_type(self) -> str:
        return "reply-model"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self.bind(**kwargs)

    def _next(self) -> AIMessage:
        reply = self.replies[self.calls]
        self.log.append("call")
        if isinstance(reply, BaseException):
            raise reply
        return AIMessage(content=str(reply))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next())])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        reply = self._next()
        words = str(reply.content).split(" ")
        for position, word in enumerate(words):
            text = word if position == len(words) - 1 else f"{word} "
            yield ChatGenerationChunk(message=AIMessageChunk(content=text))


# On Python 3.10 a task gets no copy of the caller's context, so LangChain cannot tell the model
# call inside an agent that its caller streams: it asks for the whole reply, and the caller's
# streams show only the final message (with or without this library).
_STREAMS_INSIDE_THE_AGENT = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="LangChain streams a model inside an agent on 3.11+ only"
)


def prompt(text: str = "hi") -> Any:
    return {"messages": [HumanMessage(content=text)]}


def thread() -> Any:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


async def test_retry_acts_on_a_native_models_failure() -> None:
    model = ReplyModel(replies=[RuntimeError("overloaded"), "second try"])
    agent = create_agent(model, middleware=[LangChainBridge(Retry(attempts=2, backoff=0.0))])
    result = await agent.ainvoke(prompt())
    assert result["messages"][-1].content == "second try"
    assert model.calls == 2


async def test_model_fallback_acts_on_a_native_models_failure() -> None:
    model = ReplyModel(replies=[RuntimeError("down")])
    backup = ScriptedModel([text_turn("from the backup")])
    agent = create_agent(model, middleware=[LangChainBridge(ModelFallback([backup]))])
    result = await agent.ainvoke(prompt())
    assert result["messages"][-1].content == "from the backup"


async def test_the_cache_answers_a_repeated_call_to_a_native_model() -> None:
    cache = Cache()
    model = ReplyModel(replies=["cached answer", "a second call"])
    agent = create_agent(model, middleware=[LangChainBridge(cache)])
    first = await agent.ainvoke(prompt("same question"))
    second = await agent.ainvoke(prompt("same question"))
    assert first["messages"][-1].content == "cached answer"
    assert second["messages"][-1].content == "cached answer"
    assert model.calls == 1
    assert cache.hits == 1


async def test_an_output_handler_changing_the_answer_does_not_show_it_twice() -> None:
    @InvokeModelStage.output
    def shout(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        stop = result.value
        message: Any = {"role": "assistant", "content": [{"text": "HELLO THERE"}]}
        return result.replace(
            value=ModelStopReason(stop.stop_reason, message, stop.usage, stop.metrics)
        )

    model = ReplyModel(replies=["hello there"])
    agent = create_agent(model, middleware=[LangChainBridge(shout)])
    ids: set[str | None] = set()
    shown: list[str] = []
    final: Any = None
    parts: Any = agent.astream(prompt(), stream_mode=["messages", "values"])
    async for mode, data in parts:
        if mode == "messages":
            chunk, _metadata = data
            if isinstance(chunk, AIMessage):
                ids.add(chunk.id)
                shown.append(str(chunk.content))
        else:
            final = data
    answer = final["messages"][-1]
    assert answer.content == "HELLO THERE"
    # One message in the UI: every chunk and the final message share one id.
    assert ids == {answer.id}, (ids, shown)


async def test_a_result_changed_without_its_deltas_is_the_final_answer() -> None:
    async def rewrite(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
        async for event in next_fn(context):
            if isinstance(event, ModelStopReason):
                message: Any = {"role": "assistant", "content": [{"text": "rewritten"}]}
                yield ModelStopReason(event.stop_reason, message, event.usage, event.metrics)
            else:
                yield event

    model = ReplyModel(replies=["the model's words"])
    agent = create_agent(model, middleware=[LangChainBridge(InvokeModelStage.wrap(rewrite))])
    result = await agent.ainvoke(prompt())
    assert result["messages"][-1].content == "rewritten"


def test_a_synchronous_invoke_is_refused_with_the_fix_before_the_model_is_called() -> None:
    model = ReplyModel(replies=["hello"])
    agent = create_agent(model, middleware=[LangChainBridge(Retry(attempts=2, backoff=0.0))])
    with pytest.raises(SyncInvokeError, match=r"await agent\.ainvoke"):
        agent.invoke(prompt())
    assert model.calls == 0


def test_a_synchronous_invoke_runs_when_no_stage_has_handlers() -> None:
    model = ReplyModel(replies=["hello"])
    agent = create_agent(model, middleware=[LangChainBridge()])
    assert agent.invoke(prompt())["messages"][-1].content == "hello"


@InvokeModelStage.wrap
async def withhold_the_secret(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    """Swaps the secret's delta for ``[x]`` and rewrites the result to match."""
    async for event in next_fn(context):
        if isinstance(event, TextDeltaEvent) and "hunter2" in event.text:
            yield TextDeltaEvent(event.text.replace("hunter2", "[x]"))
        elif isinstance(event, ModelStopReason):
            message: Any = {"role": "assistant", "content": [{"text": "the password is [x]"}]}
            yield ModelStopReason(event.stop_reason, message, event.usage, event.metrics)
        else:
            yield event


@_STREAMS_INSIDE_THE_AGENT
async def test_no_stream_a_caller_reads_shows_a_withheld_delta() -> None:
    """``astream_events`` reports every chat model run's chunks; the model's own must not show."""
    model = ReplyModel(replies=["the password is hunter2"] * 2)
    agent = create_agent(model, middleware=[LangChainBridge(withhold_the_secret)])
    events: Any = agent.astream_events(prompt(), version="v2")
    streamed = [
        str(event["data"]["chunk"].content)
        async for event in events
        if event["event"] == "on_chat_model_stream"
    ]
    assert "".join(streamed) == "the password is [x]", streamed
    parts: Any = agent.astream(prompt(), stream_mode="messages")
    shown = [str(chunk.content) async for chunk, _metadata in parts]
    assert "".join(shown) == "the password is [x]", shown


@_STREAMS_INSIDE_THE_AGENT
async def test_a_streamed_run_ends_on_the_changed_result_with_the_deltas_id() -> None:
    """Under ``astream`` the stream shows the deltas the handlers let out; the answer the thread
    keeps is the chain's result, under the id the stream showed."""

    async def rewrite(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
        async for event in next_fn(context):
            if isinstance(event, ModelStopReason):
                message: Any = {"role": "assistant", "content": [{"text": "rewritten"}]}
                yield ModelStopReason(event.stop_reason, message, event.usage, event.metrics)
            else:
                yield event

    model = ReplyModel(replies=["the model's words"])
    agent = create_agent(model, middleware=[LangChainBridge(InvokeModelStage.wrap(rewrite))])
    shown: list[str] = []
    ids: set[str | None] = set()
    final: Any = None
    parts: Any = agent.astream(prompt(), stream_mode=["messages", "values"])
    async for mode, data in parts:
        if mode == "messages":
            ids.add(data[0].id)
            shown.append(str(data[0].content))
        else:
            final = data
    answer = final["messages"][-1]
    assert "".join(shown) == "the model's words"
    assert answer.content == "rewritten"
    assert ids == {answer.id}


async def test_context_model_is_one_object_per_native_chat_model() -> None:
    """Handlers see the same ``context.model`` on every call to one chat model, so a handler
    may compare it or hand it to a later call."""
    seen: list[Any] = []

    def note(context: Any) -> Any:
        seen.append(context.model)
        return context

    model = ReplyModel(replies=["one", "two"])
    agent = create_agent(model, middleware=[LangChainBridge(InvokeModelStage.input(note))])
    await agent.ainvoke(prompt())
    await agent.ainvoke(prompt())
    assert len(seen) == 2
    assert seen[0] is seen[1]
    assert seen[0].host is model


async def test_the_bridge_lets_go_of_chat_models_it_no_longer_sees() -> None:
    """One bridge in agents of many chat models keeps a bounded few of their views."""
    bridge = LangChainBridge(InvokeModelStage.input(lambda context: context))
    first = ReplyModel(replies=["first"])
    gone = weakref.ref(first)
    await create_agent(first, middleware=[bridge]).ainvoke(prompt())
    del first
    for number in range(20):
        await create_agent(ReplyModel(replies=[str(number)]), middleware=[bridge]).ainvoke(prompt())
    gc.collect()
    assert gone() is None


async def test_a_native_models_text_block_opens_as_on_the_reference_agent() -> None:
    """A Wrap handler sees a text block open with ``contentBlockStart``, as a model of this
    library streams it, whether LangChain asks for the reply whole or streams it."""
    chunks: list[list[str]] = []

    async def watch(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
        chunks.append([])
        async for event in next_fn(context):
            if isinstance(event, ModelStreamEvent):
                chunks[-1].extend(event.chunk)
            yield event

    model = ReplyModel(replies=["two words", "two words"])
    agent = create_agent(model, middleware=[LangChainBridge(InvokeModelStage.wrap(watch))])
    await agent.ainvoke(prompt())
    async for _ in agent.astream(prompt(), stream_mode="messages"):
        pass
    for seen in chunks:
        deltas = seen.count("contentBlockDelta")
        assert deltas >= 1
        expected = ["messageStart", "contentBlockStart", *["contentBlockDelta"] * deltas]
        assert seen == [*expected, "contentBlockStop", "messageStop", "metadata"], seen
    if sys.version_info >= (3, 11):  # LangChain streams the model under astream only
        assert [each.count("contentBlockDelta") for each in chunks] == [1, 2]
