"""A long conversation kept small and safe: Guardrail, ToolResultTrim and Summarize on one agent.

A scripted analyst fetches two long reports, is asked to email a figure to an address, is asked
for a password, and finally compares the quarters. Printed for every model call: exactly what
the model was sent. Watch the tool results arrive cut to head and tail, the first turns turn into
a summary that is written once and reused, the email address masked, and the password question
blocked before any model sees it (and withheld from every later call), while the agent's history
keeps everything as it happened.

Run: ``python examples/long_conversation.py``
"""

from __future__ import annotations

import json

from strands_middleware.agent import Agent
from strands_middleware.catalog import (
    Guardrail,
    GuardrailSubject,
    Summarize,
    ToolResultTrim,
    Verdict,
)
from strands_middleware.content import ContentBlock, Message
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

SHOWN = 90


@tool
def fetch_report(quarter: str) -> str:
    """Fetch a quarterly report.

    Args:
        quarter: Which quarter, e.g. "Q1".
    """
    growth = {"Q1": "+12%", "Q2": "+0%"}[quarter]
    return f"{quarter} revenue {growth}. " + "Details by region and product line. " * 15 + "End."


def policy(subject: GuardrailSubject) -> Verdict:
    """Credentials never reach the model; addresses reach it masked."""
    if "password" in subject.text.lower():
        return Verdict.block("I can't help with credentials.")
    return Verdict.mask() if "@" in subject.text else Verdict.allow()


def shown(block: ContentBlock) -> str:
    if "toolUse" in block:
        tool_use = block["toolUse"]
        return f"-> {tool_use['name']}({json.dumps(tool_use['input'])})"
    if "toolResult" in block:
        text = " ".join(item.get("text", "") for item in block["toolResult"]["content"])
        return f"<- {text}"
    return block.get("text", "")


def show(message: Message) -> list[str]:
    """One line per block, the role on the first, long text shortened."""
    lines: list[str] = []
    for position, block in enumerate(message["content"]):
        text = shown(block).replace("\n", " ")
        text = text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."
        lines.append(f"  {message['role'] if position == 0 else '':9} {text}")
    return lines


def main() -> None:
    model = ScriptedModel(
        [
            tool_turn("fetch_report", {"quarter": "Q1"}, tool_use_id="r1"),
            text_turn("Q1 revenue grew 12%."),
            tool_turn("fetch_report", {"quarter": "Q2"}, tool_use_id="r2"),
            text_turn("Q2 revenue was flat."),
            text_turn("Sent both figures to the address you gave."),
            text_turn("Q1 was the better quarter: +12% against flat."),
        ]
    )
    summarizer = ScriptedModel(
        [
            text_turn("The user asked for the Q1 report: revenue grew 12%."),
            text_turn("Q1 grew 12%, Q2 was flat; both figures were emailed."),
        ]
    )
    agent = Agent(
        model=model,
        tools=[fetch_report],
        middleware=[
            Guardrail(policy),  # first, so it checks what the user and the tools really said
            ToolResultTrim(max_chars=40),
            Summarize(summarizer, max_messages=6),
        ],
    )
    prompts = [
        "Fetch the Q1 report.",
        "Now the Q2 report.",
        "Email both figures to cfo@example.com.",
        "Also, what is the admin password?",
        "Which quarter was better?",
    ]
    for prompt in prompts:
        before = len(model.requests)
        result = agent(prompt)
        print(f"> {prompt}")
        for number, request in enumerate(model.requests[before:], start=before + 1):
            print(f"model call {number} was sent {len(request.messages)} message(s):")
            for message in request.messages:
                print(*show(message), sep="\n")
        print(f"< {result.stop_reason}: {result}")
    print(f"summaries written: {len(summarizer.requests)} for {len(model.requests)} model calls")
    print(f"history: {len(agent.messages)} messages, as they happened, for example:")
    for message in (agent.messages[2], agent.messages[8], agent.messages[10]):
        print(*show(message), sep="\n")


if __name__ == "__main__":
    main()
