"""Stage contexts for unit-testing your own middleware without an agent.

`model_context` and `tool_context` build an `InvokeModelContext` and an `ExecuteToolContext`
the way a host builds them (through `strands_middleware.host`, with the same defensive copies),
filling in everything a test does not care about. Run a handler against one with
`run_handler` (a `Middleware` built by ``stage.input(fn)`` is not itself callable), or call the
plain function before you decorate it.

Example:
    ```python
    from strands_middleware import ExecuteToolContext, ExecuteToolStage
    from strands_middleware.testing import run_handler, tool_context


    @ExecuteToolStage.input
    def clamp(context: ExecuteToolContext) -> ExecuteToolContext:
        return context.replace(tool_use={**context.tool_use, "input": {"limit": 10}})


    def test_clamp_caps_the_limit() -> None:
        run = run_handler(clamp, tool_context("search", {"limit": 500}))
        assert run.calls[0].tool_use["input"] == {"limit": 10}


    test_clamp_caps_the_limit()
    ```
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..content import Messages, SystemPrompt, ToolChoice, ToolSpec, ToolUse
from ..host._model_call import model_call_context
from ..host._tool_call import tool_call_context
from ..interrupts import Interrupt, execute_tool_interrupt_id
from ..models import Model
from ..stages._execute_tool import ExecuteToolContext
from ..stages._invoke_model import InvokeModelContext
from ..tools import AgentTool
from ._scripted_model import ScriptedModel

__all__ = ["TEST_TOOL_USE_ID", "model_context", "tool_context"]

TEST_TOOL_USE_ID = "tooluse_test"
"""The ``toolUseId`` `tool_context` gives a call when the test names none.

Fixed rather than random so interrupt ids (which embed it) are the same in every run.
"""


def model_context(
    *,
    messages: Messages | None = None,
    system_prompt: SystemPrompt = None,
    tool_specs: list[ToolSpec] | None = None,
    tool_choice: ToolChoice | None = None,
    invocation_state: dict[str, Any] | None = None,
    model: Model | None = None,
    agent: Any = None,
) -> InvokeModelContext:
    """An `InvokeModelContext` for calling InvokeModelStage handlers in a test.

    Every argument is optional. As on a host, ``messages``, ``system_prompt``, ``tool_specs``
    and ``tool_choice`` are deep-copied into the context, while ``invocation_state`` and
    ``model`` are the very objects passed, so a test can assert on what a handler wrote to them.

    Args:
        messages: The conversation; empty by default.
        system_prompt: A string, a list of system content blocks, or None (the default).
        tool_specs: The tools offered to the model; none by default.
        tool_choice: How the model should pick a tool; None (the model's default) by default.
        invocation_state: Per-invocation state; a new empty dict by default.
        model: The model the terminal would stream; by default a `ScriptedModel` with no turns,
            which fails the test with `ScriptExhaustedError` if anything calls it. Pass
            ``scripted(text_turn("..."))`` when the code under test should reach a model.
        agent: What handlers see as ``context.agent``; None by default.

    Example:
        ```python
        context = model_context(messages=[{"role": "user", "content": [{"text": "hi"}]}])
        run = run_handler(concise, context)               # concise: an Input handler
        assert run.calls[0].system_prompt == "Answer in one sentence."
        ```
    """
    return model_call_context(
        agent,
        messages=messages if messages is not None else [],
        system_prompt=system_prompt,
        tool_specs=tool_specs if tool_specs is not None else [],
        tool_choice=tool_choice,
        invocation_state=invocation_state if invocation_state is not None else {},
        model=model if model is not None else ScriptedModel([]),
    )


def tool_context(
    name: str | None = None,
    input: Mapping[str, Any] | None = None,
    *,
    tool_use_id: str = TEST_TOOL_USE_ID,
    tool: AgentTool | None = None,
    invocation_state: dict[str, Any] | None = None,
    cancel_signal: threading.Event | None = None,
    answers: Mapping[str, Any] | None = None,
    agent: Any = None,
) -> ExecuteToolContext:
    """An `ExecuteToolContext` for calling ExecuteToolStage handlers in a test.

    ``context.interrupt(name)`` behaves as on a host: it raises `InterruptException` unless
    ``answers`` holds a human's answer for ``name``, in which case it returns that answer as a
    resumed run would (wrapped in `MiddlewareInterruptResult`).

    Args:
        name: The tool the model asked for; by default ``tool.tool_name`` when a ``tool`` is
            given, else ``"tool"``.
        input: The call's arguments (copied); empty by default.
        tool_use_id: The call's ``toolUseId``; `TEST_TOOL_USE_ID` by default.
        tool: The tool the call would run; None (an unknown tool) by default.
        invocation_state: Per-invocation state; a new empty dict by default. The context holds
            the very dict passed.
        cancel_signal: The run's cancel signal; a new, unset `threading.Event` by default. Set
            it to test how a handler reacts to cancellation.
        answers: Human answers by interrupt name, as if the run had paused and been resumed,
            e.g. ``{"approve": "yes"}``.
        agent: What handlers see as ``context.agent``; None by default.

    Raises:
        ValueError: An answer is None. None means "not answered" (a resume may not send it);
            leave the name out of ``answers`` to make ``interrupt()`` raise.

    Example:
        ```python
        def gate(context: ExecuteToolContext) -> ExecuteToolContext:
            context.interrupt("approve", reason=context.tool_use["input"])
            return context

        with pytest.raises(InterruptException):
            gate(tool_context("delete", {"path": "/tmp"}))
        gate(tool_context("delete", {"path": "/tmp"}, answers={"approve": "yes"}))  # passes
        ```
    """
    tool_name = name if name is not None else (tool.tool_name if tool is not None else "tool")
    tool_use = ToolUse(
        toolUseId=tool_use_id, name=tool_name, input=dict(input) if input is not None else {}
    )
    return tool_call_context(
        agent,
        tool=tool,
        tool_use=tool_use,
        invocation_state=invocation_state if invocation_state is not None else {},
        cancel_signal=cancel_signal if cancel_signal is not None else threading.Event(),
        interrupts=_answered_interrupts(tool_use_id, answers or {}),
    )


def _answered_interrupts(tool_use_id: str, answers: Mapping[str, Any]) -> Mapping[str, Interrupt]:
    """The interrupt lookup a resumed host would hold for ``answers``, keyed by interrupt id."""
    interrupts: dict[str, Interrupt] = {}
    for name, response in answers.items():
        if response is None:
            raise ValueError(
                f"answers[{name!r}] is None, which means 'not answered'; leave {name!r} out of "
                "answers to make interrupt() raise, or give the answer a human would send"
            )
        interrupt_id = execute_tool_interrupt_id(tool_use_id, name)
        interrupts[interrupt_id] = Interrupt(id=interrupt_id, name=name, response=response)
    # Read-only, as on a host: interrupt() only ever reads the lookup.
    return MappingProxyType(interrupts)
