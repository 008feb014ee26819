"""Guardrail(mode="monitor"): every flow checked, nothing masked or blocked, each would-be
violation reported to on_violation and to the ``strands_middleware.guardrail`` log."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from strands_middleware.agent import Agent
from strands_middleware.catalog import Guardrail, GuardrailSubject, Verdict
from strands_middleware.events import TextDeltaEvent
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from tests.catalog.conversation import texts
from tests.conformance.drive import CATALOG_HOSTS, drive

ran: list[dict[str, Any]] = []


def send_mail(to: str, body: str) -> str:
    """Send an email."""
    ran.append({"to": to, "body": body})
    return f"sent to {to}: password hunter2"


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    ran.clear()


def block_everything(subject: GuardrailSubject) -> Verdict:
    """Blocks every flow (a policy far too strict: what monitor mode is for finding out)."""
    return Verdict.block(f"not allowed: {subject.text}")


def turns() -> list[Any]:
    return [
        tool_turn("send_mail", {"to": "ceo@example.com", "body": "hi"}, tool_use_id="m1"),
        text_turn("Sent to the CEO."),
    ]


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_monitor_mode_blocks_nothing_and_reports_each_would_be_block(
    host: str, caplog: pytest.LogCaptureFixture
) -> None:
    reported: list[tuple[str, str]] = []
    guardrail = Guardrail(
        block_everything,
        mode="monitor",
        on_violation=lambda subject, verdict: reported.append((subject.flow, verdict.action)),
    )
    run = drive(host, turns(), [send_mail], [guardrail])
    with caplog.at_level(logging.WARNING, logger="strands_middleware.guardrail"):
        outcome = run("mail the ceo")

    # Nothing was blocked: the model was asked twice, the tool ran with what the model wrote, its
    # result reached the model whole, and the user got the reply.
    assert (outcome.stop_reason, outcome.text) == ("end_turn", "Sent to the CEO.")
    assert ran == [{"to": "ceo@example.com", "body": "hi"}]
    assert texts(run.script.requests[0].messages[0]) == ["mail the ceo"]
    assert "hunter2" in str(run.script.requests[1].messages[-1])
    assert reported == [
        ("model_input", "block"),
        ("tool_input", "block"),
        ("tool_output", "block"),
        ("model_output", "block"),
    ]
    records = [r for r in caplog.records if r.name == "strands_middleware.guardrail"]
    assert [
        (r.levelname, r.__dict__["guardrail_flow"], r.__dict__["guardrail_action"]) for r in records
    ] == [
        ("WARNING", "model_input", "block"),
        ("WARNING", "tool_input", "block"),
        ("WARNING", "tool_output", "block"),
        ("WARNING", "model_output", "block"),
    ]
    assert records[0].getMessage() == (
        "Guardrail (monitor): would have blocked model_input (12 characters); nothing was changed"
    )
    # The log holds neither the content nor the verdict's message (which quotes it here).
    for withheld in ("mail the ceo", "ceo@example.com", "hunter2", "Sent to the CEO", "allowed"):
        assert withheld not in caplog.text


def test_monitor_mode_neither_masks_nor_remembers() -> None:
    model = ScriptedModel([text_turn("Noted: jane@example.com."), text_turn("Hi.")])
    reported: list[str] = []
    guardrail = Guardrail(
        lambda subject: Verdict.mask() if "@" in subject.text else Verdict.allow(),
        mode="monitor",
        on_violation=lambda subject, verdict: reported.append(f"{subject.flow} {verdict.action}"),
    )
    agent = Agent(model=model, middleware=[guardrail])
    assert str(agent("write to jane@example.com")).strip() == "Noted: jane@example.com."
    agent("hello")
    assert texts(model.requests[1].messages[0]) == ["write to jane@example.com"]
    assert reported == ["model_input mask", "model_output mask"]


def test_monitor_mode_streams_the_reply_as_it_arrives() -> None:
    agent = Agent(
        model=ScriptedModel([text_turn("the secret is 42")]),
        middleware=[Guardrail(block_everything, mode="monitor", model_input=False)],
    )

    async def deltas() -> list[str]:
        return [
            event.text
            async for event in agent.stream_async("hi")
            if isinstance(event, TextDeltaEvent)
        ]

    assert asyncio.run(deltas()) == ["the secr", "et is 42"]


def test_what_monitor_mode_reports_never_reaches_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A classifier whose reason quotes the card it read: the record has neither.
    classifier = ScriptedModel([text_turn("BLOCK: 'my card is 4111 1111 1111 1111' is a card")])
    guardrail = Guardrail(classifier=classifier, mode="monitor", model_output=False)
    agent = Agent(model=ScriptedModel([text_turn("Noted.")]), middleware=[guardrail])
    with caplog.at_level(logging.DEBUG):
        assert str(agent("my card is 4111 1111 1111 1111")).strip() == "Noted."
    assert "would have blocked model_input (30 characters)" in caplog.text
    assert "4111" not in caplog.text


async def test_on_violation_may_be_async_and_is_called_when_enforcing_too() -> None:
    reported: list[str] = []

    async def report(subject: GuardrailSubject, verdict: Verdict) -> None:
        await asyncio.sleep(0)
        reported.append(f"{subject.flow}: {verdict.message}")

    guardrail = Guardrail(
        lambda subject: Verdict.block("no"), on_violation=report, model_output=False
    )
    result = await Agent(model=ScriptedModel([]), middleware=[guardrail]).invoke_async("hello")
    assert (result.stop_reason, str(result)) == ("guardrail_intervened", "no")
    assert reported == ["model_input: no"]


def test_an_on_violation_that_raises_fails_the_call() -> None:
    def broken(subject: GuardrailSubject, verdict: Verdict) -> None:
        raise ConnectionError("audit sink down")

    guardrail = Guardrail(block_everything, mode="monitor", on_violation=broken)
    agent = Agent(model=ScriptedModel([text_turn("never")]), middleware=[guardrail])
    with pytest.raises(ConnectionError, match="audit sink down"):
        agent("hello")


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"mode": "audit"}, ValueError, r"Guardrail\(mode=\.\.\.\) is 'enforce' .* got 'audit'"),
        ({"on_violation": "log"}, TypeError, r"Guardrail\(on_violation=\.\.\.\) takes a function"),
    ],
)
def test_monitor_configuration_mistakes_are_refused_when_built(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Guardrail(block_everything, **options)
