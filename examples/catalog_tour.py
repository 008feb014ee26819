"""Several catalog items on one agent: redact, retry, cache, mock, approve, cap.

The agent's model is flaky (it fails once), one of its tools does not exist (a mock answers it),
the other deletes files (a human approves it), and every tool result passes through redaction
before the model reads it. Then two fresh agents ask the same trivia question: the second answer
comes from the cache.

Run: ``python examples/catalog_tour.py``
"""

from __future__ import annotations

from typing import Any

from strands_middleware.agent import Agent, AgentResult
from strands_middleware.catalog import Cache, CallLimit, Redact, Retry, ToolApproval, ToolMock
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool


@tool
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    return f"deleted {path}; owner notified at alice@example.com"


def answers(result: AgentResult, response: Any) -> list[dict[str, Any]]:
    return [
        {"interruptResponse": {"interruptId": i.id, "response": response}}
        for i in result.interrupts
    ]


def main() -> None:
    lookup = tool_turn("lookup_owner", {"path": "/tmp/report.txt"}, tool_use_id="call-1")
    delete = tool_turn("delete_file", {"path": "/tmp/report.txt"}, tool_use_id="call-2")
    model = ScriptedModel([ConnectionError("throttled"), lookup, delete, text_turn("Done.")])
    mock = ToolMock({"lookup_owner": {"owner": "alice"}})
    cache = Cache()
    agent = Agent(
        model=model,
        tools=[delete_file],
        middleware=[
            CallLimit(model_calls=10, tool_calls=5),
            Retry(attempts=3, backoff=0.01, on=ConnectionError),
            cache,
            mock,
            ToolApproval(tools=["delete_file"]),
            Redact(),
        ],
    )

    paused = agent("Delete /tmp/report.txt after checking who owns it")
    print(f"paused: {paused.stop_reason}, asks {[i.name for i in paused.interrupts]}")
    done = agent(answers(paused, "approve"))
    print(f"done: {done.stop_reason}, answer {done}")

    results = [
        block["toolResult"]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block
    ]
    for result in results:
        print(f"tool result {result['toolUseId']}: {result['content'][0].get('text')}")
    print(f"mocked calls: {[call['name'] for call in mock.calls]}")
    print(f"model requests: {len(model.requests)} (one failed and was retried)")

    # The same question from two fresh agents sharing one model: the second is a cache hit.
    trivia = ScriptedModel([text_turn("Paris.")])
    for _ in range(2):
        print(f"trivia: {Agent(model=trivia, middleware=[cache])('Capital of France?')}")
    print(f"cache: {cache.hits} hit(s), {cache.misses} misses")
    print(f"trivia model calls: {len(trivia.requests)}")


if __name__ == "__main__":
    main()
