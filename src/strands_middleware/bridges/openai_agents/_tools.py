"""``ExecuteToolStage`` on the OpenAI Agents SDK: each function tool's invoker, and its pause.

The SDK decides whether a call pauses before it runs the call (the tool's ``needs_approval``),
and a tool's invoker cannot pause a run. So the bridge starts a call's chain in the tool's
approval check: the chain runs its handlers and stops at the terminal, waiting there until the
SDK invokes the tool. A handler's interrupt found on the way answers the check with "needs
approval", so the run pauses through the SDK's own ``result.interruptions``; the chain is gone
by then and nothing ran. Otherwise the invoker hands the SDK's ``ToolContext`` to the waiting
terminal, which runs the SDK's own invoker, and returns the chain's result.

A resumed call (approved by the SDK) has no approval check: its chain runs in the invoker, with
the answers the caller gave. A handler that asks again there cannot pause the run (the SDK
offers no way), so the call ends with an error result and the tool does not run.

A call to a tool the agent does not have runs its chain (``context.tool`` is ``None``) in the
run's tool error formatter (`UnknownTools`), which the SDK asks for that call's output when the
run config returns such calls to the model. The SDK hands the formatter the tool's name and the
call id only, so the bridge notes the function calls of each model response it passes on, to
give handlers the call's arguments.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
from collections import OrderedDict
from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
)
from functools import partial
from typing import Any, cast

from agents import FunctionTool, ToolErrorFormatterArgs
from agents.tool_context import ToolContext

from ...content import ToolResult, ToolSpec, ToolUse
from ...engine._registry import MiddlewareRegistry
from ...events import ToolResultEvent
from ...exceptions import InterruptException, InterruptResponseFormatError, InterruptResumeError
from ...host._cancel_signal import CancelSignal
from ...host._tool_call import ToolStagePoint, make_tool_terminal
from ...interrupts import Interrupt
from ...stages._execute_tool import ExecuteToolStage
from ...stores._protocols import SnapshotStore
from ._converse import tool_spec_of

__all__ = ["ToolCalls", "UnknownTools", "keep", "wrap_tool"]

_PREFIX = "v1:middleware_execute_tool:"
_KEPT = 1024
"""How many paused calls (and resumed ones) a middleware object remembers: older ones are
forgotten, so a run abandoned while paused costs nothing for long."""

Invoker = Callable[[ToolContext[Any], str], Awaitable[Any]]
Invocation = tuple[ToolContext[Any], str]
"""What the SDK invokes a tool with: its context and the arguments as JSON."""


def call_prefix(call_id: str) -> str:
    """What every interrupt id of the tool call ``call_id`` starts with."""
    return f"{_PREFIX}{call_id}:"


class _ApprovedCall(Mapping[str, Interrupt]):
    """The answers of a call the SDK approved without this library's answers: "approve"."""

    def __init__(self, call_id: str) -> None:
        self._prefix = call_prefix(call_id)

    def __getitem__(self, key: str) -> Interrupt:
        if not key.startswith(self._prefix):
            raise KeyError(key)
        return Interrupt(id=key, name="", response="approve")

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


class _Consulted(Mapping[str, Interrupt]):
    """Answers, noting whether the chain found one of them (``consulted``)."""

    __slots__ = ("_answers", "consulted")

    def __init__(self, answers: Mapping[str, Interrupt]) -> None:
        self._answers = answers
        self.consulted = False

    def __getitem__(self, key: str) -> Interrupt:
        found = self._answers[key]
        self.consulted = True
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._answers)

    def __len__(self) -> int:
        return len(self._answers)


class _SDKTool:
    """One call of an SDK function tool, as the `AgentTool` the chain's terminal runs.

    ``given_input`` is the call's arguments as the SDK parsed them (never handed to handlers,
    who edit a copy): the arguments reaching the terminal equal to it go to the SDK as the
    model's own string.
    """

    __slots__ = ("_input", "_invoker", "_start", "produced", "tool")

    def __init__(
        self,
        tool: FunctionTool,
        invoker: Invoker,
        given_input: Any,
        start: Callable[[], Awaitable[Invocation]],
    ) -> None:
        self.tool = tool
        self._invoker = invoker
        self._input = given_input
        self._start = start
        self.produced: tuple[ToolResultEvent, Any] | None = None

    @property
    def tool_name(self) -> str:
        """The name the model calls the tool by."""
        return self.tool.name

    @property
    def tool_spec(self) -> ToolSpec:
        """The tool's spec in Converse shape."""
        return tool_spec_of(self.tool)

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[ToolResultEvent, None]:
        """Run the SDK's own invoker (once the SDK invokes the tool); yields its result."""
        context, args_json = await self._start()
        arguments = tool_use["input"]
        # Arguments a handler left as they were go to the SDK as the model's own string.
        args = args_json if arguments == self._input else json.dumps(arguments)
        value = await self._invoker(context, args)
        result: ToolResult = {
            "toolUseId": tool_use["toolUseId"],
            "status": "success",
            "content": [{"text": value if isinstance(value, str) else json.dumps(value)}],
        }
        event = ToolResultEvent(result)
        self.produced = (event, value)
        yield event

    def __repr__(self) -> str:
        return f"OpenAIAgentsTool({self.tool.name!r})"


def _host_result(event: ToolResultEvent, tool: _SDKTool | None) -> Any:
    """What the SDK gets as the tool's output for the chain's result."""
    if tool is not None and tool.produced is not None and tool.produced[0] is event:
        return tool.produced[1]
    return "".join(
        str(item.get("text", item.get("json", ""))) for item in event.tool_result["content"]
    )


def _waiting(
    settled: asyncio.Future[None], invoked: asyncio.Future[Invocation]
) -> Callable[[], Awaitable[Invocation]]:
    """The start of a call's terminal: say the chain reached it, and wait for the SDK's call."""

    async def start() -> Invocation:
        if not settled.done():
            settled.set_result(None)
        return await invoked

    return start


class _Pending:
    """A call whose chain waits at its terminal for the SDK to invoke the tool.

    ``checker`` is the task the approval check ran in, with the callback its end runs (see
    `ToolCalls.check`), until the SDK invokes the call.
    """

    __slots__ = ("checker", "invoked", "settled", "task", "tool")

    def __init__(self, tool: FunctionTool, invoker: Invoker, given_input: Any) -> None:
        loop = asyncio.get_running_loop()
        # Set when the chain reaches the terminal or ends before it, whichever comes first.
        self.settled: asyncio.Future[None] = loop.create_future()
        self.invoked: asyncio.Future[Invocation] = loop.create_future()
        self.task: asyncio.Task[ToolResultEvent] | None = None
        self.checker: tuple[asyncio.Task[Any], Callable[[asyncio.Task[Any]], None]] | None = None
        # The terminal's start holds the two futures, not this object: a call (its task, its
        # result, the SDK's context) is then freed when it ends, not left in a reference cycle
        # for the cyclic collector.
        self.tool = _SDKTool(tool, invoker, given_input, _waiting(self.settled, self.invoked))

    def settle(self, _: object = None) -> None:
        if not self.settled.done():
            self.settled.set_result(None)


class ToolCalls:
    """The tool calls of the agents one middleware object wraps: waiting, paused, answered.

    With a ``store``, a pause on a call leaves a record there (for ``ttl`` seconds) and a
    resumed run claims it before the call runs: a second resume of the same paused round, in
    any process using that store, finds its calls claimed and runs none of them.
    """

    def __init__(
        self,
        registry: MiddlewareRegistry,
        agent: Any,
        store: SnapshotStore | None = None,
        ttl: float = 0.0,
    ) -> None:
        self.registry = registry
        self.agent = agent
        self.store = store
        self.ttl = ttl
        self.pending: dict[str, _Pending] = {}
        # call id -> the interrupts it paused on, until its resumed chain runs.
        self.owed: OrderedDict[str, list[Interrupt]] = OrderedDict()
        self.answers: dict[str, dict[str, Interrupt]] = {}
        # The call ids whose paused round ran once resumed: a RunState paused on one of them
        # was already resumed (per process; forgotten when a new run pauses on the same id).
        self.resumed: OrderedDict[str, None] = OrderedDict()
        # call id -> the name and the arguments (JSON text) of a function call a model made.
        self.made: OrderedDict[str, tuple[str, str]] = OrderedDict()

    def _run(
        self, tool: _SDKTool | None, tool_use: ToolUse, answers: Mapping[str, Interrupt]
    ) -> Coroutine[Any, Any, ToolResultEvent]:
        """The call's chain, to await: its result, or the `InterruptException` that pauses it.

        The stage point hands handlers a copy of ``tool_use``; ``tool`` keeps one of its own.
        """
        signal = CancelSignal()
        point = ToolStagePoint(
            self.registry,
            agent=self.agent,
            tool=tool,
            tool_use=tool_use,
            invocation_state={},
            cancel_signal=signal,
            interrupts=answers,
            tracks_changes=False,  # the terminal reads the call as it arrives
        )
        return point.result(make_tool_terminal(signal))

    async def check(
        self,
        tool: FunctionTool,
        invoker: Invoker,
        params: Any,
        call_id: str,
        context: Any = None,
    ) -> bool:
        """The approval check: start the call's chain; ``True`` when a handler interrupts.

        ``context`` is the SDK's run context: a call it holds a decision on already is checked
        again as it is resumed (older SDK releases do), and its pause is not a new one.
        """
        tool_use: ToolUse = {"toolUseId": call_id, "name": tool.name, "input": params}
        # The SDK's own arguments are what a handler's are compared with: handlers get a copy
        # (the stage point makes it), and nothing here changes them.
        pending = _Pending(tool, invoker, params)
        task = asyncio.create_task(self._run(pending.tool, tool_use, {}))
        task.add_done_callback(pending.settle)
        pending.task = task
        settled = pending.settled
        try:
            # One turn of the loop runs the task's first step, then this: a chain whose
            # handlers await nothing before they call next_fn has reached the terminal by then,
            # and the check goes on in that same turn rather than being woken in the next.
            await asyncio.sleep(0)
            if not settled.done():
                await settled
        except BaseException:
            # The check was cancelled (the run was): the chain goes with it, its handlers
            # closed, rather than waiting at the terminal for a call that will never come.
            task.cancel()
            raise
        if task.done() and not task.cancelled():
            error = task.exception()
            if isinstance(error, InterruptException):
                keep(self.owed, call_id, [error.interrupt])
                if not _decided(context, tool.name, call_id):
                    await self.paused(call_id)
                return True
        self.pending[call_id] = pending
        # The SDK invokes an approved call from the task that checked it (or one it awaits):
        # once that task has ended, a call still waiting never will be (a tool input guardrail
        # rejected it, a hook or another call failed the run), and its chain is ended then.
        checker = asyncio.current_task()
        if checker is not None:
            ended = partial(self._not_invoked, call_id, pending)
            checker.add_done_callback(ended)
            pending.checker = (checker, ended)
        return False

    def _not_invoked(self, call_id: str, pending: _Pending, _checker: object) -> None:
        """End ``pending``'s chain, the task that checked it having ended with no invocation:
        its task is cancelled, so its handlers are closed (a slot a handler holds is let go)."""
        pending.checker = None  # it held this callback, which holds the call: no cycle left
        if self.pending.get(call_id) is pending:
            del self.pending[call_id]
        if pending.task is not None and not pending.invoked.done():
            pending.task.cancel()

    async def paused(self, call_id: str) -> None:
        """Note that a run pauses on ``call_id``: a new pause (a model that reuses call ids)
        is answerable again, in this process and, through the store, in any."""
        self.resumed.pop(call_id, None)
        if self.store is not None:
            await self.store.snapshot_put(_record_key(call_id), _PAUSED, self.ttl)

    async def _claim(self, call_id: str, tool_name: str) -> None:
        """Claim ``call_id`` in the store for this resumed run, or refuse a second resume.

        The pause left a record; the first resume takes it, atomically, so of any number of
        resumes (racing or not, in any process) one gets it. A call whose pause left no record
        (it expired, or the run paused without the store) is claimed by the first resume that
        writes one: the store's versions say whether another wrote before.
        """
        store = self.store
        if store is None:
            return
        key = _record_key(call_id)
        taken = await store.snapshot_take(key)
        if taken is not None:
            first = taken[1] == _PAUSED
        else:
            first = await store.snapshot_put(key, _CLAIMED, self.ttl) == 1
        if not first:
            raise InterruptResumeError(
                f"this paused run was already resumed: its call {call_id!r} to {tool_name!r} "
                "ran once resumed (the store records it, whichever process resumed it), so it "
                "does not run again; resume the RunState of the run's latest pause, or send a "
                "new prompt",
                [i.id for i in self.owed.get(call_id, ())],
            )

    def check_request(self, items: object) -> None:
        """Refuse a model call whose input holds a call paused on this middleware's interrupts
        without its result (a new prompt sent with a paused run's history).

        A call whose result the input holds is forgotten: it was answered.

        Raises:
            InterruptResponseFormatError: such a call is in ``items``; the model is not asked.
        """
        owed = self.owed
        if not owed or isinstance(items, str):
            return
        called: list[str] = []
        answered: set[str] = set()
        for item in cast("list[object]", items):
            kind, call_id = _kind_and_call(item)
            if call_id is None or call_id not in owed:
                continue
            if kind == "function_call":
                called.append(call_id)
            elif kind == "function_call_output":
                answered.add(call_id)
        for call_id in answered:
            owed.pop(call_id, None)
        waiting = [i for call_id in called if call_id not in answered for i in owed[call_id]]
        if waiting:
            raise paused_refusal(waiting)

    async def invoke(
        self, tool: FunctionTool, invoker: Invoker, context: ToolContext[Any], args_json: str
    ) -> Any:
        """The tool's invoker: the chain started by the check, or a resumed call's chain."""
        pending = self.pending.pop(context.tool_call_id, None)
        if pending is None or pending.task is None:
            return await self._resumed(tool, invoker, context, args_json)
        if pending.checker is not None:
            checker, ended = pending.checker
            checker.remove_done_callback(ended)
            pending.checker = None
        if not pending.invoked.done():
            pending.invoked.set_result((context, args_json))
        # Cancelling this call cancels the chain's task, and the await returns once the task
        # has closed its handlers.
        event = await pending.task
        return _host_result(event, pending.tool)

    async def _resumed(
        self, tool: FunctionTool, invoker: Invoker, context: ToolContext[Any], args_json: str
    ) -> Any:
        call_id = context.tool_call_id
        # First: a round resumed a second time (in another process) runs none of its calls.
        await self._claim(call_id, tool.name)
        given = self.answers.pop(call_id, None)
        answers = _Consulted(given if given is not None else _ApprovedCall(call_id))
        owed = self.owed.pop(call_id, None)
        keep(self.resumed, call_id, None)
        arguments: Any = json.loads(args_json) if args_json else {}
        tool_use: ToolUse = {"toolUseId": call_id, "name": tool.name, "input": arguments}

        async def start() -> Invocation:
            return context, args_json

        sdk_tool = _SDKTool(tool, invoker, arguments, start)
        try:
            event = await self._run(sdk_tool, tool_use, answers)
        except InterruptException as again:
            if given is not None and not answers.consulted:
                # No answer given was for a question this call asks: they are another run's
                # (a state loaded in a fresh process cannot check them before it runs). Nothing
                # ran; the saved state stays answerable.
                await self._unclaim(call_id, owed)
                raise InterruptResumeError(
                    f"the answers given for call {call_id!r} to {tool.name!r} answer nothing its "
                    f"middleware asks: it asks {again.interrupt.name!r} "
                    f"({again.interrupt.id}), the answers are for "
                    f"{', '.join(sorted(given))}, another run's; nothing ran: load the saved "
                    "RunState again and resume it with answers to this run's interrupts",
                    [again.interrupt.id],
                ) from None
            return (
                f"The tool did not run: middleware asked {again.interrupt.name!r} again on a "
                "resumed call, and the OpenAI Agents SDK cannot pause a call it already approved."
            )
        return _host_result(event, sdk_tool)

    async def _unclaim(self, call_id: str, owed: list[Interrupt] | None) -> None:
        """Undo what a resumed call noted as it started: it did not run."""
        self.resumed.pop(call_id, None)
        if owed is not None:
            keep(self.owed, call_id, owed)
        if self.store is not None:
            await self.store.snapshot_put(_record_key(call_id), _PAUSED, self.ttl)

    def note(self, output: Iterable[object]) -> None:
        """Note the function calls among a model response's output items (SDK items)."""
        for item in output:
            if getattr(item, "type", None) == "function_call":
                call: Any = item
                keep(self.made, call.call_id, (call.name, call.arguments))

    def note_message(self, content: Iterable[Mapping[str, Any]]) -> None:
        """Note the tool calls of a model's reply in Converse (the chain's result)."""
        for block in content:
            use = block.get("toolUse")
            if use is not None:
                given = use["input"]
                text = given if isinstance(given, str) else json.dumps(given)
                keep(self.made, use["toolUseId"], (use["name"], text))

    async def unknown(self, name: str, call_id: str) -> str:
        """The output of a call to the tool ``name``, which the agent does not have: the
        chain's result, run with no tool."""
        made = self.made.pop(call_id, None)
        text = made[1] if made is not None and made[0] == name else ""
        arguments: Any
        try:
            arguments = json.loads(text) if text else {}
        except ValueError:
            arguments = text  # as the model wrote it: a handler may still read it
        tool_use: ToolUse = {"toolUseId": call_id, "name": name, "input": arguments}
        try:
            event = await self._run(None, tool_use, {})
        except InterruptException as asked:
            return (
                f"The tool did not run: middleware asked {asked.interrupt.name!r} on a call to "
                f"{name!r}, a tool the agent does not have, and the OpenAI Agents SDK cannot "
                "pause such a call."
            )
        value = _host_result(event, None)
        return value if isinstance(value, str) else json.dumps(value)


class UnknownTools:
    """A run's ``tool_error_formatter``: calls to a tool the agent does not have run the chain.

    Other errors (and such calls when no ``ExecuteToolStage`` handler is registered) go to the
    formatter the run config had, if any, else keep the SDK's own message.

    Args:
        calls: The middleware's tool calls.
        given: The run config's own formatter.
    """

    __slots__ = ("calls", "given")

    def __init__(self, calls: ToolCalls, given: Callable[..., Any] | None) -> None:
        self.calls = calls
        self.given = given

    async def __call__(self, args: ToolErrorFormatterArgs[Any]) -> str | None:
        """The output the model reads for the failed call ``args`` describes."""
        calls = self.calls
        if args.kind == "tool_not_found" and calls.registry.has_handlers(ExecuteToolStage):
            return await calls.unknown(args.tool_name, args.call_id)
        if self.given is None:
            return None
        message = self.given(args)
        return cast("str | None", await message if inspect.isawaitable(message) else message)


def _decided(context: Any, tool_name: str, call_id: str) -> bool:
    """Whether the SDK's run ``context`` holds an approval or a rejection of the call already:
    it is being resumed (older SDK releases check a call's approval again then)."""
    decision = getattr(context, "is_tool_approved", None)
    return decision is not None and decision(tool_name, call_id) is not None


_PAUSED = b"paused"
_CLAIMED = b"claimed"


def _record_key(call_id: str) -> str:
    return f"openai_agents:paused_call:{call_id}"


def _kind_and_call(item: object) -> tuple[object, str | None]:
    if isinstance(item, Mapping):
        data = cast("Mapping[str, object]", item)
        kind, call_id = data.get("type"), data.get("call_id")
    else:
        kind, call_id = getattr(item, "type", None), getattr(item, "call_id", None)
    return kind, call_id if isinstance(call_id, str) else None


def paused_refusal(interrupts: list[Interrupt]) -> InterruptResponseFormatError:
    """The error of a new prompt sent with the history of a run paused on ``interrupts``."""
    listed = ", ".join(f"{i.name!r} ({i.id})" for i in interrupts)
    return InterruptResponseFormatError(
        f"the run is paused on {len(interrupts)} interrupt(s) waiting for an answer: {listed}. "
        "A new prompt sent with its history would reach the model with the paused calls "
        "unanswered, so it is refused and the model was not asked: answer them with "
        "middleware.resume(state, answers) and run the state (Runner.run(agent, state)), or "
        "answer with a refusal (the tool does not run) and send the prompt after that run, "
        "or send it without the paused run's history",
        [i.id for i in interrupts],
    )


def keep(records: OrderedDict[str, Any], key: str, value: Any) -> None:
    """Note ``key`` in ``records``, forgetting the oldest beyond `_KEPT`."""
    records[key] = value
    records.move_to_end(key)
    while len(records) > _KEPT:
        records.popitem(last=False)


def wrap_tool(tool: FunctionTool, calls: ToolCalls) -> FunctionTool:
    """A copy of ``tool`` whose calls run through ExecuteToolStage."""
    invoker: Invoker = tool.on_invoke_tool
    own = tool.needs_approval

    async def needs_approval(context: Any, params: Any, call_id: str) -> bool:
        if own is True or (callable(own) and await own(context, params, call_id)):
            # The SDK's own approval; the chain runs once it is approved.
            if not _decided(context, tool.name, call_id):
                await calls.paused(call_id)
            return True
        if not calls.registry.has_handlers(ExecuteToolStage):
            return False
        return await calls.check(tool, invoker, params, call_id, context)

    async def on_invoke_tool(context: ToolContext[Any], args_json: str) -> Any:
        if not calls.registry.has_handlers(ExecuteToolStage):
            return await invoker(context, args_json)
        return await calls.invoke(tool, invoker, context, args_json)

    # The SDK reads the invoker's signature and type hints on every call, to choose the context
    # it passes: given as objects, they cost it a lookup instead of evaluating annotation text.
    described: Any = on_invoke_tool
    described.__signature__ = _INVOKER_SIGNATURE
    described.__annotations__ = _INVOKER_ANNOTATIONS
    return dataclasses.replace(tool, on_invoke_tool=on_invoke_tool, needs_approval=needs_approval)


_INVOKER_ANNOTATIONS: dict[str, Any] = {"context": ToolContext, "args_json": str, "return": Any}
_INVOKER_SIGNATURE = inspect.Signature(
    [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation)
        for name, annotation in (("context", ToolContext), ("args_json", str))
    ],
    return_annotation=Any,
)
