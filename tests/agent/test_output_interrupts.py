"""An interrupt raised by an Output handler, after the tool ran: refused, the result kept."""

from __future__ import annotations

import logging

import pytest

from strands_middleware import (
    ExecuteToolStage,
    InterruptException,
    MiddlewareResult,
    ToolResultEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.catalog import Redact
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

ran: list[str] = []


@tool
def lookup(user: str) -> str:
    """Look a user up."""
    ran.append(user)
    return f"{user}: jane@example.com"


def review(result: MiddlewareResult[ToolResultEvent]) -> MiddlewareResult[ToolResultEvent]:
    raise InterruptException(Interrupt(id="review-1", name="review-result"))


def test_the_tool_result_is_kept_and_the_interrupt_refused_naming_the_handler(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran.clear()
    model = ScriptedModel(
        [tool_turn("lookup", {"user": "jane"}, tool_use_id="t1"), text_turn("ok")]
    )
    # Redact registered first runs last among Output handlers: it still masks the kept result.
    agent = Agent(
        model=model,
        tools=[lookup],
        middleware=[Redact(model_input=False), ExecuteToolStage.output(review)],
    )
    with caplog.at_level(logging.ERROR, logger="strands_middleware"):
        result = agent("who is jane?")

    # The run did not pause (a resume would have run the tool again) and the tool ran once.
    assert result.stop_reason == "end_turn"
    assert not agent.interrupt_state.activated
    assert ran == ["jane"]
    # The model read the tool's own result, masked by the other Output handler.
    [block] = model.requests[1].messages[-1]["content"]
    assert block["toolResult"]["status"] == "success"
    assert block["toolResult"]["content"] == [{"text": "jane: [REDACTED:email]"}]
    # And the refusal names the handler and the interrupt, and says what to do instead.
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    message = record.getMessage()
    assert message.startswith(
        "Output handler review (executeTool.Output) raised interrupt 'review-result'"
    )
    assert "the interrupt is refused and the result is kept" in message
    assert "in a Wrap handler before next_fn" in message
