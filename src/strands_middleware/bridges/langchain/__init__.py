"""Run this library's middleware inside a LangChain v1 agent (``langchain.agents.create_agent``).

Install with ``pip install "strands-middleware[langchain]"``, then:

```python
from langchain.agents import create_agent
from strands_middleware.bridges.langchain import LangChainBridge, interrupts_of, resume_command

bridge = LangChainBridge(timing, ToolApproval(tools={"delete_file"}))
# Guarded: a new prompt on a paused thread is refused, the thread left as it was.
agent = create_agent(model, tools=[delete_file], middleware=[bridge],
                     checkpointer=bridge.guard_paused_threads(saver))
await agent.ainvoke({"messages": [("user", "Clean up")]}, config)
paused = await agent.aget_state(config)  # the thread as it is: a stale resume is refused
answers = [{"interruptResponse": {"interruptId": i.id, "response": "approve"}}
           for i in interrupts_of(paused)]
done = await agent.ainvoke(resume_command(paused, answers, middleware=bridge), config)
```

Nothing else in the package imports ``langchain`` or ``langgraph``.
"""

from __future__ import annotations

try:
    import langchain.agents.middleware  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "strands_middleware.bridges.langchain needs LangChain v1 (langchain.agents.middleware): "
        'pip install "strands-middleware[langchain]"'
    ) from error

from ._bridge import LangChainBridge, SyncInvokeError, UnsupportedStageError
from ._interrupts import interrupts_of, resume_command
from ._models import LibraryChatModel
from ._streaming import RelayChatModel
from ._tools import LangChainTool, LibraryTool

__all__ = [
    "LangChainBridge",
    "LangChainTool",
    "LibraryChatModel",
    "LibraryTool",
    "RelayChatModel",
    "SyncInvokeError",
    "UnsupportedStageError",
    "interrupts_of",
    "resume_command",
]
