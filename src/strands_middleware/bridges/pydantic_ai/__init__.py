"""Run this library's middleware on a pydantic-ai ``Agent``.

Install with ``pip install "strands-middleware[pydantic-ai]"`` (Python 3.11 or newer, as
pydantic-ai itself), then pass the middleware to the agent as one of its capabilities:

```python
from pydantic_ai import Agent
from strands_middleware.bridges.pydantic_ai import PydanticAIMiddleware

agent = Agent(model, tools=[delete_file],
              capabilities=[PydanticAIMiddleware(timing, ToolApproval())])
```

A handler's ``interrupt()`` pauses the run through pydantic-ai's approval deferral: run the agent
with ``output_type=[str, DeferredToolRequests]``, read the interrupts with `interrupts_of` and
resume with `resume_results` (pass the capability as ``middleware=``, so an answer the item
that asked does not accept is refused there, before the run resumes). Nothing else in the
package imports ``pydantic_ai``.
"""

from __future__ import annotations

try:
    # Fail here, with the fix, rather than deep inside.
    import pydantic_ai.capabilities  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "strands_middleware.bridges.pydantic_ai needs pydantic-ai-slim 2.62.0 or newer: "
        'pip install "strands-middleware[pydantic-ai]"'
    ) from error

from ._capability import PydanticAIMiddleware, UnsupportedStageError
from ._interrupts import interrupts_of, resume_results
from ._tools import PydanticAITool

__all__ = [
    "PydanticAIMiddleware",
    "PydanticAITool",
    "UnsupportedStageError",
    "interrupts_of",
    "resume_results",
]
