"""Translation between MCP's tool shapes and this library's Converse ones.

A call's `CallToolResult` becomes the `ToolResultEvent` handlers see, and the event the chain
ends with becomes the `CallToolResult` the client reads. A result no handler changed goes back
as the upstream's own object, so content this library has no Converse form for (audio, resource
links, embedded resources) and fields it does not model (``_meta``, annotations) reach the
client untouched. A rewritten result carries what Converse can say: text, JSON and images.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any, cast

from mcp import types

from ..content import ToolResult, ToolResultContent, ToolSpec
from ._sdk import IS_ERROR, STRUCTURED_CONTENT

__all__ = ["call_tool_result", "copied", "tool_result", "tool_spec", "wire_of"]


def tool_spec(tool: Mapping[str, Any]) -> ToolSpec:
    """The Converse spec of an MCP tool as it is on the wire: name, description, input schema."""
    return {
        "name": str(tool["name"]),
        "description": str(tool.get("description") or ""),
        "inputSchema": {"json": dict(tool.get("inputSchema") or {})},
    }


def wire_of(result: object) -> dict[str, Any]:
    """A server's answer as its wire dict (what `tool_result` reads).

    A ``CallToolResult`` of text blocks, what most tools answer, is read field by field: a
    tenth of what pydantic's ``model_dump`` costs, on every call that has middleware. Anything
    else is dumped.
    """
    if result is None:
        return {}
    if isinstance(result, dict):
        return cast("dict[str, Any]", result)
    if isinstance(result, types.CallToolResult):
        blocks: list[Any] = list(result.content)
        if all(type(block) is types.TextContent for block in blocks):
            wire: dict[str, Any] = {
                "content": [{"type": "text", "text": block.text} for block in blocks],
                "isError": bool(getattr(result, IS_ERROR)),
            }
            structured = getattr(result, STRUCTURED_CONTENT)
            if structured is not None:
                wire["structuredContent"] = structured
            return wire
    dump: Any = getattr(result, "model_dump")  # noqa: B009  a model of either SDK line
    return cast("dict[str, Any]", dump(by_alias=True, mode="json", exclude_none=True))


def copied(result: ToolResult) -> ToolResult:
    """A copy of a tool result whose dicts and lists are new all the way down."""
    return cast(ToolResult, _copied(result))


def _copied(value: object) -> object:
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in cast("dict[object, object]", value).items()}
    if isinstance(value, list):
        return [_copied(item) for item in cast("list[object]", value)]
    return value


def tool_result(tool_use_id: str, result: Mapping[str, Any]) -> ToolResult:
    """The Converse form of an MCP tool result as it is on the wire (``isError`` becomes
    ``status: "error"``).

    Read from the wire dict rather than a validated model: the server's own result was checked
    when it was made, and a tool call should not pay for a second validation. Text and images
    map to their Converse blocks; ``structuredContent`` becomes a trailing ``json`` block;
    content with no Converse form becomes a ``json`` block holding the MCP block as it is.
    """
    content: list[ToolResultContent] = []
    listed: object = result.get("content")
    blocks = cast("list[object]", listed) if isinstance(listed, list) else []
    for block in blocks:
        item = cast("dict[str, Any]", block) if isinstance(block, dict) else {}
        kind = item.get("type")
        text = item.get("text")
        data = item.get("data")
        if kind == "text" and isinstance(text, str):
            content.append({"text": text})
        elif kind == "image" and isinstance(data, str) and _decodes(data):
            mime_type = str(item.get("mimeType") or "image/png")
            image_format = mime_type.partition("/")[2] or mime_type
            source = {"bytes": base64.b64decode(data)}
            content.append({"image": {"format": image_format, "source": source}})
        else:
            content.append({"json": block})
    structured = result.get("structuredContent")
    if structured is not None:
        content.append({"json": structured})
    return {
        "toolUseId": tool_use_id,
        "status": "error" if result.get("isError") else "success",
        "content": content,
    }


def _decodes(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def call_tool_result(result: ToolResult) -> dict[str, Any]:
    """The MCP form of a Converse tool result, as the wire dict both SDK lines validate
    (``status: "error"`` becomes ``isError``).

    Text stays text; an image becomes image content with ``image/<format>``; the last ``json``
    block, when it holds an object, becomes ``structuredContent`` (with its JSON text as the
    content when nothing else says it, as MCP asks of structured results); any other ``json``
    block and any document become JSON text.
    """
    blocks = result.get("content", [])
    json_at = [index for index, block in enumerate(blocks) if "json" in block]
    structured_at = (
        json_at[-1] if json_at and isinstance(blocks[json_at[-1]].get("json"), dict) else -1
    )
    content: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        if index == structured_at:
            continue
        if "text" in block:
            content.append(_text(block["text"]))
        elif "image" in block:
            content.append(_image(block["image"]))
        elif "json" in block:
            content.append(_text(_json_text(block["json"])))
        else:
            content.append(_text(_json_text(dict(block))))
    structured: Any = blocks[structured_at].get("json") if structured_at >= 0 else None
    if structured is not None and not content:
        content.append(_text(_json_text(structured)))
    mapped: dict[str, Any] = {"content": content, "isError": result.get("status") == "error"}
    if structured is not None:
        mapped["structuredContent"] = structured
    return mapped


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image(image: dict[str, Any]) -> dict[str, Any]:
    source = cast("dict[str, Any]", image.get("source") or {})
    data = source.get("bytes")
    if not isinstance(data, (bytes, bytearray)):
        return _text(_json_text(image))
    image_format = str(image.get("format") or "png")
    mime_type = image_format if "/" in image_format else f"image/{image_format}"
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}


def _json_text(value: object) -> str:
    return json.dumps(value, default=repr, ensure_ascii=False)
