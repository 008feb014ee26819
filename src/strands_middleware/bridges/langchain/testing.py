"""Test helpers for the LangChain bridge: scripted chat models, no network.

`ScriptedChatModel` is this library's scripted model offered to LangChain; `PlainScriptedChatModel`
plays the same script as a plain LangChain chat model, the kind a user brings.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LanguageModelInput
from langchain_core.language_models.chat_models import agenerate_from_stream
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from ...testing import ScriptedModel, ScriptedTurn
from ._models import LibraryChatModel

__all__ = ["PlainScriptedChatModel", "ScriptedChatModel"]


class ScriptedChatModel(LibraryChatModel):
    """A LangChain chat model that plays a `strands_middleware.testing.ScriptedModel` script.

    Unlike LangChain's own fake chat models it carries tool calls and binds tools, so a
    ``create_agent`` loop runs offline. The script and its recorded requests are shared:
    ``model.script.requests`` shows what the agent sent, as Converse, exactly as on the
    reference agent.

    Example:
        ```python
        model = ScriptedChatModel([tool_turn("add", {"a": 1, "b": 2}), text_turn("3")])
        agent = create_agent(model, tools=[add], middleware=[bridge])
        ```

    Args:
        script: A `ScriptedModel`, or the turns to build one from.
    """

    def __init__(self, script: ScriptedModel | Iterable[ScriptedTurn], **kwargs: Any) -> None:
        played = script if isinstance(script, ScriptedModel) else ScriptedModel(script)
        super().__init__(library_model=played, **kwargs)

    @property
    def script(self) -> ScriptedModel:
        """The script being played."""
        played: ScriptedModel = self.library_model
        return played


class PlainScriptedChatModel(BaseChatModel):
    """A chat model of LangChain's own kind (a plain ``BaseChatModel``) playing a script.

    Where `ScriptedChatModel` is this library's model offered to LangChain (the bridge knows it
    and streams it as Converse), this one is what any LangChain chat model is to the bridge: it
    streams ``AIMessageChunk`` objects, text deltas and tool-call chunks, with the call's usage
    on the last one. The conformance kit runs its model-stage clauses with it. The script and its
    recorded requests are shared, as with `ScriptedChatModel`.

    Example:
        ```python
        model = PlainScriptedChatModel(script=ScriptedModel([text_turn("hello")]))
        agent = create_agent(model, middleware=[bridge])
        ```

    Attributes:
        script: The `ScriptedModel` being played.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Any

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

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

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        player = LibraryChatModel(library_model=self.script)
        index = 0
        async for chunk in player.stream_converse(messages, kwargs):
            found: Any = chunk
            for key in ("contentBlockStart", "contentBlockDelta"):
                if key in found:
                    index = int(found[key].get("contentBlockIndex", index))
            message = _message_chunk(found, index)
            if message is not None:
                yield ChatGenerationChunk(message=message)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await agenerate_from_stream(self._astream(messages, stop, run_manager, **kwargs))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return asyncio.run(self._agenerate(messages, stop, **kwargs))


def _message_chunk(chunk: Any, index: int) -> AIMessageChunk | None:
    """One Converse chunk as LangChain's message chunk (None for what LangChain has no form of)."""
    if "contentBlockStart" in chunk:
        use = chunk["contentBlockStart"].get("start", {}).get("toolUse")
        if use is None:
            return None
        return AIMessageChunk(
            content="",
            tool_call_chunks=[
                tool_call_chunk(name=use["name"], args="", id=use["toolUseId"], index=index)
            ],
        )
    if "contentBlockDelta" in chunk:
        delta = chunk["contentBlockDelta"].get("delta", {})
        if "text" in delta:
            return AIMessageChunk(content=delta["text"])
        if "toolUse" in delta:
            return AIMessageChunk(
                content="",
                tool_call_chunks=[
                    tool_call_chunk(name=None, args=delta["toolUse"]["input"], id=None, index=index)
                ],
            )
        return None
    if "metadata" in chunk:
        usage = chunk["metadata"].get("usage", {})
        counted: Any = {
            "input_tokens": int(usage.get("inputTokens", 0)),
            "output_tokens": int(usage.get("outputTokens", 0)),
            "total_tokens": int(usage.get("totalTokens", 0)),
        }
        return AIMessageChunk(
            content="",
            usage_metadata=counted,
            chunk_position="last",
        )
    return None
