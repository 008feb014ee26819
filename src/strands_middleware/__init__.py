"""Typed, composable middleware for AI agent loops.

Register handlers on stage tokens (`MiddlewareStage`) in one of three phases: Input transforms
the context, Wrap surrounds the whole operation as an async generator, Output transforms the
result. A `MiddlewareRegistry` compiles each stage's handlers into one chain and runs it.
"""

from .handlers import (
    MiddlewareHandler,
    MiddlewareInputHandler,
    MiddlewareNext,
    MiddlewareOutputHandler,
)
from .registry import MiddlewareRegistry, MiddlewareSource, missing_result
from .result import InterruptControlEvent, MiddlewareResult
from .stage import (
    Middleware,
    MiddlewareInputPhase,
    MiddlewareOutputPhase,
    MiddlewarePhase,
    MiddlewareStage,
    MiddlewareWrapPhase,
)

__version__ = "0.1.0"

__all__ = [
    "InterruptControlEvent",
    "Middleware",
    "MiddlewareHandler",
    "MiddlewareInputHandler",
    "MiddlewareInputPhase",
    "MiddlewareNext",
    "MiddlewareOutputHandler",
    "MiddlewareOutputPhase",
    "MiddlewarePhase",
    "MiddlewareRegistry",
    "MiddlewareResult",
    "MiddlewareSource",
    "MiddlewareStage",
    "MiddlewareWrapPhase",
    "__version__",
    "missing_result",
]
