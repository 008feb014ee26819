"""Checks that run when a handler is registered, so a mistake fails where it is made.

A handler of the wrong shape would otherwise fail deep inside a model or tool call, far from the
line that registered it, or worse, appear to work: an ``async def`` Wrap handler without ``yield``
returns a coroutine that nothing ever awaits. Every error here names the stage, the phase and the
handler, and says what shape was expected.
"""

from __future__ import annotations

import functools
import inspect
from types import CodeType, TracebackType
from typing import Any, cast

__all__: list[str] = []

_WRAP_SHAPE = "an async generator function (context, next_fn) that yields events"
_INPUT_SHAPE = "a function (context) -> context, sync or async"
_OUTPUT_SHAPE = "a function (result: MiddlewareResult) -> MiddlewareResult, sync or async"


def describe(handler: object) -> str:
    """Name a handler the way a user would recognise it in an error message."""
    target = handler
    while isinstance(target, functools.partial):
        target = target.func
    name = getattr(target, "__qualname__", None)
    if isinstance(name, str):
        # A handler defined inside a function is "outer.<locals>.inner"; the user knows it as inner.
        name = name.rsplit("<locals>.", 1)[-1]
        return name if target is handler else f"functools.partial({name})"
    return repr(handler)


def _code_target(handler: object) -> Any:
    """Return what ``inspect`` should look at: a callable object's ``__call__``, else itself."""
    if inspect.isroutine(handler) or isinstance(handler, (functools.partial, type)):
        return cast(Any, handler)
    return getattr(handler, "__call__", handler)  # noqa: B004 - we want the method itself


def code_of(handler: object) -> CodeType | None:
    """The code object a handler's frames run, or None when it has none (a builtin, a class)."""
    target: Any = handler
    while isinstance(target, functools.partial):
        target = cast(Any, target).func
    target = _code_target(target)
    target = getattr(target, "__func__", target)  # a bound method runs its function's code
    code = getattr(target, "__code__", None)
    return code if isinstance(code, CodeType) else None


def raising_code(traceback: TracebackType | None, codes: frozenset[CodeType]) -> CodeType | None:
    """Which of ``codes`` raised the error whose traceback this is, if one of them did.

    That is the innermost frame running one of them, unless the error reached that frame from an
    async generator it was iterating (the rest of the chain, a terminal): a handler that only
    passed an error on did not raise it. A helper the handler called is part of the handler.
    """
    found: CodeType | None = None
    passed_on = False
    while traceback is not None:
        code = traceback.tb_frame.f_code
        if code in codes:
            found = code
            passed_on = False
        elif found is not None and code.co_flags & inspect.CO_ASYNC_GENERATOR:
            passed_on = True
        traceback = traceback.tb_next
    return None if passed_on else found


def _accepts(handler: Any, count: int) -> bool | None:
    """Whether ``handler`` can be called with ``count`` positional arguments (None: unknown)."""
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*([None] * count))
    except TypeError:
        return False
    return True


def _fail(where: str, handler: object, shape: str, problem: str, hint: str = "") -> TypeError:
    message = f"cannot register {describe(handler)} for {where}: expected {shape}, but {problem}."
    if hint:
        message = f"{message} {hint}"
    return TypeError(message)


def check_wrap(where: str, handler: object) -> None:
    """Refuse anything that cannot be a Wrap handler, naming ``where`` (stage and phase)."""
    if not callable(handler):
        raise _fail(where, handler, _WRAP_SHAPE, f"got a {type(handler).__name__}, not callable")
    target = _code_target(handler)
    name = describe(handler)
    if inspect.iscoroutinefunction(target):
        raise _fail(
            where,
            handler,
            _WRAP_SHAPE,
            f"{name} is a coroutine function (async def without yield)",
            "Yield the events of next_fn(context) instead of returning them, or register a "
            "context transform with stage.input(...) / stage.Input.",
        )
    if inspect.isgeneratorfunction(target):
        raise _fail(
            where,
            handler,
            _WRAP_SHAPE,
            f"{name} is a synchronous generator function",
            "Declare it with async def.",
        )
    if _accepts(target, 2) is False:
        hint = ""
        if _accepts(target, 1):
            hint = (
                "It takes one argument, the shape of an Input or Output handler: register it "
                "with stage.input(...) / stage.output(...) or the .Input / .Output token."
            )
        raise _fail(
            where,
            handler,
            _WRAP_SHAPE,
            f"{name} cannot be called as {name}(context, next_fn)",
            hint,
        )


def _check_transform(where: str, handler: object, shape: str, argument: str) -> None:
    if not callable(handler):
        raise _fail(where, handler, shape, f"got a {type(handler).__name__}, not callable")
    target = _code_target(handler)
    name = describe(handler)
    if inspect.isasyncgenfunction(target) or inspect.isgeneratorfunction(target):
        raise _fail(
            where,
            handler,
            shape,
            f"{name} is a generator function, the shape of a Wrap handler",
            "Register it with stage.wrap(...) or the bare stage / .Wrap token.",
        )
    if _accepts(target, 1) is False:
        raise _fail(where, handler, shape, f"{name} cannot be called as {name}({argument})")


def check_input(where: str, handler: object) -> None:
    """Refuse anything that cannot be an Input handler, naming ``where`` (stage and phase)."""
    _check_transform(where, handler, _INPUT_SHAPE, "context")


def check_output(where: str, handler: object) -> None:
    """Refuse anything that cannot be an Output handler, naming ``where`` (stage and phase)."""
    _check_transform(where, handler, _OUTPUT_SHAPE, "result")
