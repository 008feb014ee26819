"""Mistakes on the testing helpers' context builders a type checker must reject (type-checked,
never run).

As in `engine_negative.py`, each case carries both checkers' ignore comments, and an unneeded
ignore is itself an error, so a case that stops failing fails the check.
"""

from __future__ import annotations

from strands_middleware import InvokeModelContext, InvokeModelStage
from strands_middleware.testing import model_context, run_handler, tool_context

# model_context() takes keywords only.
model_context([{"role": "user", "content": [{"text": "hi"}]}])  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]

# Converse shapes are checked.
model_context(messages="hi")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
model_context(system_prompt=3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
tool_context("add", [1, 2])  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

# A tool must have the tool shape.
tool_context(tool="add")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

# Only the name and the input are positional.
tool_context("add", {}, "t1")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]

# run_handler takes one Middleware and a context of its stage.


@InvokeModelStage.input
def _concise(context: InvokeModelContext) -> InvokeModelContext:
    return context


run_handler(_concise, tool_context("add"))  # type: ignore[misc]  # pyright: ignore[reportArgumentType]


def plain(context: InvokeModelContext) -> InvokeModelContext:
    return context


run_handler(plain, model_context())  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
