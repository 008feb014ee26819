"""Test helpers for the LangChain bridge: a scripted chat model, no network."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...testing import ScriptedModel, ScriptedTurn
from ._models import LibraryChatModel

__all__ = ["ScriptedChatModel"]


class ScriptedChatModel(LibraryChatModel):
    """A LangChain chat model that plays a `strands_middleware.testing.ScriptedModel` script.

    Unlike LangChain's own fake chat models it carries tool calls and binds tools, so a
    ``create_agent`` loop runs offline. The script and its recorded requests are shared:
    ``model.script.requests`` shows what the agent sent, as Converse, exactly as on the
    reference agent.

    Example:
        ```python
        model = ScriptedChatModel([tool_turn("add", {"a": 1, "b": 2}), text_turn("3")])
        agent = create_agent(model, tools=[add], middleware=[bridge])
        ```

    Args:
        script: A `ScriptedModel`, or the turns to build one from.
    """

    def __init__(self, script: ScriptedModel | Iterable[ScriptedTurn], **kwargs: Any) -> None:
        played = script if isinstance(script, ScriptedModel) else ScriptedModel(script)
        super().__init__(library_model=played, **kwargs)

    @property
    def script(self) -> ScriptedModel:
        """The script being played."""
        played: ScriptedModel = self.library_model
        return played
