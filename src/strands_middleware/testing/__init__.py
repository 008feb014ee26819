"""Helpers for testing middleware and agents without a network.

`ScriptedModel` (with `scripted`, `text_turn` and `tool_turn`) is a model that plays a script and
records every request; `model_context` and `tool_context` build stage contexts, and
`run_handler` runs one handler (Input, Wrap or Output) against a context and a scripted inner
stream, returning what it yielded, what the inner stage was given and the result.

Example:
    ```python
    from strands_middleware import InvokeModelContext, InvokeModelStage
    from strands_middleware.testing import model_context, run_handler, text_turn


    @InvokeModelStage.input
    def concise(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(system_prompt="Answer in one sentence.")


    def test_concise_sets_the_system_prompt() -> None:
        run = run_handler(concise, model_context(), inner=text_turn("Paris."))
        assert run.calls[0].system_prompt == "Answer in one sentence."
        assert run.result is not None and run.result.message["content"] == [{"text": "Paris."}]


    test_concise_sets_the_system_prompt()
    ```
"""

from ._contexts import TEST_TOOL_USE_ID, model_context, tool_context
from ._run_handler import HandlerRun, run_handler, run_handler_async
from ._scripted_model import (
    ModelRequest,
    ScriptedModel,
    ScriptedTurn,
    ScriptExhaustedError,
    scripted,
    text_turn,
    tool_turn,
)

__all__ = [
    "TEST_TOOL_USE_ID",
    "HandlerRun",
    "ModelRequest",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedTurn",
    "model_context",
    "run_handler",
    "run_handler_async",
    "scripted",
    "text_turn",
    "tool_context",
    "tool_turn",
]
