"""`LibraryChatModel`: a model of this library's shape offered to LangChain as a chat model.

It is what lets a handler point one model call at a model of this library
(``context.replace(model=...)``), and what `ScriptedChatModel` plays scripts through.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from ...content import (
    Message,
    Messages,
    StopReason,
    StreamEvent,
    SystemContentBlock,
    SystemPrompt,
    ToolChoice,
    ToolSpec,
    Usage,
)
from ...events import ModelStopReason
from ...host._model_stream import process_model_stream
from ...models import Model
from ...stages._invoke_model import split_system_prompt
from ._converse import (
    Shown,
    ai_message,
    converse_messages,
    converse_tool_choice,
    converse_tool_specs,
    host_messages,
    host_tool_choice,
    host_tools,
    system_prompt_in,
)

__all__ = ["ChatModelView", "LibraryChatModel", "message_chunks", "model_in", "model_out"]


class LibraryChatModel(BaseChatModel):
    """A LangChain chat model that streams a model of this library (``model.stream(...)``).

    The messages are sent as Converse (consecutive user-side messages merged), the system
    message as the system prompt, bound tools as Converse tool specs; the reply comes back as
    an `AIMessage` with the call's usage.

    Attributes:
        library_model: The model of this library that answers.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    library_model: Any

    @property
    def _llm_type(self) -> str:
        return "strands-middleware"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The model with ``tools`` (and ``tool_choice``) sent on every call."""
        return self.bind(
            tools=[convert_to_openai_tool(each) for each in tools],
            tool_choice=tool_choice,
            **kwargs,
        )

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await self._answer(messages, kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return asyncio.run(self._answer(messages, kwargs))

    def stream_converse(
        self, messages: list[BaseMessage], kwargs: dict[str, Any]
    ) -> AsyncGenerator[StreamEvent, None]:
        """The library model's Converse stream for LangChain's ``messages`` and bound tools."""
        system: SystemPrompt = None
        if messages and isinstance(messages[0], SystemMessage):
            system = system_prompt_in(messages[0])
            messages = messages[1:]
        converse, _ = converse_messages(messages)
        tools: list[Any] = kwargs.get("tools") or []
        system_prompt, system_prompt_content = split_system_prompt(system)
        stream: AsyncGenerator[StreamEvent, None] = self.library_model.stream(
            converse,
            converse_tool_specs(tools) or None,
            system_prompt,
            tool_choice=converse_tool_choice(kwargs.get("tool_choice")),
            system_prompt_content=system_prompt_content,
        )
        return stream

    async def _answer(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        stop: ModelStopReason | None = None
        async for event in process_model_stream(self.stream_converse(messages, kwargs)):
            if isinstance(event, ModelStopReason):
                stop = event
        if stop is None:  # pragma: no cover - process_model_stream always ends with one
            raise RuntimeError("the model stream ended without a result")
        _reason, message, usage, _metrics = stop["stop"]
        return ChatResult(generations=[ChatGeneration(message=ai_message(message, usage))])


class ChatModelView:
    """A LangChain chat model as handlers see it (``context.model`` on a LangChain agent).

    It has this library's `Model` shape: ``stream()`` sends Converse messages to the chat model
    and streams its reply back as Converse chunks (the reply arrives whole: LangChain's
    ``ainvoke``). Back at the model call, the chat model itself is called.

    Attributes:
        host: The LangChain chat model itself.
    """

    __slots__ = ("host",)

    def __init__(self, host: BaseChatModel) -> None:
        self.host = host

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        system_prompt_content: list[SystemContentBlock] | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Ask the chat model; stream its reply as Converse chunks."""
        model: Runnable[LanguageModelInput, BaseMessage] = self.host
        if tool_specs:
            model = self.host.bind_tools(
                host_tools(tool_specs, [], []),
                tool_choice=host_tool_choice(tool_choice, None, None),
            )
        sent: list[BaseMessage] = list(host_messages(messages, Shown([])))
        if system_prompt is not None:
            sent.insert(0, SystemMessage(content=system_prompt))
        reply: Any = await model.ainvoke(sent)
        if not isinstance(reply, AIMessage):
            raise TypeError(f"the chat model answered with {type(reply).__name__}, not AIMessage")
        converse, _ = converse_messages([reply])
        usage: Any = reply.usage_metadata or {}
        for chunk in message_chunks(
            converse[0],
            {
                "inputTokens": int(usage.get("input_tokens", 0)),
                "outputTokens": int(usage.get("output_tokens", 0)),
                "totalTokens": int(usage.get("total_tokens", 0)),
            },
        ):
            yield chunk

    def get_config(self) -> dict[str, Any]:
        """The chat model's identity, as a key (`Cache`'s) needs it: the same on every call.

        Its class, and each of its settings that is a plain value (model name, temperature,
        token limit, ...): two calls to one chat model, or to two equally configured ones,
        have the same identity.
        """
        host = self.host
        settings: dict[str, Any] = {
            "chat_model": f"{type(host).__module__}.{type(host).__qualname__}"
        }
        for name, value in host.model_dump(exclude=set(_NOT_SETTINGS)).items():
            if value is None or isinstance(value, (str, int, float, bool)):
                settings[name] = value
        return settings

    def __repr__(self) -> str:
        return f"ChatModelView({self.host!r})"


# What every LangChain chat model holds besides its settings: how it reports, not what it asks.
_NOT_SETTINGS = frozenset(
    ("cache", "verbose", "callbacks", "tags", "metadata", "custom_get_token_ids", "rate_limiter")
)


def message_chunks(message: Message, usage: Usage) -> list[StreamEvent]:
    """The Converse chunks of a finished assistant message."""
    chunks: list[StreamEvent] = [{"messageStart": {"role": "assistant"}}]
    stop_reason: StopReason = "end_turn"
    for index, block in enumerate(message["content"]):
        if "text" in block or "reasoningContent" in block:  # opens as on the reference agent
            chunks.append({"contentBlockStart": {"contentBlockIndex": index, "start": {}}})
        if "text" in block:
            chunks.append(
                {
                    "contentBlockDelta": {
                        "contentBlockIndex": index,
                        "delta": {"text": block["text"]},
                    }
                }
            )
        elif "toolUse" in block:
            stop_reason = "tool_use"
            use = block["toolUse"]
            chunks.append(
                {
                    "contentBlockStart": {
                        "contentBlockIndex": index,
                        "start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}},
                    }
                }
            )
            chunks.append(
                {
                    "contentBlockDelta": {
                        "contentBlockIndex": index,
                        "delta": {"toolUse": {"input": json.dumps(use["input"])}},
                    }
                }
            )
        elif "reasoningContent" in block:
            reasoning: Any = dict(block["reasoningContent"].get("reasoningText", {}))
            chunks.append(
                {
                    "contentBlockDelta": {
                        "contentBlockIndex": index,
                        "delta": {"reasoningContent": reasoning},
                    }
                }
            )
        else:
            raise TypeError(
                f"a reply block with keys {sorted(block)} has no Converse stream form here"
            )
        chunks.append({"contentBlockStop": {"contentBlockIndex": index}})
    chunks.append({"messageStop": {"stopReason": stop_reason}})
    chunks.append({"metadata": {"usage": usage, "metrics": {"latencyMs": 0}}})
    return chunks


def model_in(host: BaseChatModel) -> Model:
    """What a handler sees of LangChain's chat model: this library's model it plays, if any."""
    if isinstance(host, LibraryChatModel):
        library: Model = host.library_model
        return library
    return ChatModelView(host)


def model_out(ours: Any, shown: Any, host: BaseChatModel) -> BaseChatModel:
    """The chat model LangChain calls for the model a handler left in the context."""
    if ours is shown:
        return host
    if isinstance(ours, ChatModelView):
        return ours.host
    if isinstance(ours, BaseChatModel):
        return ours
    return LibraryChatModel(library_model=ours)
