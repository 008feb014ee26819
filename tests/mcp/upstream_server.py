"""An MCP server the tests start as a stdio subprocess: the upstream a proxy forwards to.

Each call appends a line to the file named by ``UPSTREAM_CALL_LOG`` (when set), so a test can
tell whether the upstream tool ran at all.
"""

from __future__ import annotations

import base64
import os
import sys
import time
from typing import Any

import anyio
from mcp.types import ImageContent
from pydantic import BaseModel

try:  # mcp 2.x
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as Server
except ModuleNotFoundError:  # mcp 1.x
    from mcp.server.fastmcp import Context  # type: ignore[no-redef]
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]

# One transparent pixel, the smallest PNG there is.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)

server = Server("upstream", instructions="the test upstream", log_level="WARNING")


def _record(name: str, arguments: dict[str, Any]) -> None:
    path = os.environ.get("UPSTREAM_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()} {name} {sorted(arguments.items())}\n")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    _record("echo", {"text": text})
    return text


@server.tool()
def add(a: int, b: int) -> dict[str, int]:
    """Add two numbers; the sum is structured content."""
    _record("add", {"a": a, "b": b})
    return {"sum": a + b}


@server.tool()
def delete_file(path: str) -> str:
    """Pretend to delete a file."""
    _record("delete_file", {"path": path})
    return f"deleted {path}"


@server.tool()
def pixel() -> ImageContent:
    """An image."""
    _record("pixel", {})
    data = base64.b64encode(PIXEL).decode()
    return ImageContent.model_validate({"type": "image", "data": data, "mimeType": "image/png"})


@server.tool()
def fail(message: str) -> str:
    """Raise, so the SDK answers with an error result."""
    _record("fail", {"message": message})
    raise ValueError(message)


@server.tool()
async def die(seconds: float) -> str:
    """Exit the whole process after a while, in the middle of the call."""
    _record("die", {"seconds": seconds})
    await anyio.sleep(seconds)
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def pid() -> str:
    """This process's id, to tell a restarted upstream from the first one."""
    return str(os.getpid())


@server.tool()
def sleep(seconds: float) -> str:
    """Block for a while."""
    time.sleep(seconds)
    return "slept"


@server.tool()
async def change_tools(ctx: Context) -> str:
    """Tell the client the tool list changed."""
    await ctx.session.send_tool_list_changed()
    return "changed"


@server.tool()
async def count(ctx: Context, to: int) -> str:
    """Report progress up to ``to``."""
    for done in range(1, to + 1):
        await ctx.report_progress(done, to, f"{done} of {to}")
    return "counted"


class Colour(BaseModel):
    colour: str


@server.tool()
async def favourite(ctx: Context) -> str:
    """Ask the user (the upstream's own elicitation) for a colour."""
    answer = await ctx.elicit("Your favourite colour?", schema=Colour)
    if answer.action != "accept":
        return f"no colour ({answer.action})"
    return f"colour: {answer.data.colour}"


@server.resource("note://greeting")
def greeting() -> str:
    """A resource."""
    return "hello from the upstream"


@server.prompt()
def review(code: str) -> str:
    """A prompt."""
    return f"Please review: {code}"


if __name__ == "__main__":
    server.run("stdio")
