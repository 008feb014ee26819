"""Where the contract says what each clause checks: spec, docs and DESIGN sections, issues.

The spec is the behavioural spec the project implements (DESIGN names it); the documentation's
pages (a page under docs/ and a heading on it) and DESIGN sections are this project's own
decisions on top of it.
"""

from __future__ import annotations

__all__: list[str] = []

# The spec's sections.
RESULT_ENCODING = 'spec "Result encoding"'
PER_STAGE_RESULTS = 'spec "Per-stage result types"'
INTERRUPTS = 'spec "Middleware-initiated interrupts"'
AGENT_STREAM_FIELDS = 'spec "AgentStreamStage context fields"'
AGENT_STREAM_TRANSFORMS = 'spec "Transforming `messages` vs `invocation_state`"'
AGENT_STREAM_RESUME = 'spec "AgentStreamStage interrupt resume"'
RESPONSE_LIFETIME = 'spec "Interrupt response lifetime"'
INTERRUPT_BEFORE_RESULT = 'spec "Interrupt before the pass produces its result"'
HOOK_RETRIES = 'spec "Hook-initiated retries re-run the middleware chain"'
TOOL_EXCEPTIONS = 'spec "Tool exceptions are caught in the terminal"'
UNKNOWN_TOOLS = 'spec "Unknown tools run through the chain"'
SYSTEM_PROMPT_UNION = 'spec "System prompt as a union type"'
DEFENSIVE_COPIES = 'spec "Defensive copies"'
PER_CALL_MODEL = 'spec "Per-call model"'
CONTEXT_TRANSFORMATION = 'spec "Context transformation"'
GENERATOR_CLEANUP = 'spec "Generator cleanup"'

# The documentation's pages: a page under docs/ and a heading on it.
PHASES = 'docs/concepts/stages-and-phases.md "Stages and phases"'
HANDLER_SHAPES = 'docs/concepts/custom-stages.md "The three handler shapes"'
CLEANUP = 'docs/concepts/cleanup.md "Cleanup"'
BUILT_IN_STAGES = 'docs/concepts/stages-and-phases.md "The built-in stages"'
HUMAN_IN_THE_LOOP = 'docs/concepts/interrupts.md "Interrupts and resume"'
CATALOG = 'docs/catalog/index.md "The catalog"'
CALLER_STATE = 'docs/catalog/context-window.md "A share of the model\'s context window"'
USER_ERRORS = 'docs/concepts/errors.md "Mistakes, and the state they leave"'
COMING_FROM_STRANDS = 'docs/coming-from-strands.md "Coming from strands\' middleware"'

# DESIGN.md's decisions.
PHASE_ORDER = 'DESIGN "Normative semantics" 1'
RESULT_RULE = 'DESIGN "Normative semantics" 2'
CLEANUP_RULE = 'DESIGN "Normative semantics" 4'
AGENT_STREAM_RULE = 'DESIGN "Normative semantics" 7'
BOUNDARY_RULE = 'DESIGN "Normative semantics" 8'
HOST_PROMISES = 'DESIGN "Hosts and what each promises"'

# Issues whose decisions extend the contract.
FAIL_CLOSED = 'issue 17 "Fail closed"'
SAME_EVENTS = 'issue 10 "The same events on every host"'
CONVERSE_ONLY = 'issue 10 "Handlers see Converse, not the host"'
STRANDS_DROP_IN = 'issue 37 "Drop-in for middleware written against strands\' own API"'
