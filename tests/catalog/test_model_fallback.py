"""ModelFallback: which failures move a call to the next model, and what it never does."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    InterruptException,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    ModelStopReason,
    TypedEvent,
    testing,
)
from strands_middleware.agent import AfterModelCallEvent, Agent, BeforeModelCallEvent
from strands_middleware.catalog._model_fallback import ModelFallback
from strands_middleware.catalog._retry import Retry
from strands_middleware.host._model_call import invoke_model_terminal
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import ScriptedModel, text_turn

from ..conformance.drive import AgentFactory


async def no_sleep(delay: float) -> None:
    return None


def test_a_failing_call_runs_again_on_the_next_model_and_the_agent_keeps_its_own() -> None:
    primary = ScriptedModel([ConnectionError("throttled")])
    backup = ScriptedModel([text_turn("from backup")])
    agent = Agent(model=primary, middleware=[ModelFallback([backup])])
    hooks: list[str] = []
    agent.add_hook(BeforeModelCallEvent, lambda event: hooks.append("before"))
    agent.add_hook(AfterModelCallEvent, lambda event: hooks.append("after"))
    assert str(agent("hi")) == "from backup"
    assert agent.model is primary
    assert len(primary.requests) == 1
    assert len(backup.requests) == 1
    assert backup.requests[0].messages == primary.requests[0].messages
    assert hooks == ["before", "after"]  # one model call, however many models were tried


def test_models_are_tried_in_order_and_the_last_error_is_raised(make_agent: AgentFactory) -> None:
    last = ConnectionError("last resort down")
    primary = ScriptedModel([ConnectionError("1")])
    second = ScriptedModel([TimeoutError("2")])
    third = ScriptedModel([last])
    agent = make_agent(model=primary, middleware=[ModelFallback([second, third])])
    with pytest.raises(ConnectionError) as caught:
        agent("hi")
    assert caught.value is last
    assert [len(m.requests) for m in (primary, second, third)] == [1, 1, 1]


def test_the_next_call_starts_from_the_agents_model_again(make_agent: AgentFactory) -> None:
    primary = ScriptedModel([ConnectionError("blip"), text_turn("primary is back")])
    backup = ScriptedModel([text_turn("from backup")])
    agent = make_agent(model=primary, middleware=[ModelFallback([backup])])
    assert str(agent("one")) == "from backup"
    assert str(agent("two")) == "primary is back"
    assert len(backup.requests) == 1


def test_listing_the_calls_own_model_does_not_try_it_twice(make_agent: AgentFactory) -> None:
    primary = ScriptedModel([ConnectionError("down")])
    backup = ScriptedModel([text_turn("ok")])
    agent = make_agent(model=primary, middleware=[ModelFallback([primary, backup])])
    assert str(agent("hi")) == "ok"
    assert len(primary.requests) == 1


def test_errors_not_listed_in_on_are_raised_at_once(make_agent: AgentFactory) -> None:
    primary = ScriptedModel([ValueError("bad request")])
    backup = ScriptedModel([text_turn("never")])
    agent = make_agent(model=primary, middleware=[ModelFallback([backup], on=ConnectionError)])
    with pytest.raises(ValueError, match="bad request"):
        agent("hi")
    assert backup.requests == []


def test_a_model_an_input_handler_chose_is_the_calls_own_model(make_agent: AgentFactory) -> None:
    special = ScriptedModel([ConnectionError("special is down")])
    backup = ScriptedModel([text_turn("from backup")])
    primary = ScriptedModel([])

    @InvokeModelStage.input
    def route(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(model=special)

    agent = make_agent(model=primary, middleware=[ModelFallback([backup]), route])
    assert str(agent("hi")) == "from backup"
    assert primary.requests == []
    assert len(special.requests) == 1


def test_each_fallback_is_logged(
    make_agent: AgentFactory, caplog: pytest.LogCaptureFixture
) -> None:
    primary = ScriptedModel([ConnectionError("throttled")])
    backup = ScriptedModel([text_turn("ok")])
    agent = make_agent(model=primary, middleware=[ModelFallback([backup])])
    with caplog.at_level(logging.WARNING, logger="strands_middleware"):
        agent("hi")
    assert "ModelFallback: model 1 of 2 (ScriptedModel) failed with ConnectionError" in caplog.text


def test_retry_registered_inside_retries_each_model_before_moving_on(
    make_agent: AgentFactory,
) -> None:
    primary = ScriptedModel([ConnectionError("1"), ConnectionError("2")])
    backup = ScriptedModel([text_turn("from backup")])
    agent = make_agent(
        model=primary,
        middleware=[ModelFallback([backup]), Retry(attempts=2, sleep=no_sleep)],
    )
    assert str(agent("hi")) == "from backup"
    assert len(primary.requests) == 2


def test_a_failure_after_events_reached_the_consumer_is_raised_as_it_is(
    make_agent: AgentFactory,
) -> None:
    seen: list[str] = []

    async def breaks_mid_stream(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        seen.append(type(context.model).__name__)
        yield TypedEvent({"data": "partial"})
        raise ConnectionError("dropped")

    backup = ScriptedModel([text_turn("never")])
    agent = make_agent(
        model=ScriptedModel([]),
        middleware=[ModelFallback([backup]), InvokeModelStage.wrap(breaks_mid_stream)],
    )
    with pytest.raises(ConnectionError, match="dropped"):
        agent("hi")
    assert seen == ["ScriptedModel"]
    assert backup.requests == []


def model_context(model: Any) -> InvokeModelContext:
    return testing.model_context(
        messages=[{"role": "user", "content": [{"text": "hi"}]}], model=model
    )


async def test_an_interrupt_never_falls_back_even_when_on_catches_everything() -> None:
    async def pauses(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        raise InterruptException(Interrupt(id="i", name="ask"))
        yield TypedEvent()  # pragma: no cover

    backup = ScriptedModel([text_turn("never")])
    registry = MiddlewareRegistry()
    registry.use(ModelFallback([backup], on=BaseException), InvokeModelStage.wrap(pauses))
    with pytest.raises(InterruptException):
        await registry.run(
            InvokeModelStage, model_context(ScriptedModel([])), invoke_model_terminal
        )
    assert backup.requests == []


async def test_cancellation_never_falls_back(make_agent: AgentFactory) -> None:
    started = asyncio.Event()

    async def hang(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        started.set()
        await asyncio.sleep(3600)
        yield TypedEvent()  # pragma: no cover

    backup = ScriptedModel([text_turn("never")])
    agent = make_agent(
        model=ScriptedModel([]),
        middleware=[ModelFallback([backup], on=BaseException), InvokeModelStage.wrap(hang)],
    )
    task = asyncio.create_task(agent.invoke_async("hi"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert backup.requests == []


async def test_the_backup_models_result_is_the_stages_result() -> None:
    backup = ScriptedModel([text_turn("from backup")])
    registry = MiddlewareRegistry()
    registry.use(ModelFallback([backup]))
    failing = ScriptedModel([ConnectionError("down")])
    result = await registry.run(InvokeModelStage, model_context(failing), invoke_model_terminal)
    assert isinstance(result, ModelStopReason)
    assert result.message == text_turn("from backup")


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (([],), {}, ValueError, r"models=\.\.\.\) needs at least one model to fall back to"),
        (("backup",), {}, TypeError, r"models=\.\.\.\) takes a sequence of models"),
        ((ScriptedModel([]),), {}, TypeError, "takes a sequence of models"),
        (([object()],), {}, TypeError, r"item 0 is not a model \(it has no stream method\)"),
        (([ScriptedModel([])],), {"on": "ConnectionError"}, TypeError, "takes exception classes"),
        (([ScriptedModel([])],), {"on": ()}, TypeError, r"on=\.\.\.\) takes exception classes"),
    ],
)
def test_bad_configuration_is_refused(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ModelFallback(*args, **kwargs)


def test_it_is_one_wrap_middleware_on_the_model_stage() -> None:
    [middleware] = list(ModelFallback([ScriptedModel([])]))
    assert middleware.phase is InvokeModelStage.Wrap
    assert "ModelFallback[invokeModel]" in repr(middleware)
