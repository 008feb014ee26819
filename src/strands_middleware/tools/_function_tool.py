"""Tools: the shape the agent loop calls, and ``@tool`` to make one from a plain function.

`AgentTool` is the Strands tool shape as a `typing.Protocol`: a name, a `ToolSpec` the model is
shown, and a ``stream`` that runs one call and ends with a `ToolResultEvent`. Any object with
those members is a tool; ``ExecuteToolStage`` middleware sees it as ``context.tool``.

`tool` turns a function into a `FunctionTool`. The spec comes from the function itself, so the
model is told exactly what the code accepts: the name from ``__name__``, the description from the
first docstring paragraph, one JSON Schema property per parameter (with its description from a
Google-style ``Args:`` section) and the parameters without defaults as ``required``. A function
whose annotations have no JSON Schema fails at decoration time rather than on the model's first
call.

A tool call never raises for the model's mistakes or the tool's own failures: the model gets an
error result it can read and react to (retry with other arguments, apologise, pick another
tool). Only control flow propagates: `InterruptException` (the run pauses for a human),
`asyncio.CancelledError` and every other `BaseException` that is not an `Exception`.
"""

from __future__ import annotations

import asyncio
import collections.abc
import functools
import inspect
import json
import re
import threading
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, cast, overload

from ..content import ToolResult, ToolSpec, ToolUse
from ..events import ToolResultEvent
from ..exceptions import InterruptException, ToolInputError
from ._docstrings import first_paragraph, parse_args_section
from ._schema import is_json, json_schema, unwrap_annotated

__all__ = ["FunctionTool", "result_text", "tool"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

_STATE_PARAMETER = "invocation_state"
"""A parameter with this name receives the invocation state instead of model input."""

_SIGNAL_PARAMETER = "cancel_signal"
"""A parameter with this name receives the call's cancel signal instead of model input."""

# The tool-name rule of Bedrock Converse, the strictest of the providers Strands supports: a name
# that breaks it fails only when the model is first called, far from the decorator that chose it.
_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class _ToolDecorator(Protocol):
    """What ``@tool(name=..., description=...)`` returns: the decorator proper."""

    def __call__(self, func: Callable[_P, _R], /) -> FunctionTool[_P, _R]: ...


class FunctionTool(Generic[_P, _R]):
    """A plain function made into an `AgentTool` by `tool`.

    Calling the object calls the function unchanged (``add(1, 2)`` is still ``3``), so a
    decorated function stays usable and testable as ordinary code. `stream` is the agent-loop
    entry point: it validates the model's input, runs the function (an ``async def`` in the
    event loop, a plain function in a worker thread so blocking I/O does not stall the other
    tools) and ends with the result.

    Args:
        func: The function; each parameter is one input property of the tool.
        name: The tool name; defaults to the function's ``__name__``.
        description: What the model is told; defaults to the first docstring paragraph.

    Raises:
        TypeError: ``func`` cannot be a tool: it is a generator, takes ``*args``, or has a
            parameter whose annotation has no JSON Schema (the message names it).
        ValueError: The name is not 1 to 64 letters, digits, ``_`` or ``-``.
    """

    # Set by functools.update_wrapper, so the tool still looks like its function to help(),
    # inspect.signature() and doc tools.
    __name__: str
    __qualname__: str
    __wrapped__: Callable[_P, _R]

    def __init__(
        self, func: Callable[_P, _R], *, name: str | None = None, description: str | None = None
    ) -> None:
        if not callable(func):
            raise TypeError(f"@tool needs a function, got {type(func).__name__}")
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise TypeError(
                f"@tool cannot wrap the generator function {_qualname(func)}: a function tool "
                "returns its result; to stream progress, write a class with the AgentTool "
                "members whose stream() yields progress and ends with a ToolResultEvent"
            )
        functools.update_wrapper(self, func)
        tool_name = name if name is not None else getattr(func, "__name__", None)
        if tool_name is None:
            raise TypeError(f"@tool cannot name {func!r}; pass name=...")
        if not _NAME_PATTERN.match(tool_name):
            raise ValueError(
                f"tool name {tool_name!r} is not valid: model providers accept 1 to 64 letters, "
                "digits, '_' and '-'; pass name=... to choose another"
            )
        self._func = func
        # The standard link to the decorated function (``inspect.unwrap`` follows it), so code
        # that reads a function's signature, such as another framework's tool maker, finds it.
        self.__wrapped__ = func
        # The same function, typed for calls with arguments assembled at run time.
        self._call: Callable[..., Any] = func
        self._is_async = inspect.iscoroutinefunction(func)
        self._build(tool_name, description)

    # -- AgentTool -----------------------------------------------------------------------------

    @property
    def tool_name(self) -> str:
        """The name the model calls the tool by."""
        return self._spec["name"]

    @property
    def tool_spec(self) -> ToolSpec:
        """The spec built from the function. It is shared, not copied: treat it as read-only."""
        return self._spec

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[ToolResultEvent, None]:
        """Run one call and yield its `ToolResultEvent`, the only event a function tool has.

        Input that does not fit the parameters and exceptions raised by the function become an
        error result whose text is ``"Error: <message>"`` and whose ``exception`` is the error
        (a `ToolInputError` for bad input). `InterruptException` and `BaseException`s that are
        not `Exception`s (``asyncio.CancelledError``, ``KeyboardInterrupt``) propagate.

        Args:
            tool_use: The call: its ``input`` must be a JSON object of the parameters.
            invocation_state: Passed to the function if it declares ``invocation_state``.
            **kwargs: Host-specific extras: ``cancel_signal`` (the executor's
                `threading.Event`) is passed to the function if it declares ``cancel_signal``
                (an event never set when the host gives none); the rest are ignored.
        """
        signal: Any = kwargs.get(_SIGNAL_PARAMETER) if self._wants_signal else None
        yield await self._run(tool_use, invocation_state, signal)

    # -- the function itself -------------------------------------------------------------------

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """Call the wrapped function directly, exactly as if it were not decorated."""
        return self._func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionTool({self.tool_name!r}, {_qualname(self._func)})"

    # -- private -------------------------------------------------------------------------------

    def _build(self, tool_name: str, description: str | None) -> None:
        try:
            signature = inspect.signature(self._func, eval_str=True)
        except NameError as error:
            raise TypeError(
                f"@tool cannot resolve the annotations of {_qualname(self._func)} ({error}); "
                "define the types it uses at module level"
            ) from error
        docstring = inspect.getdoc(self._func) or ""
        documented = parse_args_section(docstring)

        properties: dict[str, Any] = {}
        required: list[str] = []
        positional_only: list[tuple[str, Any]] = []
        self._wants_state = False
        self._wants_signal = False
        self._accepts_extra = False
        for parameter in signature.parameters.values():
            if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
                raise TypeError(
                    f"@tool cannot wrap {_qualname(self._func)}: *{parameter.name} has no name "
                    "the model could pass it by; tool input is a JSON object of named arguments"
                )
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                # Extra input keys go to **kwargs, so none of them is unexpected.
                self._accepts_extra = True
                continue
            if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
                positional_only.append((parameter.name, parameter.default))
            if parameter.name == _STATE_PARAMETER:
                self._wants_state = True
                continue
            if parameter.name == _SIGNAL_PARAMETER:
                self._wants_signal = True
                continue
            annotation, annotated_description = unwrap_annotated(parameter.annotation)
            where = f"{_qualname(self._func)} parameter {parameter.name!r}"
            schema = json_schema(annotation, where)
            text = annotated_description or documented.get(parameter.name)
            if text:
                schema["description"] = text
            if parameter.default is inspect.Parameter.empty:
                required.append(parameter.name)
            elif is_json(parameter.default):
                schema["default"] = parameter.default
            properties[parameter.name] = schema

        self._properties = tuple(properties)
        self._required = tuple(required)
        self._positional_only = tuple(positional_only)
        self._spec: ToolSpec = {
            "name": tool_name,
            "description": description
            if description is not None
            else first_paragraph(docstring) or tool_name,
            "inputSchema": {
                "json": {"type": "object", "properties": properties, "required": required}
            },
        }

    async def _run(
        self,
        tool_use: ToolUse,
        invocation_state: dict[str, Any],
        cancel_signal: threading.Event | None = None,
    ) -> ToolResultEvent:
        tool_use_id = tool_use["toolUseId"]
        try:
            args, kwargs = self._bind(tool_use.get("input"), invocation_state, cancel_signal)
        except ToolInputError as error:
            return ToolResultEvent.from_exception(tool_use_id, error)
        try:
            if self._is_async:
                value = await self._call(*args, **kwargs)
            else:
                value = await asyncio.to_thread(self._call, *args, **kwargs)
                # A plain callable may still hand back an awaitable (an object whose __call__
                # is async, a lambda returning a coroutine); its result is what was meant.
                if inspect.isawaitable(value):
                    value = await value
            text = result_text(value)
        except InterruptException:
            raise
        except Exception as error:
            return ToolResultEvent.from_exception(tool_use_id, error)
        result: ToolResult = {
            "toolUseId": tool_use_id,
            "status": "success",
            "content": [{"text": text}],
        }
        return ToolResultEvent(result)

    def _bind(
        self,
        raw: object,
        invocation_state: dict[str, Any],
        cancel_signal: threading.Event | None = None,
    ) -> tuple[list[Any], dict[str, Any]]:
        """Check the model's input against the parameters; return the call's arguments."""
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise ToolInputError(
                f"invalid input for tool {self.tool_name!r}: expected a JSON object of "
                f"arguments, got {type(raw).__name__}; {self._describe_parameters()}"
            )
        values = dict(cast("Mapping[str, Any]", raw))
        missing = tuple(name for name in self._required if name not in values)
        unexpected = (
            ()
            if self._accepts_extra
            else tuple(key for key in values if key not in self._properties)
        )
        if missing or unexpected:
            problems: list[str] = []
            if missing:
                problems.append(f"missing required argument(s) {_quote(missing)}")
            if unexpected:
                problems.append(f"unexpected argument(s) {_quote(unexpected)}")
            raise ToolInputError(
                f"invalid input for tool {self.tool_name!r}: {'; '.join(problems)}; "
                f"{self._describe_parameters()}",
                missing,
                unexpected,
            )
        if self._wants_state:
            values[_STATE_PARAMETER] = invocation_state
        if self._wants_signal:
            values[_SIGNAL_PARAMETER] = (
                cancel_signal if cancel_signal is not None else threading.Event()
            )
        positional = [
            values.pop(name) if name in values else default
            for name, default in self._positional_only
        ]
        return positional, values

    def _describe_parameters(self) -> str:
        if not self._properties:
            return "the tool takes no arguments"
        optional = [name for name in self._properties if name not in self._required]
        parts: list[str] = []
        if self._required:
            parts.append(f"required {_quote(self._required)}")
        if optional:
            parts.append(f"optional {_quote(optional)}")
        return f"the tool takes {' and '.join(parts)}"


@overload
def tool(func: Callable[_P, _R], /) -> FunctionTool[_P, _R]: ...


@overload
def tool(*, name: str | None = None, description: str | None = None) -> _ToolDecorator: ...


def tool(
    func: Callable[_P, _R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
) -> FunctionTool[_P, _R] | _ToolDecorator:
    """Make a function (sync or ``async def``) into a `FunctionTool`.

    Use it bare (``@tool``) or with overrides (``@tool(name="search", description="...")``).
    A parameter named ``invocation_state`` is not shown to the model: it receives the
    invocation state dict of the call. Nor is one named ``cancel_signal``: it receives the
    call's cancel signal (a `threading.Event`, set when the run is being cancelled; see
    ``ExecuteToolContext.cancel_signal``), which a plain function, run in a worker thread that
    a cancellation cannot stop, polls to stop early.

    Example::

        @tool
        def add(a: int, b: int = 0) -> int:
            \"\"\"Add two integers.

            Args:
                a: The first addend.
                b: The second addend.
            \"\"\"
            return a + b

    Raises:
        TypeError: The function cannot be a tool (see `FunctionTool`).
        ValueError: The tool name is not valid for model providers.
    """
    if func is not None:
        return FunctionTool(func, name=name, description=description)

    def decorate(inner: Callable[_P, _R], /) -> FunctionTool[_P, _R]:
        return FunctionTool(inner, name=name, description=description)

    return cast(_ToolDecorator, decorate)


def result_text(value: object) -> str:
    """A tool's return value as the text of its result.

    Strings are the model's own medium and go as they are; everything else as JSON, which the
    model reads reliably (``true``, ``null``, nested objects), falling back to ``str`` for
    values JSON cannot express.
    """
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _quote(names: collections.abc.Iterable[str]) -> str:
    return ", ".join(repr(name) for name in names)


def _qualname(func: object) -> str:
    return str(getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or func)
