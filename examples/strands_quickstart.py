"""The quickstart's middleware, unchanged, on a real ``strands.Agent``.

Needs the strands extra (``pip install "strands-middleware[strands]"``). The model is the
quickstart's script wrapped in a ``strands.models.Model``, so this runs with no network; the
strands loop does the model calls, tool calls and hooks, and the bridge runs this library's
middleware at its stage points.

Run: ``python examples/strands_quickstart.py``
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, TypeVar

import strands
from strands.models import Model

from quickstart import audit, concise, timing
from strands_middleware.adapters.strands import StrandsBridge
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

T = TypeVar("T")


class ScriptedStrandsModel(Model):
    """A strands model that streams a `ScriptedModel` script."""

    def __init__(self, script: ScriptedModel) -> None:
        self.script = script

    def update_config(self, **model_config: Any) -> None:
        return None

    def get_config(self) -> Any:
        return {"model_id": "scripted"}

    async def structured_output(
        self, output_model: type[T], prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        raise RuntimeError("this example does not use structured output")
        yield {}

    async def stream(
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        *,
        tool_choice: Any = None,
        system_prompt_content: Any = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        async for chunk in self.script.stream(
            messages,
            tool_specs,
            system_prompt,
            tool_choice=tool_choice,
            system_prompt_content=system_prompt_content,
        ):
            yield chunk


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
    print(f"[agent]  stop_reason={result.stop_reason} answer={str(result).strip()}")
    print(f"[model]  system prompt it received: {script.requests[-1].system_prompt!r}")


if __name__ == "__main__":
    main()
