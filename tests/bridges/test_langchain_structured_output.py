"""LangChain's structured output (`ToolStrategy`) through the bridge, when a handler rewrites
the reply (`bridges/langchain/_model_events.rebuilt_response`).

LangChain turns the model's call of a structured-output tool into ``structured_response`` and a
tool message answering the call. A handler that rewrites the reply but leaves its calls as they
were keeps both; one that changes the calls gets neither (LangChain makes them of the model's
own reply only; docs/hosts/langchain.md).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.structured_output import ToolStrategy
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import BaseModel

from strands_middleware import InvokeModelStage, ModelStopReason
from strands_middleware.bridges.langchain import LangChainBridge
from strands_middleware.stages import InvokeModelResult


class Weather(BaseModel):
    city: str
    degrees: int


class _WeatherModel(BaseChatModel):
    """Answers with a few words and a call of the structured-output tool ``Weather``; then,
    asked again, with ``"again"``. Streamed, the words come a chunk each, then the call."""

    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "weather-model"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self

    def _reply(self) -> AIMessage:
        self.calls += 1
        if self.calls > 1:
            return AIMessage(content="again")
        call: Any = {"name": "Weather", "args": {"city": "Oslo", "degrees": 3}, "id": "c1"}
        return AIMessage(content="Here it is.", tool_calls=[call])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply())])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        reply = self._reply()
        for word in str(reply.content).split(" "):
            yield ChatGenerationChunk(message=AIMessageChunk(content=word + " "))
        for index, call in enumerate(reply.tool_calls):
            piece: Any = {
                "name": call["name"],
                "args": json.dumps(call["args"]),
                "id": call["id"],
                "index": index,
            }
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[piece]))


def _model() -> _WeatherModel:
    return _WeatherModel()


def _rewriting(blocks: Any) -> Any:
    @InvokeModelStage.output
    def rewrite(result: InvokeModelResult) -> InvokeModelResult:
        stop = result.result
        message: Any = {"role": "assistant", "content": blocks(stop.message["content"])}
        return result.replace(
            result=ModelStopReason(stop.stop_reason, message, stop.usage, stop.metrics)
        )

    return rewrite


shouting = _rewriting(
    lambda blocks: [{"text": b["text"].upper()} if "text" in b else b for b in blocks]
)
warmer = _rewriting(
    lambda blocks: [
        {"toolUse": {**b["toolUse"], "input": {"city": "Oslo", "degrees": 5}}}
        if "toolUse" in b
        else b
        for b in blocks
    ]
)


async def _run(agent: Any, streamed: bool) -> Any:
    prompt = {"messages": [HumanMessage("weather in Oslo?")]}
    if not streamed:
        return await agent.ainvoke(prompt)
    state: Any = None
    stream: AsyncIterator[Any] = agent.astream(prompt, stream_mode=["messages", "values"])
    async for mode, chunk in stream:
        if mode == "values":
            state = chunk
    return state


@pytest.mark.parametrize("streamed", [False, True], ids=["ainvoke", "astream"])
async def test_a_reply_rewritten_with_its_calls_as_they_were_keeps_the_structured_response(
    streamed: bool,
) -> None:
    agent = create_agent(
        _model(), response_format=ToolStrategy(Weather), middleware=[LangChainBridge(shouting)]
    )

    state = await _run(agent, streamed)

    assert state["structured_response"] == Weather(city="Oslo", degrees=3)
    _, reply, answer = state["messages"]
    assert str(reply.content).strip() == "HERE IT IS."
    assert isinstance(answer, ToolMessage)
    assert answer.tool_call_id == "c1"
    assert answer.content.startswith("Returning structured response:")


@pytest.mark.parametrize("streamed", [False, True], ids=["ainvoke", "astream"])
async def test_a_reply_whose_structured_call_a_handler_changed_gets_no_stale_response(
    streamed: bool,
) -> None:
    agent = create_agent(
        _model(), response_format=ToolStrategy(Weather), middleware=[LangChainBridge(warmer)]
    )

    state = await _run(agent, streamed)

    assert state.get("structured_response") is None  # not the model's degrees=3
    reply = state["messages"][1]
    assert reply.tool_calls[0]["args"] == {"city": "Oslo", "degrees": 5}
    assert not any(isinstance(message, ToolMessage) for message in state["messages"])
