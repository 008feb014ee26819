"""The adapter layer: what a host agent calls at each stage point.

A bridge onto another framework makes one stage point per call (`ModelStagePoint`,
`ToolStagePoint`, `AgentPassPoint`) from the host's request translated to Converse: it builds
the handlers' context, runs the chain around the host's own call, checks the result and reports
what the handlers changed, which the bridge translates back.

A host (the reference agent, a bridge, or your own loop) builds a context with the ``*_context``
helpers and runs the stage with the ``run_*`` runners; the runners enforce the host-side rules of
each stage so a host does not re-implement them. A host whose framework has a tool executor of
its own runs `run_tool_stage` inside it, as the strands bridge does. `InterruptState` gives a
host's interrupts their lifetime, and `process_model_stream` turns a model's Converse chunks
into typed events. `project_input_tokens` is the estimate a host puts on each model call's
context (``projected_input_tokens``), computed as strands-agents computes it.
"""

from ._agent_pass import AgentPassPoint, run_agent_pass
from ._interrupt_state import InterruptState, PendingToolExecution
from ._mixin import MiddlewareHostMixin
from ._model_call import (
    ModelStagePoint,
    invoke_model_terminal,
    model_call_context,
    run_model_call,
)
from ._model_stream import process_model_stream
from ._token_projection import project_input_tokens
from ._tool_call import (
    ToolStagePoint,
    copy_tool_use,
    make_tool_terminal,
    run_tool_call,
    run_tool_stage,
    tool_call_context,
)

__all__ = [
    "AgentPassPoint",
    "InterruptState",
    "MiddlewareHostMixin",
    "ModelStagePoint",
    "PendingToolExecution",
    "ToolStagePoint",
    "copy_tool_use",
    "invoke_model_terminal",
    "make_tool_terminal",
    "model_call_context",
    "process_model_stream",
    "project_input_tokens",
    "run_agent_pass",
    "run_model_call",
    "run_tool_call",
    "run_tool_stage",
    "tool_call_context",
]
