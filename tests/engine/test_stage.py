"""Stage tokens, phase sub-tokens and the Middleware carrier."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest

from strands_middleware import (
    Middleware,
    MiddlewareInputPhase,
    MiddlewareNext,
    MiddlewareOutputPhase,
    MiddlewareResult,
    MiddlewareStage,
    MiddlewareWrapPhase,
)

from .conftest import STAGE, Done, Event


def test_stage_carries_its_three_phase_tokens() -> None:
    assert isinstance(STAGE.Input, MiddlewareInputPhase)
    assert isinstance(STAGE.Wrap, MiddlewareWrapPhase)
    assert isinstance(STAGE.Output, MiddlewareOutputPhase)
    assert STAGE.Input.stage is STAGE
    assert STAGE.Wrap.stage is STAGE
    assert STAGE.Output.stage is STAGE


def test_stages_compare_and_hash_by_identity() -> None:
    twin = MiddlewareStage[str, Done, Event]("test", result_type=Done)
    assert twin != STAGE
    assert STAGE == STAGE  # noqa: PLR0124 - identity equality is the point
    assert len({STAGE, twin, STAGE}) == 2


def test_stage_names_itself_and_its_phases() -> None:
    assert repr(STAGE) == "MiddlewareStage('test')"
    assert repr(STAGE.Output) == "MiddlewareStage('test').Output"
    assert STAGE.Input.where == "test.Input"


def test_stage_result_type_is_kept() -> None:
    assert STAGE.result_type is Done


@pytest.mark.parametrize("name", ["", 3, None])
def test_stage_rejects_a_name_that_is_not_a_non_empty_string(name: object) -> None:
    with pytest.raises(TypeError, match="a stage name must be a non-empty str"):
        MiddlewareStage(name, result_type=Done)  # type: ignore[arg-type]


def test_stage_rejects_a_result_type_that_is_not_a_class() -> None:
    with pytest.raises(TypeError, match="result_type of stage 'x' must be the class"):
        MiddlewareStage("x", result_type=Done())  # type: ignore[arg-type]


def test_builders_bind_handler_to_phase() -> None:
    async def wrap(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        async for event in next_fn(context):
            yield event

    def transform(context: str) -> str:
        return context

    def output(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
        return result

    assert STAGE.wrap(wrap).phase is STAGE.Wrap
    assert STAGE.input(transform).phase is STAGE.Input
    assert STAGE.output(output).phase is STAGE.Output
    assert STAGE.wrap(wrap).handler is wrap
    assert STAGE.wrap(wrap).stage is STAGE


def test_builder_works_as_a_decorator() -> None:
    @STAGE.wrap
    async def timing(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        async for event in next_fn(context):
            yield event

    assert isinstance(timing, Middleware)
    assert "test.Wrap" in repr(timing)
    assert "timing" in repr(timing)


def test_middleware_checks_its_handler_when_built() -> None:
    async def not_a_generator(context: str, next_fn: object) -> None:
        return None

    with pytest.raises(TypeError, match=r"test\.Wrap.*coroutine function"):
        STAGE.wrap(not_a_generator)  # type: ignore[arg-type]


def test_middleware_needs_a_phase_token() -> None:
    with pytest.raises(TypeError, match="Middleware needs a phase sub-token"):
        Middleware(STAGE, lambda context: context)  # type: ignore[call-overload]


def test_middleware_is_read_only() -> None:
    middleware = STAGE.input(lambda context: context)
    with pytest.raises(AttributeError):
        middleware.phase = STAGE.Output  # type: ignore[misc]


def test_a_stage_used_as_a_decorator_points_to_its_builders() -> None:
    async def timing(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        async for event in next_fn(context):
            yield event

    with pytest.raises(
        TypeError,
        match=r"stage 'test' is a token, not a decorator: build middleware with @stage\.wrap",
    ):
        STAGE(timing)  # type: ignore[operator]  # pyright: ignore[reportCallIssue]


def test_a_phase_token_used_as_a_decorator_points_to_the_builder() -> None:
    with pytest.raises(TypeError, match=r"test\.Wrap is a phase token, not a decorator.*\.wrap"):
        STAGE.Wrap(lambda context, next_fn: next_fn(context))  # type: ignore[operator]  # pyright: ignore[reportCallIssue]


def test_a_stage_token_is_refused_as_a_handler() -> None:
    with pytest.raises(
        TypeError, match=r"cannot register MiddlewareStage\('test'\) for test\.Wrap"
    ):
        STAGE.wrap(STAGE)  # type: ignore[arg-type]
