"""The built-in stages: a model call, a tool call, and (provisionally) a whole agent pass."""

from ._execute_tool import ExecuteToolContext, ExecuteToolStage
from ._invoke_model import InvokeModelContext, InvokeModelStage, split_system_prompt

__all__ = [
    "ExecuteToolContext",
    "ExecuteToolStage",
    "InvokeModelContext",
    "InvokeModelStage",
    "split_system_prompt",
]
