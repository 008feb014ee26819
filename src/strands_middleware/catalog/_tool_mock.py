"""`ToolMock`: answer chosen tool calls from fixtures, without running the real tool.

The mock is a Wrap handler on ExecuteToolStage that short-circuits: for a tool it has a fixture
for, it never calls ``next_fn`` and yields the `ToolResultEvent` itself. Because the chain runs
for every call, a tool the agent does not have (``context.tool is None``) can be mocked too,
which lets a test script a model that calls tools that do not exist yet.

A fixture is a value, or a function of the `ToolUse` returning one. The value becomes the result
the way a ``@tool`` function's return value does, so the model reads a mocked call exactly as it
would read the real one:

* a string is the result's text; any other value is JSON-encoded text (``str`` when JSON cannot
  express it);
* a `ToolResultEvent`, or a dict shaped like a `ToolResult` (``status`` of ``"success"`` or
  ``"error"`` and a ``content`` list, optionally a ``toolUseId``), is used as the result, its
  ``toolUseId`` set to the call's;
* an exception (an instance or a class, returned or raised by the function) is an error result
  ``"Error: <message>"`` carrying the exception, as a failing tool's is, so `Retry` and hooks see
  a failure.

`InterruptException` and cancellation raised by a fixture function propagate: they are control
flow, not a tool failure.

Calls without a fixture run the real chain (``passthrough_unknown=True``, the default) or get an
error result naming the tools that have fixtures (``passthrough_unknown=False``), so a test
notices a call it did not plan for. ``mock.calls`` records every call the mock answered, in the
order they arrived; calls passed through are not recorded.

**Hosts that answer unknown tools themselves.** pydantic-ai answers a call to a tool the agent
does not have before any hook runs, so there a fixture answers only calls to tools the agent
has (it then replaces the real tool), and ``passthrough_unknown=False`` never sees an unknown
tool. Registering a `ToolMock` on such a host logs one warning saying so, naming its fixtures;
give the agent the tools you mock (a stub will do), or test on the reference agent.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any, cast

from ..content import ToolResult, ToolUse
from ..engine._handlers import MiddlewareNext
from ..engine._stage import Middleware
from ..events import ToolResultEvent, TypedEvent
from ..exceptions import CONTROL_FLOW_EXCEPTIONS
from ..host._mixin import UNKNOWN_TOOLS, MiddlewareHostMixin
from ..stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ..tools import result_text
from ._base import CatalogMiddleware, check_flag

__all__ = ["ToolMock"]

_logger = logging.getLogger("strands_middleware")

_RESULT_KEYS = frozenset({"toolUseId", "status", "content"})


class ToolMock(CatalogMiddleware):
    """Answers chosen tool calls from fixtures (values or functions), recording each call.

    Example:
        ```python
        mock = ToolMock({"get_weather": "sunny, 21C", "search": lambda use: [use["input"]["q"]]})
        agent = Agent(model=model, middleware=[mock])     # no real tools needed
        agent("What's the weather?")
        assert mock.calls[0]["name"] == "get_weather"
        ```

    Args:
        fixtures: Tool names to the answer: a value, or a function of the `ToolUse` returning
            one (see the module docstring for how a value becomes a result).
        passthrough_unknown: Run the real tool chain for tools without a fixture (the default);
            when False, such calls get an error result instead.

    Attributes:
        calls: The `ToolUse` of every call the mock answered, in order (shallow copies).
    """

    def __init__(
        self,
        fixtures: Mapping[str, Any | Callable[[ToolUse], Any]],
        *,
        passthrough_unknown: bool = True,
    ) -> None:
        given = cast(object, fixtures)  # checked at run time: callers need not be type-checked
        if not isinstance(given, Mapping):
            raise TypeError(
                f"ToolMock(fixtures=...) takes a mapping of tool names to answers, got {fixtures!r}"
            )
        entries = dict(cast("Mapping[object, Any]", given))
        for name in entries:
            if not isinstance(name, str) or not name:
                raise TypeError(
                    f"ToolMock(fixtures=...) keys must be tool names (non-empty strings), got "
                    f"{name!r}"
                )
        check_flag("ToolMock", "passthrough_unknown", passthrough_unknown)
        self.fixtures: dict[str, Any] = cast("dict[str, Any]", entries)
        self.passthrough_unknown = passthrough_unknown
        self.calls: list[ToolUse] = []
        self._warned: set[str] = set()

    def check_registration(self, host: MiddlewareHostMixin, earlier: Sequence[object]) -> None:
        """Warn, once per host class, when ``host`` answers unknown tools before any hook."""
        why = host.lacks.get(UNKNOWN_TOOLS)
        host_name = type(host).__name__
        if why is None or host_name in self._warned:
            return
        self._warned.add(host_name)
        names = ", ".join(sorted(self.fixtures)) or "none"
        _logger.warning(
            "ToolMock on %s: %s. Its fixtures (%s) answer only calls to tools the agent has "
            "(nothing is lost when it has every tool you mock); a fixture for a tool the agent "
            "lacks never answers%s: give the agent a stub of it, or test on the reference agent.",
            host_name,
            why,
            names,
            ""
            if self.passthrough_unknown
            else ", and passthrough_unknown=False never sees such a call",
        )

    def answer(self, tool_use: ToolUse) -> ToolResultEvent:
        """The result the fixture for ``tool_use["name"]`` gives (without recording the call).

        Raises:
            KeyError: There is no fixture for the tool.
        """
        fixture = self.fixtures[tool_use["name"]]
        tool_use_id = tool_use["toolUseId"]
        if _is_exception_class(fixture):
            return ToolResultEvent.from_exception(tool_use_id, cast("type[Exception]", fixture)())
        value: object = fixture
        if callable(fixture):
            try:
                value = fixture(tool_use)
            except CONTROL_FLOW_EXCEPTIONS:
                raise
            except Exception as error:
                return ToolResultEvent.from_exception(tool_use_id, error)
        return _as_result(tool_use_id, value)

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        async def mock(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            tool_use = context.tool_use
            if tool_use["name"] in self.fixtures:
                self.calls.append(ToolUse(**tool_use))
                yield self.answer(tool_use)
                return
            if self.passthrough_unknown:
                async for event in next_fn(context):
                    yield event
                return
            known = ", ".join(repr(name) for name in self.fixtures) or "none"
            yield ToolResultEvent.error(
                tool_use["toolUseId"],
                f"ToolMock has no fixture for tool {tool_use['name']!r} and passes no calls "
                f"through; tools with fixtures: {known}",
            )

        mock.__qualname__ = f"ToolMock[{ExecuteToolStage.name}]"
        return [ExecuteToolStage.wrap(mock)]


def _as_result(tool_use_id: str, value: object) -> ToolResultEvent:
    if isinstance(value, BaseException):
        if isinstance(value, CONTROL_FLOW_EXCEPTIONS) or not isinstance(value, Exception):
            raise value  # control flow, returned instead of raised: it still is control flow
        return ToolResultEvent.from_exception(tool_use_id, value)
    if _is_exception_class(value):
        return ToolResultEvent.from_exception(tool_use_id, cast("type[Exception]", value)())
    if isinstance(value, ToolResultEvent):
        return ToolResultEvent({**value.tool_result, "toolUseId": tool_use_id}, value.exception)
    if _looks_like_result(value):
        given = cast("dict[str, Any]", value)
        return ToolResultEvent(
            {"toolUseId": tool_use_id, "status": given["status"], "content": given["content"]}
        )
    result: ToolResult = {
        "toolUseId": tool_use_id,
        "status": "success",
        "content": [{"text": result_text(value)}],
    }
    return ToolResultEvent(result)


def _looks_like_result(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    given = cast("dict[object, object]", value)
    return (
        set(given) <= _RESULT_KEYS
        and given.get("status") in ("success", "error")
        and isinstance(given.get("content"), list)
    )


def _is_exception_class(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, Exception)
