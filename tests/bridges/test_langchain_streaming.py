"""The relay between LangChain's call of the model and the chain (`bridges/langchain/_streaming`).

A chat model the bridge calls itself has its stream handed to the chain's terminal, which reads
it in the chain's task while LangChain's call waits for what the chain lets out. These tests
hold that way to what the relay promises: each delta streams as it is let out (while its
handler awaits something else too), a model failing mid-reply fails the run with its own error,
and a chain that stops early closes the model's stream.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.callbacks import AsyncCallbackHandler, AsyncCallbackManagerForLLMRun
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from pydantic import Field

from strands_middleware import InvokeModelStage
from strands_middleware.bridges.langchain import LangChainBridge
from strands_middleware.bridges.langchain._bridge import _ended
from strands_middleware.events import TextDeltaEvent

from .test_langchain_native_model import _STREAMS_INSIDE_THE_AGENT, ReplyModel, prompt

# Loop turns a model waits between its chunks: enough for a delta to reach the caller's stream
# (the relay wakes, LangChain reports the chunk, LangGraph's stream hands it on) meanwhile.
_TURNS_BETWEEN_CHUNKS = 10


class _PacedModel(ReplyModel):
    """Streams ``words`` a chunk each, letting the event loop run between them as a network
    read does; fails ("connection reset") in place of chunk ``fail_at``. ``log`` notes each
    chunk sent and the stream's closing. Given ``streaming=True``, LangChain streams it however
    it is called (as it does a provider's model set to stream); it answers no other way."""

    replies: list[Any] = Field(default_factory=list)
    words: list[str]
    fail_at: int | None = None
    streaming: bool = False

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        try:
            for position, word in enumerate(self.words):
                for _ in range(_TURNS_BETWEEN_CHUNKS):
                    await asyncio.sleep(0)
                if position == self.fail_at:
                    raise RuntimeError("connection reset")
                self.log.append(f"model sent {word}")
                yield ChatGenerationChunk(message=AIMessageChunk(content=word))
        finally:
            self.log.append("model stream closed")


@InvokeModelStage.wrap
async def _passing(context: Any, next_fn: Any) -> Any:
    async for event in next_fn(context):
        yield event


@_STREAMS_INSIDE_THE_AGENT
async def test_each_delta_streams_as_it_is_let_out_not_when_the_reply_ends() -> None:
    model = _PacedModel(words=["one ", "two ", "three"])
    agent = create_agent(model, middleware=[LangChainBridge(_passing)])

    async for chunk, _ in agent.astream(prompt(), stream_mode="messages"):
        if chunk.content:
            model.log.append(f"caller read {chunk.content}")

    assert model.log.index("caller read one ") < model.log.index("model sent three"), model.log
    assert [line for line in model.log if line.startswith("caller")] == [
        "caller read one ",
        "caller read two ",
        "caller read three",
    ]


async def test_a_model_failing_mid_reply_fails_the_run_with_its_own_error() -> None:
    model = _PacedModel(words=["one ", "two ", "three"], fail_at=1, streaming=True)
    agent = create_agent(model, middleware=[LangChainBridge(_passing)])
    read: list[str] = []

    with pytest.raises(RuntimeError, match="connection reset"):
        async for chunk, _ in agent.astream(prompt(), stream_mode="messages"):
            read.append(str(chunk.content))

    assert model.log == ["model sent one ", "model stream closed"]
    assert "two " not in read


class _CallbackLog(AsyncCallbackHandler):
    """What LangChain's callbacks hear of a run's model calls."""

    def __init__(self) -> None:
        self.heard: list[str] = []

    async def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.heard.append("model call started")

    async def on_llm_end(self, *args: Any, **kwargs: Any) -> None:
        self.heard.append("model call ended")

    async def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        self.heard.append(f"model call failed: {error}")


@pytest.mark.parametrize("streamed", [True, False], ids=["astream", "ainvoke"])
@pytest.mark.parametrize("bridged", [True, False], ids=["bridged", "native"])
async def test_a_model_failing_mid_reply_is_reported_to_langchains_callbacks(
    bridged: bool, streamed: bool
) -> None:
    # As without the bridge: the call a tracer (LangSmith's, say) opened for the model call is
    # closed with the model's error, not left open.
    model = _PacedModel(words=["one ", "two ", "three"], fail_at=1, streaming=True)
    agent = create_agent(model, middleware=[LangChainBridge(_passing)] if bridged else [])
    callbacks = _CallbackLog()
    config: Any = {"callbacks": [callbacks]}

    with pytest.raises(RuntimeError, match="connection reset"):
        if streamed:
            async for _ in agent.astream(prompt(), config, stream_mode="messages"):
                pass
        else:
            await agent.ainvoke(prompt(), config)

    # Before Python 3.11 LangGraph cannot hand an async node's model call the run's callbacks:
    # they hear nothing of it there, with the bridge or without.
    heard = ["model call started", "model call failed: connection reset"]
    assert callbacks.heard == (heard if sys.version_info >= (3, 11) else [])


@pytest.mark.parametrize("streamed", [True, False], ids=["astream", "ainvoke"])
async def test_a_model_failing_mid_reply_is_not_asked_again_by_langchain_middleware_inside(
    streamed: bool,
) -> None:
    # The chain failed with the model's error; a LangChain middleware inside the bridge that
    # asks the model again would only get a reply no one reads: its call is cancelled first.
    retried: list[str] = []

    class _AskAgain(AgentMiddleware[Any, Any]):
        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            try:
                return await handler(request)
            except RuntimeError as failure:
                retried.append(f"asking again after {failure}")
                return await handler(request)

    model = _PacedModel(words=["one ", "two ", "three"], fail_at=1, streaming=True)
    agent = create_agent(model, middleware=[LangChainBridge(_passing), _AskAgain()])

    with pytest.raises(RuntimeError, match="connection reset"):
        if streamed:
            async for _ in agent.astream(prompt(), stream_mode="messages"):
                pass
        else:
            await agent.ainvoke(prompt())

    assert retried == ["asking again after connection reset"]
    assert model.log == ["model sent one ", "model stream closed"]  # asked once
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_a_chain_stopping_early_closes_the_models_stream() -> None:
    @InvokeModelStage.wrap
    async def give_up(context: Any, next_fn: Any) -> Any:
        async for event in next_fn(context):
            if isinstance(event, TextDeltaEvent):
                raise LookupError("seen enough")
            yield event

    model = _PacedModel(words=["one ", "two ", "three"], streaming=True)
    agent = create_agent(model, middleware=[LangChainBridge(give_up)])

    with pytest.raises(LookupError, match="seen enough"):
        await agent.ainvoke(prompt())

    assert model.log == ["model sent one ", "model stream closed"]


@_STREAMS_INSIDE_THE_AGENT
async def test_a_delta_let_out_streams_while_its_handler_awaits_something_else() -> None:
    caller_read = asyncio.Event()
    log: list[str] = []

    @InvokeModelStage.wrap
    async def slow_check(context: Any, next_fn: Any) -> Any:
        async for event in next_fn(context):
            yield event
            if isinstance(event, TextDeltaEvent) and event.text == "one ":
                # A handler awaiting something of its own (a moderation call, say) after a
                # delta: the caller reads that delta meanwhile.
                try:
                    await asyncio.wait_for(caller_read.wait(), timeout=2.0)
                    log.append("handler saw the caller read it")
                except asyncio.TimeoutError:
                    log.append("handler waited in vain")

    model = _PacedModel(words=["one ", "two "])
    agent = create_agent(model, middleware=[LangChainBridge(slow_check)])
    async for chunk, _ in agent.astream(prompt(), stream_mode="messages"):
        if chunk.content == "one ":
            caller_read.set()

    assert log == ["handler saw the caller read it"]


def _settling() -> tuple[Any, asyncio.Event]:
    """A pass-through Wrap handler, and the event it sets once the chain has its result."""
    settled = asyncio.Event()

    @InvokeModelStage.wrap
    async def noting(context: Any, next_fn: Any) -> Any:
        async for event in next_fn(context):
            yield event
        settled.set()

    return noting, settled


@_STREAMS_INSIDE_THE_AGENT
async def test_a_cancelled_run_stays_cancelled_when_its_model_call_swallows_it() -> None:
    # LangChain middleware inside the bridge that answers when its call is cancelled: the model
    # node, waiting for that call when the run is cancelled, is still cancelled.
    noting, settled = _settling()
    answered: list[str] = []

    class _Stalling(AsyncCallbackHandler):
        async def on_llm_new_token(self, *args: Any, **kwargs: Any) -> None:
            await asyncio.sleep(60)

    class _AnswersWhenCancelled(AgentMiddleware[Any, Any]):
        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            try:
                return await handler(request)
            except asyncio.CancelledError:
                answered.append("inner middleware answered")
                return AIMessage(content="partial")

    model = _PacedModel(words=["one ", "two "], streaming=True)
    agent = create_agent(model, middleware=[LangChainBridge(noting), _AnswersWhenCancelled()])
    config: Any = {"callbacks": [_Stalling()]}
    run = asyncio.ensure_future(agent.ainvoke(prompt(), config))
    await asyncio.wait_for(settled.wait(), timeout=5.0)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert answered == ["inner middleware answered"]


async def test_waiting_for_the_calls_ends_them_all_and_keeps_a_cancellation() -> None:
    """`_ended` waits for every call, whatever each ends with; cancelled while it waits, it
    cancels the calls not ended yet and raises once they have all ended, even when the call it
    waited on swallowed the cancellation."""
    log: list[str] = []

    async def swallowing() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            log.append("first swallowed")
        return "answered anyway"

    async def failing() -> None:
        raise ValueError("model failed")

    async def slow(name: str) -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            log.append(f"{name} cancelled")
            raise

    done = [asyncio.ensure_future(failing())]
    await asyncio.sleep(0)
    await _ended(done)  # a failure is the call's to report, not the waiter's
    assert isinstance(done[0].exception(), ValueError)

    calls = [asyncio.ensure_future(swallowing()), asyncio.ensure_future(slow("second"))]
    waiter = asyncio.ensure_future(_ended(calls))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert log == ["first swallowed", "second cancelled"]
    assert all(call.done() for call in calls)
    assert calls[0].result() == "answered anyway"


@_STREAMS_INSIDE_THE_AGENT
async def test_a_run_cancelled_while_langchain_streams_the_deltas_cancels_its_model_call() -> None:
    # The chain has its result; LangChain's call is still streaming what it let out (held up
    # here by a callback) when the caller cancels the run: the call is cancelled with it, and
    # nothing of the run is left running.
    noting, settled = _settling()
    log: list[str] = []

    class _Stalling(AsyncCallbackHandler):
        async def on_llm_new_token(self, *args: Any, **kwargs: Any) -> None:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                log.append("model call cancelled")
                raise

    model = _PacedModel(words=["one ", "two "])
    agent = create_agent(model, middleware=[LangChainBridge(noting)])

    async def consume() -> None:
        config: Any = {"callbacks": [_Stalling()]}
        async for _ in agent.astream(prompt(), config, stream_mode="messages"):
            pass

    run = asyncio.ensure_future(consume())
    await asyncio.wait_for(settled.wait(), timeout=5.0)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert log == ["model call cancelled"]
    for _ in range(_TURNS_BETWEEN_CHUNKS):
        await asyncio.sleep(0)
    assert asyncio.all_tasks() == {asyncio.current_task()}
