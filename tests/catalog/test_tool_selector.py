"""ToolSelector: fewer tools offered per model call, by predicate or by a model's choice."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import ExecuteToolContext, ExecuteToolStage, MiddlewareNext, TypedEvent
from strands_middleware.agent import Agent
from strands_middleware.catalog import ToolSelector
from strands_middleware.content import ToolSpec
from strands_middleware.stages._invoke_model import InvokeModelContext
from strands_middleware.testing import ModelRequest, ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import AgentTool, tool
from tests.catalog.conversation import texts
from tests.conformance.drive import CATALOG_HOSTS, drive


def get_weather(city: str) -> str:
    """Current weather in a city."""
    return f"sunny in {city}"


def get_time(city: str) -> str:
    """Current time in a city."""
    return f"noon in {city}"


def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


def send_mail(to: str) -> str:
    """Send an email."""
    return f"sent to {to}"


FUNCTIONS = [get_weather, get_time, search, send_mail]
TOOLS: list[AgentTool] = [tool(f) for f in FUNCTIONS]


def offered(request: ModelRequest) -> list[str]:
    return [spec["name"] for spec in request.tool_specs or []]


def weather_only(spec: ToolSpec, context: InvokeModelContext) -> bool:
    return spec["name"].startswith("get_weather")


# ---- by predicate ----------------------------------------------------------------------------


def test_a_predicate_decides_each_tool_and_always_adds_its_tools() -> None:
    model = ScriptedModel([text_turn("ok")])
    agent = Agent(
        model=model, tools=TOOLS, middleware=[ToolSelector(weather_only, always=["search"])]
    )
    agent("weather?")
    # The agent's own order, whatever order the selection came in.
    assert offered(model.requests[0]) == ["get_weather", "search"]
    assert set(agent.tools) == {"get_weather", "get_time", "search", "send_mail"}


def test_the_predicate_sees_the_calls_context() -> None:
    def by_prompt(spec: ToolSpec, context: InvokeModelContext) -> bool:
        words = texts(context.messages[-1])[0].split()
        return spec["name"].removeprefix("get_") in words

    model = ScriptedModel([text_turn("ok"), text_turn("ok")])
    agent = Agent(model=model, tools=TOOLS, middleware=[ToolSelector(by_prompt)])
    agent("the time please")
    agent("and the weather")
    assert [offered(r) for r in model.requests] == [["get_time"], ["get_weather"]]


def test_max_tools_caps_the_chosen_tools_but_not_the_always_included_ones() -> None:
    model = ScriptedModel([text_turn("ok")])
    selector = ToolSelector(lambda spec, context: True, always=["send_mail"], max_tools=2)
    Agent(model=model, tools=TOOLS, middleware=[selector])("hi")
    assert offered(model.requests[0]) == ["get_weather", "get_time", "send_mail"]


def test_a_forced_tool_is_offered_and_a_call_that_must_use_a_tool_keeps_every_tool() -> None:
    model = ScriptedModel([text_turn("ok"), text_turn("ok")])
    forced = Agent(
        model=model,
        tools=TOOLS,
        tool_choice={"tool": {"name": "send_mail"}},
        middleware=[ToolSelector(weather_only)],
    )
    forced("hi")
    must = Agent(
        model=model,
        tools=TOOLS,
        tool_choice={"any": {}},
        middleware=[ToolSelector(lambda spec, context: False)],
    )
    must("hi")
    assert offered(model.requests[0]) == ["get_weather", "send_mail"]
    assert offered(model.requests[1]) == ["get_weather", "get_time", "search", "send_mail"]


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_a_call_for_a_tool_not_offered_still_runs_through_the_tool_stage(host: str) -> None:
    seen: list[str] = []

    async def watch(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        seen.append(context.tool_use["name"])
        async for event in next_fn(context):
            yield event

    run = drive(
        host,
        [tool_turn("get_time", {"city": "Oslo"}, tool_use_id="t1"), text_turn("Noon.")],
        FUNCTIONS,
        [ToolSelector(weather_only), ExecuteToolStage.wrap(watch)],
    )
    assert run("time in Oslo?").text == "Noon."
    assert [offered(r) for r in run.script.requests] == [["get_weather"], ["get_weather"]]
    assert seen == ["get_time"]
    result = run.messages[2]["content"][0]["toolResult"]
    assert (result["status"], result["content"]) == ("success", [{"text": "noon in Oslo"}])


# ---- by a model ------------------------------------------------------------------------------


@pytest.mark.parametrize("host", CATALOG_HOSTS)
def test_a_chooser_model_is_asked_once_per_prompt(host: str) -> None:
    chooser = ScriptedModel([text_turn("- get_weather\n- search"), text_turn("send_mail")])
    run = drive(
        host,
        [
            tool_turn("get_weather", {"city": "Oslo"}, tool_use_id="t1"),
            text_turn("Sunny."),
            text_turn("Sent."),
        ],
        FUNCTIONS,
        [ToolSelector(model=chooser)],
    )
    run("weather in Oslo?")
    run("mail it to bob")
    assert [offered(r) for r in run.script.requests] == [
        ["get_weather", "search"],
        ["get_weather", "search"],  # the same turn: the same choice, not asked again
        ["send_mail"],
    ]
    assert len(chooser.requests) == 2
    question = texts(chooser.requests[0].messages[0])[0]
    assert question == (
        "Tools:\n"
        "- get_weather: Current weather in a city.\n"
        "- get_time: Current time in a city.\n"
        "- search: Search the web.\n"
        "- send_mail: Send an email.\n\n"
        "Request:\nweather in Oslo?"
    )
    assert "one per line" in (chooser.requests[0].system_prompt or "")


def test_the_chooser_is_told_the_limit_and_none_offers_only_the_always_tools() -> None:
    chooser = ScriptedModel([text_turn("NONE")])
    model = ScriptedModel([text_turn("Hello!")])
    selector = ToolSelector(model=chooser, always=["search"], max_tools=3)
    Agent(model=model, tools=TOOLS, middleware=[selector])("hello")
    assert offered(model.requests[0]) == ["search"]
    assert "at most 3" in (chooser.requests[0].system_prompt or "")


def test_a_chooser_naming_tools_among_other_words_is_read_in_its_order_and_capped() -> None:
    chooser = ScriptedModel([text_turn("`search`, get_time, teleport, get_weather")])
    model = ScriptedModel([text_turn("ok")])
    Agent(model=model, tools=TOOLS, middleware=[ToolSelector(model=chooser, max_tools=2)])("hi")
    assert offered(model.requests[0]) == ["get_time", "search"]


@pytest.mark.parametrize(
    ("answer", "logged"),
    [
        (ConnectionError("chooser down"), "the chooser model failed with ConnectionError"),
        (text_turn("I would use the calendar."), "names no tool; offering every tool"),
    ],
)
def test_a_failed_or_unusable_choice_offers_every_tool_and_is_logged(
    answer: Any, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    chooser = ScriptedModel([answer, text_turn("search")])
    model = ScriptedModel([text_turn("ok"), text_turn("ok")])
    agent = Agent(model=model, tools=TOOLS, middleware=[ToolSelector(model=chooser)])
    with caplog.at_level(logging.WARNING, logger="strands_middleware"):
        agent("hi")
    assert offered(model.requests[0]) == ["get_weather", "get_time", "search", "send_mail"]
    assert logged in caplog.text
    agent("hi")  # nothing was kept: the same prompt asks again
    assert offered(model.requests[1]) == ["search"]


# ---- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "options", "error", "message"),
    [
        ((), {}, ValueError, r"ToolSelector needs exactly one of select=\.\.\."),
        (
            (weather_only,),
            {"model": ScriptedModel([])},
            ValueError,
            r"exactly one of select",
        ),
        ((5,), {}, TypeError, r"ToolSelector\(select=\.\.\.\) takes a predicate"),
        ((), {"model": "small"}, TypeError, r"ToolSelector\(model=\.\.\.\) takes a model"),
        ((weather_only,), {"always": "search"}, TypeError, r"always=\.\.\.\) takes a collection"),
        ((weather_only,), {"always": [""]}, TypeError, r"names must be non-empty strings"),
        ((weather_only,), {"max_tools": 0}, ValueError, r"max_tools=\.\.\.\) must be a whole"),
        ((weather_only,), {"cache_size": 0}, ValueError, r"cache_size=\.\.\.\) must be a whole"),
    ],
)
def test_configuration_mistakes_are_refused_when_built(
    args: tuple[Any, ...], options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ToolSelector(*args, **options)


# ---- structured selection and checked names -----------------------------------------------


def test_the_chooser_is_asked_for_structured_output_and_its_tool_input_is_the_choice() -> None:
    chooser = ScriptedModel([tool_turn("select_tools", {"tools": ["search", "get_time"]})])
    model = ScriptedModel([text_turn("ok")])
    Agent(model=model, tools=TOOLS, middleware=[ToolSelector(model=chooser)])("hi")
    assert offered(model.requests[0]) == ["get_time", "search"]  # in the agent's order
    [request] = chooser.requests
    assert request.tool_choice == {"tool": {"name": "select_tools"}}
    [spec] = request.tool_specs or []
    schema = spec["inputSchema"]["json"]
    assert schema["properties"]["tools"]["items"]["enum"] == [
        "get_weather",
        "get_time",
        "search",
        "send_mail",
    ]


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        ([], ["search"]),  # none needed: only the always-offered tool
        (["teleport", "get_weather"], ["get_weather", "search"]),  # unknown names are dropped
    ],
)
def test_a_structured_choice_of_none_or_of_unknown_names_is_read_as_the_text_one_is(
    tools: list[str], expected: list[str]
) -> None:
    chooser = ScriptedModel([tool_turn("select_tools", {"tools": tools})])
    model = ScriptedModel([text_turn("ok")])
    selector = ToolSelector(model=chooser, always=["search"])
    Agent(model=model, tools=TOOLS, middleware=[selector])("hi")
    assert offered(model.requests[0]) == expected


def test_a_malformed_structured_choice_offers_every_tool_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    chooser = ScriptedModel([tool_turn("select_tools", {"tools": "search"})])
    model = ScriptedModel([text_turn("ok")])
    with caplog.at_level(logging.WARNING, logger="strands_middleware"):
        Agent(model=model, tools=TOOLS, middleware=[ToolSelector(model=chooser)])("hi")
    assert offered(model.requests[0]) == ["get_weather", "get_time", "search", "send_mail"]
    assert "names no tool; offering every tool" in caplog.text


def test_an_always_name_the_call_does_not_offer_is_an_error_naming_it() -> None:
    model = ScriptedModel([text_turn("ok")])
    agent = Agent(
        model=model, tools=TOOLS, middleware=[ToolSelector(weather_only, always=["serch"])]
    )
    with pytest.raises(ValueError, match=r"always=\.\.\.\) names \['serch'\], which this model"):
        agent("hi")
    assert model.requests == []  # the model was not called
