"""Test helpers for the strands bridge: a scripted ``strands.models.Model``, no network."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable
from typing import Any, TypeVar

from strands.models import Model

from ...testing import ScriptedModel, ScriptedTurn

__all__ = ["ScriptedStrandsModel"]

T = TypeVar("T")


class ScriptedStrandsModel(Model):
    """A strands model that streams a `strands_middleware.testing.ScriptedModel` script.

    The script and its recorded requests are shared: ``model.script.requests`` shows what the
    strands loop sent, exactly as it does for the reference agent.

    Example:
        ```python
        model = ScriptedStrandsModel([text_turn("hello")])
        agent = strands.Agent(model=model, callback_handler=None)
        ```

    Args:
        script: A `ScriptedModel`, or the turns to build one from.
    """

    def __init__(self, script: ScriptedModel | Iterable[ScriptedTurn]) -> None:
        self.script = script if isinstance(script, ScriptedModel) else ScriptedModel(script)

    def update_config(self, **model_config: Any) -> None:
        """Nothing to configure."""

    def get_config(self) -> Any:
        """A fixed model id, for spans and logs."""
        return {"model_id": "scripted"}

    async def structured_output(
        self, output_model: type[T], prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """Structured output is not scripted; asking for it is a test error."""
        raise AssertionError("ScriptedStrandsModel does not script structured output")
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
        """Play the next scripted turn as Converse chunks."""
        async for chunk in self.script.stream(
            messages,
            tool_specs,
            system_prompt,
            tool_choice=tool_choice,
            system_prompt_content=system_prompt_content,
        ):
            yield chunk
