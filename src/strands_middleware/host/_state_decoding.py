"""Decoding serialised interrupt state, naming the path of anything malformed.

Session stores hand `InterruptState.from_dict` whatever they kept; a corrupted record must fail
with a message that says where, not with a `KeyError` deep in a later run.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..exceptions import InterruptStateDataError
from ..interrupts import Interrupt
from ._resume_prompt import as_mapping, type_name

if TYPE_CHECKING:
    from ..content import Message, ToolResult


def require_mapping(value: object, where: str) -> Mapping[str, Any]:
    mapping = as_mapping(value)
    if mapping is None:
        raise InterruptStateDataError(f"{where}: expected an object, got {type_name(value)}")
    for key in mapping:
        if not isinstance(key, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise InterruptStateDataError(f"{where}: keys must be strings, got {key!r}")
    return mapping


def check_keys(
    mapping: Mapping[str, Any], where: str, *, required: Sequence[str], optional: Sequence[str]
) -> None:
    missing = [key for key in required if key not in mapping]
    if missing:
        raise InterruptStateDataError(f"{where}: missing key(s) {missing}")
    unknown = sorted(key for key in mapping if key not in required and key not in optional)
    if unknown:
        raise InterruptStateDataError(f"{where}: unknown key(s) {unknown}")


def interrupt_from_data(key: str, value: object) -> Interrupt:
    where = f"interrupts[{key!r}]"
    data = require_mapping(value, where)
    check_keys(data, where, required=("id", "name"), optional=("reason", "response"))
    for field_name in ("id", "name"):
        if not isinstance(data[field_name], str):
            got = type_name(data[field_name])
            raise InterruptStateDataError(f"{where}.{field_name} must be a str, got {got}")
    if data["id"] != key:
        raise InterruptStateDataError(
            f"{where}.id is {data['id']!r}; an interrupt must be stored under its own id"
        )
    return Interrupt.from_dict(copy.deepcopy(dict(data)))


def pending_parts_from_data(value: object, where: str) -> tuple[Message, list[ToolResult]]:
    """Check a serialised pending tool execution; return its message and results, deep-copied."""
    data = require_mapping(value, where)
    check_keys(data, where, required=("assistant_message", "completed_tool_results"), optional=())
    message = require_mapping(data["assistant_message"], f"{where}.assistant_message")
    if message.get("role") != "assistant":
        raise InterruptStateDataError(
            f"{where}.assistant_message.role must be 'assistant', got {message.get('role')!r}"
        )
    if not isinstance(message.get("content"), list):
        got = type_name(message.get("content"))
        raise InterruptStateDataError(
            f"{where}.assistant_message.content must be a list, got {got}"
        )
    results_value: object = data["completed_tool_results"]
    if not isinstance(results_value, list):
        raise InterruptStateDataError(
            f"{where}.completed_tool_results must be a list, got {type_name(results_value)}"
        )
    results = cast("list[object]", results_value)
    for index, result in enumerate(results):
        result_data = require_mapping(result, f"{where}.completed_tool_results[{index}]")
        if not isinstance(result_data.get("toolUseId"), str):
            raise InterruptStateDataError(
                f"{where}.completed_tool_results[{index}].toolUseId must be a str"
            )
    return (
        cast("Message", copy.deepcopy(dict(message))),
        cast("list[ToolResult]", copy.deepcopy(results)),
    )
