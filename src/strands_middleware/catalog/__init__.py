"""Ready-made, typed middleware: one small module per item, each runs on every host.

Every item is configured with keyword arguments and is an iterable of `Middleware`, so
``agent.use(item)`` (or ``StrandsBridge.of(agent).use(item)``) registers all the handlers it
needs. Items are written against the built-in stages only.
"""

from ._base import CallStage, CatalogMiddleware
from ._scoped import Scope, ScopedState
from .cache import Cache, MemoryStore, ResultStore
from .call_limit import CallLimit, CallLimitExceeded
from .concurrency_limit import ConcurrencyLimit
from .model_fallback import ModelFallback
from .rate_limit import RateLimit
from .redact import DEFAULT_PATTERNS, Redact
from .retry import Retry
from .timeout import CallTimeout, Timeout
from .tool_approval import ACCEPTED_ANSWERS, AllTools, ToolApproval
from .tool_mock import ToolMock
from .tracing import EXECUTE_TOOL_SPAN, INVOKE_MODEL_SPAN, Tracing
from .usage_budget import UsageBudget, UsageBudgetExceeded

__all__ = [
    "ACCEPTED_ANSWERS",
    "DEFAULT_PATTERNS",
    "EXECUTE_TOOL_SPAN",
    "INVOKE_MODEL_SPAN",
    "AllTools",
    "Cache",
    "CallLimit",
    "CallLimitExceeded",
    "CallStage",
    "CallTimeout",
    "CatalogMiddleware",
    "ConcurrencyLimit",
    "MemoryStore",
    "ModelFallback",
    "RateLimit",
    "Redact",
    "ResultStore",
    "Retry",
    "Scope",
    "ScopedState",
    "Timeout",
    "ToolApproval",
    "ToolMock",
    "Tracing",
    "UsageBudget",
    "UsageBudgetExceeded",
]
