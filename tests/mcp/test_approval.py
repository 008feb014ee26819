"""Interrupts asked of the client's user: ToolApproval through the proxy subprocess, answered by
a real client's elicitation callback (the handshake protocol, which every 1.x and 2.x peer
speaks). ``test_approval_input_required`` has the 2026-07-28 protocol, which only 2.x has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import ClientSession, types

from .conftest import StartProxy, calls
from .processes import is_error, text_of


class ScriptedUser:
    """An elicitation callback answering from a script, keeping what it was asked."""

    def __init__(self, *answers: types.ElicitResult) -> None:
        self.answers = list(answers)
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params)
        return self.answers.pop(0)


def accept(**content: str) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=dict(content))


async def test_approval_is_asked_through_elicitation(
    start_proxy: StartProxy, call_log: Path
) -> None:
    user = ScriptedUser(
        accept(decision="approve"),
        accept(decision="deny", message="not that one"),
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="cancel"),
        accept(colour="green"),
    )
    async with (
        start_proxy("tests.mcp.gates:approval") as proxy,
        ClientSession(proxy.read, proxy.write, elicitation_callback=user) as client,
    ):
        await client.initialize()
        approved = await client.call_tool("delete_file", {"path": "a.txt"})
        denied = await client.call_tool("delete_file", {"path": "b.txt"})
        declined = await client.call_tool("delete_file", {"path": "c.txt"})
        cancelled = await client.call_tool("delete_file", {"path": "d.txt"})
        ungated = await client.call_tool("echo", {"text": "free"})
        # The upstream's own elicitation reaches the client's user through the proxy.
        asked_upstream = await client.call_tool("favourite", {})
    assert text_of(asked_upstream) == "colour: green"
    assert user.asked[4].message == "Your favourite colour?"
    assert text_of(approved) == "deleted a.txt" and not is_error(approved)
    assert is_error(denied) and "not that one" in text_of(denied)
    for refused in (declined, cancelled):
        assert is_error(refused)
        assert "was not called" in text_of(refused)
        assert "Approval was required" in text_of(refused)
    assert text_of(ungated) == "free"
    assert calls(call_log) == ["delete_file", "echo"]
    assert len(user.asked) == 5
    assert "delete_file" in user.asked[0].message and "a.txt" in user.asked[0].message
    asked = user.asked[0].model_dump(by_alias=True)
    assert asked["requestedSchema"]["required"] == ["decision"]


async def test_a_client_without_elicitation_gets_an_error_and_the_tool_does_not_run(
    start_proxy: StartProxy, call_log: Path
) -> None:
    async with (
        start_proxy("tests.mcp.gates:approval") as proxy,
        ClientSession(proxy.read, proxy.write) as client,
    ):
        await client.initialize()
        refused = await client.call_tool("delete_file", {"path": "a.txt"})
    assert is_error(refused)
    assert "Approval was required" in text_of(refused)
    assert "cannot ask its user" in text_of(refused)
    assert calls(call_log) == []
