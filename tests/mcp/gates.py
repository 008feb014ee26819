"""Middleware the proxy subprocess loads by ``--middleware tests.mcp.gates:<name>``."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator

from strands_middleware import ExecuteToolStage
from strands_middleware.catalog import RateLimit, ToolApproval, ToolMock
from strands_middleware.engine._stage import Middleware
from strands_middleware.events import ToolResultEvent, TypedEvent
from strands_middleware.stages._execute_tool import ExecuteToolContext
from strands_middleware.stores.redis import RedisStore

approval = ToolApproval(tools=["delete_file"])


@ExecuteToolStage.wrap
async def shout(context: ExecuteToolContext, next_fn: object) -> AsyncGenerator[TypedEvent, None]:
    """Upper-case the text of every result (an Output-style rewrite in a Wrap handler)."""
    async for event in next_fn(context):  # type: ignore[operator]
        if isinstance(event, ToolResultEvent):
            result = event.tool_result
            content = [
                {"text": block["text"].upper()} if "text" in block else block
                for block in result["content"]
            ]
            yield ToolResultEvent({**result, "content": content})  # type: ignore[typeddict-item]
        else:
            yield event


@ExecuteToolStage.input
def double_a(context: ExecuteToolContext) -> ExecuteToolContext:
    """Change the arguments on the way: add's ``a`` is doubled."""
    if context.tool_use["name"] != "add":
        return context
    tool_use = {
        **context.tool_use,
        "input": {**context.tool_use["input"], "a": context.tool_use["input"]["a"] * 2},
    }
    return context.replace(tool_use=tool_use)  # type: ignore[typeddict-item]


@ExecuteToolStage.wrap
async def explode(context: ExecuteToolContext, next_fn: object) -> AsyncGenerator[TypedEvent, None]:
    """Raise before the tool runs."""
    raise RuntimeError("the gate is broken")
    yield  # pragma: no cover - makes this an async generator


def mocked() -> list[Middleware[object, object, object]]:
    """A function with no arguments returning middleware: echo is answered without the upstream."""
    return list(ToolMock({"echo": "mocked echo"}))  # type: ignore[arg-type]


not_middleware = 42


def shared_rate() -> list[Middleware[object, object, object]]:
    """One tool call a minute across every proxy naming this bucket, in the Redis at
    ``GATEWAY_REDIS_URL``."""
    store = RedisStore.from_url(
        os.environ["GATEWAY_REDIS_URL"], prefix=os.environ["GATEWAY_PREFIX"]
    )
    limit = RateLimit(ExecuteToolStage, rate=1 / 60, burst=1, store=store, name="shared-tools")
    return list(limit)  # type: ignore[arg-type]
