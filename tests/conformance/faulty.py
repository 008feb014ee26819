"""Deliberately broken hosts: the reference agent with one fault each, for the kit to catch.

Each is the reference harness with one thing done wrong, the way a real integration gets it
wrong: Output handlers never registered, a stream that drops its generator instead of closing
it, a resume that forgets the paused tool round (or re-runs its finished tools), handlers fed the
host's own objects, a model error wrapped in the host's own, a fresh cancel signal per tool call,
a configured system prompt and tool choice left out, answers sent while nothing is paused taken
as a new turn, an agent pass's replaced input dropped or taken without being declared.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from typing import Any

from strands_middleware import InvokeModelContext, InvokeModelStage, TypedEvent
from strands_middleware.catalog import Redact
from strands_middleware.conformance import AgentSetup, Capability
from strands_middleware.conformance._harnesses._reference import ReferenceAgent, ReferenceHarness
from strands_middleware.content import Messages, StreamEvent
from strands_middleware.engine._handlers import MiddlewareNext
from strands_middleware.engine._registry import MiddlewareSource
from strands_middleware.engine._stage import Middleware
from strands_middleware.events import ModelStopReason
from strands_middleware.exceptions import ReplacedMessagesError
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.models import Model
from strands_middleware.stages._execute_tool import ExecuteToolContext, ExecuteToolStage


def _each(sources: Iterable[MiddlewareSource]) -> list[Middleware[Any, Any, Any]]:
    """Every `Middleware` in ``sources``, catalog items opened up."""
    found: list[Middleware[Any, Any, Any]] = []
    for source in sources:
        if isinstance(source, Middleware):
            found.append(source)
        else:
            found.extend(_each(source))
    return found


class SkipsOutputHandlers(ReferenceHarness):
    """Registers every handler except the Output ones."""

    name = "skips-output"

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        kept = [m for m in _each(setup.middleware) if m.phase.kind != "Output"]
        return super().build(dataclasses.replace(setup, middleware=kept))


_DROPPED: list[object] = []
"""Streams the leaky host let go of without closing (kept alive, as a real leak would be)."""


class _Unclosable:
    """An event stream with no aclose(): stopping early leaves the run suspended."""

    def __init__(self, stream: AsyncGenerator[Any, None]) -> None:
        self._stream = stream
        _DROPPED.append(stream)

    def __aiter__(self) -> _Unclosable:
        return self

    async def __anext__(self) -> object:
        return await self._stream.__anext__()


class _LeakyAgent(ReferenceAgent):
    def stream(self, prompt: str) -> AsyncIterator[object]:
        return _Unclosable(self.agent.stream_async(prompt))


class LeaksGenerators(ReferenceHarness):
    """Hands out a stream that cannot be closed, so a stopped run's handlers stay open."""

    name = "leaks-generators"

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        return _LeakyAgent(super().build(setup).agent)


class _ForgetfulAgent(ReferenceAgent):
    async def resume(self, responses: list[dict[str, Any]]) -> Any:
        # The fault: the paused tool round is dropped, so the resume asks the model again.
        self.agent.interrupt_state.pending_tool_execution = None
        return await super().resume(responses)


class ReasksModelOnResume(ReferenceHarness):
    """Resumes a paused tool round by asking the model again instead of replaying the round."""

    name = "reasks-model"

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        return _ForgetfulAgent(super().build(setup).agent)

    def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> ReferenceAgent:
        return _ForgetfulAgent(super().restore(setup, saved).agent)


class NativeEvent(dict[str, Any]):
    """The host's own event type, which handlers must never be given."""


def _with_host_ids(context: InvokeModelContext) -> InvokeModelContext:
    messages: Any = [{**message, "host_id": f"m{n}"} for n, message in enumerate(context.messages)]
    return context.replace(messages=messages)


async def _native_events(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        yield event if isinstance(event, ModelStopReason) else NativeEvent(event)


class HandsOverHostObjects(ReferenceHarness):
    """Gives model-call handlers messages with a host-only key and the host's own events.

    The fault sits around the handlers under test: an Input handler registered first (so every
    other one sees its messages) and a Wrap handler registered last (so every other one sees
    its events).
    """

    name = "hands-over-host-objects"

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        middleware = [
            InvokeModelStage.input(_with_host_ids),
            *setup.middleware,
            InvokeModelStage.wrap(_native_events),
        ]
        return super().build(dataclasses.replace(setup, middleware=middleware))


class WithoutAgentStream(ReferenceHarness):
    """Declares no agent-stream stage, and refuses its handlers when they are registered."""

    name = "refuses-agent-stream"
    capabilities = frozenset(Capability) - {Capability.AGENT_STREAM}

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        for middleware in _each(setup.middleware):
            if middleware.stage is AgentStreamStage:
                raise TypeError(
                    "this host has no agentStream stage: AgentStreamStage handlers cannot run here"
                )
        return super().build(setup)


class IgnoresAgentStream(ReferenceHarness):
    """Declares no agent-stream stage, yet accepts (and runs) its handlers without a word."""

    name = "ignores-agent-stream"
    capabilities = frozenset(Capability) - {Capability.AGENT_STREAM}


class Minimal(ReferenceHarness):
    """Declares nothing: no hooks, no streaming, no agent-stream stage, no tool choice, no
    cancel, one process only.

    It still refuses agent-stream handlers, a tool choice and an item that keeps state for a run,
    as a host without them must.
    """

    name = "minimal"
    capabilities: frozenset[Capability] = frozenset()

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        if setup.tool_choice is not None:
            raise ValueError("this host has no agent-level tool choice")
        for source in setup.middleware:
            if isinstance(source, Redact) and source.reversible:
                raise ValueError("Redact(reversible=True) cannot run on minimal: no run state")
        return WithoutAgentStream().build(setup)


def _around_the_pass_input(setup: AgentSetup, last: Any) -> AgentSetup:
    """``setup`` with an agent-stream Input handler registered first, noting the pass's input
    list, and ``last(context, noted)`` registered last, seeing the list every other left."""
    noted: list[Messages] = []

    def note(context: AgentStreamContext) -> AgentStreamContext:
        noted[:] = [context.messages]
        return context

    def then(context: AgentStreamContext) -> AgentStreamContext:
        result: AgentStreamContext = last(context, noted[0])
        return result

    middleware = [AgentStreamStage.input(note), *setup.middleware, AgentStreamStage.input(then)]
    return dataclasses.replace(setup, middleware=middleware)


def _refuse(context: AgentStreamContext, given: Messages) -> AgentStreamContext:
    if context.messages is not given:
        raise ReplacedMessagesError
    return context


def _restore(context: AgentStreamContext, given: Messages) -> AgentStreamContext:
    return context.replace(messages=given)


class RefusesReplacedInput(ReferenceHarness):
    """Has the agent-stream stage but cannot hand its loop a new input list: it declares so and
    refuses a replaced one (an honest host, not a faulty one)."""

    name = "refuses-replaced-input"
    capabilities = frozenset(Capability) - {Capability.REPLACE_PASS_INPUT}

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        return super().build(_around_the_pass_input(setup, _refuse))


class DropsReplacedInput(ReferenceHarness):
    """Declares that a replaced pass input is taken, yet sends the pass the input it was given."""

    name = "drops-replaced-input"

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        return super().build(_around_the_pass_input(setup, _restore))


class TakesUndeclaredReplacedInput(ReferenceHarness):
    """Takes a replaced pass input without declaring it: the kit checks the refusal and finds
    none."""

    name = "takes-undeclared-replaced-input"
    capabilities = frozenset(Capability) - {Capability.REPLACE_PASS_INPUT}


class _Rerunning(ReferenceAgent):
    async def resume(self, responses: list[dict[str, Any]]) -> Any:
        # The fault: the results of the calls that finished before the pause are dropped, so
        # the resume runs those tools again.
        pending = self.agent.interrupt_state.pending_tool_execution
        if pending is not None:
            pending.completed_tool_results = []
        return await super().resume(responses)


class RerunsFinishedTools(ReferenceHarness):
    """Resumes a paused tool round by running every call again, finished ones included."""

    name = "reruns-finished-tools"

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        return _Rerunning(super().build(setup).agent)

    def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> ReferenceAgent:
        return _Rerunning(super().restore(setup, saved).agent)


class _Oblivious(ReferenceAgent):
    async def resume(self, responses: list[dict[str, Any]]) -> Any:
        # The fault: answers sent while nothing is paused are dropped, and the run answers
        # anyway (a host that passes a stale resume on to a loop with nothing to resume).
        if not self.agent.interrupt_state.activated:
            return await super().run("")
        return await super().resume(responses)


class AcceptsStaleResume(ReferenceHarness):
    """Takes answers sent once the run is no longer paused as a new turn, instead of refusing."""

    name = "accepts-stale-resume"

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        return _Oblivious(super().build(setup).agent)

    def restore(self, setup: AgentSetup, saved: Mapping[str, Any]) -> ReferenceAgent:
        return _Oblivious(super().restore(setup, saved).agent)


class HostModelError(RuntimeError):
    """The host's own error, which the faulty host raises in place of the model's."""


class _WrappingModel:
    """The script, with every exception it raises wrapped in the host's own."""

    def __init__(self, script: Model) -> None:
        self.script = script

    async def stream(
        self, messages: Messages, *args: Any, **kwargs: Any
    ) -> AsyncGenerator[StreamEvent, None]:
        try:
            async for chunk in self.script.stream(messages, *args, **kwargs):
                yield chunk
        except Exception as error:
            raise HostModelError(f"the model failed: {error}") from error


class WrapsModelErrors(ReferenceHarness):
    """Raises its own error, caused by the model's, where the model raised."""

    name = "wraps-model-errors"

    def model(self, script: Model) -> object:
        return _WrappingModel(script)


def _fresh_signal(context: ExecuteToolContext) -> ExecuteToolContext:
    return context.replace(cancel_signal=threading.Event())


class FreshCancelSignalPerCall(ReferenceHarness):
    """Hands each tool call's handlers a cancel signal of its own instead of the run's.

    The fault sits in front of the handlers under test: an Input handler registered first.
    """

    name = "fresh-cancel-signal"

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        middleware = [ExecuteToolStage.input(_fresh_signal), *setup.middleware]
        return super().build(dataclasses.replace(setup, middleware=middleware))


class IgnoresConfiguration(ReferenceHarness):
    """Builds the agent without the configured system prompt and tool choice."""

    name = "ignores-configuration"

    def build(self, setup: AgentSetup) -> ReferenceAgent:
        return super().build(dataclasses.replace(setup, system_prompt=None, tool_choice=None))
