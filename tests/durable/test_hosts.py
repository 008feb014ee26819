"""Middleware for the hosts' own Temporal integrations, checked by `for_temporal_host`."""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from temporalio.exceptions import ActivityError, ApplicationError, RetryState

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.catalog import (
    Cache,
    CircuitBreaker,
    ContextWindow,
    Guardrail,
    Redact,
    Retry,
    Summarize,
    Timeout,
    ToolApproval,
    UsageBudget,
    Verdict,
)
from strands_middleware.catalog._overflow import is_context_overflow
from strands_middleware.durable import PlacementError, for_temporal_host, in_activity, in_workflow
from strands_middleware.durable._host_errors import ProviderErrors
from strands_middleware.events import ToolResultEvent
from strands_middleware.stores import InMemoryStore
from strands_middleware.testing import ScriptedModel


async def passing(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        yield event


def test_deciding_items_pass_on_both_hosts() -> None:
    gate, redact = ToolApproval(), Redact()
    assert for_temporal_host("strands", [gate, redact]) == [gate, redact]
    assert for_temporal_host("pydantic-ai", [gate, redact]) == [gate, redact]


def test_strands_runs_every_handler_in_workflow_code() -> None:
    with pytest.raises(PlacementError) as refused:
        for_temporal_host("strands", [ToolApproval(), Timeout(seconds=5)])
    assert str(refused.value) == (
        "Timeout cannot run on temporalio-strands-agents' TemporalAgent: there invokeModel "
        "handlers run in workflow code, and it reads a clock"
    )


def test_a_retry_on_strands_is_registered_for_workflow_code() -> None:
    gate, retry = ToolApproval(), Retry(attempts=4, on=Throttled, jitter=0.5)
    registered = for_temporal_host("strands", [gate, retry])
    assert registered[0] is gate
    clone = registered[1]
    assert isinstance(clone, Retry) and clone is not retry
    assert (clone.attempts, clone.on, clone.jitter) == (4, (Throttled,), 0.5)
    assert retry.draw is random.random and clone.draw is not random.random
    # The provider's errors come back innermost, for both stages, after the list.
    assert [m.phase for m in registered[2:]] == [  # type: ignore[union-attr]
        InvokeModelStage.Wrap,
        ExecuteToolStage.Wrap,
    ]
    assert for_temporal_host("strands", [gate]) == [gate]  # nothing to map without a Retry


class Throttled(Exception):
    """A provider's error."""


class SlowDown(Throttled):
    """A subclass of it, loaded in the worker."""


class NeedsAKind(Exception):
    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def activity_error(type_name: str, message: str) -> ActivityError:
    error = ActivityError(
        "Activity task failed",
        scheduled_event_id=5,
        started_event_id=6,
        identity="worker",
        activity_type="invoke_model",
        activity_id="1",
        retry_state=RetryState.MAXIMUM_ATTEMPTS_REACHED,
    )
    error.__cause__ = ApplicationError(message, type=type_name)
    return error


def test_an_activity_error_is_rebuilt_as_the_class_named_by_its_cause() -> None:
    errors = ProviderErrors([Throttled, ConnectionError])
    original = activity_error("SlowDown", "slow down")
    rebuilt = errors.rebuild(original)
    assert type(rebuilt) is SlowDown and str(rebuilt) == "slow down"
    assert rebuilt.__cause__ is original
    odd = errors.rebuild(activity_error("ConnectionRefusedError", "refused"))
    assert type(odd) is ConnectionRefusedError
    unknown = activity_error("ValueError", "not one of ours")
    assert errors.rebuild(unknown) is unknown
    plain = RuntimeError("not from an activity")
    assert errors.rebuild(plain) is plain


def test_a_class_whose_constructor_wants_more_is_built_without_it() -> None:
    rebuilt = ProviderErrors([Exception]).rebuild(activity_error("NeedsAKind", "no kind"))
    assert type(rebuilt) is NeedsAKind and rebuilt.args == ("no kind",)


async def test_the_model_handler_raises_the_rebuilt_error_from_the_activity_error() -> None:
    model_errors = ProviderErrors([Throttled]).middleware()[0]
    failure = activity_error("Throttled", "busy")

    async def activity(_context: Any) -> AsyncGenerator[Any, None]:
        raise failure
        yield

    with pytest.raises(Throttled, match="busy") as raised:
        async for _ in model_errors.handler(None, activity):  # type: ignore[union-attr]
            pass
    assert raised.value.__cause__ is failure


def test_pydantic_ai_runs_model_handlers_in_its_model_activity() -> None:
    retry, timeout = Retry(), Timeout(seconds=5)
    assert for_temporal_host("pydantic-ai", [retry, timeout]) == [retry, timeout]
    with pytest.raises(PlacementError, match="there executeTool handlers run in workflow code"):
        for_temporal_host("pydantic-ai", [Cache(ExecuteToolStage)])


def test_a_tool_retry_on_pydantic_ai_is_registered_for_workflow_code() -> None:
    model_retry, tool_retry = Retry(on=Throttled), Retry(ExecuteToolStage, on=SlowDown)
    registered = for_temporal_host("pydantic-ai", [model_retry, tool_retry])
    assert registered[0] is model_retry  # inside the model activity, as it is
    clone = registered[1]
    assert isinstance(clone, Retry) and clone is not tool_retry
    assert clone.stage is ExecuteToolStage and clone.draw is not random.random
    assert [m.phase for m in registered[2:]] == [  # type: ignore[union-attr]
        InvokeModelStage.Wrap,
        ExecuteToolStage.Wrap,
    ]


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


async def test_the_tool_handler_rebuilds_an_error_results_exception() -> None:
    tool_errors = ProviderErrors([Throttled]).middleware()[1]
    failure = activity_error("SlowDown", "busy")
    failed = ToolResultEvent.error("t-1", "Error: busy", failure)

    async def activity(_context: Any) -> AsyncGenerator[Any, None]:
        yield failed

    results = [event async for event in tool_errors.handler(None, activity)]  # type: ignore[union-attr]
    assert len(results) == 1 and results[0] == failed  # the same result for the model
    assert type(results[0].exception) is SlowDown and results[0].exception.__cause__ is failure


def test_an_activity_failing_with_an_overflow_is_an_overflow_by_its_type_name() -> None:
    # The message says nothing of an overflow: the class's name in the cause's type does.
    for name in ("ContextWindowOverflowException", "ContextWindowOverflowError"):
        assert is_context_overflow(activity_error(name, "the request is too large"))
    assert not is_context_overflow(activity_error("ModelThrottledException", "slow down"))


def test_the_new_catalog_behaviour_on_each_host() -> None:
    window, monitor = ContextWindow(max_messages=10), Guardrail(check_nothing, mode="monitor")
    assert for_temporal_host("strands", [window, monitor]) == [window, monitor]
    summarize = Summarize(ScriptedModel([]), max_messages=10, store=InMemoryStore())
    assert for_temporal_host("pydantic-ai", [summarize, window]) == [summarize, window]
    alerting = Guardrail(check_nothing, on_violation=lambda subject, verdict: None)
    for item, why in [
        (summarize, r"summarizer, tried once more when it fails\) and, with store="),
        (alerting, "its on_violation callback is your code"),
        (CircuitBreaker(), "reads a clock and keeps circuits in a store"),
        (UsageBudget(max_cost=0.5), "with max_cost=, their price"),
    ]:
        with pytest.raises(PlacementError, match=f"cannot run on temporalio-strands-agents.*{why}"):
            for_temporal_host("strands", [item])
    with pytest.raises(PlacementError, match=r"^Redact cannot run in a durable run"):
        for_temporal_host("pydantic-ai", [Redact(reversible=True)])


def check_nothing(subject: Any) -> Verdict:
    return Verdict.allow()
