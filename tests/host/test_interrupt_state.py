"""Interrupt ids, resolution, and the lifetime rules of `InterruptState`.

Each test states one rule of the spec's interrupt sections ("Middleware-initiated interrupts",
"AgentStreamStage interrupt resume", "Interrupt response lifetime") or of the resume contract, and
fails if that rule breaks. The scenario tests drive the state the way a host run loop does:
``resume`` -> ``begin_pass`` -> middleware resolves -> ``register``/``activate`` or
``end_tool_cycle`` -> ``deactivate``/``end_interrupt_cycle``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# hypothesis leaves run_state_machine_as_test's factory parameter unannotated.
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,  # pyright: ignore[reportUnknownVariableType]
)

from strands_middleware.content import Message, ToolResult
from strands_middleware.exceptions import (
    InterruptException,
    InterruptResponseFormatError,
    InterruptResumeError,
    InterruptStateDataError,
)
from strands_middleware.host._interrupt_state import InterruptState, PendingToolExecution
from strands_middleware.interrupts import (
    AGENT_STREAM_INTERRUPT_PREFIX,
    EXECUTE_TOOL_INTERRUPT_PREFIX,
    Interrupt,
    MiddlewareInterruptResult,
    agent_stream_interrupt_id,
    execute_tool_interrupt_id,
    resolve_middleware_interrupt,
)

SHAPE = '[{"interruptResponse": {"interruptId": "<interrupt id>", "response": <answer>}}, ...]'

GATE = "approve_run"
GATE_ID = agent_stream_interrupt_id(GATE)
TOOL_GATE = "approve_tool"
TOOL_ID = execute_tool_interrupt_id("tooluse-1", TOOL_GATE)


def answer(interrupt_id: str, response: Any) -> dict[str, Any]:
    return {"interruptResponse": {"interruptId": interrupt_id, "response": response}}


def gate(view: Mapping[str, Interrupt], name: str = GATE, reason: Any = None) -> Any:
    """What agent-stream middleware does: resolve against the pass snapshot."""
    return resolve_middleware_interrupt(
        view, agent_stream_interrupt_id(name), name, reason, None
    ).response


def pause_on(state: InterruptState, name: str = GATE, reason: Any = "ok?") -> Interrupt:
    """What the run loop does when agent-stream middleware raises: register, then activate."""
    with pytest.raises(InterruptException) as raised:
        gate(state.snapshot, name, reason)
    stored = state.register(raised.value.interrupt)
    state.activate()
    return stored


def assistant_turn(*tool_use_ids: str) -> Message:
    return {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": tid, "name": "delete", "input": {"key": tid}}}
            for tid in tool_use_ids
        ],
    }


def tool_result(tool_use_id: str) -> ToolResult:
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": "done"}]}


def json_round_trip(state: InterruptState) -> InterruptState:
    return InterruptState.from_dict(json.loads(json.dumps(state.to_dict())))


# --------------------------------------------------------------------------------------------
# Interrupt ids
# --------------------------------------------------------------------------------------------


class TestInterruptIds:
    def test_execute_tool_id_is_prefix_tool_use_id_and_uuid5_of_the_name(self) -> None:
        expected = f"v1:middleware_execute_tool:tooluse-42:{uuid.uuid5(uuid.NAMESPACE_OID, 'ok')}"
        assert execute_tool_interrupt_id("tooluse-42", "ok") == expected

    def test_agent_stream_id_is_prefix_and_uuid5_of_the_name_only(self) -> None:
        expected = f"v1:middleware_agent_stream:{uuid.uuid5(uuid.NAMESPACE_OID, 'ok')}"
        assert agent_stream_interrupt_id("ok") == expected

    def test_prefix_constants_are_the_spec_literals(self) -> None:
        assert EXECUTE_TOOL_INTERRUPT_PREFIX == "v1:middleware_execute_tool:"
        assert AGENT_STREAM_INTERRUPT_PREFIX == "v1:middleware_agent_stream:"

    @given(tool_use_id=st.text(), name=st.text())
    def test_ids_are_deterministic_across_calls(self, tool_use_id: str, name: str) -> None:
        # A resumed answer can only find its interrupt if the second raise computes the same id.
        assert execute_tool_interrupt_id(tool_use_id, name) == execute_tool_interrupt_id(
            tool_use_id, name
        )
        assert agent_stream_interrupt_id(name) == agent_stream_interrupt_id(name)
        hashed = str(uuid.uuid5(uuid.NAMESPACE_OID, name))
        assert execute_tool_interrupt_id(tool_use_id, name).endswith(f":{tool_use_id}:{hashed}")
        assert agent_stream_interrupt_id(name) == AGENT_STREAM_INTERRUPT_PREFIX + hashed

    @given(a=st.text(), b=st.text())
    def test_different_names_give_different_ids(self, a: str, b: str) -> None:
        if a != b:
            assert agent_stream_interrupt_id(a) != agent_stream_interrupt_id(b)
            assert execute_tool_interrupt_id("t", a) != execute_tool_interrupt_id("t", b)

    def test_tool_id_is_scoped_to_the_tool_call(self) -> None:
        assert execute_tool_interrupt_id("t1", "ok") != execute_tool_interrupt_id("t2", "ok")

    def test_the_prefix_tells_the_two_kinds_apart(self) -> None:
        # Interrupt has no `source` field; consumers disambiguate by prefix instead.
        assert execute_tool_interrupt_id("t", "x").startswith(EXECUTE_TOOL_INTERRUPT_PREFIX)
        assert not execute_tool_interrupt_id("t", "x").startswith(AGENT_STREAM_INTERRUPT_PREFIX)
        assert agent_stream_interrupt_id("x").startswith(AGENT_STREAM_INTERRUPT_PREFIX)


# --------------------------------------------------------------------------------------------
# Interrupt data
# --------------------------------------------------------------------------------------------


class TestInterruptData:
    def test_interrupt_round_trips_through_its_dict(self) -> None:
        interrupt = Interrupt(id="i", name="n", reason={"why": [1, 2]}, response="yes")
        assert interrupt.to_dict() == {
            "id": "i",
            "name": "n",
            "reason": {"why": [1, 2]},
            "response": "yes",
        }
        assert Interrupt.from_dict(interrupt.to_dict()) == interrupt

    def test_interrupt_exception_carries_the_interrupt_and_is_an_exception(self) -> None:
        # An Exception (not BaseException): the documented `except Exception` hazard is real.
        interrupt = Interrupt(id="i", name="n")
        error = InterruptException(interrupt)
        assert isinstance(error, Exception)
        assert error.interrupt is interrupt
        assert "'n'" in str(error)
        assert "i" in str(error)


# --------------------------------------------------------------------------------------------
# resolve_middleware_interrupt
# --------------------------------------------------------------------------------------------


class TestResolveMiddlewareInterrupt:
    def test_a_prior_human_answer_wins_over_a_preemptive_response(self) -> None:
        prior = {GATE_ID: Interrupt(GATE_ID, GATE, response="human")}
        result = resolve_middleware_interrupt(prior, GATE_ID, GATE, None, "policy")
        assert result == MiddlewareInterruptResult(response="human")

    def test_a_preemptive_response_is_used_when_no_answer_exists(self) -> None:
        assert resolve_middleware_interrupt({}, GATE_ID, GATE, None, "policy").response == "policy"

    def test_a_registered_but_unanswered_interrupt_falls_back_to_the_preemptive_response(
        self,
    ) -> None:
        owed = {GATE_ID: Interrupt(GATE_ID, GATE)}
        assert (
            resolve_middleware_interrupt(owed, GATE_ID, GATE, None, "policy").response == "policy"
        )

    def test_without_any_answer_it_raises_a_fresh_unanswered_interrupt(self) -> None:
        stale_reason = {GATE_ID: Interrupt(GATE_ID, GATE, reason="old")}
        with pytest.raises(InterruptException) as raised:
            resolve_middleware_interrupt(stale_reason, GATE_ID, GATE, "new reason", None)
        assert raised.value.interrupt == Interrupt(GATE_ID, GATE, reason="new reason")

    @pytest.mark.parametrize("falsy", [False, 0, "", [], {}])
    def test_only_none_means_unanswered(self, falsy: Any) -> None:
        # "Deny" is often False: it must resolve, not ask again.
        prior = {GATE_ID: Interrupt(GATE_ID, GATE, response=falsy)}
        assert resolve_middleware_interrupt(prior, GATE_ID, GATE, None, None).response == falsy

    def test_it_never_writes_to_the_mapping(self) -> None:
        interrupts: dict[str, Interrupt] = {TOOL_ID: Interrupt(TOOL_ID, TOOL_GATE, response="y")}
        before = dict(interrupts)
        with pytest.raises(InterruptException):
            resolve_middleware_interrupt(interrupts, GATE_ID, GATE, "r", None)
        resolve_middleware_interrupt(interrupts, GATE_ID, GATE, "r", "pre")
        resolve_middleware_interrupt(interrupts, TOOL_ID, TOOL_GATE, "r", None)
        assert interrupts == before

    def test_it_accepts_the_read_only_views_of_the_state(self) -> None:
        state = InterruptState()
        with pytest.raises(InterruptException):
            resolve_middleware_interrupt(state.interrupts, TOOL_ID, TOOL_GATE, None, None)
        assert state.interrupts == {}


# --------------------------------------------------------------------------------------------
# register
# --------------------------------------------------------------------------------------------


class TestRegister:
    def test_register_stores_a_copy_and_returns_it(self) -> None:
        state = InterruptState()
        raised = Interrupt(TOOL_ID, TOOL_GATE, reason="delete?")
        stored = state.register(raised)
        assert stored == raised
        assert stored is not raised
        raised.response = "sneaky"
        assert state.interrupts[TOOL_ID].response is None

    def test_registering_does_not_activate(self) -> None:
        # The executor decides when the run is paused; registering alone is only bookkeeping.
        state = InterruptState()
        state.register(Interrupt(TOOL_ID, TOOL_GATE))
        assert not state.activated
        assert state.owed == (Interrupt(TOOL_ID, TOOL_GATE),)

    def test_re_registering_an_answered_id_keeps_the_answer(self) -> None:
        state = InterruptState()
        state.register(Interrupt(TOOL_ID, TOOL_GATE, reason="first"))
        state.activate()
        state.resume([answer(TOOL_ID, "approved")])
        stored = state.register(Interrupt(TOOL_ID, TOOL_GATE, reason="second"))
        assert stored.response == "approved"
        assert state.interrupts[TOOL_ID] == Interrupt(TOOL_ID, TOOL_GATE, "first", "approved")
        assert state.owed == ()

    def test_re_registering_an_unanswered_id_shows_the_latest_reason(self) -> None:
        state = InterruptState()
        state.register(Interrupt(TOOL_ID, TOOL_GATE, reason="first"))
        state.register(Interrupt(TOOL_ID, TOOL_GATE, reason="second"))
        assert state.owed == (Interrupt(TOOL_ID, TOOL_GATE, reason="second"),)

    def test_register_rejects_non_interrupts(self) -> None:
        state = InterruptState()
        with pytest.raises(TypeError, match="expects an Interrupt, got dict"):
            state.register(cast(Any, {"id": "x", "name": "y"}))
        assert state.interrupts == {}


# --------------------------------------------------------------------------------------------
# resume
# --------------------------------------------------------------------------------------------


def paused_state() -> InterruptState:
    """A paused tool round owing an agent-stream and a tool interrupt; an earlier one answered."""
    state = InterruptState()
    earlier = execute_tool_interrupt_id("tooluse-0", "earlier")
    state.register(Interrupt(earlier, "earlier"))
    state.activate()
    state.resume([answer(earlier, "already answered")])
    state.register(Interrupt(GATE_ID, GATE, reason="run?"))
    state.register(Interrupt(TOOL_ID, TOOL_GATE, reason="delete?"))
    state.pending_tool_execution = PendingToolExecution(
        assistant_turn("tooluse-0", "tooluse-1"), [tool_result("tooluse-0")]
    )
    return state


class TestResumeAccepts:
    def test_a_fresh_prompt_outside_a_pause_is_left_to_the_host(self) -> None:
        state = InterruptState()
        prompts: list[object] = [
            "hello",
            None,
            [],
            [{"text": "hi"}],
            [{"role": "user", "content": []}],
        ]
        for prompt in prompts:
            state.resume(prompt)
        assert state == InterruptState()

    def test_answers_are_recorded_and_nothing_is_owed_afterwards(self) -> None:
        state = paused_state()
        state.resume([answer(GATE_ID, "run it"), answer(TOOL_ID, False)])
        assert state.interrupts[GATE_ID].response == "run it"
        assert state.interrupts[TOOL_ID].response is False
        assert state.owed == ()
        assert state.activated

    def test_accepted_answers_are_kept_in_the_context_for_forwarding(self) -> None:
        state = paused_state()
        prompt = [answer(TOOL_ID, "b"), answer(GATE_ID, "a")]
        state.resume(prompt)
        assert state.context["responses"] == prompt
        assert state.context["responses"] is not prompt

    def test_an_already_answered_interrupt_may_be_answered_again(self) -> None:
        state = paused_state()
        earlier = execute_tool_interrupt_id("tooluse-0", "earlier")
        state.resume([answer(GATE_ID, 1), answer(TOOL_ID, 2), answer(earlier, "changed")])
        assert state.interrupts[earlier].response == "changed"

    def test_an_empty_list_resumes_when_every_interrupt_is_already_answered(self) -> None:
        state = paused_state()
        state.resume([answer(GATE_ID, 1), answer(TOOL_ID, 2)])
        state.resume([])
        assert state.activated
        assert state.owed == ()

    def test_answers_replace_entries_instead_of_mutating_objects_the_caller_holds(self) -> None:
        state = InterruptState()
        stored = state.register(Interrupt(TOOL_ID, TOOL_GATE))
        state.activate()
        snapshot = state.begin_pass()
        state.resume([answer(TOOL_ID, "yes")])
        assert stored.response is None
        assert snapshot[TOOL_ID].response is None
        assert state.interrupts[TOOL_ID].response == "yes"


RESUME_ERRORS: list[tuple[str, Any, type[Exception], list[str]]] = [
    (
        "fresh text prompt",
        "please continue",
        InterruptResponseFormatError,
        ["paused on interrupts", "got a str prompt", repr(GATE_ID), "name 'approve_run'", SHAPE],
    ),
    (
        "no prompt",
        None,
        InterruptResponseFormatError,
        ["got a None prompt", repr(TOOL_ID), SHAPE],
    ),
    (
        "fresh content blocks",
        [{"text": "go on"}],
        InterruptResponseFormatError,
        ["got a prompt without interruptResponse blocks", repr(GATE_ID), SHAPE],
    ),
    (
        "a single block not in a list",
        answer(GATE_ID, "x"),
        InterruptResponseFormatError,
        ["got a single block; wrap it in a list", SHAPE],
    ),
    (
        "a block mixed with content",
        [answer(GATE_ID, "x"), {"text": "and also"}],
        InterruptResponseFormatError,
        ["block [1]: expected exactly the key 'interruptResponse', got keys ['text']", SHAPE],
    ),
    (
        "a non-object block",
        [answer(GATE_ID, "x"), "yes"],
        InterruptResponseFormatError,
        ["block [1]: expected an object, got str"],
    ),
    (
        "an extra key beside interruptResponse",
        [{**answer(GATE_ID, "x"), "text": "hi"}],
        InterruptResponseFormatError,
        ["block [0]: expected exactly the key 'interruptResponse', got keys"],
    ),
    (
        "interruptResponse is not an object",
        [{"interruptResponse": "yes"}],
        InterruptResponseFormatError,
        ["block [0]: 'interruptResponse' must be an object, got str"],
    ),
    (
        "a misspelt key",
        [{"interruptResponse": {"interruptID": GATE_ID, "response": "x"}}],
        InterruptResponseFormatError,
        ["block [0]: 'interruptResponse' has unexpected keys ['interruptID']"],
    ),
    (
        "no interruptId",
        [{"interruptResponse": {"response": "x"}}],
        InterruptResponseFormatError,
        ["block [0]: 'interruptResponse' is missing 'interruptId'"],
    ),
    (
        "a non-string interruptId",
        [{"interruptResponse": {"interruptId": 7, "response": "x"}}],
        InterruptResponseFormatError,
        ["block [0]: 'interruptId' must be a str, got int"],
    ),
    (
        "no response",
        [{"interruptResponse": {"interruptId": GATE_ID}}],
        InterruptResponseFormatError,
        [f"block [0]: the response to {GATE_ID!r} is missing 'response'"],
    ),
    (
        "a None response",
        [answer(GATE_ID, None), answer(TOOL_ID, "ok")],
        InterruptResponseFormatError,
        [f"block [0]: the response to {GATE_ID!r} is None", "'not answered yet'"],
    ),
    (
        "every malformed block is reported at once",
        [{"interruptResponse": 1}, answer(TOOL_ID, "ok"), {"interruptResponse": {}}],
        InterruptResponseFormatError,
        ["block [0]:", "block [2]:"],
    ),
    (
        "one id answered twice",
        [answer(GATE_ID, "a"), answer(TOOL_ID, "b"), answer(GATE_ID, "c")],
        InterruptResumeError,
        [f"answers {GATE_ID!r} more than once", SHAPE],
    ),
    (
        "an unknown id",
        [answer(GATE_ID, "a"), answer(TOOL_ID, "b"), answer("v1:other:agent", "c")],
        InterruptResumeError,
        ["unknown interrupt id(s) 'v1:other:agent'", "interrupts waiting for an answer", SHAPE],
    ),
    (
        "an owed interrupt left unanswered",
        [answer(GATE_ID, "a")],
        InterruptResumeError,
        [f"interrupt(s) {TOOL_ID!r} (name 'approve_tool') still need an answer", SHAPE],
    ),
    (
        "an empty list while interrupts are owed",
        [],
        InterruptResumeError,
        [repr(GATE_ID), repr(TOOL_ID), "still need an answer"],
    ),
]


class TestResumeRejects:
    @pytest.mark.parametrize(
        ("prompt", "error", "fragments"),
        [case[1:] for case in RESUME_ERRORS],
        ids=[case[0] for case in RESUME_ERRORS],
    )
    def test_rejected_prompt_names_the_problem_and_leaves_the_state_unchanged(
        self, prompt: Any, error: type[Exception], fragments: list[str]
    ) -> None:
        state = paused_state()
        snapshot = state.begin_pass()
        before = state.to_dict()
        objects_before = dict(state.interrupts)
        snapshot_before = dict(snapshot)

        with pytest.raises(error) as raised:
            state.resume(prompt)

        message = str(raised.value)
        for fragment in fragments:
            assert fragment in message
        assert isinstance(raised.value, InterruptResumeError)
        assert isinstance(raised.value, ValueError)
        assert state.to_dict() == before
        assert dict(state.interrupts) == objects_before
        assert all(state.interrupts[k] is v for k, v in objects_before.items())
        assert dict(state.snapshot) == snapshot_before

    def test_format_errors_are_also_type_errors(self) -> None:
        with pytest.raises(TypeError):
            paused_state().resume("fresh")

    def test_id_errors_are_not_type_errors(self) -> None:
        with pytest.raises(InterruptResumeError) as raised:
            paused_state().resume([answer(GATE_ID, "a")])
        assert not isinstance(raised.value, TypeError)

    def test_unknown_ids_are_listed_on_the_error(self) -> None:
        with pytest.raises(InterruptResumeError) as raised:
            paused_state().resume([answer(GATE_ID, 1), answer(TOOL_ID, 2), answer("u1", 3)])
        assert raised.value.interrupt_ids == ("u1",)

    def test_unanswered_ids_are_listed_on_the_error(self) -> None:
        with pytest.raises(InterruptResumeError) as raised:
            paused_state().resume([])
        assert raised.value.interrupt_ids == (GATE_ID, TOOL_ID)

    def test_a_fresh_prompt_error_lists_the_owed_ids(self) -> None:
        with pytest.raises(InterruptResponseFormatError) as raised:
            paused_state().resume("hello")
        assert raised.value.interrupt_ids == (GATE_ID, TOOL_ID)

    def test_a_fresh_prompt_is_refused_while_paused_even_when_nothing_is_owed(self) -> None:
        # The run is still paused (a resume was abandoned mid-flight): a new question would
        # silently drop the stored tool replay.
        state = paused_state()
        state.resume([answer(GATE_ID, 1), answer(TOOL_ID, 2)])
        before = state.to_dict()
        with pytest.raises(InterruptResponseFormatError, match=r"resume with \[\] to continue"):
            state.resume("new question")
        assert state.to_dict() == before

    @pytest.mark.parametrize(
        "prompt",
        [
            [answer(GATE_ID, "yes")],
            answer(GATE_ID, "yes"),
            [{"text": "hi"}, answer(GATE_ID, "yes")],
        ],
        ids=["list", "single block", "mixed"],
    )
    def test_answers_outside_a_pause_are_refused(self, prompt: Any) -> None:
        state = InterruptState()
        state.register(Interrupt(GATE_ID, GATE))  # registered, but the run is not paused
        before = state.to_dict()
        with pytest.raises(InterruptResumeError) as raised:
            state.resume(prompt)
        message = str(raised.value)
        assert "no interrupt is waiting for a response" in message
        assert repr(GATE_ID) in message
        assert "start a new invocation with a normal prompt" in message
        assert raised.value.interrupt_ids == (GATE_ID,)
        assert state.to_dict() == before

    def test_malformed_answers_outside_a_pause_are_refused_too(self) -> None:
        with pytest.raises(InterruptResumeError, match="<missing id>"):
            InterruptState().resume([{"interruptResponse": "yes"}])


# --------------------------------------------------------------------------------------------
# Lifetime rules
# --------------------------------------------------------------------------------------------


class TestEndToolCycle:
    def test_keeps_only_answered_agent_stream_interrupts(self) -> None:
        state = InterruptState()
        owed_gate = agent_stream_interrupt_id("owed")
        answered_tool = execute_tool_interrupt_id("t0", "x")
        for interrupt in (
            Interrupt(GATE_ID, GATE),
            Interrupt(TOOL_ID, TOOL_GATE),
            Interrupt(answered_tool, "x"),
        ):
            state.register(interrupt)
        state.activate()
        state.resume([answer(GATE_ID, "g"), answer(TOOL_ID, "t"), answer(answered_tool, "a")])
        state.register(Interrupt(owed_gate, "owed"))
        state.context["host"] = "data"
        state.pending_tool_execution = PendingToolExecution(assistant_turn("t0"), [])

        state.end_tool_cycle()

        assert dict(state.interrupts) == {GATE_ID: Interrupt(GATE_ID, GATE, response="g")}
        assert state.context == {}
        assert state.pending_tool_execution is None
        assert not state.activated

    def test_leaves_the_pass_snapshot_alone(self) -> None:
        state = InterruptState()
        pause_on(state)
        state.resume([answer(GATE_ID, "yes")])
        snapshot = state.begin_pass()
        state.end_tool_cycle()
        assert snapshot[GATE_ID].response == "yes"
        assert gate(state.snapshot) == "yes"


class TestResponseLifetime:
    def test_an_answer_survives_a_tool_cycle_within_its_interrupt_cycle(self) -> None:
        state = InterruptState()

        # Invocation 1: the gate asks.
        state.resume("delete the files")
        pause_on(state, reason="may I run?")
        assert state.owed == (Interrupt(GATE_ID, GATE, reason="may I run?"),)

        # Invocation 2: resumed; the gate passes, a tool runs, then another tool pauses.
        state.resume([answer(GATE_ID, "go")])
        assert gate(state.begin_pass()) == "go"
        state.end_tool_cycle()  # first tool round ran: the live dict is cleared...
        assert gate(state.snapshot) == "go"  # ...but the gate re-reads from the snapshot
        state.register(Interrupt(TOOL_ID, TOOL_GATE, reason="delete?"))
        state.pending_tool_execution = PendingToolExecution(assistant_turn("tooluse-1"), [])
        state.activate()
        state.end_interrupt_cycle()  # end of pass: still paused, so nothing is released
        assert state.owed == (Interrupt(TOOL_ID, TOOL_GATE, reason="delete?"),)

        # Invocation 3: the same cycle, so the gate must not ask the human again.
        state.resume([answer(TOOL_ID, "yes")])
        assert gate(state.begin_pass()) == "go"

    def test_end_interrupt_cycle_releases_the_answer_so_the_next_cycle_asks_again(self) -> None:
        state = InterruptState()
        pause_on(state)
        state.resume([answer(GATE_ID, "go")])
        held_view = state.begin_pass()
        assert gate(held_view) == "go"
        state.end_tool_cycle()
        state.end_interrupt_cycle()  # the pass ended with nothing owed: the cycle is over

        assert GATE_ID not in state.interrupts
        assert dict(state.snapshot) == {}
        with pytest.raises(InterruptException):
            gate(held_view)  # a context kept past its pass cannot resolve the old answer
        with pytest.raises(InterruptException):
            gate(state.begin_pass())

    def test_end_interrupt_cycle_does_nothing_while_the_run_is_paused(self) -> None:
        state = InterruptState()
        pause_on(state)
        state.resume([answer(GATE_ID, "go")])
        before = state.to_dict()
        snapshot = dict(state.begin_pass())
        state.end_interrupt_cycle()
        assert state.to_dict() == before
        assert dict(state.snapshot) == snapshot

    def test_the_snapshot_is_empty_when_the_pass_starts_unactivated(self) -> None:
        state = InterruptState()
        state.register(Interrupt(TOOL_ID, TOOL_GATE, response="x"))
        assert dict(state.begin_pass()) == {}
        assert dict(state.snapshot) == {}

    def test_an_abandoned_cycle_cannot_revive_its_answer(self) -> None:
        # A consumer stops reading mid-pass: end_interrupt_cycle never runs, so the answer is
        # still retained when the next, unrelated invocation starts.
        state = InterruptState()
        pause_on(state)
        state.resume([answer(GATE_ID, "approved back then")])
        state.begin_pass()
        state.end_tool_cycle()
        assert GATE_ID in state.interrupts  # abandoned here

        # Next invocation: a fresh cycle. The gate is not reached this time (say it only guards
        # some prompts), but a tool pauses the run.
        state.resume("new task")
        assert dict(state.begin_pass()) == {}
        state.register(Interrupt(TOOL_ID, TOOL_GATE))
        state.pending_tool_execution = PendingToolExecution(assistant_turn("tooluse-1"), [])
        state.activate()

        # Resuming that tool pause must not hand the gate its old approval.
        state.resume([answer(TOOL_ID, "ok")])
        with pytest.raises(InterruptException):
            gate(state.begin_pass())

    def test_a_restored_unactivated_state_cannot_revive_a_retained_answer(self) -> None:
        state = InterruptState()
        pause_on(state)
        state.resume([answer(GATE_ID, "go")])
        state.begin_pass()
        state.end_tool_cycle()  # persisted mid-pass, before the cycle ended
        restored = json_round_trip(state)
        assert restored == state

        restored.resume("another process, a new task")
        with pytest.raises(InterruptException):
            gate(restored.begin_pass())
        assert GATE_ID not in restored.interrupts

    def test_a_reused_name_inherits_the_approval_within_a_cycle(self) -> None:
        # The id is the name's hash, so the name identifies the decision for the whole cycle.
        state = InterruptState()
        pause_on(state, reason="deploy to staging?")
        state.resume([answer(GATE_ID, "yes")])
        snapshot = state.begin_pass()
        assert gate(snapshot, reason="deploy to staging?") == "yes"
        assert gate(snapshot, reason="deploy to production?") == "yes"  # never asked
        state.end_tool_cycle()
        state.end_interrupt_cycle()

        # A new cycle asks again.
        state.resume("deploy again")
        with pytest.raises(InterruptException):
            gate(state.begin_pass(), reason="deploy to production?")

    def test_an_agent_stream_pause_ends_by_deactivation(self) -> None:
        # No tool round runs after an agent-stream resume, so the run loop deactivates.
        state = InterruptState()
        pause_on(state)
        assert state.pending_tool_execution is None
        state.resume([answer(GATE_ID, "go")])
        assert gate(state.begin_pass()) == "go"
        state.deactivate()
        state.end_interrupt_cycle()

        assert state == InterruptState()
        state.resume("a fresh prompt is accepted again")
        with pytest.raises(InterruptException):
            gate(state.begin_pass())

    def test_deactivate_forgets_everything(self) -> None:
        state = paused_state()
        state.context["k"] = "v"
        state.begin_pass()
        state.deactivate()
        assert not state.activated
        assert dict(state.interrupts) == {}
        assert state.context == {}
        assert state.pending_tool_execution is None
        assert dict(state.snapshot) == {}

    def test_the_snapshot_is_a_copy_taken_at_pass_start(self) -> None:
        state = paused_state()
        snapshot = state.begin_pass()
        assert dict(snapshot) == dict(state.interrupts)
        assert all(snapshot[k] is not v for k, v in state.interrupts.items())
        assert snapshot is state.snapshot

    def test_views_are_read_only(self) -> None:
        state = paused_state()
        with pytest.raises(TypeError):
            forged = cast("dict[str, Interrupt]", state.interrupts)
            forged[GATE_ID] = Interrupt(GATE_ID, GATE, response="forged")
        with pytest.raises(TypeError):
            forged = cast("dict[str, Interrupt]", state.begin_pass())
            forged[GATE_ID] = Interrupt(GATE_ID, GATE, response="forged")


class TestPendingToolExecution:
    def test_set_pending_tool_results_replaces_the_stored_results(self) -> None:
        state = InterruptState()
        state.pending_tool_execution = PendingToolExecution(assistant_turn("a", "b"), [])
        results = [tool_result("a")]
        state.set_pending_tool_results(results)
        assert state.pending_tool_execution.completed_tool_results == [tool_result("a")]
        results.append(tool_result("b"))
        assert state.pending_tool_execution.completed_tool_results == [tool_result("a")]

    def test_set_pending_tool_results_without_a_pending_execution_does_nothing(self) -> None:
        state = InterruptState()
        state.set_pending_tool_results([tool_result("a")])
        assert state.pending_tool_execution is None

    def test_pending_execution_round_trips_through_its_dict(self) -> None:
        pending = PendingToolExecution(assistant_turn("a", "b"), [tool_result("a")])
        assert PendingToolExecution.from_dict(json.loads(json.dumps(pending.to_dict()))) == pending


# --------------------------------------------------------------------------------------------
# Persistence
# --------------------------------------------------------------------------------------------


class TestPersistence:
    def test_to_dict_shape(self) -> None:
        state = InterruptState()
        state.register(Interrupt(TOOL_ID, TOOL_GATE, reason={"path": "/tmp"}))
        state.pending_tool_execution = PendingToolExecution(assistant_turn("tooluse-1"), [])
        state.activate()
        assert state.to_dict() == {
            "activated": True,
            "interrupts": {
                TOOL_ID: {
                    "id": TOOL_ID,
                    "name": TOOL_GATE,
                    "reason": {"path": "/tmp"},
                    "response": None,
                }
            },
            "context": {},
            "pending_tool_execution": {
                "assistant_message": assistant_turn("tooluse-1"),
                "completed_tool_results": [],
            },
        }

    def test_json_round_trip_is_exact_including_pending_tool_execution(self) -> None:
        state = paused_state()
        state.resume([answer(GATE_ID, {"approved": True, "by": ["ann"]}), answer(TOOL_ID, 3)])
        state.context["sub_agent"] = {"turns": [1, 2]}
        restored = json_round_trip(state)
        assert restored == state
        assert restored.to_dict() == state.to_dict()
        assert restored.pending_tool_execution == state.pending_tool_execution
        assert list(restored.interrupts) == list(state.interrupts)

    def test_a_resume_can_happen_in_another_process(self) -> None:
        state = InterruptState()
        state.register(Interrupt(TOOL_ID, TOOL_GATE, reason="delete?"))
        state.pending_tool_execution = PendingToolExecution(
            assistant_turn("tooluse-0", "tooluse-1"), [tool_result("tooluse-0")]
        )
        state.activate()
        saved = json.dumps(state.to_dict())

        elsewhere = InterruptState.from_dict(json.loads(saved))
        elsewhere.resume([answer(TOOL_ID, "yes")])
        assert elsewhere.activated
        assert elsewhere.pending_tool_execution is not None
        assert elsewhere.pending_tool_execution.completed_tool_results == [tool_result("tooluse-0")]
        result = resolve_middleware_interrupt(elsewhere.interrupts, TOOL_ID, TOOL_GATE)
        assert result.response == "yes"

    def test_to_dict_is_a_deep_copy(self) -> None:
        state = paused_state()
        state.context["nested"] = {"a": [1]}
        data = state.to_dict()
        data["context"]["nested"]["a"].append(2)
        data["interrupts"][GATE_ID]["reason"] = "changed"
        data["pending_tool_execution"]["assistant_message"]["content"].clear()
        assert state.context["nested"] == {"a": [1]}
        assert state.interrupts[GATE_ID].reason == "run?"
        assert state.pending_tool_execution is not None
        assert state.pending_tool_execution.assistant_message["content"] != []

    def test_from_dict_does_not_alias_its_input(self) -> None:
        data = paused_state().to_dict()
        restored = InterruptState.from_dict(data)
        data["context"]["x"] = 1
        data["pending_tool_execution"]["completed_tool_results"].clear()
        assert "x" not in restored.context
        assert restored.pending_tool_execution is not None
        assert restored.pending_tool_execution.completed_tool_results != []

    def test_pending_tool_execution_key_is_optional(self) -> None:
        restored = InterruptState.from_dict({"activated": False, "interrupts": {}, "context": {}})
        assert restored == InterruptState()

    def test_the_snapshot_is_not_persisted_or_compared(self) -> None:
        state = paused_state()
        state.begin_pass()
        restored = json_round_trip(state)
        assert restored == state
        assert dict(restored.snapshot) == {}

    def test_equality_covers_every_persisted_field(self) -> None:
        def with_pending() -> InterruptState:
            state = InterruptState()
            state.pending_tool_execution = PendingToolExecution(assistant_turn("a"), [])
            return state

        def with_context() -> InterruptState:
            state = InterruptState()
            state.context["k"] = 1
            return state

        def with_interrupt() -> InterruptState:
            state = InterruptState()
            state.register(Interrupt(TOOL_ID, TOOL_GATE))
            return state

        def activated() -> InterruptState:
            state = InterruptState()
            state.activate()
            return state

        variants = [InterruptState(), with_pending(), with_context(), with_interrupt(), activated()]
        for i, left in enumerate(variants):
            for j, right in enumerate(variants):
                assert (left == right) is (i == j)
        assert InterruptState().__eq__(object()) is NotImplemented

    def test_states_are_unhashable(self) -> None:
        with pytest.raises(TypeError):
            hash(InterruptState())


def valid_data() -> dict[str, Any]:
    state = InterruptState()
    state.register(Interrupt(TOOL_ID, TOOL_GATE))
    state.pending_tool_execution = PendingToolExecution(
        assistant_turn("tooluse-1"), [tool_result("tooluse-0")]
    )
    state.activate()
    return state.to_dict()


def corrupt(path: list[Any], value: Any) -> dict[str, Any]:
    data = valid_data()
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


_DELETE = object()

MALFORMED: list[tuple[str, Any, str]] = [
    ("not an object", [1, 2], "interrupt state: expected an object, got list"),
    ("missing activated", corrupt(["activated"], _DELETE), "missing key(s) ['activated']"),
    ("missing interrupts", corrupt(["interrupts"], _DELETE), "missing key(s) ['interrupts']"),
    ("unknown top-level key", {**valid_data(), "extra": 1}, "unknown key(s) ['extra']"),
    ("activated not a bool", corrupt(["activated"], "yes"), "'activated' must be a bool, got str"),
    ("interrupts not an object", corrupt(["interrupts"], []), "interrupts: expected an object"),
    ("context not an object", corrupt(["context"], "x"), "context: expected an object, got str"),
    (
        "interrupt without a name",
        corrupt(["interrupts", TOOL_ID, "name"], _DELETE),
        f"interrupts[{TOOL_ID!r}]: missing key(s) ['name']",
    ),
    (
        "interrupt name not a string",
        corrupt(["interrupts", TOOL_ID, "name"], 5),
        f"interrupts[{TOOL_ID!r}].name must be a str, got int",
    ),
    (
        "interrupt stored under another id",
        corrupt(["interrupts", TOOL_ID, "id"], "other"),
        "an interrupt must be stored under its own id",
    ),
    (
        "interrupt with an unknown key",
        corrupt(["interrupts", TOOL_ID, "source"], "tool"),
        "unknown key(s) ['source']",
    ),
    (
        "pending execution not an object",
        corrupt(["pending_tool_execution"], "x"),
        "pending_tool_execution: expected an object, got str",
    ),
    (
        "pending message from the user",
        corrupt(["pending_tool_execution", "assistant_message", "role"], "user"),
        "pending_tool_execution.assistant_message.role must be 'assistant', got 'user'",
    ),
    (
        "pending message content not a list",
        corrupt(["pending_tool_execution", "assistant_message", "content"], {}),
        "pending_tool_execution.assistant_message.content must be a list, got dict",
    ),
    (
        "pending results not a list",
        corrupt(["pending_tool_execution", "completed_tool_results"], {}),
        "pending_tool_execution.completed_tool_results must be a list, got dict",
    ),
    (
        "pending result without a toolUseId",
        corrupt(["pending_tool_execution", "completed_tool_results", 0, "toolUseId"], _DELETE),
        "pending_tool_execution.completed_tool_results[0].toolUseId must be a str",
    ),
]


class TestFromDictRejectsMalformedData:
    @pytest.mark.parametrize(
        ("data", "fragment"),
        [case[1:] for case in MALFORMED],
        ids=[case[0] for case in MALFORMED],
    )
    def test_malformed_data_is_refused_with_its_path(self, data: Any, fragment: str) -> None:
        with pytest.raises(InterruptStateDataError) as raised:
            InterruptState.from_dict(data)
        assert fragment in str(raised.value)
        assert isinstance(raised.value, ValueError)

    def test_the_valid_baseline_loads(self) -> None:
        assert InterruptState.from_dict(valid_data()).to_dict() == valid_data()


# --------------------------------------------------------------------------------------------
# Property: random host call sequences keep every invariant
# --------------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
NAMES = ["approve", "deploy", "delete"]
TOOL_USE_IDS = ["t1", "t2"]
UNKNOWN_ID = agent_stream_interrupt_id("never raised")


class InterruptStateMachine(RuleBasedStateMachine):
    """Drives one state with arbitrary host call sequences against a small model.

    The model tracks the interrupt cycle number. An answer is tagged with the cycle it was given
    in, so "a stale answer is never revived" becomes checkable: every answer the state holds, live
    or in the snapshot, must carry the current cycle's tag. A cycle boundary is whatever the spec
    says ends one: ``deactivate``, ``end_interrupt_cycle`` outside a pause, and a pass that begins
    outside a pause.
    """

    def __init__(self) -> None:
        super().__init__()
        self.state = InterruptState()
        self.cycle = 0
        self.counter = 0
        # Model of the agent-stream answers the current cycle has given and that must survive.
        self.stream_answers: dict[str, str] = {}

    def _new_cycle(self) -> None:
        self.cycle += 1
        self.stream_answers.clear()

    def _tag(self) -> str:
        self.counter += 1
        return f"cycle{self.cycle}:answer{self.counter}"

    # ---- rules --------------------------------------------------------------------------------

    @rule(
        stream=st.booleans(),
        name=st.sampled_from(NAMES),
        tool_use_id=st.sampled_from(TOOL_USE_IDS),
        reason=json_values,
    )
    def register(self, stream: bool, name: str, tool_use_id: str, reason: Any) -> None:
        interrupt_id = (
            agent_stream_interrupt_id(name)
            if stream
            else execute_tool_interrupt_id(tool_use_id, name)
        )
        before = self.state.interrupts.get(interrupt_id)
        stored = self.state.register(Interrupt(interrupt_id, name, reason))
        if before is not None and before.response is not None:
            assert stored == before
        else:
            assert stored == Interrupt(interrupt_id, name, reason)
        assert self.state.interrupts[interrupt_id] == stored

    @precondition(lambda self: any(i.response is not None for i in self.state.interrupts.values()))
    @rule(data=st.data(), reason=json_values)
    def re_register_an_answered_gate(self, data: st.DataObject, reason: Any) -> None:
        answered = [i for i in self.state.interrupts.values() if i.response is not None]
        target = data.draw(st.sampled_from(answered), label="answered")
        stored = self.state.register(Interrupt(target.id, target.name, reason))
        assert stored == target
        assert self.state.interrupts[target.id] == target

    @rule()
    def activate(self) -> None:
        self.state.activate()
        assert self.state.activated

    @precondition(lambda self: self.state.activated)
    @rule(reanswer=st.booleans())
    def resume_answering_everything(self, reanswer: bool) -> None:
        targets = [i.id for i in self.state.owed]
        if reanswer:
            targets = list(self.state.interrupts)
        responses = {interrupt_id: self._tag() for interrupt_id in targets}
        self.state.resume([answer(i, r) for i, r in responses.items()])
        self._record(responses)
        assert self.state.owed == ()
        assert self.state.context["responses"] == [answer(i, r) for i, r in responses.items()]

    @rule(data=st.data())
    def resume_with_an_arbitrary_prompt(self, data: st.DataObject) -> None:
        ids = [*self.state.interrupts, UNKNOWN_ID]
        good = st.builds(
            answer,
            st.sampled_from(ids),
            st.integers().map(lambda _: self._tag()) | st.none(),
        )
        bad = st.sampled_from(
            [
                {"text": "hi"},
                {"interruptResponse": "yes"},
                {"interruptResponse": {"interruptId": 3, "response": "x"}},
                {"interruptResponse": {"interruptId": UNKNOWN_ID}},
                "plain",
            ]
        )
        block = good | bad
        prompt = data.draw(
            st.lists(block, max_size=4) | block | st.sampled_from(["fresh", None]),
            label="prompt",
        )
        was_activated = self.state.activated
        before = self.state.to_dict()
        snapshot_before = dict(self.state.snapshot)
        try:
            self.state.resume(prompt)
        except InterruptResumeError:
            assert self.state.to_dict() == before
            assert dict(self.state.snapshot) == snapshot_before
            return
        assert self.state.activated == was_activated
        if not was_activated:
            assert self.state.to_dict() == before  # a fresh prompt changes nothing
            return
        blocks = cast("list[dict[str, Any]]", prompt)
        responses = {
            b["interruptResponse"]["interruptId"]: b["interruptResponse"]["response"]
            for b in blocks
        }
        self._record(responses)
        assert self.state.owed == ()

    @precondition(lambda self: self.state.activated and self.state.owed)
    @rule(
        flaw=st.sampled_from(
            ["drop one", "unknown id", "duplicate", "None answer", "stray block", "bare text"]
        ),
        index=st.integers(min_value=0),
    )
    def resume_with_a_near_miss(self, flaw: str, index: int) -> None:
        # A prompt that answers everything but one flaw: the valid part must not be written.
        prompt: list[Any] = [answer(i.id, self._tag()) for i in self.state.owed]
        position = index % len(prompt)
        if flaw == "drop one":
            del prompt[position]
        elif flaw == "unknown id":
            prompt.insert(position, answer(UNKNOWN_ID, self._tag()))
        elif flaw == "duplicate":
            prompt.append(prompt[position])
        elif flaw == "None answer":
            prompt[position] = answer(prompt[position]["interruptResponse"]["interruptId"], None)
        elif flaw == "stray block":
            prompt.insert(position, {"text": "and also"})
        else:
            prompt = [{"text": "forget it, new task"}]
        before = self.state.to_dict()
        snapshot = dict(self.state.snapshot)
        with pytest.raises(InterruptResumeError):
            self.state.resume(prompt)
        assert self.state.to_dict() == before
        assert dict(self.state.snapshot) == snapshot

    @rule()
    def end_tool_cycle(self) -> None:
        before = dict(self.state.interrupts)
        snapshot = dict(self.state.snapshot)
        self.state.end_tool_cycle()
        assert not self.state.activated
        assert self.state.pending_tool_execution is None
        assert self.state.context == {}
        assert dict(self.state.interrupts) == {
            k: v
            for k, v in before.items()
            if k.startswith(AGENT_STREAM_INTERRUPT_PREFIX) and v.response is not None
        }
        assert dict(self.state.snapshot) == snapshot

    @rule()
    def end_interrupt_cycle(self) -> None:
        was_activated = self.state.activated
        before = self.state.to_dict()
        snapshot = dict(self.state.snapshot)
        self.state.end_interrupt_cycle()
        if was_activated:
            assert self.state.to_dict() == before
            assert dict(self.state.snapshot) == snapshot
        else:
            self._new_cycle()
            assert not any(
                k.startswith(AGENT_STREAM_INTERRUPT_PREFIX) for k in self.state.interrupts
            )
            assert dict(self.state.snapshot) == {}

    @rule()
    def deactivate(self) -> None:
        self.state.deactivate()
        self._new_cycle()
        assert self.state == InterruptState()
        assert dict(self.state.snapshot) == {}

    @rule()
    def begin_pass(self) -> None:
        if not self.state.activated:
            self._new_cycle()
        snapshot = self.state.begin_pass()
        if self.state.activated:
            assert dict(snapshot) == dict(self.state.interrupts)
        else:
            assert dict(snapshot) == {}
            assert not any(
                k.startswith(AGENT_STREAM_INTERRUPT_PREFIX) for k in self.state.interrupts
            )
        for name in NAMES:
            interrupt_id = agent_stream_interrupt_id(name)
            if interrupt_id in self.stream_answers:
                assert gate(snapshot, name) == self.stream_answers[interrupt_id]
            elif interrupt_id not in snapshot or snapshot[interrupt_id].response is None:
                with pytest.raises(InterruptException):
                    gate(snapshot, name)

    @rule(tool_use_id=st.sampled_from(TOOL_USE_IDS), done=st.booleans())
    def store_pending_tool_execution(self, tool_use_id: str, done: bool) -> None:
        results = [tool_result(tool_use_id)] if done else []
        self.state.pending_tool_execution = PendingToolExecution(
            assistant_turn(*TOOL_USE_IDS), results
        )

    @rule(tool_use_id=st.sampled_from(TOOL_USE_IDS))
    def set_pending_tool_results(self, tool_use_id: str) -> None:
        had_pending = self.state.pending_tool_execution is not None
        self.state.set_pending_tool_results([tool_result(tool_use_id)])
        if had_pending:
            assert self.state.pending_tool_execution is not None
            assert self.state.pending_tool_execution.completed_tool_results == [
                tool_result(tool_use_id)
            ]
        else:
            assert self.state.pending_tool_execution is None

    @rule(key=st.sampled_from(["a", "b"]), value=json_values)
    def host_writes_context(self, key: str, value: Any) -> None:
        self.state.context[key] = value

    def _record(self, responses: Mapping[str, Any]) -> None:
        for interrupt_id, response in responses.items():
            assert self.state.interrupts[interrupt_id].response == response
            if interrupt_id.startswith(AGENT_STREAM_INTERRUPT_PREFIX):
                self.stream_answers[interrupt_id] = response

    # ---- invariants ---------------------------------------------------------------------------

    @invariant()
    def json_round_trip_is_exact(self) -> None:
        restored = json_round_trip(self.state)
        assert restored == self.state
        assert restored.to_dict() == self.state.to_dict()
        assert json.dumps(restored.to_dict()) == json.dumps(self.state.to_dict())

    @invariant()
    def entries_are_keyed_by_their_id(self) -> None:
        assert all(k == v.id for k, v in self.state.interrupts.items())
        assert all(k == v.id for k, v in self.state.snapshot.items())

    @invariant()
    def owed_is_exactly_the_unanswered_interrupts(self) -> None:
        assert self.state.owed == tuple(
            i for i in self.state.interrupts.values() if i.response is None
        )

    @invariant()
    def no_answer_outlives_its_cycle(self) -> None:
        tag = f"cycle{self.cycle}:"
        for view in (self.state.interrupts, self.state.snapshot):
            for interrupt in view.values():
                if interrupt.response is not None:
                    assert interrupt.response.startswith(tag), (interrupt, self.cycle)

    @invariant()
    def retained_agent_stream_answers_match_the_model(self) -> None:
        live = {
            k: v.response
            for k, v in self.state.interrupts.items()
            if k.startswith(AGENT_STREAM_INTERRUPT_PREFIX) and v.response is not None
        }
        assert live == self.stream_answers


def test_random_host_call_sequences_keep_every_invariant() -> None:
    run_state_machine_as_test(
        InterruptStateMachine,
        settings=settings(max_examples=300, stateful_step_count=50, deadline=None),
    )
