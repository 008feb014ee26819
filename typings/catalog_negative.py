"""Mistakes on the catalog constructors a type checker must reject (type-checked, never run).

As in `engine_negative.py`, each case carries both checkers' ignore comments, and an unneeded
ignore is itself an error, so a case that stops failing fails the check.
"""

from __future__ import annotations

from strands_middleware import ExecuteToolContext, InvokeModelStage
from strands_middleware.catalog import (
    Cache,
    CallLimit,
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
from strands_middleware.experimental import AgentStreamStage
from strands_middleware.testing import ScriptedModel

backup = ScriptedModel([])

# Configuration is keyword-only: a positional value is refused, not taken for the next field.
Retry(InvokeModelStage, 5)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
Timeout(InvokeModelStage, 30)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
ConcurrencyLimit(InvokeModelStage, 4)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
CallLimit(20)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
ToolMock({"weather": "sunny"}, False)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]

# What has no default must be given.
Timeout()  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
ConcurrencyLimit()  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
RateLimit(rate=1.0)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]

# Only the model-call and tool-call stages can be wrapped.
Retry(AgentStreamStage)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
Timeout(AgentStreamStage, seconds=1)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

# Values of the wrong type.
Retry(attempts="3")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
Retry(on=ValueError("not a class"))  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
Timeout(seconds="30")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
Cache(ttl="5m")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
Cache(max_entries=1.5)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
RateLimit(rate=1.0, burst=2.5)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
CallLimit(model_calls="20")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
CallLimit(per_tool={"search": "5"})  # type: ignore[dict-item]  # pyright: ignore[reportArgumentType]
CallLimit(scope="session")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
UsageBudget(max_total_tokens=1.5)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
ModelFallback(backup)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
Redact(patterns=[r"\d+"])  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
Redact(model_input="yes")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
ToolMock(["weather"])  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
Tracing(tracer="my-service")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


# A tool selection predicate takes the tool call's context.
def on_model_call(prompt: str) -> bool:
    return False


ToolApproval(tools=on_model_call)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def reason(context: ExecuteToolContext) -> str:
    return "ok"


ToolApproval(reason=reason, name=3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
