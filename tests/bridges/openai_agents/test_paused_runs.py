"""A paused SDK run is a ``RunState`` the caller holds: what the bridge refuses around it.

A new prompt sent with the paused run's history, and a state resumed a second time, are
refused before the model is asked or a tool runs; the paused state stays answerable.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from agents import Agent, ModelProvider, RunConfig, RunState
from agents.exceptions import UserError

from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware
from strands_middleware.bridges.openai_agents.testing import ScriptedOpenAIModel
from strands_middleware.exceptions import InterruptResponseFormatError, InterruptResumeError
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

from .test_bridge import delete_file, deleted, gate, paused_agent, run


@pytest.fixture(autouse=True)
def _clean() -> None:
    deleted.clear()


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_new_prompt_with_the_paused_history_is_refused_before_the_model(
    streamed: bool,
) -> None:
    asked: list[Any] = []
    turns = [tool_turn("delete_file", {"path": "/a"}, "t1"), text_turn("Done.")]
    script = ScriptedModel([*turns, text_turn("Anything else?")])
    middleware = OpenAIAgentsMiddleware(gate(asked))
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script), tools=[delete_file]))
    result = await run(agent, "Delete /a", streamed=streamed)
    [interrupt] = middleware.interrupts(result)
    state = result.to_state()
    before = state.to_json()
    fresh = [*result.to_input_list(), {"role": "user", "content": "Never mind"}]
    with pytest.raises(InterruptResponseFormatError, match=r"paused on 1 interrupt\(s\)") as err:
        await run(agent, fresh, streamed=streamed)
    assert err.value.interrupt_ids == (interrupt.id,)
    assert interrupt.id in str(err.value) and "middleware.resume(state, answers)" in str(err.value)
    # The model was not asked, the tool did not run, the paused state is as it was.
    assert (len(script.requests), deleted, asked) == (1, [], [])
    assert state.to_json() == before
    middleware.resume(state, {interrupt.id: "yes"})
    done = await run(agent, state, streamed=streamed)
    assert (done.final_output, deleted, asked) == ("Done.", ["/a"], ["yes"])
    # Once answered, the history (with the call's result) goes on as any other.
    again = await run(
        agent, [*done.to_input_list(), {"role": "user", "content": "Thanks"}], streamed=streamed
    )
    assert again.final_output == "Anything else?"


class _Provider(ModelProvider):
    def __init__(self, model: ScriptedOpenAIModel) -> None:
        self.model = model

    def get_model(self, model_name: str | None) -> Any:
        return self.model


async def test_a_model_resolved_by_name_refuses_the_paused_history_too() -> None:
    script = ScriptedModel([tool_turn("delete_file", {"path": "/a"}, "t1"), text_turn("Done.")])
    middleware = OpenAIAgentsMiddleware(gate([]))
    agent = middleware.wrap(Agent("a", model="named", tools=[delete_file]))
    config = middleware.run_config(
        RunConfig(model_provider=_Provider(ScriptedOpenAIModel(script)), tracing_disabled=True)
    )
    result = await run(agent, "Delete /a", streamed=False, run_config=config)
    assert len(middleware.interrupts(result)) == 1
    fresh = [*result.to_input_list(), {"role": "user", "content": "Never mind"}]
    with pytest.raises(InterruptResponseFormatError, match="paused on 1 interrupt"):
        await run(agent, fresh, streamed=False, run_config=config)
    assert len(script.requests) == 1


@pytest.mark.parametrize("reloaded", [False, True])
async def test_a_run_state_resumed_twice_is_refused_and_the_tool_runs_once(
    reloaded: bool,
) -> None:
    asked: list[Any] = []
    middleware, agent, script = paused_agent(asked)
    result = await run(agent, "Delete /a", streamed=False)
    [interrupt] = middleware.interrupts(result)
    state = result.to_state()
    saved = json.dumps(state.to_json())
    middleware.resume(state, {interrupt.id: "yes"})
    done = await run(agent, state, streamed=False)
    assert (done.final_output, deleted) == ("Done.", ["/a"])
    # The same paused point again: the state as it was resumed, or loaded again from its JSON.
    stale = await RunState.from_json(agent, json.loads(saved)) if reloaded else state
    stale_before = stale.to_json()
    with pytest.raises(InterruptResumeError, match="already resumed") as err:
        middleware.resume(stale, {interrupt.id: "yes"})
    assert err.value.interrupt_ids == (interrupt.id,)
    assert stale.to_json() == stale_before
    assert (deleted, asked, len(script.requests)) == (["/a"], ["yes"], 2)


@pytest.mark.parametrize("streamed", [False, True])
async def test_answers_of_another_run_in_a_fresh_process_run_nothing_and_can_be_corrected(
    streamed: bool,
) -> None:
    # A fresh middleware object knows nothing of the pause (as in another process): it cannot
    # tell the answers are another run's until the call's chain asks.
    middleware, agent, _ = paused_agent([])
    result = await run(agent, "Delete /a", streamed=False)
    [interrupt] = middleware.interrupts(result)
    saved = json.loads(json.dumps(result.to_state().to_json()))
    # The id another gate (of another run) would ask under for the same call id.
    other_run = "v1:middleware_execute_tool:t1:" + str(uuid.uuid5(uuid.NAMESPACE_OID, "confirm"))
    asked: list[Any] = []
    fresh_script = ScriptedModel([text_turn("Done.")])
    fresh = OpenAIAgentsMiddleware(gate(asked))
    fresh_agent = fresh.wrap(
        Agent("a", model=ScriptedOpenAIModel(fresh_script), tools=[delete_file])
    )
    state = await RunState.from_json(fresh_agent, saved)
    fresh.resume(state, {other_run: "yes"})
    with pytest.raises(UserError) as refused:
        await run(fresh_agent, state, streamed=streamed)
    cause = refused.value.__cause__
    assert isinstance(cause, InterruptResumeError) and "another run" in str(cause)
    assert cause.interrupt_ids == (interrupt.id,)
    assert (deleted, asked, fresh_script.requests) == ([], [], [])
    # The saved state is unchanged: answered right, it runs the tool once.
    state = await RunState.from_json(fresh_agent, saved)
    fresh.resume(state, {interrupt.id: "yes"})
    done = await run(fresh_agent, state, streamed=streamed)
    assert (done.final_output, deleted, asked) == ("Done.", ["/a"], ["yes"])
