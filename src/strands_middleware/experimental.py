"""Provisional API: usable, tested, but free to change in a minor release.

`AgentStreamStage` wraps a whole pass of the agent loop. Its input contract is not settled:
``messages`` is appended to history before the chain runs, so replacing it cannot take effect
(see `AgentStreamContext`).
"""

from .stages.agent_stream import (
    AgentStreamChanges,
    AgentStreamContext,
    AgentStreamResult,
    AgentStreamStage,
)

__all__ = ["AgentStreamChanges", "AgentStreamContext", "AgentStreamResult", "AgentStreamStage"]
