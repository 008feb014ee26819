"""The adapter layer: what a host agent calls at each stage point.

A host (the reference agent, the strands bridge, or your own loop) builds a context with the
``*_context`` helpers and runs the stage with the ``run_*`` runners; the runners enforce the
host-side rules of each stage so a host does not re-implement them.
"""

from .agent_pass import ReplacedMessagesError, run_agent_pass
from .mixin import MiddlewareHostMixin
from .model_call import invoke_model_terminal, model_call_context, run_model_call
from .tool_call import error_result, make_tool_terminal, run_tool_call, tool_call_context

__all__ = [
    "MiddlewareHostMixin",
    "ReplacedMessagesError",
    "error_result",
    "invoke_model_terminal",
    "make_tool_terminal",
    "model_call_context",
    "run_agent_pass",
    "run_model_call",
    "run_tool_call",
    "tool_call_context",
]
