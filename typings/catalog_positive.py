"""What a type checker accepts and infers on the catalog constructors (type-checked, never run).

Every item takes its configuration as keyword arguments; only the stage (for the items that
can wrap a model call or a tool call) and an item's one essential value (``ModelFallback``'s
models, ``ToolMock``'s fixtures) may be positional.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

from typing_extensions import assert_type

from strands_middleware import ExecuteToolContext, ExecuteToolStage, InvokeModelStage, Middleware
from strands_middleware.agent import Agent
from strands_middleware.catalog import (
    Cache,
    CallLimit,
    CatalogMiddleware,
    CircuitBreaker,
    CircuitOpen,
    ConcurrencyLimit,
    ModelFallback,
    RateLimit,
    Redact,
    Retry,
    Timeout,
    ToolApproval,
    ToolMock,
    Tracing,
    UsageBudget,
)
from strands_middleware.content import ToolUse
from strands_middleware.stores import InMemoryStore
from strands_middleware.testing import ScriptedModel

backup = ScriptedModel([])


def fixed_key(context: Any) -> str | None:
    return "same"


def weather(tool_use: ToolUse) -> str:
    return f"sunny in {tool_use['input']['city']}"


def destructive(context: ExecuteToolContext) -> bool:
    return context.tool_use["name"].startswith("delete")


# Defaults, a stage, and keyword configuration.
assert_type(Retry(), Retry)
assert_type(
    Retry(
        ExecuteToolStage,
        attempts=5,
        on=(TimeoutError, ConnectionError),
        when=lambda error: True,
        backoff=0.1,
        factor=3.0,
        max_delay=5.0,
        jitter=0.0,
        repeat_events=True,
        sleep=asyncio.sleep,
    ),
    Retry,
)
assert_type(Timeout(seconds=30), Timeout)
assert_type(Timeout(ExecuteToolStage, seconds=2.5), Timeout)
assert_type(Cache(), Cache)
assert_type(Cache(ttl=None, max_entries=10, key=fixed_key, store=InMemoryStore()), Cache)
assert_type(Cache(ExecuteToolStage, ttl=60), Cache)
assert_type(ConcurrencyLimit(limit=4), ConcurrencyLimit)
assert_type(ConcurrencyLimit(ExecuteToolStage, limit=2), ConcurrencyLimit)
assert_type(RateLimit(rate=2.0, burst=5), RateLimit)
assert_type(RateLimit(InvokeModelStage, rate=1, burst=1), RateLimit)
assert_type(CallLimit(model_calls=20, tool_calls=50, per_tool={"search": 5}), CallLimit)
assert_type(CallLimit(model_calls=1000, scope="agent"), CallLimit)
assert_type(UsageBudget(max_total_tokens=100_000, scope="invocation"), UsageBudget)
assert_type(ToolApproval(), ToolApproval)
assert_type(ToolApproval(tools={"delete_file"}, name="approve-delete"), ToolApproval)
assert_type(ToolApproval(tools=destructive, reason=lambda context: context.tool_use), ToolApproval)
assert_type(ModelFallback([backup], on=TimeoutError), ModelFallback)
assert_type(Redact(patterns={"ticket": r"T-\d+", "key": re.compile("sk-[a-z]+")}), Redact)
assert_type(Redact(replacement=lambda name, text: "***", tool_output=False), Redact)
assert_type(ToolMock({"weather": weather, "time": "noon"}, passthrough_unknown=False), ToolMock)
assert_type(Tracing(tracer_name="my-service"), Tracing)

# Every item is an iterable of Middleware, which is what use() takes.
retry = Retry()
catalog_item: CatalogMiddleware = retry
assert_type(iter(retry), Iterator[Middleware[Any, Any, Any]])
agent = Agent(model=ScriptedModel([]))
assert_type(agent.use(Retry(), Timeout(seconds=30), CallLimit(tool_calls=10)), Agent)

# CircuitBreaker: keyword configuration, a model or tool stage, a shared store by name.
assert_type(CircuitBreaker(failures=3, cooldown=30, on=ConnectionError), CircuitBreaker)
assert_type(CircuitBreaker(ExecuteToolStage, store=InMemoryStore(), name="tools"), CircuitBreaker)
assert_type(CircuitOpen("m", 1.0).retry_after, float)
