"""@tool and FunctionTool: a plain function becomes an AgentTool whose spec matches its code."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, Optional

import pytest

from strands_middleware import ExecuteToolStage
from strands_middleware.agent import Agent
from strands_middleware.content import ToolResult, ToolUse
from strands_middleware.events import ToolResultEvent
from strands_middleware.exceptions import InterruptException, ToolInputError
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import AgentTool, FunctionTool, tool


def call(tool_use_id: str = "t1", name: str = "tool", **tool_input: Any) -> ToolUse:
    return {"toolUseId": tool_use_id, "name": name, "input": tool_input}


async def run(
    agent_tool: AgentTool, tool_use: ToolUse, state: dict[str, Any] | None = None
) -> list[Any]:
    return [event async for event in agent_tool.stream(tool_use, {} if state is None else state)]


async def result_of(
    agent_tool: AgentTool, tool_input: Any, state: dict[str, Any] | None = None
) -> ToolResultEvent:
    tool_use: ToolUse = {"toolUseId": "t1", "name": agent_tool.tool_name, "input": tool_input}
    events = await run(agent_tool, tool_use, state)
    assert len(events) == 1, "a function tool streams exactly one event, its result"
    assert isinstance(events[0], ToolResultEvent)
    return events[0]


def success(text: str, tool_use_id: str = "t1") -> ToolResult:
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": text}]}


def error(text: str, tool_use_id: str = "t1") -> ToolResult:
    return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}


@tool
def add(a: int, b: int = 0) -> int:
    """Add two integers.

    The second one is optional.

    Args:
        a: The first addend.
        b: The second addend,
            which defaults to zero.

    Returns:
        The sum.
    """
    return a + b


# -- the spec ---------------------------------------------------------------------------------


def test_spec_is_built_from_name_docstring_and_signature() -> None:
    assert add.tool_name == "add"
    assert add.tool_spec == {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "description": "The first addend."},
                    "b": {
                        "type": "integer",
                        "description": "The second addend, which defaults to zero.",
                        "default": 0,
                    },
                },
                "required": ["a"],
            }
        },
    }


def test_the_description_is_the_whole_first_paragraph_on_one_line() -> None:
    @tool
    def search(query: str) -> str:
        """Search the web
        for pages about a query.

        Longer explanation the model does not need.
        """
        return query

    assert search.tool_spec["description"] == "Search the web for pages about a query."


def test_a_docstring_that_opens_with_a_section_or_no_docstring_falls_back_to_the_name() -> None:
    @tool
    def ping() -> str:
        return "pong"

    @tool
    def echo(text: str) -> str:
        """Args:
        text: What to echo.
        """
        return text

    assert ping.tool_spec["description"] == "ping"
    assert echo.tool_spec["description"] == "echo"


def test_json_types_follow_the_annotations() -> None:
    @tool
    def everything(
        *,
        text: str,
        count: int,
        ratio: float,
        flag: bool,
        items: list[str],
        anything_list: list[Any],
        sequence: Sequence[int],
        table: dict[str, int],
        mapping: Mapping[str, Any],
        mode: Literal["fast", "slow"],
        mixed: Literal[1, "one"],
        maybe: Optional[int],  # noqa: UP045 - the spelling under test
        either: int | str,
        whatever: Any,
        described: Annotated[str, "Said in the annotation."],
    ) -> None:
        del text, count, ratio, flag, items, anything_list, sequence, table, mapping, mode
        del mixed, maybe, either, whatever, described

    properties = everything.tool_spec["inputSchema"]["json"]["properties"]
    assert properties == {
        "text": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "items": {"type": "array", "items": {"type": "string"}},
        "anything_list": {"type": "array"},
        "sequence": {"type": "array", "items": {"type": "integer"}},
        "table": {"type": "object", "additionalProperties": {"type": "integer"}},
        "mapping": {"type": "object"},
        "mode": {"enum": ["fast", "slow"], "type": "string"},
        "mixed": {"enum": [1, "one"]},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "whatever": {},
        "described": {"type": "string", "description": "Said in the annotation."},
    }
    assert everything.tool_spec["inputSchema"]["json"]["required"] == list(properties)


def test_unannotated_parameters_and_bare_containers_accept_any_value_of_their_kind() -> None:
    def loose(value, items: list, table: dict) -> None:  # type: ignore[no-untyped-def, type-arg]  # pyright: ignore[reportMissingParameterType, reportUnknownParameterType, reportMissingTypeArgument]
        del value, items, table

    properties = tool(loose).tool_spec["inputSchema"]["json"]["properties"]  # pyright: ignore[reportUnknownArgumentType]
    assert properties == {"value": {}, "items": {"type": "array"}, "table": {"type": "object"}}


def test_parameters_with_defaults_are_optional_and_json_defaults_are_shown() -> None:
    marker = object()

    @tool
    def configure(
        name: str, level: int | None = None, tags: list[str] | None = None, opaque: Any = marker
    ) -> None:
        del name, level, tags, opaque

    schema = configure.tool_spec["inputSchema"]["json"]
    assert schema["required"] == ["name"]
    assert schema["properties"]["level"]["default"] is None
    # A default the model could not write in JSON is not shown; the parameter is still optional.
    assert "default" not in schema["properties"]["opaque"]


def test_decorator_arguments_override_name_and_description() -> None:
    @tool(name="web-search", description="Find pages.")
    def search(query: str) -> str:
        """Something else entirely."""
        return query

    assert isinstance(search, FunctionTool)
    assert search.tool_name == "web-search"
    assert search.tool_spec["name"] == "web-search"
    assert search.tool_spec["description"] == "Find pages."


def test_invocation_state_parameter_is_hidden_from_the_model() -> None:
    @tool
    def whoami(invocation_state: dict[str, Any], greeting: str = "hi") -> str:
        return f"{greeting} {invocation_state['user']}"

    schema = whoami.tool_spec["inputSchema"]["json"]
    assert schema["properties"] == {"greeting": {"type": "string", "default": "hi"}}
    assert schema["required"] == []


def _total(*numbers: int) -> int:
    return sum(numbers)


class _Nameless:
    def __call__(self) -> None:
        return None


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: tool(_total), "*numbers has no name"),
        (lambda: tool(name="has space")(_total), "tool name 'has space' is not valid"),
        (lambda: tool(_Nameless()), "cannot name"),
    ],
)
def test_functions_that_cannot_be_tools_fail_at_decoration(
    make: Callable[[], object], message: str
) -> None:
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        make()


class Point:
    """A type with no JSON Schema."""


def test_an_annotation_without_json_schema_fails_at_decoration_naming_the_parameter() -> None:
    def locate(where: Point) -> None:
        del where

    with pytest.raises(TypeError, match=r"locate parameter 'where' is annotated .*Point"):
        tool(locate)


def test_an_annotation_that_cannot_be_resolved_fails_at_decoration_saying_why() -> None:
    class Local:
        pass

    def locate(where: Local) -> None:
        del where

    # Under ``from __future__ import annotations`` the annotation is the string "Local", which
    # the function's module cannot resolve.
    with pytest.raises(TypeError, match=r"cannot resolve the annotations of .*locate"):
        tool(locate)


def test_generator_functions_are_refused_with_the_alternative() -> None:
    async def progress() -> AsyncGenerator[int, None]:
        yield 1

    with pytest.raises(TypeError, match=r"generator function .*ToolResultEvent"):
        tool(progress)


# -- calling ----------------------------------------------------------------------------------


def test_the_tool_is_still_the_function_when_called_directly() -> None:
    assert add(1, 2) == 3
    assert add(a=4) == 4
    assert add.__name__ == "add"
    assert add.__doc__ is not None and add.__doc__.startswith("Add two integers.")


async def test_a_sync_function_result_becomes_a_text_success_result() -> None:
    event = await result_of(add, {"a": 2, "b": 3})
    assert event.tool_result == success("5")
    assert event.exception is None


async def test_an_async_function_is_awaited() -> None:
    @tool
    async def slow_add(a: int, b: int) -> int:
        await asyncio.sleep(0)
        return a + b

    assert (await result_of(slow_add, {"a": 2, "b": 2})).tool_result == success("4")


async def test_a_sync_function_runs_off_the_event_loop_thread() -> None:
    import threading

    loop_thread = threading.get_ident()

    @tool
    def where() -> bool:
        return threading.get_ident() != loop_thread

    assert (await result_of(where, {})).tool_result == success("true")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain text", "plain text"),
        ({"city": "Paris", "temp": 21}, '{"city": "Paris", "temp": 21}'),
        ([1, "two"], '[1, "two"]'),
        (None, "null"),
        (3.5, "3.5"),
        ({1, 2} - {2}, "{1}"),  # not JSON: falls back to str()
        ("café", "café"),
        ({"name": "café"}, '{"name": "café"}'),
    ],
)
async def test_return_values_become_text(value: object, text: str) -> None:
    @tool
    def produce() -> object:
        return value

    assert (await result_of(produce, {})).tool_result == success(text)


async def test_the_result_answers_the_tool_use_id() -> None:
    events = await run(add, call("tooluse_42", "add", a=1))
    assert events == [ToolResultEvent(success("1", "tooluse_42"))]


async def test_an_invocation_state_parameter_receives_the_state_itself() -> None:
    seen: list[dict[str, Any]] = []

    @tool
    def remember(note: str, invocation_state: dict[str, Any]) -> str:
        seen.append(invocation_state)
        invocation_state["note"] = note
        return "ok"

    state: dict[str, Any] = {"user": "ada"}
    assert (await result_of(remember, {"note": "n"}, state)).tool_result == success("ok")
    assert seen[0] is state
    assert state == {"user": "ada", "note": "n"}


def test_a_cancel_signal_parameter_is_hidden_from_the_model() -> None:
    @tool
    def slow(cancel_signal: threading.Event, steps: int = 3) -> str:
        return "done"

    schema = slow.tool_spec["inputSchema"]["json"]
    assert schema["properties"] == {"steps": {"type": "integer", "default": 3}}
    assert schema["required"] == []


async def test_a_cancel_signal_parameter_receives_the_executors_signal() -> None:
    seen: list[threading.Event] = []

    @tool
    def slow(cancel_signal: threading.Event) -> str:
        seen.append(cancel_signal)
        return "stopped" if cancel_signal.is_set() else "ran"

    signal = threading.Event()
    signal.set()
    events = [e async for e in slow.stream(call(name="slow"), {}, cancel_signal=signal)]
    assert events == [ToolResultEvent(success("stopped"))]
    assert seen == [signal]
    # A host that gives no signal: the function still gets an event, one never set.
    assert (await result_of(slow, {})).tool_result == success("ran")
    assert isinstance(seen[1], threading.Event) and seen[1] is not signal


async def test_a_sync_tool_in_its_thread_stops_when_the_run_is_cancelled() -> None:
    started = threading.Event()
    stopped = threading.Event()
    signals: list[threading.Event] = []

    @tool
    def crunch(cancel_signal: threading.Event) -> str:
        """Work until told to stop."""
        signals.append(cancel_signal)
        started.set()
        while not cancel_signal.wait(0.01):
            pass
        stopped.set()
        return "stopped"

    agent = Agent(
        model=ScriptedModel([tool_turn("crunch", {}, tool_use_id="t1"), text_turn("done")]),
        tools=[crunch],
    )
    assert agent.middleware_registry.has_handlers(ExecuteToolStage) is False
    run = asyncio.ensure_future(agent.invoke_async("go"))
    try:
        assert await asyncio.to_thread(started.wait, 5)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        # The thread a cancellation cannot stop learned of it from the signal.
        assert await asyncio.to_thread(stopped.wait, 5)
    finally:
        for signal in signals:  # a failing run must not leave the thread spinning
            signal.set()


async def test_positional_only_parameters_are_passed_by_position() -> None:
    @tool
    def power(base: int, exponent: int = 2, /) -> int:
        return int(base**exponent)

    assert (await result_of(power, {"base": 3})).tool_result == success("9")
    assert (await result_of(power, {"base": 2, "exponent": 5})).tool_result == success("32")


async def test_a_function_with_kwargs_accepts_extra_input() -> None:
    @tool
    def record(kind: str, **fields: Any) -> dict[str, Any]:
        return {"kind": kind, **fields}

    event = await result_of(record, {"kind": "k", "extra": 1})
    assert event.tool_result == success('{"kind": "k", "extra": 1}')


async def test_a_tool_without_parameters_accepts_no_input_at_all() -> None:
    @tool
    def ping() -> str:
        return "pong"

    assert (await result_of(ping, None)).tool_result == success("pong")
    assert (await result_of(ping, {})).tool_result == success("pong")


# -- errors become results ----------------------------------------------------------------


async def test_an_exception_becomes_an_error_result_carrying_the_exception() -> None:
    failure = ValueError("the city is unknown")

    @tool
    def weather(city: str) -> str:
        raise failure

    event = await result_of(weather, {"city": "Atlantis"})
    assert event.tool_result == error("Error: the city is unknown")
    assert event.exception is failure


async def test_an_async_exception_becomes_an_error_result() -> None:
    @tool
    async def fail() -> None:
        raise KeyError("missing")

    event = await result_of(fail, {})
    assert event.tool_result == error("Error: 'missing'")
    assert isinstance(event.exception, KeyError)


async def test_an_exception_without_a_message_is_named_by_its_type() -> None:
    @tool
    def fail() -> None:
        raise RuntimeError

    assert (await result_of(fail, {})).tool_result == error("Error: RuntimeError")


async def test_missing_required_arguments_are_named_in_an_error_result() -> None:
    event = await result_of(add, {"b": 1})
    assert event.tool_result == error(
        "Error: invalid input for tool 'add': missing required argument(s) 'a'; "
        "the tool takes required 'a' and optional 'b'"
    )
    assert isinstance(event.exception, ToolInputError)
    assert event.exception.missing == ("a",)
    assert event.exception.unexpected == ()


async def test_unexpected_arguments_are_named_in_an_error_result() -> None:
    event = await result_of(add, {"a": 1, "c": 2, "d": 3})
    assert event.tool_result == error(
        "Error: invalid input for tool 'add': unexpected argument(s) 'c', 'd'; "
        "the tool takes required 'a' and optional 'b'"
    )
    assert isinstance(event.exception, ToolInputError)
    assert event.exception.unexpected == ("c", "d")


async def test_missing_and_unexpected_arguments_are_reported_together() -> None:
    event = await result_of(add, {"first": 1})
    assert event.tool_result["status"] == "error"
    text = event.tool_result["content"][0].get("text", "")
    assert "missing required argument(s) 'a'" in text
    assert "unexpected argument(s) 'first'" in text


async def test_the_model_cannot_supply_the_invocation_state() -> None:
    @tool
    def whoami(invocation_state: dict[str, Any]) -> str:
        return str(invocation_state.get("user"))

    event = await result_of(whoami, {"invocation_state": {"user": "mallory"}}, {"user": "ada"})
    assert event.tool_result == error(
        "Error: invalid input for tool 'whoami': unexpected argument(s) 'invocation_state'; "
        "the tool takes no arguments"
    )


async def test_input_that_is_not_an_object_is_an_error_result() -> None:
    event = await result_of(add, [1, 2])
    assert event.tool_result == error(
        "Error: invalid input for tool 'add': expected a JSON object of arguments, got list; "
        "the tool takes required 'a' and optional 'b'"
    )


async def test_the_function_is_not_called_when_the_input_is_invalid() -> None:
    calls: list[int] = []

    @tool
    def count(n: int) -> int:
        calls.append(n)
        return n

    await result_of(count, {})
    assert calls == []


# -- control flow propagates ----------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True])
async def test_an_interrupt_propagates_instead_of_becoming_a_result(is_async: bool) -> None:
    interrupt = InterruptException(Interrupt(id="i1", name="approve"))

    def gate() -> None:
        raise interrupt

    async def async_gate() -> None:
        raise interrupt

    gated = tool(name="gate")(async_gate) if is_async else tool(gate)
    with pytest.raises(InterruptException) as raised:
        await result_of(gated, {})
    assert raised.value is interrupt


async def test_cancellation_propagates() -> None:
    @tool
    async def cancelled() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await result_of(cancelled, {})


async def test_cancelling_the_caller_cancels_an_async_tool() -> None:
    started = asyncio.Event()
    finished: list[bool] = []

    @tool
    async def forever() -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        finally:
            finished.append(True)

    task = asyncio.create_task(result_of(forever, {}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished == [True]


async def test_base_exceptions_that_are_not_exceptions_propagate() -> None:
    @tool
    def stop() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await result_of(stop, {})


# -- the AgentTool shape ----------------------------------------------------------------------


class ProgressTool:
    """A hand-written AgentTool: streams progress, then its result."""

    @property
    def tool_name(self) -> str:
        return "progress"

    @property
    def tool_spec(self) -> Any:
        return {
            "name": "progress",
            "description": "Reports progress.",
            "inputSchema": {"json": {"type": "object", "properties": {}}},
        }

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        yield {"progress": 50}
        yield ToolResultEvent(success("done", tool_use["toolUseId"]))


async def test_function_tools_and_hand_written_tools_are_both_agent_tools() -> None:
    tools: list[AgentTool] = [add, ProgressTool()]

    streams = [await run(each, call(name=each.tool_name, a=1)) for each in tools[:1]]
    streams.append(await run(tools[1], call(name="progress")))

    assert streams[0] == [ToolResultEvent(success("1"))]
    assert streams[1] == [{"progress": 50}, ToolResultEvent(success("done"))]


async def test_host_keyword_extras_are_accepted_and_ignored() -> None:
    events = [event async for event in add.stream(call(a=1), {}, cancel_signal=object())]
    assert events == [ToolResultEvent(success("1"))]


def test_repr_names_the_tool_and_the_function() -> None:
    assert repr(add) == "FunctionTool('add', add)"
