"""The snippet of docs/hosts/pydantic-ai.md, verbatim: type-checked, and run by one test.

Unlike the contract files beside it, this one is also run: ``tests/bridges/on_pydantic_ai/
test_readme.py`` checks that the page still shows exactly this code, and runs it in a process
of its own (the snippet pauses a run, resumes it from JSON and prints the reply).
"""

import json

from pydantic import TypeAdapter
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.tools import DeferredToolRequests

from strands_middleware.bridges.pydantic_ai import (
    PydanticAIMiddleware,
    interrupts_of,
    resume_results,
)
from strands_middleware.bridges.pydantic_ai.testing import ScriptedPydanticAIModel
from strands_middleware.catalog import ToolApproval
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn


def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    return f"deleted {path}"


script = ScriptedModel([tool_turn("delete_file", {"path": "/tmp/report"}), text_turn("Deleted.")])
agent = Agent(
    ScriptedPydanticAIModel(script),
    tools=[delete_file],
    capabilities=[PydanticAIMiddleware(ToolApproval())],
    output_type=[str, DeferredToolRequests],
)

paused = agent.run_sync("Delete the report")
assert isinstance(paused.output, DeferredToolRequests)
# The paused run is plain data: pydantic-ai's history and its deferred calls, as JSON.
saved = json.dumps(
    {
        "history": json.loads(paused.all_messages_json()),
        "requests": TypeAdapter(DeferredToolRequests).dump_python(paused.output, mode="json"),
    }
)

# Later, in any process: answer the interrupts by their ids and resume.
state = json.loads(saved)
requests = TypeAdapter(DeferredToolRequests).validate_python(state["requests"])
answers = {interrupt.id: "approve" for interrupt in interrupts_of(requests)}
done = agent.run_sync(
    message_history=ModelMessagesTypeAdapter.validate_python(state["history"]),
    deferred_tool_results=resume_results(requests, answers),
)
