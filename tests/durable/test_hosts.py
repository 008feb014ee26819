"""Middleware for the hosts' own Temporal integrations, checked by `for_temporal_host`."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.catalog import Cache, Redact, Retry, Timeout, ToolApproval
from strands_middleware.durable import PlacementError, for_temporal_host, in_activity, in_workflow


async def passing(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        yield event


def test_deciding_items_pass_on_both_hosts() -> None:
    gate, redact = ToolApproval(), Redact()
    assert for_temporal_host("strands", [gate, redact]) == [gate, redact]
    assert for_temporal_host("pydantic-ai", [gate, redact]) == [gate, redact]


def test_strands_runs_every_handler_in_workflow_code() -> None:
    with pytest.raises(PlacementError) as refused:
        for_temporal_host("strands", [ToolApproval(), Retry()])
    assert str(refused.value) == (
        "Retry cannot run on temporalio-strands-agents' TemporalAgent: there invokeModel "
        "handlers run in workflow code, and it sleeps and draws random jitter"
    )


def test_pydantic_ai_runs_model_handlers_in_its_model_activity() -> None:
    retry, timeout = Retry(), Timeout(seconds=5)
    assert for_temporal_host("pydantic-ai", [retry, timeout]) == [retry, timeout]
    with pytest.raises(PlacementError, match="there executeTool handlers run in workflow code"):
        for_temporal_host("pydantic-ai", [Cache(ExecuteToolStage)])


def test_your_own_handlers_are_placed_where_the_host_runs_them() -> None:
    model_handler = InvokeModelStage.wrap(passing)
    tool_handler = ExecuteToolStage.wrap(passing)
    assert for_temporal_host(
        "pydantic-ai", [in_activity(model_handler), in_workflow(tool_handler)]
    ) == [model_handler, tool_handler]
    with pytest.raises(PlacementError, match=r"place .* with in_workflow\(\.\.\.\)"):
        for_temporal_host("strands", [model_handler])
    with pytest.raises(PlacementError, match=r"is placed in_workflow\(\.\.\.\), but pydantic-ai"):
        for_temporal_host("pydantic-ai", [in_workflow(model_handler)])


def test_an_unknown_host_is_refused() -> None:
    with pytest.raises(ValueError, match="host must be 'strands' or 'pydantic-ai'"):
        for_temporal_host("langchain", [])  # type: ignore[arg-type]
