"""The tool specs a model call's handlers get on the OpenAI Agents SDK: copies, never the SDK's."""

from __future__ import annotations

from typing import Any

from strands_middleware.bridges.openai_agents._model import _spec_copy
from strands_middleware.content import ToolSpec


def _spec(schema: dict[str, Any]) -> ToolSpec:
    return {"name": "add", "description": "Add.", "inputSchema": {"json": schema}}


def test_a_copy_equals_the_spec_and_shares_nothing_with_its_schema() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "integer"}}}
    spec = _spec(schema)
    for _ in range(2):  # the first copy is made and kept, the second loaded
        copy = _spec_copy(spec)
        assert copy == spec
        shown: Any = copy["inputSchema"]["json"]
        shown["properties"]["a"]["type"] = "string"
        assert schema["properties"]["a"]["type"] == "integer"


def test_a_schema_changed_in_place_since_its_last_copy_is_copied_as_it_is_now() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    spec = _spec(schema)
    assert _spec_copy(spec) == spec
    schema["properties"]["b"] = {"type": "integer"}
    assert _spec_copy(spec) == spec


def test_a_schema_marshal_cannot_write_is_copied_all_the_same() -> None:
    schema: dict[str, Any] = {"type": "object", "default": {1, 2}, "items": [object]}
    spec = _spec(schema)
    copy = _spec_copy(spec)
    assert copy == spec
    assert copy["inputSchema"]["json"] is not schema
