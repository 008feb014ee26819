"""The public surface, listed: every public module and every name in its ``__all__``.

A module is public when no part of its dotted path starts with ``_``; its ``__all__`` is what it
promises. Adding or removing either is a decision about the API, so it must show up here as a
change to `EXPORTED` (the docs' API reference is generated from the same walk of the package).
Everything else is an implementation detail and may change without notice.

The walk reads the source files, importing nothing, so it holds on every Python this library
supports whether or not a bridge's framework is installed.
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = "strands_middleware"
SOURCE = pathlib.Path(__file__).resolve().parent.parent / "src" / PACKAGE

MAX_PUBLIC_MODULES = 55
MAX_PUBLIC_NAMES = 330


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def public_modules() -> dict[str, pathlib.Path]:
    """Every public module of the package, by dotted name."""
    found: dict[str, pathlib.Path] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        name = _module_name(path)
        if not any(part.startswith("_") for part in name.split(".")):
            found[name] = path
    return found


def _tree(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def declared_all(path: pathlib.Path) -> list[str]:
    """The module's ``__all__``, read from its source; empty when it has none."""
    for node in _tree(path).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return sorted(ast.literal_eval(node.value))
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "__all__"
            and node.value is not None
        ):
            return sorted(ast.literal_eval(node.value))
    return []


def _bound_names(tree: ast.Module) -> set[str]:
    """Names a module binds at its top level (or under a top-level ``if``/``try``)."""
    names: set[str] = set()
    body = list(tree.body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.If, ast.Try)):
            body.extend(node.body)
            body.extend(node.orelse)
            if isinstance(node, ast.Try):
                for handler in node.handlers:
                    body.extend(handler.body)
    return names


def test_the_public_modules_and_their_names_are_exactly_the_listed_ones() -> None:
    actual = {name: declared_all(path) for name, path in public_modules().items()}
    added = {name: names for name, names in actual.items() if name not in EXPORTED}
    removed = sorted(set(EXPORTED) - set(actual))
    changed = {
        name: {
            "added": sorted(set(names) - set(EXPORTED[name])),
            "removed": sorted(set(EXPORTED[name]) - set(names)),
        }
        for name, names in actual.items()
        if name in EXPORTED and names != EXPORTED[name]
    }
    assert (added, removed, changed) == ({}, [], {}), (
        "the public surface changed: if that is deliberate, update EXPORTED in this file (a "
        "private module's name starts with '_'); new public modules: "
        f"{added}; modules gone: {removed}; names changed: {changed}"
    )


def test_every_exported_name_is_defined_where_it_is_exported() -> None:
    missing = {
        name: sorted(set(declared_all(path)) - _bound_names(_tree(path)))
        for name, path in public_modules().items()
    }
    assert {name: names for name, names in missing.items() if names} == {}


def test_every_public_module_says_what_it_holds() -> None:
    undocumented = [
        name for name, path in public_modules().items() if ast.get_docstring(_tree(path)) is None
    ]
    assert undocumented == []


def test_the_surface_stays_small_enough_to_hold_in_ones_head() -> None:
    modules = public_modules()
    names = sum(len(declared_all(path)) for path in modules.values())
    assert len(modules) <= MAX_PUBLIC_MODULES, sorted(modules)
    assert names <= MAX_PUBLIC_NAMES


def test_the_walk_tells_public_from_private_by_every_part_of_the_path() -> None:
    modules = public_modules()
    assert PACKAGE in modules and f"{PACKAGE}.catalog" in modules
    assert not any("._" in name for name in modules)
    assert f"{PACKAGE}.engine._chain" not in modules


EXPORTED: dict[str, list[str]] = {
    "strands_middleware": [
        "CONTROL_FLOW_EXCEPTIONS",
        "ExecuteToolContext",
        "ExecuteToolResult",
        "ExecuteToolStage",
        "Interrupt",
        "InterruptControlEvent",
        "InterruptException",
        "InvokeModelContext",
        "InvokeModelResult",
        "InvokeModelStage",
        "Middleware",
        "MiddlewareHandler",
        "MiddlewareInputHandler",
        "MiddlewareInputPhase",
        "MiddlewareInterruptResult",
        "MiddlewareNext",
        "MiddlewareOutputHandler",
        "MiddlewareOutputPhase",
        "MiddlewarePhase",
        "MiddlewareRegistry",
        "MiddlewareResult",
        "MiddlewareSource",
        "MiddlewareStage",
        "MiddlewareWrapPhase",
        "MissingResultError",
        "ModelStopReason",
        "ToolResultEvent",
        "TypedEvent",
        "__version__",
        "halts_stage",
    ],
    "strands_middleware.agent": [
        "AfterInvocationEvent",
        "AfterModelCallEvent",
        "AfterToolCallEvent",
        "Agent",
        "AgentResult",
        "BeforeInvocationEvent",
        "BeforeModelCallEvent",
        "BeforeToolCallEvent",
        "HookEvent",
        "HookRegistry",
        "MessageAddedEvent",
    ],
    "strands_middleware.bridges": [],
    "strands_middleware.bridges.langchain": [
        "LangChainBridge",
        "LangChainTool",
        "LibraryChatModel",
        "LibraryTool",
        "RelayChatModel",
        "SyncInvokeError",
        "UnsupportedStageError",
        "interrupts_of",
        "resume_command",
    ],
    "strands_middleware.bridges.langchain.conformance": [
        "LangChainAgent",
        "LangChainHarness",
    ],
    "strands_middleware.bridges.langchain.testing": [
        "PlainScriptedChatModel",
        "ScriptedChatModel",
    ],
    "strands_middleware.bridges.openai_agents": [
        "OpenAIAgentsMiddleware",
        "UnsupportedStageError",
    ],
    "strands_middleware.bridges.openai_agents.conformance": [
        "OpenAIAgentsAgent",
        "OpenAIAgentsHarness",
    ],
    "strands_middleware.bridges.openai_agents.testing": [
        "ScriptedOpenAIModel",
    ],
    "strands_middleware.bridges.pydantic_ai": [
        "PydanticAIMiddleware",
        "PydanticAITool",
        "UnsupportedStageError",
        "interrupts_of",
        "resume_results",
    ],
    "strands_middleware.bridges.pydantic_ai.conformance": [
        "PydanticAIAgent",
        "PydanticAIHarness",
    ],
    "strands_middleware.bridges.pydantic_ai.testing": [
        "ScriptedPydanticAIModel",
        "scripted_function_model",
    ],
    "strands_middleware.bridges.strands": [
        "HostEvent",
        "StrandsBridge",
        "StrandsTool",
    ],
    "strands_middleware.bridges.strands.conformance": [
        "StrandsAgent",
        "StrandsHarness",
    ],
    "strands_middleware.bridges.strands.testing": [
        "ScriptedStrandsModel",
    ],
    "strands_middleware.catalog": [
        "ACCEPTED_ANSWERS",
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
        "DEFAULT_INSTRUCTIONS",
        "DEFAULT_MARKER",
        "DEFAULT_PATTERNS",
        "DEFAULT_POLICY",
        "DEFAULT_TRIM_MARKER",
        "EXECUTE_TOOL_SPAN",
        "Flow",
        "Guardrail",
        "GuardrailCheck",
        "GuardrailSubject",
        "INVOKE_MODEL_SPAN",
        "KNOWN_MODELS",
        "MEDIA_TOKENS",
        "ModelFacts",
        "ModelFallback",
        "RateLimit",
        "Redact",
        "Retry",
        "SUMMARY_HEADER",
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
    ],
    "strands_middleware.conformance": [
        "AgentSetup",
        "BUILT_IN_HOSTS",
        "CLAUSES",
        "Capability",
        "Clause",
        "ClauseResult",
        "Harness",
        "HookName",
        "HookRecorder",
        "HostAgent",
        "HostReport",
        "NATIVE_MODEL",
        "Outcome",
        "RunReport",
        "format_table",
        "is_agent_tool",
        "known_failures_of",
        "load_harness",
        "run_clause",
        "run_conformance",
    ],
    "strands_middleware.conformance.suite": [
        "ConformanceSuite",
    ],
    "strands_middleware.content": [
        "CachePoint",
        "ContentBlock",
        "ContentBlockDelta",
        "ContentBlockDeltaEvent",
        "ContentBlockDeltaReasoning",
        "ContentBlockDeltaToolUse",
        "ContentBlockStart",
        "ContentBlockStartEvent",
        "ContentBlockStartToolUse",
        "ContentBlockStopEvent",
        "Message",
        "MessageStartEvent",
        "MessageStopEvent",
        "Messages",
        "MetadataEvent",
        "Metrics",
        "ReasoningContentBlock",
        "ReasoningTextBlock",
        "Role",
        "StopReason",
        "StreamEvent",
        "SystemContentBlock",
        "SystemPrompt",
        "ToolChoice",
        "ToolChoiceAny",
        "ToolChoiceAnyDict",
        "ToolChoiceAuto",
        "ToolChoiceAutoDict",
        "ToolChoiceTool",
        "ToolChoiceToolDict",
        "ToolInputSchema",
        "ToolResult",
        "ToolResultContent",
        "ToolResultStatus",
        "ToolSpec",
        "ToolUse",
        "Usage",
    ],
    "strands_middleware.durable": [
        "ActivityOptions",
        "AgentRun",
        "DurableAgent",
        "PLACEMENTS",
        "Placed",
        "PlacementError",
        "RunInput",
        "RunOutput",
        "TemporalHost",
        "answer_interrupt",
        "create_worker",
        "for_temporal_host",
        "in_activity",
        "in_workflow",
        "pending_interrupts",
        "start_run",
        "workflow_runner",
    ],
    "strands_middleware.engine": [
        "InterruptControlEvent",
        "Middleware",
        "MiddlewareHandler",
        "MiddlewareInputHandler",
        "MiddlewareInputPhase",
        "MiddlewareNext",
        "MiddlewareOutputHandler",
        "MiddlewareOutputPhase",
        "MiddlewarePhase",
        "MiddlewareRegistry",
        "MiddlewareResult",
        "MiddlewareSource",
        "MiddlewareStage",
        "MiddlewareWrapPhase",
        "halts_stage",
    ],
    "strands_middleware.events": [
        "EventLoopStopEvent",
        "InitEventLoopEvent",
        "ModelMessageEvent",
        "ModelStopReason",
        "ModelStreamChunkEvent",
        "ModelStreamEvent",
        "ReasoningDeltaEvent",
        "ReasoningRedactedContentStreamEvent",
        "ReasoningSignatureStreamEvent",
        "ReasoningTextStreamEvent",
        "TextDeltaEvent",
        "TextStreamEvent",
        "ToolInterruptEvent",
        "ToolResultEvent",
        "ToolStreamEvent",
        "ToolUseDeltaEvent",
        "ToolUseStreamEvent",
        "TypedEvent",
    ],
    "strands_middleware.exceptions": [
        "CONTROL_FLOW_EXCEPTIONS",
        "InterruptException",
        "InterruptMisuseError",
        "InterruptResponseFormatError",
        "InterruptResumeError",
        "InterruptStateDataError",
        "MissingResultError",
        "ModelStreamError",
        "ReplacedMessagesError",
        "StoreError",
        "StoreWarning",
        "ToolInputError",
        "UnsupportedStageError",
    ],
    "strands_middleware.experimental": [
        "AgentStreamChanges",
        "AgentStreamContext",
        "AgentStreamResult",
        "AgentStreamStage",
    ],
    "strands_middleware.host": [
        "AgentPassPoint",
        "InterruptState",
        "MiddlewareHostMixin",
        "ModelStagePoint",
        "PendingToolExecution",
        "ToolStagePoint",
        "copy_tool_use",
        "invoke_model_terminal",
        "make_tool_terminal",
        "model_call_context",
        "process_model_stream",
        "project_input_tokens",
        "run_agent_pass",
        "run_model_call",
        "run_tool_call",
        "run_tool_stage",
        "tool_call_context",
    ],
    "strands_middleware.interrupts": [
        "AGENT_STREAM_INTERRUPT_PREFIX",
        "EXECUTE_TOOL_INTERRUPT_PREFIX",
        "Interrupt",
        "InterruptException",
        "InterruptLedger",
        "InterruptResponse",
        "InterruptResponseContent",
        "InterruptResponseFormatError",
        "InterruptResumeError",
        "MiddlewareInterruptResult",
        "agent_stream_interrupt_id",
        "execute_tool_interrupt_id",
        "resolve_middleware_interrupt",
    ],
    "strands_middleware.mcp": [
        "APPROVAL_SCHEMA",
        "McpProxy",
        "ToolGate",
        "UpstreamUnavailableError",
    ],
    "strands_middleware.models": [
        "Model",
    ],
    "strands_middleware.stages": [
        "ExecuteToolContext",
        "ExecuteToolResult",
        "ExecuteToolStage",
        "InvokeModelContext",
        "InvokeModelResult",
        "InvokeModelStage",
        "split_system_prompt",
    ],
    "strands_middleware.stores": [
        "BreakerStore",
        "CacheStore",
        "ClaimedSession",
        "CounterStore",
        "InMemoryStore",
        "PausedRun",
        "RateStore",
        "SessionStore",
        "SlotStore",
        "SnapshotStore",
        "Store",
    ],
    "strands_middleware.stores.redis": [
        "RedisStore",
    ],
    "strands_middleware.testing": [
        "HandlerRun",
        "ModelRequest",
        "ScriptExhaustedError",
        "ScriptedModel",
        "ScriptedTurn",
        "TEST_TOOL_USE_ID",
        "model_context",
        "run_handler",
        "run_handler_async",
        "scripted",
        "text_turn",
        "tool_context",
        "tool_turn",
    ],
    "strands_middleware.tools": [
        "AgentTool",
        "FunctionTool",
        "ToolInputError",
        "result_text",
        "tool",
    ],
}
