"""CallLimit and UsageBudget on the OpenAI Agents SDK, driven through the kit's harness.

The SDK hands each model and tool call an ``invocation_state`` of its own (it tells them nothing
of their run through its public API), so a count per invocation would restart on every call and
never reach its cap: ``scope="invocation"`` is refused at registration, ``scope="agent"`` counts.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

import pytest

from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware
from strands_middleware.catalog import (
    CallLimit,
    CallLimitExceeded,
    UsageBudget,
    UsageBudgetExceeded,
)
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

from ...conformance.drive import drive

USAGE = {"inputTokens": 10, "outputTokens": 10, "totalTokens": 20}


def echo(text: str) -> str:
    """Echo a text.

    Args:
        text: What to echo.
    """
    return text


def turns() -> ScriptedModel:
    return ScriptedModel([tool_turn("echo", {"text": "1"}), text_turn("never")], usage=USAGE)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            CallLimit(model_calls=1),
            r"CallLimit\(scope='invocation'\) cannot run on OpenAIAgentsMiddleware: the SDK "
            r"tells .* so every call would start a new count .* CallLimit\(scope='agent', \.\.\.\)",
        ),
        (
            UsageBudget(max_total_tokens=5),
            r"UsageBudget\(scope='invocation'\) cannot run on OpenAIAgentsMiddleware: .* the "
            r"tokens and money spent per invocation",
        ),
    ],
)
def test_a_count_per_invocation_is_refused_at_registration(item: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        drive("openai_agents", turns(), [echo], [item])
    bridge = OpenAIAgentsMiddleware()
    with pytest.raises(ValueError, match=message):
        bridge.use(item)
    assert bridge.middleware_registry.handlers(next(iter(item)).phase.stage) == ()


def test_a_call_limit_per_agent_stops_the_second_model_call_of_a_run() -> None:
    driven = drive("openai_agents", turns(), [echo], [CallLimit(model_calls=1, scope="agent")])
    with pytest.raises(CallLimitExceeded, match=r"1 model call already made by this agent"):
        driven("go")
    assert len(driven.script.requests) == 1


def test_a_usage_budget_per_agent_stops_the_run_once_spent() -> None:
    budget = UsageBudget(max_total_tokens=5, scope="agent")
    driven = drive("openai_agents", turns(), [echo], [budget])
    with pytest.raises(UsageBudgetExceeded, match=r"spent 20 total tokens of a budget of 5"):
        driven("go")
    assert len(driven.script.requests) == 1
