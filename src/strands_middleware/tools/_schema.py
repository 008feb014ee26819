"""JSON Schema for a tool's parameters, from their annotations.

Only what every provider's tool schema accepts is supported; anything else fails when the tool is
decorated, with the parameter named, rather than on the model's first call.
"""

from __future__ import annotations

import collections.abc
import inspect
import json
import types
import typing
from typing import Any, Literal

_SIMPLE_SCHEMAS: dict[object, dict[str, Any]] = {
    str: {"type": "string"},
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    type(None): {"type": "null"},
    None: {"type": "null"},
}
_ARRAY_ORIGINS: frozenset[object] = frozenset({list, collections.abc.Sequence})
_OBJECT_ORIGINS: frozenset[object] = frozenset({dict, collections.abc.Mapping})
SUPPORTED_ANNOTATIONS = (
    "str, int, float, bool, list[...], dict[str, ...], Literal[...], Optional/unions of these, "
    "or Any"
)


def unwrap_annotated(annotation: object) -> tuple[object, str | None]:
    """Strip ``Annotated[T, ...]``, keeping its first string as the parameter's description."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        text = next((item for item in metadata if isinstance(item, str)), None)
        return base, text
    return annotation, None


def json_schema(annotation: object, where: str) -> dict[str, Any]:
    """The JSON Schema of the values a parameter annotated ``annotation`` accepts."""
    if annotation is inspect.Parameter.empty or annotation is Any or annotation is object:
        return {}
    hashable = _hashable(annotation)
    simple = _SIMPLE_SCHEMAS.get(annotation) if hashable else None
    if simple is not None:
        return dict(simple)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return json_schema(unwrap_annotated(annotation)[0], where)
    if origin is typing.Union or origin is types.UnionType:
        return {"anyOf": [json_schema(arg, where) for arg in args]}
    if origin is Literal:
        return _literal_schema(args, where)
    if (hashable and annotation in _ARRAY_ORIGINS) or origin in _ARRAY_ORIGINS:
        schema: dict[str, Any] = {"type": "array"}
        items = json_schema(args[0], where) if args else {}
        if items:
            schema["items"] = items
        return schema
    if (hashable and annotation in _OBJECT_ORIGINS) or origin in _OBJECT_ORIGINS:
        schema = {"type": "object"}
        if args:
            if args[0] is not str:
                raise TypeError(
                    f"@tool: {where} is a mapping with {args[0]!r} keys, but JSON object keys "
                    "are strings; annotate it dict[str, ...]"
                )
            values = json_schema(args[1], where)
            if values:
                schema["additionalProperties"] = values
        return schema
    raise TypeError(
        f"@tool: {where} is annotated {annotation!r}, which has no JSON Schema the model could "
        f"fill; annotate it with {SUPPORTED_ANNOTATIONS}"
    )


def _literal_schema(values: tuple[object, ...], where: str) -> dict[str, Any]:
    names: dict[object, str] = {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        type(None): "null",
    }
    kinds: set[str] = set()
    for value in values:
        kind = names.get(type(value))
        if kind is None:
            raise TypeError(
                f"@tool: {where} is a Literal holding {value!r}; a JSON enum can only hold "
                "str, int, float, bool and None values"
            )
        kinds.add(kind)
    schema: dict[str, Any] = {"enum": list(values)}
    if len(kinds) == 1:
        schema["type"] = kinds.pop()
    return schema


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def is_json(value: object) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True
