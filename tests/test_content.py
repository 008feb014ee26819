"""Content types: the Converse wire spelling, kept in step with the Strands host."""

from __future__ import annotations

from typing import get_args

import pytest

from strands_middleware import content
from strands_middleware.content import (
    ContentBlock,
    Message,
    MessageStopEvent,
    Metrics,
    StopReason,
    StreamEvent,
    ToolResult,
    ToolUse,
    Usage,
)


def test_every_exported_name_exists() -> None:
    missing = [name for name in content.__all__ if not hasattr(content, name)]

    assert missing == []


def test_stop_reasons_include_every_reason_the_strands_host_reports() -> None:
    # The bridge hands the host's stop reasons to middleware unchanged; a reason missing here
    # would be a value the annotations say cannot occur.
    strands_event_loop = pytest.importorskip("strands.types.event_loop")

    host_reasons = set(get_args(strands_event_loop.StopReason))

    assert host_reasons <= set(get_args(StopReason))


@pytest.mark.parametrize(
    ("shape", "required"),
    [
        (Message, {"role", "content"}),
        (ToolUse, {"toolUseId", "name", "input"}),
        (ToolResult, {"toolUseId", "status", "content"}),
        (Usage, {"inputTokens", "outputTokens", "totalTokens"}),
        (Metrics, {"latencyMs"}),
        (MessageStopEvent, {"stopReason"}),
        (ContentBlock, set[str]()),
        (StreamEvent, set[str]()),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_required_keys_use_the_converse_spelling(shape: type, required: set[str]) -> None:
    assert set(getattr(shape, "__required_keys__")) == required  # noqa: B009


def test_a_stream_chunk_may_carry_each_converse_chunk_kind() -> None:
    assert set(getattr(StreamEvent, "__optional_keys__")) == {  # noqa: B009
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    }
