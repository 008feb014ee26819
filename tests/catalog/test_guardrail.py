"""Guardrail: each flow checked, allow / mask / block with their effects, streaming, classifier."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any, cast

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    MiddlewareNext,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.catalog import DEFAULT_POLICY, Guardrail, GuardrailSubject, Verdict
from strands_middleware.content import Message
from strands_middleware.events import TextDeltaEvent, ToolInterruptEvent
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool
from tests.catalog.conversation import texts
from tests.conformance.drive import CATALOG_HOSTS, drive

Check = Callable[[GuardrailSubject], Verdict]


def on(flow: str, word: str, verdict: Verdict, seen: list[str] | None = None) -> Check:
    """A check giving ``verdict`` when ``flow``'s text has ``word``, allowing anything else."""

    def check(subject: GuardrailSubject) -> Verdict:
        if seen is not None:
            seen.append(f"{subject.flow}: {subject.text}")
        if subject.flow == flow and word in subject.text:
            return verdict
        return Verdict.allow()

    return check


ran: list[dict[str, Any]] = []


def send_mail(to: str, body: str) -> str:
    """Send an email."""
    ran.append({"to": to, "body": body})
    return f"sent to {to}"


def read_vault(name: str) -> str:
    """Read a secret from the vault."""
    ran.append({"name": name})
    return f"{name}: password hunter2"


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    ran.clear()


def result_block(message: Message) -> Any:
    return message["content"][0]["toolResult"]


# ---- blocks ----------------------------------------------------------------------------------


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_a_blocked_prompt_ends_the_run_before_the_model_is_called_and_stays_withheld(
    host: str,
) -> None:
    check = on("model_input", "bomb", Verdict.block("I can't help with that."))
    run = drive(host, [text_turn("Sunny.")], [], [Guardrail(check)])

    outcome = run("how do I build a bomb")
    assert (outcome.stop_reason, outcome.text) == (
        "guardrail_intervened",
        "I can't help with that.",
    )
    assert run.script.requests == []
    assert [texts(m) for m in run.messages] == [
        ["how do I build a bomb"],
        ["I can't help with that."],
    ]

    # The history keeps what the user wrote; later calls send it withheld.
    assert run("what is the weather?").text == "Sunny."
    assert [texts(m) for m in run.script.requests[0].messages] == [
        ["[This message was withheld by a guardrail.]"],
        ["I can't help with that."],
        ["what is the weather?"],
    ]


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_a_blocked_reply_ends_the_run_and_never_enters_the_history(host: str) -> None:
    run = drive(
        host,
        [text_turn("The launch code is 0000.")],
        [],
        [Guardrail(on("model_output", "launch code", Verdict.block()))],
    )
    outcome = run("what is the launch code?")
    assert outcome.stop_reason == "guardrail_intervened"
    assert outcome.text == "The response was blocked by a guardrail."
    assert texts(run.messages[-1]) == ["The response was blocked by a guardrail."]
    assert len(run.messages) == 2


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_a_blocked_tool_call_is_an_error_result_the_model_reads_and_the_tool_does_not_run(
    host: str,
) -> None:
    check = on("tool_input", "ceo@", Verdict.block("Mail to executives needs approval."))
    run = drive(
        host,
        [
            tool_turn("send_mail", {"to": "ceo@example.com", "body": "hi"}, tool_use_id="m1"),
            text_turn("I could not send it."),
        ],
        [send_mail],
        [Guardrail(check)],
    )
    outcome = run("mail the ceo")
    assert (outcome.stop_reason, outcome.text) == ("end_turn", "I could not send it.")
    assert ran == []
    result = result_block(run.script.requests[1].messages[-1])
    assert result["status"] == "error"
    assert result["content"] == [
        {
            "text": "Blocked by a guardrail: this tool call was not run. Mail to executives needs "
            "approval."
        }
    ]


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_a_blocked_tool_result_is_replaced_by_an_error_result(host: str) -> None:
    run = drive(
        host,
        [tool_turn("read_vault", {"name": "db"}, tool_use_id="v1"), text_turn("Withheld.")],
        [read_vault],
        [Guardrail(on("tool_output", "password", Verdict.block()))],
    )
    run("read the db secret")
    assert ran == [{"name": "db"}]
    result = result_block(run.messages[2])
    assert result["status"] == "error"
    assert result["content"] == [
        {"text": "Blocked by a guardrail: this tool's result was withheld."}
    ]
    assert "hunter2" not in str(run.script.requests[1].messages)


# ---- masks -----------------------------------------------------------------------------------


def mask_addresses(subject: GuardrailSubject) -> Verdict:
    return Verdict.mask() if "@" in subject.text else Verdict.allow()


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_a_mask_verdict_masks_each_flow_as_redact_does(host: str) -> None:
    run = drive(
        host,
        [
            tool_turn("send_mail", {"to": "jane@example.com", "body": "report"}, tool_use_id="m1"),
            text_turn("Sent to jane@example.com."),
            text_turn("You're welcome."),
        ],
        [send_mail],
        [Guardrail(mask_addresses)],
    )
    outcome = run("mail the report to jane@example.com")
    # model_input: the model is sent the prompt masked; the history keeps it.
    first = run.script.requests[0].messages
    assert texts(first[0]) == ["mail the report to [REDACTED:email]"]
    assert texts(run.messages[0]) == ["mail the report to jane@example.com"]
    # tool_input: the tool gets masked arguments; tool_output: its result is masked.
    assert ran == [{"to": "[REDACTED:email]", "body": "report"}]
    assert result_block(run.messages[2])["content"] == [{"text": "sent to [REDACTED:email]"}]
    # model_output: the reply enters the history masked.
    assert outcome.text == "Sent to [REDACTED:email]."
    # The masked prompt stays masked in every later call.
    run("thanks")
    assert texts(run.script.requests[2].messages[0]) == ["mail the report to [REDACTED:email]"]


def test_patterns_and_replacement_are_redacts() -> None:
    model = ScriptedModel([text_turn("ok")])
    guardrail = Guardrail(
        lambda subject: Verdict.mask(),
        patterns={"ticket": r"TCK-\d+"},
        replacement="<{name}>",
        model_output=False,
    )
    Agent(model=model, middleware=[guardrail])("close TCK-42 for jane@example.com")
    assert texts(model.requests[0].messages[0]) == ["close <ticket> for jane@example.com"]


# ---- what is checked -------------------------------------------------------------------------


def test_each_flow_is_checked_with_its_own_text_and_a_flow_without_text_is_not() -> None:
    seen: list[str] = []
    model = ScriptedModel(
        [tool_turn("read_vault", {"name": "db"}, tool_use_id="v1"), text_turn("Done.")]
    )
    agent = Agent(
        model=model,
        tools=[tool(read_vault)],
        middleware=[Guardrail(on("", "", Verdict.allow(), seen))],
    )
    agent("read it")
    assert seen == [
        "model_input: read it",
        # The reply holds only a tool call: no text, no model_output check.
        'tool_input: [called tool read_vault with {"name": "db"}]',
        "tool_output: db: password hunter2",
        # The newest message holds only tool results: no model_input check.
        "model_output: Done.",
    ]


def test_switched_off_flows_are_not_checked() -> None:
    seen: list[str] = []
    agent = Agent(
        model=ScriptedModel([text_turn("Hi.")]),
        middleware=[Guardrail(on("", "", Verdict.allow(), seen), model_input=False)],
    )
    agent("hello")
    assert seen == ["model_output: Hi."]


async def test_an_async_check_is_awaited() -> None:
    async def check(subject: GuardrailSubject) -> Verdict:
        await asyncio.sleep(0)
        return Verdict.block("no") if subject.flow == "model_input" else Verdict.allow()

    result = await Agent(model=ScriptedModel([]), middleware=[Guardrail(check)]).invoke_async(
        "hello"
    )
    assert (result.stop_reason, str(result)) == ("guardrail_intervened", "no")


def test_a_check_that_returns_something_else_is_a_type_error_naming_what_it_returned() -> None:
    agent = Agent(model=ScriptedModel([]), middleware=[Guardrail(lambda subject: True)])  # type: ignore[arg-type,return-value]
    with pytest.raises(
        TypeError, match=r"Guardrail\(check=\.\.\.\) returned a value of type bool for model_input"
    ):
        agent("hello")


def test_a_check_that_raises_fails_the_call_with_its_error() -> None:
    def broken(subject: GuardrailSubject) -> Verdict:
        raise ConnectionError("moderation service down")

    agent = Agent(model=ScriptedModel([text_turn("never")]), middleware=[Guardrail(broken)])
    with pytest.raises(ConnectionError, match="moderation service down"):
        agent("hello")


def test_a_tool_call_that_pauses_for_a_human_passes_unchecked() -> None:
    seen: list[str] = []

    async def pause(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield ToolInterruptEvent(context.tool_use, [Interrupt(id="i1", name="approve")])

    agent = Agent(
        model=ScriptedModel([tool_turn("read_vault", {"name": "db"}, tool_use_id="v1")]),
        tools=[tool(read_vault)],
        middleware=[
            Guardrail(on("", "", Verdict.allow(), seen), model_input=False, tool_input=False),
            ExecuteToolStage.wrap(pause),
        ],
    )
    assert agent("read it").stop_reason == "interrupt"
    assert seen == []


# ---- streaming -------------------------------------------------------------------------------


def streamed(agent: Agent, prompt: str, log: list[str]) -> list[TypedEvent]:
    async def run() -> list[TypedEvent]:
        events: list[TypedEvent] = []
        async for event in agent.stream_async(prompt):
            if isinstance(event, TextDeltaEvent):
                log.append(f"delta {event.text!r}")
            events.append(event)
        return events

    return asyncio.run(run())


def logging_check(log: list[str], block_word: str) -> Check:
    def check(subject: GuardrailSubject) -> Verdict:
        log.append(f"check {subject.flow}")
        return Verdict.block() if block_word in subject.text else Verdict.allow()

    return check


def test_buffered_output_is_released_only_after_the_reply_passed_its_check() -> None:
    log: list[str] = []
    agent = Agent(
        model=ScriptedModel([text_turn("Hello there")]),
        middleware=[Guardrail(logging_check(log, "secret"))],
    )
    streamed(agent, "hi", log)
    assert log == ["check model_input", "check model_output", "delta 'Hello'", "delta ' there'"]


def test_a_blocked_buffered_reply_streams_only_the_replacement_text() -> None:
    log: list[str] = []
    agent = Agent(
        model=ScriptedModel([text_turn("the secret is 42")]),
        middleware=[Guardrail(logging_check(log, "secret"))],
    )
    events = streamed(agent, "hi", log)
    assert log == [
        "check model_input",
        "check model_output",
        "delta 'The response was blocked by a guardrail.'",
    ]
    assert "42" not in str(events)


def test_released_output_streams_as_it_arrives_and_only_the_finished_reply_is_checked() -> None:
    log: list[str] = []
    agent = Agent(
        model=ScriptedModel([text_turn("the secret is 42")]),
        middleware=[Guardrail(logging_check(log, "secret"), buffer_output=False)],
    )
    events = streamed(agent, "hi", log)
    assert log == [
        "check model_input",
        "delta 'the secr'",
        "delta 'et is 42'",
        "check model_output",
    ]
    # The consumer saw the deltas; the result and the history hold the block.
    assert str(events[-1].message["content"]) == str(
        [{"text": "The response was blocked by a guardrail."}]
    )
    assert texts(agent.messages[-1]) == ["The response was blocked by a guardrail."]


def test_on_strands_a_blocked_buffered_reply_never_reaches_the_stream() -> None:
    run = drive(
        "strands",
        [text_turn("the secret is 42")],
        [],
        [Guardrail(on("model_output", "secret", Verdict.block()))],
    )

    async def collect() -> list[Any]:
        return [event async for event in run.host.stream("hi")]

    events: list[Any] = asyncio.run(collect())
    data = "".join(event["data"] for event in events if isinstance(event.get("data"), str))
    assert data == "The response was blocked by a guardrail."
    assert events[-1]["result"].stop_reason == "guardrail_intervened"


# ---- the classifier --------------------------------------------------------------------------


def classified(*answers: str) -> ScriptedModel:
    return ScriptedModel([text_turn(answer) for answer in answers])


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_a_classifier_model_decides_from_its_first_word(host: str) -> None:
    classifier = classified("ALLOW", "BLOCK: asks about weapons")
    guardrail = Guardrail(
        classifier=classifier, model_output=False, tool_input=False, tool_output=False
    )
    run = drive(host, [text_turn("Paris.")], [], [guardrail])
    assert run("capital of France?").text == "Paris."
    outcome = run("how to make a weapon")
    assert (outcome.stop_reason, outcome.text) == ("guardrail_intervened", "asks about weapons")

    asked = classifier.requests[1]
    assert asked.system_prompt is not None
    assert DEFAULT_POLICY in asked.system_prompt
    assert texts(asked.messages[0]) == [
        "Content (a message sent to the assistant):\n\nhow to make a weapon"
    ]


def test_a_classifier_mask_masks_and_its_own_policy_is_used() -> None:
    classifier = classified("mask.")
    model = ScriptedModel([text_turn("ok")])
    guardrail = Guardrail(classifier=classifier, policy="Mask customer emails.", model_output=False)
    Agent(model=model, middleware=[guardrail])("write to jane@example.com")
    assert texts(model.requests[0].messages[0]) == ["write to [REDACTED:email]"]
    assert "Mask customer emails." in (classifier.requests[0].system_prompt or "")


def test_an_unreadable_classifier_answer_blocks_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    guardrail = Guardrail(classifier=classified("I think it is probably fine"))
    agent = Agent(model=ScriptedModel([text_turn("never")]), middleware=[guardrail])
    with caplog.at_level(logging.WARNING, logger="strands_middleware"):
        result = agent("hello")
    assert result.stop_reason == "guardrail_intervened"
    assert "classifier's answer for model_input (27 characters)" in caplog.text
    assert "probably fine" not in caplog.text


def test_what_a_guardrail_withholds_never_reaches_the_log(caplog: pytest.LogCaptureFixture) -> None:
    # A classifier that quotes what it read, unreadably: the prompt is blocked, and the log says
    # so without the prompt's text.
    guardrail = Guardrail(classifier=classified("Hmm, 'my card is 4111 1111 1111 1111' is risky"))
    agent = Agent(model=ScriptedModel([text_turn("never")]), middleware=[guardrail])
    with caplog.at_level(logging.DEBUG):
        result = agent("my card is 4111 1111 1111 1111")
        agent("my card is 4111 1111 1111 1111")  # the remembered block, asked again
    assert result.stop_reason == "guardrail_intervened"
    assert caplog.records, "the unreadable answer is logged"
    assert "4111" not in caplog.text


def test_a_remembered_block_keeps_its_message() -> None:
    seen: list[str] = []
    check = on("model_input", "bomb", Verdict.block("I can't help with that."), seen)
    agent = Agent(model=ScriptedModel([]), middleware=[Guardrail(check)])
    first = agent("how do I build a bomb")
    again = agent("how do I build a bomb")
    assert str(first).strip() == str(again).strip() == "I can't help with that."
    assert again.stop_reason == "guardrail_intervened"
    assert len(seen) == 1  # the second verdict is the remembered one: the check is not asked


def test_a_mask_verdict_that_fails_at_run_time_names_guardrail() -> None:
    guardrail = Guardrail(
        lambda subject: Verdict.mask(),
        replacement=lambda name, text: cast(str, None),
        model_output=False,
        tool_input=False,
        tool_output=False,
    )
    agent = Agent(model=ScriptedModel([text_turn("ok")]), middleware=[guardrail])
    with pytest.raises(TypeError, match=r"^Guardrail\(replacement=\.\.\.\) returned None"):
        agent("write to jane@example.com")


# ---- configuration ---------------------------------------------------------------------------


def allow(subject: GuardrailSubject) -> Verdict:
    return Verdict.allow()


@pytest.mark.parametrize(
    ("args", "options", "error", "message"),
    [
        ((), {}, ValueError, r"Guardrail needs exactly one of check=\.\.\."),
        ((allow,), {"classifier": classified()}, ValueError, r"exactly one of check"),
        (("strict",), {}, TypeError, r"Guardrail\(check=\.\.\.\) takes a function"),
        ((), {"classifier": "small"}, TypeError, r"Guardrail\(classifier=\.\.\.\) takes a model"),
        ((allow,), {"policy": ""}, ValueError, r"Guardrail\(policy=\.\.\.\) must be a non-empty"),
        ((allow,), {"tool_input": "yes"}, TypeError, r"tool_input=\.\.\.\) must be True or False"),
        ((allow,), {"buffer_output": 1}, TypeError, r"buffer_output=\.\.\.\) must be True"),
        (
            (allow,),
            {
                "model_input": False,
                "model_output": False,
                "tool_input": False,
                "tool_output": False,
            },
            ValueError,
            r"every flow switched off",
        ),
        ((allow,), {"patterns": {}}, ValueError, r"^Guardrail\(patterns=\.\.\.\) is empty"),
        ((allow,), {"patterns": {"x": "("}}, ValueError, r"^Guardrail\(patterns=\.\.\.\) pattern"),
        (
            (allow,),
            {"patterns": "TCK"},
            TypeError,
            r"^Guardrail\(patterns=\.\.\.\) takes a mapping",
        ),
        ((allow,), {"replacement": "{nam}"}, ValueError, r"^Guardrail\(replacement=\.\.\.\) may"),
        ((allow,), {"replacement": 3}, TypeError, r"^Guardrail\(replacement=\.\.\.\) takes"),
    ],
)
def test_configuration_mistakes_are_refused_when_built(
    args: tuple[Any, ...], options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Guardrail(*args, **options)


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: Verdict.block(cast(str, 5)), TypeError, r"Verdict message must be a str"),
        (lambda: Verdict.block(cast(str, None)), TypeError, r"got None"),
        (lambda: Verdict(cast(Any, "deny")), ValueError, r"'allow', 'mask' or 'block'"),
        (lambda: Verdict("allow", "fine"), ValueError, r"only a block carries a message"),
    ],
)
def test_a_verdict_that_makes_no_sense_is_refused_when_built(
    build: Callable[[], Verdict], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build()


def test_verdicts_say_what_they_do() -> None:
    assert Verdict.allow() == Verdict("allow")
    assert Verdict.mask() == Verdict("mask")
    assert Verdict.block("why") == Verdict("block", "why")
