"""UsageBudget: what is spent, when the run stops, and what a stop looks like."""

from __future__ import annotations

import pickle
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    ModelStopReason,
    TypedEvent,
    testing,
)
from strands_middleware.agent import AfterInvocationEvent, Agent
from strands_middleware.catalog._cache import Cache
from strands_middleware.catalog._usage_budget import UsageBudget, UsageBudgetExceeded
from strands_middleware.content import Usage
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

from ..conformance.drive import AgentFactory

EACH: Usage = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
"""What every scripted model call here reports."""

ran: list[str] = []


@tool
def echo(text: str) -> str:
    """Echo."""
    ran.append(text)
    return text


@pytest.fixture(autouse=True)
def _reset_ran() -> None:
    ran.clear()


def model(*turns: Any) -> ScriptedModel:
    return ScriptedModel(turns, usage=EACH)


def tool_loop(answers: int) -> ScriptedModel:
    """``answers`` tool-calling turns, then a final text turn."""
    turns: list[Any] = [tool_turn("echo", {"text": str(n)}) for n in range(1, answers + 1)]
    return model(*turns, text_turn("final"))


def model_context(agent: object, state: dict[str, Any]) -> InvokeModelContext:
    return testing.model_context(agent=agent, invocation_state=state)


def reporting(usage: dict[str, Any]) -> Any:
    async def terminal(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        reported: Any = usage  # deliberately not always a well-formed Usage
        yield ModelStopReason(
            "end_turn", {"role": "assistant", "content": []}, reported, {"latencyMs": 0}
        )

    return terminal


# ---- when the run stops --------------------------------------------------------------------


def test_the_run_stops_before_the_model_call_after_the_budget_was_crossed() -> None:
    scripted = tool_loop(3)
    agent = Agent(model=scripted, tools=[echo], middleware=[UsageBudget(max_total_tokens=25)])
    finished: list[object] = []
    agent.add_hook(AfterInvocationEvent, lambda event: finished.append(event.result))
    with pytest.raises(UsageBudgetExceeded) as caught:
        agent("go")
    assert str(caught.value) == (
        "UsageBudget exhausted: this invocation spent 30 total tokens of a budget of 25 "
        "(max_total_tokens); the run stops before the next model call"
    )
    assert len(scripted.requests) == 2
    assert ran == ["1", "2"]  # the crossing call was not cut short: its tools ran
    assert agent.messages[-1]["role"] == "user"
    assert "toolResult" in agent.messages[-1]["content"][0]
    assert finished == [None]
    assert caught.value.spent == {"inputTokens": 20, "outputTokens": 10, "totalTokens": 30}
    assert caught.value.exhausted == {"max_total_tokens": 25}
    assert caught.value.scope == "invocation"


def test_reaching_the_budget_exactly_exhausts_it(make_agent: AgentFactory) -> None:
    scripted = tool_loop(3)
    agent = make_agent(model=scripted, tools=[echo], middleware=[UsageBudget(max_total_tokens=30)])
    with pytest.raises(UsageBudgetExceeded, match="spent 30 total tokens of a budget of 30"):
        agent("go")
    assert len(scripted.requests) == 2


def test_a_budget_reached_by_the_final_answer_ends_the_run_normally(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(
        model=model(text_turn("done")), middleware=[UsageBudget(max_total_tokens=10)]
    )
    assert str(agent("go")) == "done"


def test_with_agent_scope_the_next_invocation_stops_at_its_first_model_call(
    make_agent: AgentFactory,
) -> None:
    budget = UsageBudget(max_output_tokens=10, scope="agent")
    scripted = model(text_turn("one"), text_turn("two"), text_turn("never"))
    agent = make_agent(model=scripted, middleware=[budget])
    agent("1")
    agent("2")
    with pytest.raises(
        UsageBudgetExceeded,
        match=r"this agent spent 10 output tokens of a budget of 10 \(max_output_tokens\)",
    ):
        agent("3")
    assert len(scripted.requests) == 2


def test_invocation_scope_gives_each_invocation_its_own_budget(make_agent: AgentFactory) -> None:
    budget = UsageBudget(max_total_tokens=15)
    agent = make_agent(model=model(text_turn("a"), text_turn("b")), middleware=[budget])
    assert [str(agent("1")), str(agent("2"))] == ["a", "b"]
    assert budget.spent(agent.agent) == EACH


def test_agents_never_share_spending(make_agent: AgentFactory) -> None:
    budget = UsageBudget(max_total_tokens=15, scope="agent")
    for name in ("first", "second"):
        assert str(make_agent(model=model(text_turn(name)), middleware=[budget])("hi")) == name


def test_every_exhausted_budget_is_named_and_only_those(make_agent: AgentFactory) -> None:
    agent = make_agent(
        model=tool_loop(3),
        tools=[echo],
        middleware=[UsageBudget(max_total_tokens=1000, max_input_tokens=20, max_output_tokens=10)],
    )
    with pytest.raises(UsageBudgetExceeded) as caught:
        agent("go")
    assert str(caught.value) == (
        "UsageBudget exhausted: this invocation spent 20 input tokens of a budget of 20 "
        "(max_input_tokens) and 10 output tokens of a budget of 10 (max_output_tokens); the run "
        "stops before the next model call"
    )
    assert caught.value.exhausted == {"max_input_tokens": 20, "max_output_tokens": 10}


# ---- what is counted -----------------------------------------------------------------------


def test_spent_reports_the_current_scope_and_zeros_before_any_call(
    make_agent: AgentFactory,
) -> None:
    budget = UsageBudget(max_total_tokens=1000, scope="agent")
    agent = make_agent(model=model(text_turn("a"), text_turn("b")), middleware=[budget])
    assert budget.spent(agent.agent) == {
        "inputTokens": 0,
        "outputTokens": 0,
        "totalTokens": 0,
    }
    agent("1")
    agent("2")
    assert budget.spent(agent.agent) == {
        "inputTokens": 20,
        "outputTokens": 10,
        "totalTokens": 30,
    }


async def test_a_result_without_total_tokens_counts_input_plus_output() -> None:
    budget = UsageBudget(max_total_tokens=100)
    registry = MiddlewareRegistry()
    registry.use(budget)
    agent = object()
    terminal = reporting({"inputTokens": 7, "outputTokens": 3})
    await registry.run(InvokeModelStage, model_context(agent, {}), terminal)
    assert budget.spent(agent) == {"inputTokens": 7, "outputTokens": 3, "totalTokens": 10}


async def test_malformed_counts_are_read_as_zero() -> None:
    budget = UsageBudget(max_total_tokens=100)
    registry = MiddlewareRegistry()
    registry.use(budget)
    agent = object()
    terminal = reporting({"inputTokens": None, "outputTokens": True, "totalTokens": "9"})
    await registry.run(InvokeModelStage, model_context(agent, {}), terminal)
    assert budget.spent(agent) == {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


def test_a_call_that_failed_before_its_result_adds_nothing(make_agent: AgentFactory) -> None:
    budget = UsageBudget(max_total_tokens=100)
    agent = make_agent(model=model(ConnectionError("throttled")), middleware=[budget])
    with pytest.raises(ConnectionError):
        agent("hi")
    assert budget.spent(agent.agent) == {
        "inputTokens": 0,
        "outputTokens": 0,
        "totalTokens": 0,
    }


def test_a_result_that_arrived_counts_even_if_the_call_failed_afterwards(
    make_agent: AgentFactory,
) -> None:
    async def fails_late(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event
        raise ConnectionError("dropped")

    budget = UsageBudget(max_total_tokens=100)
    agent = make_agent(
        model=model(text_turn("x")), middleware=[budget, InvokeModelStage.wrap(fails_late)]
    )
    with pytest.raises(ConnectionError):
        agent("hi")
    assert budget.spent(agent.agent) == EACH


async def test_only_the_last_result_of_a_call_counts() -> None:
    async def two_results(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield ModelStopReason(
            "end_turn",
            {"role": "assistant", "content": []},
            {"inputTokens": 100, "outputTokens": 100, "totalTokens": 200},
            {"latencyMs": 0},
        )
        async for event in next_fn(context):
            yield event

    budget = UsageBudget(max_total_tokens=1000)
    registry = MiddlewareRegistry()
    registry.use(budget, InvokeModelStage.wrap(two_results))
    agent = object()
    terminal = reporting({"inputTokens": 1, "outputTokens": 1, "totalTokens": 2})
    await registry.run(InvokeModelStage, model_context(agent, {}), terminal)
    assert budget.spent(agent) == {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}


def test_a_cache_registered_before_the_budget_makes_hits_free(make_agent: AgentFactory) -> None:
    cache, budget = Cache(), UsageBudget(max_total_tokens=1000, scope="agent")
    scripted = model(text_turn("Paris."))
    agent = make_agent(model=scripted, middleware=[cache, budget])
    agent("Capital of France?")
    agent.messages.clear()
    agent("Capital of France?")
    assert cache.hits == 1
    assert budget.spent(agent.agent) == EACH


def test_a_cache_registered_after_the_budget_counts_what_hits_replay(
    make_agent: AgentFactory,
) -> None:
    cache, budget = Cache(), UsageBudget(max_total_tokens=1000, scope="agent")
    agent = make_agent(model=model(text_turn("Paris.")), middleware=[budget, cache])
    agent("Capital of France?")
    agent.messages.clear()
    agent("Capital of France?")
    assert cache.hits == 1
    assert budget.spent(agent.agent) == {
        "inputTokens": 20,
        "outputTokens": 10,
        "totalTokens": 30,
    }


# ---- configuration -------------------------------------------------------------------------


def test_usage_budget_exceeded_pickles() -> None:
    error = UsageBudgetExceeded(EACH, {"max_total_tokens": 10}, "agent")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.spent, copy.exhausted, copy.scope, str(copy)) == (
        EACH,
        {"max_total_tokens": 10},
        "agent",
        str(error),
    )


def test_it_is_one_wrap_middleware_on_the_model_stage() -> None:
    [middleware] = list(UsageBudget(max_total_tokens=1))
    assert middleware.phase is InvokeModelStage.Wrap


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, r"UsageBudget needs at least one of max_total_tokens=\.\.\., max_input_tokens="),
        ({"max_total_tokens": 0}, r"UsageBudget\(max_total_tokens=\.\.\.\) must be a whole number"),
        ({"max_input_tokens": -5}, r"UsageBudget\(max_input_tokens=\.\.\.\) must be a whole"),
        ({"max_output_tokens": True}, r"max_output_tokens=\.\.\.\) must be a whole number of"),
        ({"max_total_tokens": 2.5}, r"max_total_tokens=\.\.\.\) must be a whole number of tokens"),
        (
            {"max_total_tokens": 1, "scope": "forever"},
            r"UsageBudget\(scope=\.\.\.\) must be 'invocation' or 'agent', got 'forever'",
        ),
    ],
)
def test_bad_configuration_is_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        UsageBudget(**kwargs)


# ---- money ---------------------------------------------------------------------------------

BIG: Usage = {"inputTokens": 1000, "outputTokens": 1000, "totalTokens": 2000}
"""At claude-sonnet-4's list price ($3 in, $15 out per million): $0.018 a call."""


class Sonnet(ScriptedModel):
    def get_config(self) -> dict[str, Any]:
        return {"model_id": "us.anthropic.claude-sonnet-4-20250514-v1:0"}


def test_a_money_budget_prices_each_call_by_its_model_and_stops_the_run_past_it() -> None:
    scripted = Sonnet(
        [tool_turn("echo", {"text": str(n)}) for n in (1, 2, 3)] + [text_turn("final")],
        usage=BIG,
    )
    budget = UsageBudget(max_cost=0.03)
    agent = Agent(model=scripted, tools=[echo], middleware=[budget])
    with pytest.raises(UsageBudgetExceeded) as caught:
        agent("go")
    assert len(scripted.requests) == 2  # $0.036 spent after two calls
    assert caught.value.cost == pytest.approx(0.036)
    assert caught.value.exhausted == {"max_cost": 0.03}
    assert "$0.0360 of a budget of $0.0300 (max_cost)" in str(caught.value)
    assert budget.spent_cost(agent) == pytest.approx(0.036)
    assert budget.price(scripted, BIG) == pytest.approx(0.018)


def test_a_model_priced_nowhere_is_refused_before_it_is_called_and_prices_can_be_given() -> None:
    scripted = ScriptedModel([text_turn("hi")], usage=BIG)  # no model_id: no price
    agent = Agent(model=scripted, middleware=[UsageBudget(max_cost=1.0)])
    with pytest.raises(ValueError, match=r"cannot price ScriptedModel .* give its price with"):
        agent("hi")
    assert scripted.requests == []

    class Tuned(ScriptedModel):
        def get_config(self) -> dict[str, Any]:
            return {"model_id": "org/my-finetune-v2"}

    from strands_middleware.catalog import ModelFacts

    budget = UsageBudget(max_cost=1.0, prices={"my-finetune": ModelFacts(32_000, 10.0, 20.0)})
    tuned = Tuned([text_turn("hi")], usage=BIG)
    Agent(model=tuned, middleware=[budget])("hi")
    assert budget.price(tuned, BIG) == pytest.approx(0.03)


async def test_a_shared_money_budget_counts_in_the_store() -> None:
    from strands_middleware.stores import InMemoryStore

    store = InMemoryStore()
    first = UsageBudget(max_cost=0.015, store=store, key="team")
    second = UsageBudget(max_cost=0.015, store=store, key="team")
    await Agent(model=Sonnet([text_turn("a")], usage=BIG), middleware=[first]).invoke_async("a")
    with pytest.raises(UsageBudgetExceeded, match=r"the budget 'team' spent \$0\.0180"):
        await Agent(
            model=Sonnet([text_turn("b"), text_turn("c")], usage=BIG), middleware=[second]
        ).invoke_async("b")
    assert (await store.counter_read("team", ["cost"]))["cost"] == 18_000  # micro-dollars


def test_tokens_and_money_can_be_budgeted_together_and_the_exception_pickles() -> None:
    budget = UsageBudget(max_total_tokens=100_000, max_cost=0.01, scope="agent")
    agent = Agent(model=Sonnet([text_turn("a"), text_turn("b")], usage=BIG), middleware=[budget])
    agent("a")
    with pytest.raises(UsageBudgetExceeded) as caught:
        agent("b")
    again = pickle.loads(pickle.dumps(caught.value))
    assert (again.cost, again.exhausted) == (caught.value.cost, {"max_cost": 0.01})


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"max_cost": 0}, ValueError, r"max_cost=\.\.\.\) must be a number of US dollars > 0"),
        ({"max_cost": True}, ValueError, r"max_cost=\.\.\.\) must be a number of US dollars"),
        ({"max_cost": 1, "prices": {"x": 1}}, TypeError, r"prices=\.\.\.\) takes a mapping"),
        ({"max_total_tokens": 5, "prices": {}}, ValueError, r"prices calls for max_cost"),
    ],
)
def test_bad_money_configuration_is_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        UsageBudget(**kwargs)
