"""The built-in stages: a model call, a tool call, and (provisionally) a whole agent pass."""

from ._execute_tool import ExecuteToolContext, ExecuteToolResult, ExecuteToolStage
from ._invoke_model import (
    InvokeModelContext,
    InvokeModelResult,
    InvokeModelStage,
    split_system_prompt,
)

__all__ = [
    "ExecuteToolContext",
    "ExecuteToolResult",
    "ExecuteToolStage",
    "InvokeModelContext",
    "InvokeModelResult",
    "InvokeModelStage",
    "split_system_prompt",
]
