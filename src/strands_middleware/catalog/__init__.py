"""Ready-made, typed middleware: one small module per item, each runs on every host.

Every item is configured with keyword arguments and is an iterable of `Middleware`, so
``agent.use(item)`` (or ``StrandsBridge.of(agent).use(item)``) registers all the handlers it
needs. Items are written against the built-in stages only.
"""

from ._base import CallStage, CatalogMiddleware
from ._budget import MEDIA_TOKENS, TokenCounter, estimate_tokens
from ._cache import Cache
from ._call_limit import CallLimit, CallLimitExceeded
from ._circuit_breaker import CircuitBreaker, CircuitOpen
from ._concurrency_limit import ConcurrencyLimit
from ._context_window import DEFAULT_MARKER, ContextWindow
from ._guardrail import DEFAULT_POLICY, Flow, Guardrail, GuardrailCheck, GuardrailSubject, Verdict
from ._model_fallback import ModelFallback
from ._models_known import KNOWN_MODELS, ModelFacts
from ._rate_limit import RateLimit
from ._redact import DEFAULT_PATTERNS, Redact
from ._retry import Retry
from ._scoped import Scope, ScopedState
from ._summarize import DEFAULT_INSTRUCTIONS, SUMMARY_HEADER, Summarize
from ._timeout import CallTimeout, Timeout
from ._tool_approval import ACCEPTED_ANSWERS, AllTools, ToolApproval
from ._tool_mock import ToolMock
from ._tool_result_trim import DEFAULT_TRIM_MARKER, ToolResultTrim
from ._tool_selector import ToolPredicate, ToolSelector
from ._tracing import EXECUTE_TOOL_SPAN, INVOKE_MODEL_SPAN, Tracing
from ._usage_budget import UsageBudget, UsageBudgetExceeded

__all__ = [
    "ACCEPTED_ANSWERS",
    "DEFAULT_INSTRUCTIONS",
    "DEFAULT_MARKER",
    "DEFAULT_PATTERNS",
    "DEFAULT_POLICY",
    "DEFAULT_TRIM_MARKER",
    "EXECUTE_TOOL_SPAN",
    "INVOKE_MODEL_SPAN",
    "KNOWN_MODELS",
    "MEDIA_TOKENS",
    "SUMMARY_HEADER",
    "AllTools",
    "Cache",
    "CallLimit",
    "CallLimitExceeded",
    "CallStage",
    "CallTimeout",
    "CatalogMiddleware",
    "CircuitBreaker",
    "CircuitOpen",
    "ConcurrencyLimit",
    "ContextWindow",
    "Flow",
    "Guardrail",
    "GuardrailCheck",
    "GuardrailSubject",
    "ModelFacts",
    "ModelFallback",
    "RateLimit",
    "Redact",
    "Retry",
    "Scope",
    "ScopedState",
    "Summarize",
    "Timeout",
    "TokenCounter",
    "ToolApproval",
    "ToolMock",
    "ToolPredicate",
    "ToolResultTrim",
    "ToolSelector",
    "Tracing",
    "UsageBudget",
    "UsageBudgetExceeded",
    "Verdict",
    "estimate_tokens",
]
