"""Redact(reversible=True): the model sees stable pseudonyms, the tool and the user the values,
logs and traces never do."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from strands_middleware.agent import Agent
from strands_middleware.catalog import Redact, Tracing
from strands_middleware.conformance import Capability
from strands_middleware.events import ModelStreamEvent, TextDeltaEvent
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool
from tests.catalog.conversation import texts
from tests.conformance.drive import CATALOG_HOSTS, HOSTS, drive

ran: list[dict[str, Any]] = []


def send_mail(to: str, cc: str, body: str) -> str:
    """Send an email."""
    ran.append({"to": to, "cc": cc, "body": body})
    return f"sent to {to}, copy to {cc}"


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    ran.clear()


def mail_turns() -> list[Any]:
    return [
        tool_turn(
            "send_mail",
            {"to": "<EMAIL_1>", "cc": "<EMAIL_2>", "body": "report for <EMAIL_1>"},
            tool_use_id="m1",
        ),
        text_turn("Sent to <EMAIL_1>, copy to <EMAIL_2>; <EMAIL_9> is not one of them."),
    ]


PROMPT = "mail the report to jane@example.com, copy bob@example.org, jane@example.com knows"


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_the_model_sees_pseudonyms_and_the_tool_and_the_user_the_values(host: str) -> None:
    run = drive(host, mail_turns(), [send_mail], [Redact(reversible=True)])
    outcome = run(PROMPT)

    # The model is sent stable pseudonyms: the same address is <EMAIL_1> both times.
    first = run.script.requests[0].messages
    assert texts(first[-1]) == ["mail the report to <EMAIL_1>, copy <EMAIL_2>, <EMAIL_1> knows"]
    # The tool gets the values back, wherever the model put the pseudonyms.
    assert ran == [
        {"to": "jane@example.com", "cc": "bob@example.org", "body": "report for jane@example.com"}
    ]
    # What the tool returned reaches the model with the run's pseudonyms.
    assert "sent to <EMAIL_1>, copy to <EMAIL_2>" in json.dumps(run.script.requests[1].messages)
    assert "example" not in json.dumps(run.script.requests[1].messages)
    # The user reads the values; a pseudonym the run never handed out stays as written.
    assert outcome.text == (
        "Sent to jane@example.com, copy to bob@example.org; <EMAIL_9> is not one of them."
    )
    assert texts(run.messages[0]) == [PROMPT]


def test_a_new_run_hands_out_pseudonyms_afresh_and_masks_the_history_again() -> None:
    model = ScriptedModel([text_turn("Hello <EMAIL_1>."), text_turn("Noted <EMAIL_2>.")])
    agent = Agent(model=model, middleware=[Redact(reversible=True)])
    assert str(agent("I am jane@example.com")).strip() == "Hello jane@example.com."
    assert str(agent("my colleague is bob@example.org")).strip() == "Noted bob@example.org."
    # The history holds the values; the second run is sent them as its own pseudonyms.
    assert [texts(m) for m in model.requests[1].messages] == [
        ["I am <EMAIL_1>"],
        ["Hello <EMAIL_1>."],
        ["my colleague is <EMAIL_2>"],
    ]


class PiecesModel:
    """A model that streams one text block in exactly the pieces given."""

    def __init__(self, *pieces: str) -> None:
        self.pieces = pieces

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"contentBlockIndex": 0, "start": {}}}
        for piece in self.pieces:
            yield {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": piece}}}
        yield {"contentBlockStop": {"contentBlockIndex": 0}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def test_a_pseudonym_split_across_streamed_deltas_is_restored_whole() -> None:
    model = PiecesModel("Writing to <EMA", "IL_1> now", ", then <EM", "AIL_1> again. " + "x" * 80)
    agent = Agent(model=model, middleware=[Redact(reversible=True)])

    async def collect() -> tuple[list[str], list[str]]:
        deltas: list[str] = []
        chunks: list[str] = []
        async for event in agent.stream_async("write to jane@example.com"):
            if isinstance(event, TextDeltaEvent):
                deltas.append(event.text)
            elif isinstance(event, ModelStreamEvent) and "contentBlockDelta" in event.chunk:
                chunks.append(event.chunk["contentBlockDelta"]["delta"]["text"])
        return deltas, chunks

    deltas, chunks = asyncio.run(collect())
    restored = "Writing to jane@example.com now, then jane@example.com again. " + "x" * 80
    assert "".join(deltas) == restored
    assert chunks == deltas
    assert not any("<" in delta for delta in deltas)
    assert texts(agent.messages[-1]) == [restored]


def test_traces_and_logs_hold_the_pseudonyms_never_the_values(
    caplog: pytest.LogCaptureFixture,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing = Tracing(tracer=provider.get_tracer("tests"), record_content=True)
    agent = Agent(
        model=ScriptedModel(mail_turns()),
        tools=[tool(send_mail)],
        middleware=[tracing, Redact(reversible=True)],
    )
    with caplog.at_level(logging.DEBUG):
        result = agent(PROMPT)
    assert str(result).strip().startswith("Sent to jane@example.com")
    assert ran[0]["to"] == "jane@example.com"
    recorded = json.dumps([dict(span.attributes or {}) for span in exporter.get_finished_spans()])
    assert "<EMAIL_1>" in recorded and "<EMAIL_2>" in recorded
    for value in ("jane@example.com", "bob@example.org"):
        assert value not in recorded
        assert value not in caplog.text


def test_with_tool_input_the_tool_gets_the_pseudonyms() -> None:
    agent = Agent(
        model=ScriptedModel(mail_turns()),
        tools=[tool(send_mail)],
        middleware=[Redact(reversible=True, tool_input=True)],
    )
    agent(PROMPT)
    assert ran == [{"to": "<EMAIL_1>", "cc": "<EMAIL_2>", "body": "report for <EMAIL_1>"}]


def test_checks_of_the_built_in_patterns_still_apply_and_labels_follow_pattern_names() -> None:
    model = ScriptedModel([text_turn("ok")])
    redact = Redact(reversible=True, patterns={"card_number": r"\d{16}", "ticket id": r"T-\d+"})
    Agent(model=model, middleware=[redact])("card 4111111111111111 and T-7 and T-7")
    assert texts(model.requests[0].messages[0]) == [
        "card <CARD_NUMBER_1> and <TICKET_ID_1> and <TICKET_ID_1>"
    ]
    model = ScriptedModel([text_turn("ok")])
    Agent(model=model, middleware=[Redact(reversible=True)])("order 1234567812345678 paid")
    assert texts(model.requests[0].messages[0]) == ["order 1234567812345678 paid"]  # no Luhn


def test_redact_called_directly_belongs_to_no_run_and_masks_plainly() -> None:
    assert Redact(reversible=True).redact({"to": "jane@example.com"}) == {"to": "[REDACTED:email]"}


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"reversible": "yes"}, TypeError, r"Redact\(reversible=\.\.\.\) must be True or False"),
        (
            {"reversible": True, "replacement": "<{name}>"},
            ValueError,
            r"Redact\(reversible=True\) masks with pseudonyms .* replacement=",
        ),
        (
            {"reversible": True, "model_input": False},
            ValueError,
            r"Redact\(reversible=True\) .* needs model_input=True",
        ),
    ],
)
def test_reversible_configuration_mistakes_are_refused_when_built(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Redact(**options)


def test_a_host_without_run_state_refuses_it_when_registered_naming_why() -> None:
    for name, harness in HOSTS.items():
        if Capability.RUN_STATE in harness.capabilities:
            drive(name, [text_turn("ok")], [], [Redact(reversible=True)])
            continue
        with pytest.raises(ValueError, match=r"^Redact\(reversible=True\) cannot run on \w+: "):
            drive(name, [text_turn("ok")], [], [Redact(reversible=True)])
        drive(name, [text_turn("ok")], [], [Redact()])  # masking alone works there


def test_text_that_cannot_hold_a_pseudonym_streams_at_once_and_unchanged() -> None:
    agent = Agent(
        model=PiecesModel("Hello ", "there, ", "<EMAIL_1>", " and bye"),
        middleware=[Redact(reversible=True)],
    )

    async def deltas() -> list[str]:
        return [
            event.text
            async for event in agent.stream_async("I am jane@example.com")
            if isinstance(event, TextDeltaEvent)
        ]

    # Once a "<" is held, the rest waits until the pseudonym can be told whole (the block's end
    # here, as the text stays short).
    assert asyncio.run(deltas()) == ["Hello ", "there, ", "jane@example.com and bye"]


def look_up_owner() -> str:
    """Look up the owner's address."""
    return "jane@example.com"


def test_a_pseudonym_a_tool_result_hands_out_is_restored_in_a_later_reply() -> None:
    # The run's first model call has no pseudonym to restore (it streams through untouched and
    # its "<EMAIL_1>" stays as written); the tool's result hands one out, and the next reply,
    # which uses it, reaches the user with the value.
    model = ScriptedModel(
        [
            tool_turn("look_up_owner", {}, tool_use_id="o1", text="No <EMAIL_1> yet."),
            text_turn("Write to <EMAIL_1>."),
        ]
    )
    agent = Agent(model=model, tools=[tool(look_up_owner)], middleware=[Redact(reversible=True)])
    assert str(agent("who owns it?")).strip() == "Write to jane@example.com."
    assert texts(agent.messages[1]) == ["No <EMAIL_1> yet."]
    assert "<EMAIL_1>" in json.dumps(model.requests[1].messages[-1])
    assert "example" not in json.dumps(model.requests[1].messages)
