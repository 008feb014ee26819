"""The quickstart's middleware, unchanged, on a real ``strands.Agent``.

Needs the strands extra (``pip install "strands-middleware[strands]"``). The model is the
quickstart's script in a ``ScriptedStrandsModel`` (a ``strands.models.Model``), so this runs
with no network; the strands loop does the model calls, tool calls and hooks, and the bridge
runs this library's middleware at its stage points.

Run: ``python examples/strands_quickstart.py``
"""

from __future__ import annotations

from typing import Any

import strands

from quickstart import audit, concise, label, timing
from strands_middleware.bridges.strands import StrandsBridge
from strands_middleware.bridges.strands.testing import ScriptedStrandsModel
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


# strands' own decorator, so the strands loop runs the tool (its type is only partly annotated).
add_tool: Any = strands.tool(add)  # pyright: ignore[reportUnknownMemberType]


def main() -> None:
    script = ScriptedModel(
        [tool_turn("add", {"a": 2, "b": 40}, tool_use_id="t1"), text_turn("2 + 40 is 42.")]
    )
    agent = strands.Agent(
        model=ScriptedStrandsModel(script), tools=[add_tool], callback_handler=None
    )
    StrandsBridge.of(agent).use(concise, timing, audit)
    result = agent("What is 2 + 40?")
    print(f"{label('agent result')} stop_reason={result.stop_reason} answer={str(result).strip()}")
    print(f"{label('model request')} system prompt: {script.requests[-1].system_prompt!r}")


if __name__ == "__main__":
    main()
