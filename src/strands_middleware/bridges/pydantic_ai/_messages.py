"""pydantic-ai's messages as Converse, and the way back.

One pydantic-ai message is one Converse message: a ``ModelRequest`` is a user turn (its prompt
text, its tool returns as ``toolResult`` blocks, a retry prompt for a tool as an error
``toolResult``), a ``ModelResponse`` an assistant turn (text, ``toolUse`` and
``reasoningContent`` blocks). System prompt parts are not shown (the system prompt a handler
sees is pydantic-ai's instructions) and are kept when the message goes back.

Handlers get new dicts. On the way back, a message a handler left as it was shown becomes
pydantic-ai's own object again; a changed one is rebuilt from its Converse content, keeping the
fields pydantic-ai had on the original (timestamps, run ids, instructions, usage); a new one is
built from Converse alone.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from typing import Any, cast

from pydantic_ai.messages import (
    FinishReason,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from ...content import (
    ContentBlock,
    Message,
    Messages,
    StreamEvent,
    ToolChoice,
    ToolResult,
    ToolResultContent,
    Usage,
)

__all__ = [
    "chunks_of_response",
    "converse_message",
    "converse_messages",
    "converse_usage",
    "finish_reason_of",
    "host_messages",
    "host_response",
    "host_usage",
    "same_message",
    "stop_reason_of",
    "tool_choice_of",
    "tool_result_content",
]

_RETRY_KINDS = ("retry-prompt", "retry-feedback")

_STOP_REASON_KEY = "strands_middleware_stop_reason"
"""Where a response keeps a stop reason pydantic-ai's ``finish_reason`` cannot say."""

_STOP_REASONS: dict[str, str] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "content_filter": "content_filtered",
    "tool_call": "tool_use",
}
_FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "max_tokens": "length",
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
    "tool_use": "tool_call",
}


_TOOL_CHOICES: dict[str, Any] = {"auto": {"auto": {}}, "required": {"any": {}}}


def tool_choice_of(settings: Any) -> ToolChoice | None:
    """pydantic-ai's ``tool_choice`` setting in Converse (None for pydantic-ai's default)."""
    choice: Any = None if settings is None else settings.get("tool_choice")
    if isinstance(choice, str):
        return _TOOL_CHOICES.get(choice)
    if isinstance(choice, list) and len(cast("list[object]", choice)) == 1:
        [name] = cast("list[object]", choice)
        if isinstance(name, str):
            chosen: Any = {"tool": {"name": name}}
            return cast(ToolChoice, chosen)
    return None


def tool_result_content(value: Any) -> list[ToolResultContent]:
    """What a tool returned, as the content of a Converse ``toolResult``."""
    if isinstance(value, str):
        return [{"text": value}]
    if isinstance(value, (dict, list)):
        return [{"json": value}]
    return [{"text": str(value)}]


def _tool_return_block(part: ToolReturnPart) -> ContentBlock:
    content = part.content
    shown = tool_result_content(content) if isinstance(content, (str, dict, list)) else None
    result: ToolResult = {
        "toolUseId": part.tool_call_id,
        "status": "success" if part.outcome == "success" else "error",
        "content": shown if shown is not None else [{"text": part.model_response_str()}],
    }
    return {"toolResult": result}


def _request_blocks(message: ModelRequest) -> list[ContentBlock]:
    blocks: list[ContentBlock] = []
    for part in message.parts:
        if isinstance(part, UserPromptPart):
            if isinstance(part.content, str):
                blocks.append({"text": part.content})
            else:
                blocks.extend({"text": item} for item in part.content if isinstance(item, str))
        elif isinstance(part, ToolReturnPart):
            blocks.append(_tool_return_block(part))
        elif getattr(part, "part_kind", "") in _RETRY_KINDS:
            # A retry prompt (its spelling differs between pydantic-ai releases).
            retry: Any = part
            text: str = retry.model_response()
            tool_name = getattr(retry, "tool_name", None)
            if tool_name is None:
                blocks.append({"text": text})
            else:
                error: ToolResult = {
                    "toolUseId": retry.tool_call_id,
                    "status": "error",
                    "content": [{"text": text}],
                }
                blocks.append({"toolResult": error})
    return blocks


def _response_blocks(message: ModelResponse) -> list[ContentBlock]:
    blocks: list[ContentBlock] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            blocks.append({"text": part.content})
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {
                    "toolUse": {
                        "toolUseId": part.tool_call_id,
                        "name": part.tool_name,
                        "input": part.args_as_dict(),
                    }
                }
            )
        elif isinstance(part, ThinkingPart):
            reasoning: dict[str, Any] = {"text": part.content}
            if part.signature is not None:
                reasoning["signature"] = part.signature
            blocks.append(cast(ContentBlock, {"reasoningContent": {"reasoningText": reasoning}}))
    return blocks


def same_message(message: Message, response: ModelResponse) -> bool:
    """Whether ``message`` is what `converse_message` makes of ``response``, built or not.

    Read part by part against the response, so the answer costs no second conversion.
    """
    if message.get("role") != "assistant":
        return False
    blocks = message["content"]
    index = 0
    for part in response.parts:
        if isinstance(part, TextPart):
            expected: Any = {"text": part.content}
        elif isinstance(part, ToolCallPart):
            block: Any = blocks[index] if index < len(blocks) else None
            use: Any = (
                cast("dict[str, Any]", block).get("toolUse") if isinstance(block, dict) else None
            )
            if not isinstance(use, dict) or len(cast("dict[str, Any]", block)) != 1:
                return False
            fields = cast("dict[str, Any]", use)
            given = fields.get("input")
            wanted = {"toolUseId": part.tool_call_id, "name": part.tool_name, "input": given}
            if fields != wanted or given != part.args_as_dict():
                return False
            index += 1
            continue
        elif isinstance(part, ThinkingPart):
            reasoning: dict[str, Any] = {"text": part.content}
            if part.signature is not None:
                reasoning["signature"] = part.signature
            expected = {"reasoningContent": {"reasoningText": reasoning}}
        else:
            continue
        if index >= len(blocks) or blocks[index] != expected:
            return False
        index += 1
    return index == len(blocks) and len(message) == 2


def converse_message(message: ModelMessage) -> Message:
    """One pydantic-ai message as a new Converse message."""
    if isinstance(message, ModelRequest):
        return {"role": "user", "content": _request_blocks(message)}
    return {"role": "assistant", "content": _response_blocks(message)}


def converse_messages(messages: Sequence[ModelMessage]) -> Messages:
    """pydantic-ai's history as new Converse messages, one for each."""
    return [converse_message(message) for message in messages]


def _tool_names(messages: Sequence[Any]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    names[part.tool_call_id] = part.tool_name
        elif isinstance(message, dict):
            for block in cast("Message", message)["content"]:
                tool_use = block.get("toolUse")
                if tool_use is not None:
                    names[tool_use["toolUseId"]] = tool_use["name"]
    return names


def _result_value(result: ToolResult) -> Any:
    contents = result["content"]
    if len(contents) == 1 and "json" in contents[0]:
        return contents[0]["json"]
    return "".join(str(item.get("text", "")) for item in contents)


def _request_parts(message: Message, names: dict[str, str]) -> list[ModelRequestPart]:
    parts: list[ModelRequestPart] = []
    for block in message["content"]:
        if "text" in block:
            parts.append(UserPromptPart(block["text"]))
        elif "toolResult" in block:
            result = block["toolResult"]
            parts.append(
                ToolReturnPart(
                    names.get(result["toolUseId"], ""),
                    _result_value(result),
                    result["toolUseId"],
                    outcome="success" if result.get("status") == "success" else "failed",
                )
            )
    return parts


def _response_parts(message: Message) -> list[ModelResponsePart]:
    parts: list[ModelResponsePart] = []
    for block in message["content"]:
        if "text" in block:
            parts.append(TextPart(block["text"]))
        elif "toolUse" in block:
            tool_use = block["toolUse"]
            parts.append(ToolCallPart(tool_use["name"], tool_use["input"], tool_use["toolUseId"]))
        elif "reasoningContent" in block:
            reasoning: Any = block["reasoningContent"].get("reasoningText", {})
            parts.append(
                ThinkingPart(reasoning.get("text", ""), signature=reasoning.get("signature"))
            )
    return parts


def host_message(ours: Message, origin: ModelMessage | None, names: dict[str, str]) -> ModelMessage:
    """pydantic-ai's message for a changed (or new) Converse one; ``origin`` is what it was."""
    if ours["role"] == "assistant":
        response_parts = _response_parts(ours)
        if isinstance(origin, ModelResponse):
            return dataclasses.replace(origin, parts=response_parts)
        return ModelResponse(parts=response_parts)
    request_parts = _request_parts(ours, names)
    if isinstance(origin, ModelRequest):
        system: list[ModelRequestPart] = [
            part for part in origin.parts if isinstance(part, SystemPromptPart)
        ]
        return dataclasses.replace(origin, parts=[*system, *request_parts])
    return ModelRequest(parts=request_parts)


def host_messages(
    ours: Messages, shown: Sequence[Message], was: Sequence[Message], hosts: list[ModelMessage]
) -> list[ModelMessage]:
    """What goes back to pydantic-ai for the messages a handler left in the context.

    ``shown`` holds the dicts handed out (one for each of ``hosts``), ``was`` an untouched copy
    of them. pydantic-ai's own list when nothing changed; otherwise each message a handler left
    as shown is pydantic-ai's own, the others are rebuilt.
    """
    if len(ours) == len(hosts) and all(
        mine is seen and mine == before for mine, seen, before in zip(ours, shown, was, strict=True)
    ):
        return hosts
    origins = {
        id(seen): (host, before) for seen, host, before in zip(shown, hosts, was, strict=True)
    }
    names = _tool_names([*hosts, *ours])
    result: list[ModelMessage] = []
    for message in ours:
        found = origins.get(id(message))
        if found is not None and message == found[1]:
            result.append(found[0])
        else:
            result.append(host_message(message, None if found is None else found[0], names))
    return result


def converse_usage(usage: RequestUsage) -> Usage:
    """pydantic-ai's usage of one request in Converse figures."""
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
    }


def host_usage(usage: Usage) -> RequestUsage:
    """Converse figures as pydantic-ai's usage of one request."""
    return RequestUsage(
        input_tokens=usage.get("inputTokens", 0), output_tokens=usage.get("outputTokens", 0)
    )


def stop_reason_of(response: ModelResponse) -> str:
    """Why the model stopped, in Converse words."""
    details = response.provider_details
    if details is not None and isinstance(details.get(_STOP_REASON_KEY), str):
        return str(details[_STOP_REASON_KEY])
    if any(isinstance(part, ToolCallPart) for part in response.parts):
        return "tool_use"
    reason = response.finish_reason
    return "end_turn" if reason is None else _STOP_REASONS.get(reason, "end_turn")


def finish_reason_of(stop_reason: str) -> FinishReason | None:
    """A Converse stop reason in pydantic-ai's words (None for one it has no word for)."""
    return _FINISH_REASONS.get(stop_reason)


def host_response(
    message: Message, stop_reason: str, usage: Usage, origin: ModelResponse | None
) -> ModelResponse:
    """A model call's result as pydantic-ai's ``ModelResponse``.

    A stop reason pydantic-ai has no word for (``guardrail_intervened``, say) is kept in the
    response's ``provider_details``, so it reads back as it was.
    """
    parts = _response_parts(message)
    finish_reason = finish_reason_of(stop_reason)
    details = None if origin is None else origin.provider_details
    if _STOP_REASONS.get(finish_reason or "") != stop_reason and stop_reason != "tool_use":
        details = {**(details or {}), _STOP_REASON_KEY: stop_reason}
    if origin is not None:
        return dataclasses.replace(
            origin,
            parts=parts,
            usage=host_usage(usage),
            finish_reason=finish_reason,
            provider_details=details,
        )
    return ModelResponse(
        parts=parts,
        usage=host_usage(usage),
        finish_reason=finish_reason,
        provider_details=details,
    )


def chunks_of_response(response: ModelResponse) -> Iterator[StreamEvent]:
    """A finished response as the Converse chunks a model would have streamed."""
    yield {"messageStart": {"role": "assistant"}}
    for part in response.parts:
        yield from _part_chunks(part)
    yield {"messageStop": {"stopReason": cast(Any, stop_reason_of(response))}}
    yield {"metadata": {"usage": converse_usage(response.usage), "metrics": {"latencyMs": 0}}}


def _part_chunks(part: ModelResponsePart) -> Iterator[StreamEvent]:
    if isinstance(part, TextPart):
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": part.content}}}
        yield {"contentBlockStop": {}}
    elif isinstance(part, ToolCallPart):
        yield {
            "contentBlockStart": {
                "start": {"toolUse": {"toolUseId": part.tool_call_id, "name": part.tool_name}}
            }
        }
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": part.args_as_json_str()}}}}
        yield {"contentBlockStop": {}}
    elif isinstance(part, ThinkingPart):
        yield {"contentBlockStart": {"start": {}}}
        yield from _thinking_chunks(part.content, part.signature)
        yield {"contentBlockStop": {}}


def _thinking_chunks(text: str | None, signature: str | None) -> Iterator[StreamEvent]:
    if text:
        yield {"contentBlockDelta": {"delta": {"reasoningContent": {"text": text}}}}
    if signature:
        yield {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": signature}}}}


class StreamChunks:
    """pydantic-ai's stream events of one response as Converse chunks, as they arrive."""

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open = False

    def start(self) -> StreamEvent:
        return {"messageStart": {"role": "assistant"}}

    def of(self, event: Any) -> Iterator[StreamEvent]:
        """The chunks for one ``PartStartEvent``, ``PartDeltaEvent`` or ``PartEndEvent``."""
        if isinstance(event, PartStartEvent):
            if self._open:
                yield {"contentBlockStop": {}}
            self._open = True
            part = event.part
            if isinstance(part, TextPart):
                yield {"contentBlockStart": {"start": {}}}
                if part.content:
                    yield {"contentBlockDelta": {"delta": {"text": part.content}}}
            elif isinstance(part, ToolCallPart):
                start: Any = {"toolUse": {"toolUseId": part.tool_call_id, "name": part.tool_name}}
                yield {"contentBlockStart": {"start": start}}
                if part.args:
                    # The first fragment as it arrived: on its own it need not be valid JSON.
                    arguments = part.args if isinstance(part.args, str) else json.dumps(part.args)
                    yield {"contentBlockDelta": {"delta": {"toolUse": {"input": arguments}}}}
            elif isinstance(part, ThinkingPart):
                yield {"contentBlockStart": {"start": {}}}
                yield from _thinking_chunks(part.content, part.signature)
        elif isinstance(event, PartDeltaEvent):
            delta = event.delta
            if isinstance(delta, TextPartDelta):
                if delta.content_delta:
                    yield {"contentBlockDelta": {"delta": {"text": delta.content_delta}}}
            elif isinstance(delta, ToolCallPartDelta):
                fragment = delta.args_delta
                if isinstance(fragment, dict):
                    fragment = json.dumps(fragment)
                if fragment:
                    yield {"contentBlockDelta": {"delta": {"toolUse": {"input": fragment}}}}
            elif isinstance(delta, ThinkingPartDelta):
                yield from _thinking_chunks(delta.content_delta, delta.signature_delta)
        elif isinstance(event, PartEndEvent) and self._open:
            self._open = False
            yield {"contentBlockStop": {}}

    def end(self, response: ModelResponse) -> Iterator[StreamEvent]:
        if self._open:
            self._open = False
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": cast(Any, stop_reason_of(response))}}
        yield {"metadata": {"usage": converse_usage(response.usage), "metrics": {"latencyMs": 0}}}
