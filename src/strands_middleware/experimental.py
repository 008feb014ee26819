"""Provisional API: usable, tested, but free to change in a minor release.

`AgentStreamStage` wraps a whole pass of the agent loop. Its input contract is not settled:
``messages`` is appended to history by the stage's terminal (strands-agents 1.62's order), and
replacing the list is refused (see `AgentStreamContext`). Output handlers receive
`AgentStreamResult`.
"""

from .stages._agent_stream import (
    AgentStreamChanges,
    AgentStreamContext,
    AgentStreamResult,
    AgentStreamStage,
)

__all__ = ["AgentStreamChanges", "AgentStreamContext", "AgentStreamResult", "AgentStreamStage"]
