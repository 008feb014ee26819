"""The snippet of docs/hosts/strands.md, verbatim: type-checked here, never run here.

``tests/bridges/test_readme.py`` checks that the page still shows exactly this code (and
``tests/test_doc_snippets.py`` runs the page's copy).
"""

from strands import Agent, tool  # pyright: ignore[reportUnknownVariableType]

from strands_middleware.bridges.strands import StrandsBridge
from strands_middleware.bridges.strands.testing import ScriptedStrandsModel
from strands_middleware.catalog import ToolApproval
from strands_middleware.interrupts import InterruptResponseContent
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn


@tool
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    return f"deleted {path}"


script = ScriptedModel([tool_turn("delete_file", {"path": "/tmp/report"}), text_turn("Deleted.")])
agent = Agent(model=ScriptedStrandsModel(script), tools=[delete_file], callback_handler=None)
StrandsBridge.of(agent).use(ToolApproval())

paused = agent("Delete the report")
answers: list[InterruptResponseContent] = [
    {"interruptResponse": {"interruptId": interrupt.id, "response": "approve"}}
    for interrupt in paused.interrupts or []
]
done = agent(answers)
