"""The engine: stage tokens, phases, handler types, results and the registry that runs them.

It knows nothing of models, tools or agents, so a framework can define stages of its own on it.
Everything here is also exported from the package root.
"""

from ._handlers import (
    MiddlewareHandler,
    MiddlewareInputHandler,
    MiddlewareNext,
    MiddlewareOutputHandler,
)
from ._registry import MiddlewareRegistry, MiddlewareSource
from ._result import InterruptControlEvent, MiddlewareResult, halts_stage
from ._stage import (
    Middleware,
    MiddlewareInputPhase,
    MiddlewareOutputPhase,
    MiddlewarePhase,
    MiddlewareStage,
    MiddlewareWrapPhase,
)

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
    "halts_stage",
]
