"""What a framework author implements to run the kit: a `Harness` and the `HostAgent` it builds.

A harness knows one host (an agent framework with this library's middleware on it) and nothing of
the clauses. The kit hands it an `AgentSetup` (a scripted model, a few plain-function tools, a
system prompt, the middleware under test) and drives the agent it builds through `HostAgent`:
run a prompt, resume with interrupt answers, stream a run so it can be stopped or cancelled,
cancel a run, read the history and the hook calls, save a paused run. Everything else (what to
check and how) belongs to the clauses.

A harness also declares the clauses its host is known to break (`Harness.known_failures`), and may
offer a chat model of the host's own kind (`Harness.native_model`), which the kit then uses for a
second run of every model-stage clause.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeGuard, cast

from ..content import Message, Messages, SystemPrompt, ToolChoice, Usage
from ..engine._registry import MiddlewareSource
from ..interrupts import Interrupt
from ..models import Model
from ..testing import ScriptedModel
from ..tools import AgentTool

__all__ = [
    "NATIVE_MODEL",
    "AgentSetup",
    "Capability",
    "Harness",
    "HookName",
    "HookRecorder",
    "HostAgent",
    "RunReport",
    "is_agent_tool",
    "native_model_of",
    "run_with_state_of",
]

NATIVE_MODEL = "[native model]"
"""What a clause's id is followed by when it ran with the host's native model."""


class Capability(enum.Enum):
    """Something a host may or may not support. A harness declares the ones its host has.

    A clause that needs a capability runs in full when the harness declares it. When it does
    not, the clause checks what an honest host without it does instead, so nothing is skipped in
    silence (each member says what that is).
    """

    AGENT_STREAM = "agent-stream stage"
    """Handlers on the provisional ``AgentStreamStage`` run around each pass of the agent loop.

    Undeclared: registering such a handler must fail at registration (when the harness builds
    the agent) with an error naming the stage, so it is never silently ignored.
    """

    REPLACE_PASS_INPUT = "replace an agent pass's input"
    """A list an agent-stream handler puts in place with ``context.replace(messages=[...])`` is
    the pass's input: what the pass appends to history and sends the model, as on
    strands-agents 1.62 (the host's loop takes the list the context holds when the chain
    reaches it).

    Undeclared, on a host declaring `AGENT_STREAM`: the run must raise `ReplacedMessagesError`
    before the model is asked, so the new list is never silently dropped (edits made to the
    list in place still reach the pass). On a host without the stage, its handlers are refused
    at registration.
    """

    EVENT_STREAMING = "event-level streaming"
    """Wrap handlers on a model call see the model's stream as this library's typed events (text
    and tool-input deltas, the finished message, then the `ModelStopReason`), the same classes in
    the same order as on the reference agent for the same script.

    Undeclared: Wrap handlers must still see only this library's events, ending with the result.
    """

    HOOKS = "lifecycle hooks"
    """The host has before/after hooks around model and tool calls, reported through
    `HostAgent.hook_events`.

    Undeclared: the hook clause has nothing to observe and says so in the table ("n/a").
    """

    CANCEL = "cancel a run"
    """`HostAgent.cancel` stops the run in progress, and tool handlers watch the run's own cancel
    signal (``ExecuteToolContext.cancel_signal``), which the cancel sets.

    Undeclared: a run is cancelled by cancelling the task running it, and that sets the cancel
    signal of the tool call it cancels (the kit checks it).
    """

    TOOL_CHOICE = "agent tool choice"
    """An agent can be configured with a tool choice (`AgentSetup.tool_choice`) that reaches
    every model call.

    Undeclared: `Harness.build` must refuse a setup with a tool choice by raising, so a
    configured choice is never silently dropped.
    """

    RUN_STATE = "run state"
    """Every model and tool call of one run is handed the same ``invocation_state`` dict, so an
    item can keep state for the run there (a reversible `Redact` keeps its pseudonyms per run).

    Undeclared: the host lists `RUN_STATE` in its ``lacks``, and an item that needs it refuses
    to be registered there with an error naming the host.
    """

    CALLER_STATE = "caller's run values"
    """A caller can give one run values of its own, which every model and tool call of that run
    finds in ``context.invocation_state`` (the reference agent's keyword arguments): what a
    per-call setting such as ``invocation_state["context_window"]``, the context window
    `ContextWindow` and `Summarize` size a fractional budget by, needs. The kit passes them
    with the agent's ``run_with_state(prompt, values)`` (see `HostAgent`).

    Undeclared: the clause that checks it has nothing to observe and says so ("n/a").
    """

    RESUME_IN_ANOTHER_PROCESS = "resume in another process"
    """A paused run saved with `HostAgent.save` resumes in a fresh Python process.

    The kit starts ``python -m strands_middleware.conformance._fresh_process`` and loads the
    harness there as ``<module>:<class>``, so the harness class must be importable and
    constructible with no arguments. Undeclared: the saved run resumes in a fresh agent in this
    process.
    """


HookName = Literal["before_model_call", "after_model_call", "before_tool_call", "after_tool_call"]
"""The hook calls a harness reports, named for what they surround."""


@dataclass(frozen=True)
class AgentSetup:
    """Everything an agent of the host is built from.

    Attributes:
        script: The model's turns (a `ScriptedModel`; a test of a catalog item may give any
            model of this library's shape). Build the host's model with `Harness.model` from
            it: the model must play the turns through ``script.stream(...)``, so that
            ``script.requests`` records what the host sent the model.
        tools: Plain functions (sync or ``async def``) with Google-style docstrings: turn each
            into the host's own tool, named after the function. A tool of this library (an
            `AgentTool`, such as a ``@tool`` function) is offered to the host as it is, through
            the bridge's adapter for such tools.
        middleware: What to register, in this order, with the host's ``use()``.
        system_prompt: The agent's system prompt: a string or a list of system content blocks
            (a host that cannot take blocks refuses them in `Harness.build` by raising).
        tool_choice: The agent's tool choice, for every model call (see
            `Capability.TOOL_CHOICE`).
        model: The host's model playing ``script``, made by the kit with `Harness.model` or
            `Harness.native_model`; build the agent with it. None: make it with `Harness.model`.
        messages: The history the agent starts from, as Converse.
    """

    script: Model
    tools: Sequence[Callable[..., Any] | AgentTool] = ()
    middleware: Sequence[MiddlewareSource] = ()
    system_prompt: SystemPrompt = None
    tool_choice: ToolChoice | None = None
    model: object | None = None
    messages: Sequence[Message] = ()


@dataclass(frozen=True)
class RunReport:
    """How one run (or resume) ended.

    Attributes:
        stop_reason: The host's stop reason as a string (``"end_turn"``, ``"interrupt"``, ...).
        message: The last assistant message (only its ``role`` and ``content`` are read).
        interrupts: What the caller must answer before the run can go on, as this library's
            `Interrupt` (id, name, reason), when the run paused.
        usage: The tokens this run (or resume) used, as the host's own result reports them;
            None when the harness does not report them. A harness declaring
            `Capability.AGENT_STREAM` reports them (a clause checks that a pass's Output
            handler keeps them).
    """

    stop_reason: str
    message: Message
    interrupts: Sequence[Interrupt] = ()
    usage: Usage | None = None

    @property
    def text(self) -> str:
        """The text blocks of `message`, joined."""
        return "".join(str(block.get("text", "")) for block in self.message["content"])


class HostAgent(Protocol):
    """One agent of the host, built by `Harness.build` or `Harness.restore`.

    An agent of a harness declaring `Capability.CALLER_STATE` also has ``async def
    run_with_state(self, prompt: str, values: Mapping[str, Any]) -> RunReport``: `run`, with
    ``values`` given to the run the host's way (the reference agent's ``agent(prompt,
    **values)``), so that its handlers find them in ``context.invocation_state``.
    """

    async def run(self, prompt: str) -> RunReport:
        """Run the agent on a user prompt to its end (or its pause).

        A host that is paused on interrupts must refuse a fresh prompt by raising.
        """
        ...

    async def resume(self, responses: list[dict[str, Any]]) -> RunReport:
        """Resume a paused run with interrupt answers.

        ``responses`` are ``{"interruptResponse": {"interruptId": ..., "response": ...}}``
        blocks, the resume prompt of this library's hosts. Pass them to the host as they are:
        the kit also sends malformed ones, which the host must refuse by raising, leaving the
        paused run as it was.
        """
        ...

    def use(self, *middleware: MiddlewareSource) -> object:
        """Register more middleware on the agent, after what its setup gave."""
        ...

    def forget(self) -> None:
        """Start a fresh conversation: the history is empty again, while the agent, its
        middleware and what they keep per agent stay."""
        ...

    @property
    def handlers_agent(self) -> object:
        """What the host hands handlers as ``context.agent``: the one object per agent that
        middleware keeps per-agent state by (the framework's agent, or the bridge on it)."""
        ...

    def cancel(self) -> None:
        """Cancel the run in progress (see `Capability.CANCEL`): it stops at its next step.

        A host without run cancellation raises `NotImplementedError`.
        """
        ...

    def stream(self, prompt: str) -> AsyncIterator[object]:
        """The same run as `run`, as the host's own event stream.

        The kit stops reading it early (then calls its ``aclose()`` if it has one) and cancels
        the task reading it, to check that the host closes every handler's generator.
        """
        ...

    @property
    def messages(self) -> Messages:
        """The agent's history as the host holds it."""
        ...

    def hook_events(self) -> list[HookName]:
        """The hook calls so far, in order (empty for a host without hooks)."""
        ...

    def save(self) -> Mapping[str, Any]:
        """A paused run's state as JSON-ready data, for `Harness.restore`.

        Two saves of an unchanged run must be equal (leave out timestamps): the kit compares a
        save before and after a refused resume to check that nothing changed.
        """
        ...


class Harness(Protocol):
    """A host under test: how to build its agents from an `AgentSetup`.

    Example:
        ```python
        class MyHarness:
            name = "myframework"
            capabilities = frozenset({Capability.HOOKS})

            known_failures = {}  # clause id -> why the host breaks it (the upstream behaviour)

            def model(self, script: ScriptedModel) -> object:
                return MyFrameworkModelPlaying(script)

            def native_model(self, script: ScriptedModel) -> object:  # optional
                return MyFrameworksOwnChatModelClassPlaying(script)

            def build(self, setup: AgentSetup) -> HostAgent: ...
            def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> HostAgent: ...
        ```
    """

    @property
    def name(self) -> str:
        """The host's name, as the table shows it."""
        ...

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What the host supports (see `Capability`)."""
        ...

    @property
    def known_failures(self) -> Mapping[str, str]:
        """The clauses the host breaks today: clause id to why, naming the upstream behaviour.

        The one place a host's known failures are written: the command line, the pytest suite
        and the support matrix read it. A listed clause must fail; once it passes, the kit says
        so until the entry goes. A clause run with the host's native model (see
        `native_model`) is listed as ``"<clause id>[native model]"``.
        """
        ...

    def model(self, script: Model) -> object:
        """A model that plays ``script`` and that the host accepts (the scripted path).

        Handlers get it too: a clause points one model call at another model this way.

        A harness may also offer ``native_model(script)``: a model of the host's own kind (a
        class of the framework's model base, not this library's) driven by the same script,
        so that ``script.requests`` still records what the host sent. When it does, the kit
        runs every model-stage clause a second time with it.
        """
        ...

    def build(self, setup: AgentSetup) -> HostAgent:
        """A fresh agent of the host, with ``setup.middleware`` registered in order.

        Registration errors (a stage the host does not support) propagate from here.
        """
        ...

    def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> HostAgent:
        """A fresh agent built like `build`, continuing the paused run ``saved`` holds."""
        ...


class HookRecorder:
    """A hook callback that notes the name of its hook in a log each time the hook fires.

    What a harness registers on its host's hooks to report `RunReport.hooks`: one per hook the
    kit checks, all appending to the same list.
    """

    def __init__(self, log: list[HookName], name: HookName) -> None:
        self._log = log
        self._name: HookName = name

    def __call__(self, event: object) -> None:
        self._log.append(self._name)


def native_model_of(harness: Harness) -> Callable[[ScriptedModel], object] | None:
    """The harness's ``native_model`` (see `Harness.model`), or None when it offers none."""
    found: object = getattr(harness, "native_model", None)
    if not callable(found):
        return None
    native: Callable[[ScriptedModel], object] = found
    return native


RunWithState = Callable[[str, Mapping[str, Any]], Awaitable[RunReport]]
"""An agent's ``run_with_state`` (see `HostAgent`)."""


def run_with_state_of(agent: HostAgent) -> RunWithState | None:
    """The agent's ``run_with_state`` (see `HostAgent`), or None when it has none."""
    found: object = getattr(agent, "run_with_state", None)
    if not callable(found):
        return None
    return cast(RunWithState, found)


def is_agent_tool(given: object) -> TypeGuard[AgentTool]:
    """Whether ``given`` (an `AgentSetup.tools` item) is a tool of this library rather than a
    plain function: offer such a tool to the host through the bridge's adapter for them."""
    return hasattr(given, "tool_spec") and hasattr(given, "stream")
