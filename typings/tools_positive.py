"""What a type checker infers on ``@tool`` and `FunctionTool` (type-checked, never run)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import TypeVar

from typing_extensions import assert_type

from strands_middleware.content import ToolSpec
from strands_middleware.events import ToolResultEvent
from strands_middleware.tools import AgentTool, FunctionTool, tool

R = TypeVar("R")


def returns(function_tool: FunctionTool[..., R]) -> R:
    """Reads `FunctionTool`'s second parameter: what the tool's function returns."""
    return function_tool.__wrapped__()


# The bare decorator keeps the function's parameters and return type.
@tool
def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


assert_type(returns(add), int)
assert_type(add(1, 2), int)
assert_type(add(a=1), int)
as_function: Callable[[int, int], int] = add


# An async function stays async when called directly.
@tool
async def fetch(url: str, *, timeout: float = 10.0) -> str:
    """Fetch a page."""
    return url


async def call_fetch() -> None:
    assert_type(await fetch("https://example.com", timeout=1.0), str)


# With arguments, the decorator is a factory; the tool keeps the function's signature.
@tool(name="search_docs", description="Search the documentation.")
def search(query: str, limit: int = 5) -> list[str]:
    return [query] * limit


assert_type(returns(search), list[str])
assert_type(search("x", limit=2), list[str])
as_search: Callable[[str, int], list[str]] = search


@tool()
def ping() -> None:
    """Check the tool runs."""


assert_type(returns(ping), None)

# Called as a function rather than as a decorator.
assert_type(returns(tool(len)), int)
assert_type(tool(name="size")(len)("abc"), int)

# A function tool is an AgentTool, with the members a host uses.
as_agent_tool: AgentTool = add
assert_type(add.tool_name, str)
assert_type(add.tool_spec, ToolSpec)
stream = add.stream({"toolUseId": "t1", "name": "add", "input": {"a": 1}}, {})
assert_type(stream, AsyncGenerator[ToolResultEvent, None])
tools: list[AgentTool] = [add, fetch, search, ping]
