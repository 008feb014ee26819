"""Typed, composable middleware for AI agent loops.

Register handlers on stage tokens (`MiddlewareStage`) in one of three phases: Input transforms
the context, Wrap surrounds the whole operation as an async generator, Output transforms the
result. A `MiddlewareRegistry` compiles each stage's handlers into one chain and runs it.

This front door holds the engine and the built-in stages. The rest lives in modules named for
what they hold: Converse shapes in `strands_middleware.content`, stream events in
`strands_middleware.events`, errors in `strands_middleware.exceptions`, the adapter layer for
hosts in `strands_middleware.host`, ready-made middleware in `strands_middleware.catalog`.
"""

from .engine._handlers import (
    MiddlewareHandler,
    MiddlewareInputHandler,
    MiddlewareNext,
    MiddlewareOutputHandler,
)
from .engine._registry import MiddlewareRegistry, MiddlewareSource
from .engine._result import InterruptControlEvent, MiddlewareResult, halts_stage
from .engine._stage import (
    Middleware,
    MiddlewareInputPhase,
    MiddlewareOutputPhase,
    MiddlewarePhase,
    MiddlewareStage,
    MiddlewareWrapPhase,
)
from .events import ModelStopReason, ToolResultEvent, TypedEvent
from .exceptions import CONTROL_FLOW_EXCEPTIONS, InterruptException, MissingResultError
from .interrupts import Interrupt, MiddlewareInterruptResult
from .stages import (
    ExecuteToolContext,
    ExecuteToolResult,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelResult,
    InvokeModelStage,
)

__version__ = "0.1.0"

__all__ = [
    "CONTROL_FLOW_EXCEPTIONS",
    "ExecuteToolContext",
    "ExecuteToolResult",
    "ExecuteToolStage",
    "Interrupt",
    "InterruptControlEvent",
    "InterruptException",
    "InvokeModelContext",
    "InvokeModelResult",
    "InvokeModelStage",
    "Middleware",
    "MiddlewareHandler",
    "MiddlewareInputHandler",
    "MiddlewareInputPhase",
    "MiddlewareInterruptResult",
    "MiddlewareNext",
    "MiddlewareOutputHandler",
    "MiddlewareOutputPhase",
    "MiddlewarePhase",
    "MiddlewareRegistry",
    "MiddlewareResult",
    "MiddlewareSource",
    "MiddlewareStage",
    "MiddlewareWrapPhase",
    "MissingResultError",
    "ModelStopReason",
    "ToolResultEvent",
    "TypedEvent",
    "__version__",
    "halts_stage",
]
