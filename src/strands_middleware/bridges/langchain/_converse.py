"""LangChain's messages, tools and tool choice as Converse data, and back.

A LangChain history holds one message per tool result (`ToolMessage`) where Converse holds one
user message with a ``toolResult`` block per call, and it may hold consecutive human messages,
which Converse does not allow. Going in, consecutive user-side messages are merged into one
Converse user message; the `Shown` record keeps which LangChain messages each Converse message
came from, so a Converse message a handler left as it was goes back as those very messages.
"""

from __future__ import annotations

import base64
import copy
import json
import pickle
import weakref
from collections.abc import Sequence
from functools import partial
from typing import Any, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from ...content import (
    ContentBlock,
    Message,
    Messages,
    SystemContentBlock,
    SystemPrompt,
    ToolChoice,
    ToolResult,
    ToolSpec,
    ToolUse,
)
from ...host._kept_by_identity import KeptByIdentity
from ...host._tool_call import copy_containers

__all__ = [
    "HandlersRequest",
    "Shown",
    "ai_message",
    "converse_messages",
    "converse_tool_choice",
    "converse_tool_result",
    "converse_tool_specs",
    "host_messages",
    "host_tool_choice",
    "host_tools",
    "system_prompt_in",
    "system_prompt_out",
    "tool_message",
    "tool_specs_of",
    "tool_use_of",
]


# Each LangChain message's Converse form and its pickle, by the message's identity: a history
# is translated once, not again on every model call of the run, and each call's copy for
# handlers is unpickled (in C) rather than copied dict by dict. An entry holds its message, so
# an id here names one message while the entry lives; the oldest entries go first. A message
# whose pickle is large (an image) is translated on each call instead of being held here.
# LangChain messages are mutable: an entry also holds the objects the message's content and
# tool calls were when it was translated, and a message given new ones (``message.content =
# ...``) is translated again (a change made inside the same list or dict is not seen).
_TRANSLATED = KeptByIdentity[tuple[Message, bytes | None, object, object]](1024)
_KEPT_BYTES = 16 * 1024


def _translated(message: BaseMessage) -> tuple[Message, bytes | None]:
    """``message``'s Converse form (never handed out: handlers get copies) and its pickle."""
    content = message.content
    tool_calls: object = getattr(message, "tool_calls", None)
    found = _TRANSLATED.find(message)
    if found is not None and found[2] is content and found[3] is tool_calls:
        return found[0], found[1]
    converse = _message_in(message)
    try:
        blob: bytes | None = pickle.dumps(converse, pickle.HIGHEST_PROTOCOL)
    except Exception:  # a value a content block carried that pickle cannot copy
        blob = None
    if blob is not None and len(blob) <= _KEPT_BYTES:
        _TRANSLATED.keep(message, (converse, blob, content, tool_calls))
    return converse, blob


class Shown:
    """The Converse messages handed to handlers, each with the LangChain messages it came from."""

    __slots__ = ("_blobs", "groups", "host", "messages")

    def __init__(self, host: Sequence[BaseMessage]) -> None:
        self.host = host
        self.messages: list[Message] = []
        self.groups: list[list[BaseMessage]] = []
        # Each Converse message's pickle (None for one merged from several, or not picklable).
        self._blobs: list[bytes | None] = []
        for message in host:
            converse, blob = _translated(message)
            if (
                converse["role"] == "user"
                and self.messages
                and self.messages[-1]["role"] == "user"
                and not isinstance(message, AIMessage)
            ):
                self.messages[-1] = {
                    "role": "user",
                    "content": [*self.messages[-1]["content"], *converse["content"]],
                }
                self.groups[-1].append(message)
                self._blobs[-1] = None
            else:
                self.messages.append(converse)
                self.groups.append([message])
                self._blobs.append(blob)

    def copies(self) -> Messages:
        """A fresh copy of the Converse messages, for handlers to edit."""
        return [
            _copy(message) if blob is None else pickle.loads(blob)
            for message, blob in zip(self.messages, self._blobs, strict=True)
        ]


def converse_messages(host: Sequence[BaseMessage]) -> tuple[Messages, Shown]:
    """A fresh Converse copy of ``host`` for handlers, and the record to bring it back by."""
    shown = Shown(host)
    return shown.copies(), shown


def host_messages(ours: Messages, shown: Shown) -> Sequence[BaseMessage]:
    """LangChain's messages for what a handler left: its own objects where nothing changed."""
    if len(ours) == len(shown.messages) and all(
        mine == seen for mine, seen in zip(ours, shown.messages, strict=True)
    ):
        return shown.host
    result: list[BaseMessage] = []
    for index, message in enumerate(ours):
        if index < len(shown.messages) and message == shown.messages[index]:
            result.extend(shown.groups[index])
            continue
        result.extend(_message_out(message))
    return result


def _copy(message: Message) -> Message:
    # Converse data is dicts, lists and plain values: new containers are a full copy.
    return copy_containers(message)


def _text_of(content: Any) -> list[ContentBlock]:
    """LangChain message content as Converse blocks."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    blocks: list[ContentBlock] = []
    for block in cast("list[Any]", content):
        if isinstance(block, str):
            blocks.append({"text": block})
            continue
        if not isinstance(block, dict):
            raise TypeError(f"a LangChain content block {block!r} has no Converse form")
        given = cast("dict[str, Any]", block)
        kind = given.get("type")
        if kind == "text":
            blocks.append({"text": str(given["text"])})
        elif kind == "reasoning":
            text: dict[str, Any] = {"text": str(given.get("reasoning", ""))}
            signature = cast("dict[str, Any]", given.get("extras") or {}).get("signature")
            if signature is not None:
                text["signature"] = signature
            blocks.append(cast(ContentBlock, {"reasoningContent": {"reasoningText": text}}))
        elif kind == "non_standard" and isinstance(given.get("value"), dict):
            blocks.append(cast(ContentBlock, copy.deepcopy(given["value"])))
        elif (
            kind == "image"
            and given.get("base64")
            and str(given.get("mime_type", "")).startswith("image/")
        ):
            image_format = str(given["mime_type"]).split("/", 1)[1]
            raw = base64.b64decode(str(given["base64"]))
            blocks.append(
                cast(ContentBlock, {"image": {"format": image_format, "source": {"bytes": raw}}})
            )
        else:
            raise TypeError(
                f"a LangChain message content block of type {kind!r} has no Converse form the "
                "bridge carries (text, reasoning, base64 images, tool calls and tool results do)"
            )
    return blocks


_SIGNED = {"text", "signature"}


def _reasoning_text(block: Any) -> dict[str, Any] | None:
    """The ``reasoningText`` of a plain reasoning block (text and signature only), else None."""
    reasoning = block.get("reasoningContent")
    if not isinstance(reasoning, dict) or set(cast("dict[str, Any]", reasoning)) != {
        "reasoningText"
    }:
        return None
    text = cast("dict[str, Any]", reasoning)["reasoningText"]
    if not isinstance(text, dict) or not set(cast("dict[str, Any]", text)) <= _SIGNED:
        return None
    return cast("dict[str, Any]", text)


def _content_out(blocks: Sequence[Any]) -> str | list[Any]:
    """Converse blocks (no tool blocks) as LangChain message content: a string for one text."""
    if len(blocks) == 1 and set(blocks[0]) == {"text"}:
        return str(blocks[0]["text"])
    content: list[Any] = []
    for block in blocks:
        if set(block) == {"text"}:
            content.append({"type": "text", "text": block["text"]})
            continue
        text = _reasoning_text(block)
        if text is not None:
            item: dict[str, Any] = {"type": "reasoning", "reasoning": text.get("text", "")}
            if "signature" in text:
                item["extras"] = {"signature": text["signature"]}
            content.append(item)
            continue
        # Anything else travels as it is, for a handler or a model of this library to read.
        value: dict[str, Any] = copy.deepcopy(dict(block))
        content.append({"type": "non_standard", "value": value})
    return content


def _message_in(message: BaseMessage) -> Message:
    if isinstance(message, AIMessage):
        content: list[ContentBlock] = _text_of(message.content)
        for call in message.tool_calls:
            content.append({"toolUse": tool_use_of(call)})
        return {"role": "assistant", "content": content}
    if isinstance(message, ToolMessage):
        return {"role": "user", "content": [{"toolResult": converse_tool_result(message)}]}
    if isinstance(message, HumanMessage):
        return {"role": "user", "content": _text_of(message.content)}
    raise TypeError(
        f"a {type(message).__name__} in the model request has no Converse form: the bridge "
        "carries human, AI and tool messages (the system message travels as the system prompt)"
    )


def tool_use_of(call: ToolCall) -> ToolUse:
    """A LangChain tool call as a Converse ``toolUse``."""
    return {"toolUseId": call["id"] or "", "name": call["name"], "input": dict(call["args"])}


def converse_tool_result(message: ToolMessage) -> ToolResult:
    """A `ToolMessage` as a Converse ``toolResult``."""
    content: Any = _text_of(message.content) or [{"text": ""}]
    return {
        "toolUseId": message.tool_call_id,
        "status": "error" if message.status == "error" else "success",
        "content": content,
    }


def _joined(blocks: Sequence[Any]) -> str:
    parts: list[str] = []
    for block in blocks:
        if "text" in block:
            parts.append(str(block["text"]))
        elif "json" in block:
            parts.append(json.dumps(block["json"]))
        else:
            raise TypeError(
                f"a Converse block with keys {sorted(block)} has no LangChain message form the "
                "bridge carries (text and json blocks do)"
            )
    return "".join(parts)


def tool_message(result: ToolResult, name: str | None = None) -> ToolMessage:
    """A Converse ``toolResult`` as a `ToolMessage`."""
    return ToolMessage(
        content=_joined(result.get("content", [])),
        tool_call_id=result["toolUseId"],
        name=name,
        status="error" if result.get("status") == "error" else "success",
    )


def ai_message(message: Message, usage: Any = None) -> AIMessage:
    """A Converse assistant message as an `AIMessage` (with ``usage`` as its usage metadata)."""
    blocks: list[Any] = []
    calls: list[ToolCall] = []
    for block in message["content"]:
        if "toolUse" in block:
            use = block["toolUse"]
            args: dict[str, Any] = dict(use["input"])
            calls.append(
                ToolCall(name=use["name"], args=args, id=use["toolUseId"], type="tool_call")
            )
        else:
            blocks.append(block)
    extra: dict[str, Any] = {}
    if usage is not None:
        extra["usage_metadata"] = {
            "input_tokens": int(usage.get("inputTokens", 0)),
            "output_tokens": int(usage.get("outputTokens", 0)),
            "total_tokens": int(usage.get("totalTokens", 0)),
        }
    content = _content_out(blocks) if blocks else ""
    return AIMessage(content=content, tool_calls=calls, **extra)


def _message_out(message: Message) -> list[BaseMessage]:
    if message["role"] == "assistant":
        return [ai_message(message)]
    results: list[BaseMessage] = []
    others: list[Any] = []
    for block in message["content"]:
        if "toolResult" in block:
            results.append(tool_message(block["toolResult"]))
        else:
            others.append(block)
    if others:
        results.append(HumanMessage(content=_content_out(others)))
    return results


def system_prompt_in(message: SystemMessage | None) -> SystemPrompt:
    """The system message as the prompt handlers see: its text, or its blocks when several."""
    if message is None:
        return None
    content: Any = message.content
    if isinstance(content, str):
        return content
    blocks = _text_of(content)
    if len(blocks) == 1 and set(blocks[0]) == {"text"}:
        return str(blocks[0].get("text", ""))
    return cast("list[SystemContentBlock]", blocks)


def system_prompt_out(ours: Any, shown: Any, host: SystemMessage | None) -> Any:
    """LangChain's system message for the prompt a handler left: its own when unchanged."""
    if ours == shown:
        return host
    if ours is None:
        return None
    if isinstance(ours, str):
        return SystemMessage(content=ours)
    return SystemMessage(content=_content_out(cast("list[Any]", ours)))


def converse_tool_specs(tools: Sequence[Any]) -> list[ToolSpec]:
    """LangChain's tools (``BaseTool`` or provider dicts) as Converse tool specs."""
    specs: list[ToolSpec] = []
    for each in tools:
        function = convert_to_openai_tool(each)["function"]
        specs.append(
            {
                "name": function["name"],
                "description": function.get("description", ""),
                "inputSchema": {"json": function.get("parameters", {})},
            }
        )
    return specs


# Each LangChain tool's Converse spec, and its pickle, by the tool's id while the tool lives: a
# tool's schema is converted once, not on every model call of every agent that has it, and
# each call's copy for handlers is unpickled (in C) rather than copied dict by dict.
_SPECS: dict[int, tuple[weakref.ref[Any], ToolSpec, bytes]] = {}


def tool_specs_of(tools: Sequence[Any]) -> tuple[list[ToolSpec], list[ToolSpec]]:
    """LangChain's tools as Converse tool specs: the bridge's own (kept per ``BaseTool``,
    never handed out) and a fresh copy of them for handlers to edit."""
    kept = [_kept_spec(tool) for tool in tools]
    return [spec for spec, _ in kept], [pickle.loads(blob) for _, blob in kept]


def _kept_spec(tool: Any) -> tuple[ToolSpec, bytes]:
    if not isinstance(tool, BaseTool):  # a provider's tool dict may be edited between calls
        spec = converse_tool_specs([tool])[0]
        return spec, pickle.dumps(spec, pickle.HIGHEST_PROTOCOL)
    key = id(tool)
    kept = _SPECS.get(key)
    if kept is not None and kept[0]() is tool:
        return kept[1], kept[2]
    spec = converse_tool_specs([tool])[0]
    blob = pickle.dumps(spec, pickle.HIGHEST_PROTOCOL)
    _SPECS[key] = (weakref.ref(tool, partial(_forget_spec, key)), spec, blob)
    return spec, blob


def _forget_spec(key: int, _gone: object) -> None:
    _SPECS.pop(key, None)


class HandlersRequest:
    """A model call's history and tools as handlers see them, translated on a handler's first
    read (`ModelStagePoint` takes `messages` and `tool_specs` as the functions making them) and
    brought back to LangChain's (`messages_out`, `tools_out`) only where a handler read them.

    It holds LangChain's lists and what it made of them, never the handlers' context: a context
    holds these bound methods until it is read, and a reference back would put every model call
    in a reference cycle for the cyclic collector.
    """

    __slots__ = ("_messages", "_shown", "_specs", "_tools")

    def __init__(self, messages: Sequence[BaseMessage], tools: list[Any]) -> None:
        self._messages = messages
        self._tools = tools
        self._shown: Shown | None = None
        self._specs: list[ToolSpec] | None = None

    def messages(self) -> Messages:
        """A fresh Converse copy of the history, for handlers (`converse_messages`)."""
        copies, self._shown = converse_messages(self._messages)
        return copies

    def tool_specs(self) -> list[ToolSpec]:
        """A fresh copy of the tools' Converse specs, for handlers (`tool_specs_of`)."""
        self._specs, copies = tool_specs_of(self._tools)
        return copies

    def messages_out(self, ours: Messages) -> Sequence[BaseMessage]:
        """LangChain's messages for the history a handler left (`host_messages`): the very
        list the call was given when nothing changed."""
        shown = self._shown
        if shown is None:  # replaced before any read: compared with a translation made now
            shown = Shown(self._messages)
        return host_messages(ours, shown)

    def tools_out(self, ours: list[ToolSpec]) -> list[Any]:
        """LangChain's tools for the specs a handler left (`host_tools`): the very list the
        call was given when nothing changed."""
        specs = self._specs
        if specs is None:  # replaced before any read
            specs = [_kept_spec(tool)[0] for tool in self._tools]
        return host_tools(ours, specs, self._tools)


def host_tools(ours: list[ToolSpec], shown: list[ToolSpec], host: list[Any]) -> list[Any]:
    """LangChain's tools for the specs a handler left: its own where a spec is unchanged.

    A spec a handler added or changed reaches the model as an OpenAI-format tool dict.
    """
    if ours == shown:
        return host
    by_name = {spec["name"]: (spec, tool) for spec, tool in zip(shown, host, strict=True)}
    tools: list[Any] = []
    for spec in ours:
        known = by_name.get(spec["name"])
        if known is not None and known[0] == spec:
            tools.append(known[1])
            continue
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": spec["name"],
                    "description": spec.get("description", ""),
                    "parameters": spec["inputSchema"].get("json", {}),
                },
            }
        )
    return tools


def converse_tool_choice(choice: Any) -> ToolChoice | None:
    """LangChain's ``tool_choice`` as Converse's."""
    if choice is None:
        return None
    if choice == "auto":
        return cast(ToolChoice, {"auto": {}})
    if choice in ("any", "required", True):
        return cast(ToolChoice, {"any": {}})
    if isinstance(choice, str):
        return cast(ToolChoice, {"tool": {"name": choice}})
    if isinstance(choice, dict):
        function = cast("dict[str, Any]", choice).get("function")
        if isinstance(function, dict) and "name" in function:
            name = str(cast("dict[str, Any]", function)["name"])
            return cast(ToolChoice, {"tool": {"name": name}})
    raise TypeError(f"tool_choice {choice!r} has no Converse form")


def host_tool_choice(ours: ToolChoice | None, shown: ToolChoice | None, host: Any) -> Any:
    """LangChain's ``tool_choice`` for the one a handler left: its own when unchanged."""
    if ours == shown:
        return host
    if ours is None:
        return None
    if "auto" in ours:
        return "auto"
    if "any" in ours:
        return "any"
    tool = cast("dict[str, Any]", ours).get("tool")
    if isinstance(tool, dict):
        return str(cast("dict[str, Any]", tool)["name"])
    raise TypeError(f"tool_choice {ours!r} has no LangChain form")
