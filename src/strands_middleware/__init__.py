"""Typed, composable middleware for AI agent loops.

Register handlers on stage tokens (`MiddlewareStage`) in one of three phases: Input transforms
the context, Wrap surrounds the whole operation as an async generator, Output transforms the
result. A `MiddlewareRegistry` compiles each stage's handlers into one chain and runs it.
"""

from .content import (
    ContentBlock,
    Message,
    Messages,
    Metrics,
    StopReason,
    SystemContentBlock,
    SystemPrompt,
    ToolChoice,
    ToolResult,
    ToolSpec,
    ToolUse,
    Usage,
)
from .events import (
    EventLoopStopEvent,
    ModelMessageEvent,
    ModelStopReason,
    ModelStreamEvent,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolInterruptEvent,
    ToolResultEvent,
    ToolStreamEvent,
    ToolUseDeltaEvent,
    TypedEvent,
)
from .handlers import (
    MiddlewareHandler,
    MiddlewareInputHandler,
    MiddlewareNext,
    MiddlewareOutputHandler,
)
from .interrupts import (
    Interrupt,
    InterruptException,
    InterruptState,
    MiddlewareInterruptResult,
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
from .stages import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    split_system_prompt,
)

__version__ = "0.1.0"

__all__ = [
    "ContentBlock",
    "EventLoopStopEvent",
    "ExecuteToolContext",
    "ExecuteToolStage",
    "Interrupt",
    "InterruptControlEvent",
    "InterruptException",
    "InterruptState",
    "InvokeModelContext",
    "InvokeModelStage",
    "Message",
    "Messages",
    "Metrics",
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
    "ModelMessageEvent",
    "ModelStopReason",
    "ModelStreamEvent",
    "ReasoningDeltaEvent",
    "StopReason",
    "SystemContentBlock",
    "SystemPrompt",
    "TextDeltaEvent",
    "ToolChoice",
    "ToolInterruptEvent",
    "ToolResult",
    "ToolResultEvent",
    "ToolSpec",
    "ToolStreamEvent",
    "ToolUse",
    "ToolUseDeltaEvent",
    "TypedEvent",
    "Usage",
    "__version__",
    "missing_result",
    "split_system_prompt",
]
