"""The OpenAI Agents SDK's Responses items as Converse, and Converse back as Responses items.

Handlers see Converse only: the SDK's input items become messages, its function tools tool
specs, its instructions the system prompt, its ``ModelResponse`` a message with a stop reason
and usage. What a handler changes goes back as the SDK's own item classes, every field set.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from agents import FunctionTool, Usage
from agents.items import TResponseInputItem, TResponseOutputItem
from openai.types.responses import (
    Response,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseUsage,
)
from openai.types.responses.response_reasoning_item import Summary

from ...content import (
    ContentBlock,
    Message,
    Messages,
    SystemPrompt,
    ToolChoice,
    ToolSpec,
)
from ...content import Usage as ConverseUsage

__all__ = [
    "completed_response",
    "converse_message",
    "converse_messages",
    "converse_usage",
    "host_input",
    "host_output",
    "host_tool_choice",
    "host_usage",
    "instructions_of",
    "response_usage",
    "stop_reason_of",
    "tool_choice_of",
    "tool_spec_of",
]


def _as_dict(item: object) -> dict[str, Any]:
    if item.__class__ is dict:  # most items and parts: read, never changed, so not copied
        return cast("dict[str, Any]", item)
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return cast("dict[str, Any]", dump(exclude_none=True))
    if isinstance(item, Mapping):
        return dict(cast("Mapping[str, Any]", item))
    raise TypeError(f"an input item of the OpenAI Agents SDK was expected, got {item!r}")


def _arguments(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except json.JSONDecodeError:
        return text  # the model's own malformed arguments, shown as they came


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in cast("Sequence[Any]", content or []):
        if part.__class__ is dict or not hasattr(part, "model_dump"):
            data = _as_dict(part)
            text = data.get("text", data.get("refusal"))
        else:
            # A model output part (``ResponseOutputText``, a refusal): its fields read as they
            # are, with no dump of the whole part.
            text = getattr(part, "text", None)
            if text is None:
                text = getattr(part, "refusal", None)
        if isinstance(text, str):
            parts.append(text)
    return "".join(parts)


def _append(messages: Messages, role: str, block: ContentBlock) -> None:
    if messages and messages[-1]["role"] == role:
        messages[-1]["content"].append(block)
    else:
        messages.append(cast(Message, {"role": role, "content": [block]}))


def _output_text(output: object) -> str:
    return output if isinstance(output, str) else _text_of(output)


def converse_messages(items: str | Sequence[TResponseInputItem]) -> Messages:
    """The SDK's model input as Converse messages (system and developer items are left out:
    the SDK sends its instructions apart, as the system prompt)."""
    if isinstance(items, str):
        return [{"role": "user", "content": [{"text": items}]}]
    messages: Messages = []
    given: Any
    for given in items:
        data: Any = given if given.__class__ is dict else _as_dict(given)
        kind = data.get("type")
        if kind == "function_call":
            block: ContentBlock = {
                "toolUse": {
                    "toolUseId": data["call_id"],
                    "name": data["name"],
                    "input": _arguments(data.get("arguments", "")),
                }
            }
            _append(messages, "assistant", block)
        elif kind == "function_call_output":
            block = {
                "toolResult": {
                    "toolUseId": data["call_id"],
                    "status": "success",
                    "content": [{"text": _output_text(data.get("output", ""))}],
                }
            }
            _append(messages, "user", block)
        elif kind == "reasoning":
            text = "".join(str(s.get("text", "")) for s in data.get("summary", []))
            _append(messages, "assistant", {"reasoningContent": {"reasoningText": {"text": text}}})
        elif kind in (None, "message") and data.get("role") in ("user", "assistant"):
            _append(messages, str(data["role"]), {"text": _text_of(data.get("content", ""))})
    return messages


def host_input(messages: Messages) -> list[TResponseInputItem]:
    """Converse messages as the SDK's input items (what a handler's changed list is sent as)."""
    items: list[Any] = []
    for message in messages:
        role = message["role"]
        for block in message["content"]:
            if "text" in block:
                items.append({"role": role, "content": block["text"]})
            elif "toolUse" in block:
                use = block["toolUse"]
                arguments = use["input"]
                items.append(
                    {
                        "type": "function_call",
                        "call_id": use["toolUseId"],
                        "name": use["name"],
                        "arguments": arguments
                        if isinstance(arguments, str)
                        else json.dumps(arguments),
                    }
                )
            elif "toolResult" in block:
                result = block["toolResult"]
                text = "".join(str(part.get("text", "")) for part in result["content"])
                items.append(
                    {"type": "function_call_output", "call_id": result["toolUseId"], "output": text}
                )
    return cast("list[TResponseInputItem]", items)


def instructions_of(prompt: SystemPrompt) -> str | None:
    """A Converse system prompt as the SDK's instructions."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    return "".join(str(block.get("text", "")) for block in prompt)


def tool_spec_of(tool: FunctionTool) -> ToolSpec:
    """A function tool of the SDK as a Converse tool spec."""
    return {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": {"json": tool.params_json_schema},
    }


def tool_choice_of(choice: object) -> ToolChoice | None:
    """The SDK's ``ModelSettings.tool_choice`` as a Converse tool choice."""
    found: Any
    if choice is None:
        return None
    if choice == "required":
        found = {"any": {}}
    elif isinstance(choice, str) and choice not in ("auto", "none"):
        found = {"tool": {"name": choice}}
    else:
        found = {"auto": {}}
    return cast(ToolChoice, found)


def host_tool_choice(choice: ToolChoice | None) -> str | None:
    """A Converse tool choice as the SDK's ``ModelSettings.tool_choice``."""
    if choice is None:
        return None
    if "any" in choice:
        return "required"
    if "tool" in choice:
        return str(cast(Any, choice)["tool"]["name"])
    return "auto"


def converse_usage(usage: Usage) -> ConverseUsage:
    """The SDK's usage as Converse usage."""
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.total_tokens,
    }


def host_usage(usage: ConverseUsage) -> Usage:
    """Converse usage as the SDK's ``Usage`` of one request."""
    return Usage(
        requests=1,
        input_tokens=usage.get("inputTokens", 0),
        output_tokens=usage.get("outputTokens", 0),
        total_tokens=usage.get("totalTokens", 0),
    )


def response_usage(usage: ConverseUsage) -> ResponseUsage:
    """Converse usage as the usage of a Responses ``Response``."""
    # Validated from data: the details' required fields grow with openai releases.
    return ResponseUsage.model_validate(
        {
            "input_tokens": usage.get("inputTokens", 0),
            "output_tokens": usage.get("outputTokens", 0),
            "total_tokens": usage.get("totalTokens", 0),
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
    )


def completed_response(
    message: Message, usage: ConverseUsage, *, response_id: str, model: str, created_at: float
) -> Response:
    """A completed Responses ``Response`` carrying a Converse assistant message and usage."""
    return Response(
        id=response_id,
        created_at=created_at,
        model=model,
        object="response",
        output=host_output(message),
        parallel_tool_calls=False,
        tool_choice="auto",
        tools=[],
        status="completed",
        usage=response_usage(usage),
    )


def converse_message(output: Sequence[TResponseOutputItem]) -> Message:
    """A model's output items as one Converse assistant message."""
    content: list[ContentBlock] = []
    for item in output:
        if isinstance(item, ResponseOutputMessage):
            text = _text_of(item.content)
            if text:  # an empty text is no block, as in a message streamed on any host
                content.append({"text": text})
        elif isinstance(item, ResponseFunctionToolCall):
            content.append(
                {
                    "toolUse": {
                        "toolUseId": item.call_id,
                        "name": item.name,
                        "input": _arguments(item.arguments),
                    }
                }
            )
        elif isinstance(item, ResponseReasoningItem):
            text = "".join(summary.text for summary in item.summary)
            content.append({"reasoningContent": {"reasoningText": {"text": text}}})
    return {"role": "assistant", "content": content}


def stop_reason_of(message: Message) -> str:
    """``tool_use`` when the message calls a tool, else ``end_turn``."""
    for block in message["content"]:  # a loop, not any() over a generator: once a call
        if "toolUse" in block:
            return "tool_use"
    return "end_turn"


def host_output(message: Message) -> list[TResponseOutputItem]:
    """A Converse assistant message as the SDK's output items, every field set."""
    output: list[TResponseOutputItem] = []
    for index, block in enumerate(message["content"]):
        if "text" in block:
            output.append(
                ResponseOutputMessage(
                    id=f"msg_{index}",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[
                        ResponseOutputText(type="output_text", text=block["text"], annotations=[])
                    ],
                )
            )
        elif "toolUse" in block:
            use = block["toolUse"]
            arguments = use["input"]
            output.append(
                ResponseFunctionToolCall(
                    id=use["toolUseId"],
                    call_id=use["toolUseId"],
                    type="function_call",
                    name=use["name"],
                    arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
                    status="completed",
                )
            )
        elif "reasoningContent" in block:
            text = block["reasoningContent"].get("reasoningText", {}).get("text", "")
            output.append(
                ResponseReasoningItem(
                    id=f"rs_{index}",
                    type="reasoning",
                    summary=[Summary(type="summary_text", text=text)],
                )
            )
    return output
