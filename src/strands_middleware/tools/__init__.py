"""Tools: the shape the agent loop calls, and ``@tool`` to make one from a plain function.

`AgentTool` is the tool shape (a `typing.Protocol`); `tool` turns a function into a
`FunctionTool` whose spec is read from the function itself.
"""

from ..exceptions import ToolInputError
from ._function_tool import FunctionTool, result_text, tool
from ._shape import AgentTool

__all__ = ["AgentTool", "FunctionTool", "ToolInputError", "result_text", "tool"]
