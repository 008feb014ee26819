"""Run this library's middleware on the OpenAI Agents SDK (``openai-agents``).

Install with ``pip install "strands-middleware[openai-agents]"``, then wrap the agent and pass
the run config the middleware gives:

```python
from agents import Agent, Runner
from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware

middleware = OpenAIAgentsMiddleware(timing, ToolApproval())
agent = middleware.wrap(Agent("assistant", model=model, tools=[delete_file]))
result = await Runner.run(agent, "Clean up", run_config=middleware.run_config())
```

A handler's ``interrupt()`` pauses the run through the SDK's approvals: read the interrupts
with ``middleware.interrupts(result)``, answer them with ``middleware.resume(state, answers)``
and run the state again. Nothing else in the package imports ``agents``.
"""

from __future__ import annotations

try:
    # Fail here, with the fix, rather than deep inside.
    import agents  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "strands_middleware.bridges.openai_agents needs openai-agents 0.19.0 or newer: "
        'pip install "strands-middleware[openai-agents]"'
    ) from error

from ._middleware import OpenAIAgentsMiddleware, UnsupportedStageError

__all__ = ["OpenAIAgentsMiddleware", "UnsupportedStageError"]
