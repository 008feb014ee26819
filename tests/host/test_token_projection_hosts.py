"""``projected_input_tokens`` on every host: the figure the reference agent gets, call by call.

The bridged hosts translate their history for every call; their stage point projects the figure
from the request and the usage the agent's previous calls reported (`CallUsage`). For the same
conversation each host hands handlers the reference agent's figure, with one documented
difference: on an agent's first call the whole request is estimated, tool specs included, and
each framework writes a tool's JSON schema its own way (pydantic-ai adds
``additionalProperties``, the OpenAI Agents SDK titles), so that call differs by the estimate
of the specs' own text.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from strands_middleware import InvokeModelContext, InvokeModelStage, ModelStopReason
from strands_middleware.content import Message, ToolSpec, Usage
from strands_middleware.engine._registry import MiddlewareRegistry
from strands_middleware.host import (
    ModelStagePoint,
    model_call_context,
    project_input_tokens,
    run_model_call,
)
from strands_middleware.host._token_projection import CallUsage
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

from ..conformance.drive import HOSTS, drive

USAGE: Usage = {"inputTokens": 40, "outputTokens": 7, "totalTokens": 47}
BRIDGED = [name for name in HOSTS if name != "reference"]


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


def _projections(
    host: str, turns: list[Message], prompts: list[str], *, tools: bool
) -> tuple[list[int | None], list[list[ToolSpec]]]:
    """What an Input handler reads on each model call of ``host``, and the tool specs it sees."""
    seen: list[int | None] = []
    specs: list[list[ToolSpec]] = []

    @InvokeModelStage.input
    def look(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.projected_input_tokens)
        specs.append(context.tool_specs)
        return context

    script = ScriptedModel(turns, usage=USAGE)
    driven = drive(
        host, script, [add] if tools else [], [look], system_prompt="Be brief.", script_usage=True
    )
    for prompt in prompts:
        driven(prompt)
    return seen, specs


def _spec_tokens(specs: list[ToolSpec]) -> int:
    # What the specs add to a whole-request estimate: the request with them, less without.
    return project_input_tokens([], tool_specs=specs)


@pytest.mark.parametrize("host", BRIDGED)
def test_a_conversation_without_tools_projects_the_reference_figures(host: str) -> None:
    turns = [text_turn("Hello there, how can I help?"), text_turn("Four.")]
    prompts = ["Hi", "What is two and two?"]
    expected, _ = _projections("reference", turns, prompts, tools=False)
    assert len(expected) == 2 and expected[0] is not None and expected[1] is not None
    assert expected[1] == 47 + project_input_tokens(
        [{"role": "user", "content": [{"text": "What is two and two?"}]}]
    )
    seen, _ = _projections(host, turns, prompts, tools=False)
    assert seen == expected


@pytest.mark.parametrize("host", [name for name in HOSTS if name != "strands"])
def test_the_estimate_is_of_the_request_as_it_stands_when_a_handler_first_reads_it(
    host: str,
) -> None:
    # Every host whose figure this library makes (strands gives its own, made before any
    # handler runs): an edit made in place before the first read counts; nothing after it does.
    seen: list[int | None] = []

    @InvokeModelStage.input
    def pad(context: InvokeModelContext) -> InvokeModelContext:
        context.messages[-1]["content"].append({"text": "x" * 400})
        return context

    @InvokeModelStage.input
    def look(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.projected_input_tokens)
        context.messages[-1]["content"].append({"text": "y" * 400})
        seen.append(context.projected_input_tokens)
        return context

    script = ScriptedModel([text_turn("Hello.")], usage=USAGE)
    drive(host, script, [], [pad, look], system_prompt="Be brief.", script_usage=True)("Hi")
    padded: list[Message] = [
        {"role": "user", "content": [{"text": "Hi"}, {"text": "x" * 400}]},
    ]
    assert seen == [project_input_tokens(padded, system_prompt="Be brief.")] * 2


@pytest.mark.parametrize("host", BRIDGED)
def test_a_tool_round_projects_the_reference_figures_past_the_first_call(host: str) -> None:
    turns = [tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("3"), text_turn("Four.")]
    prompts = ["Add 1 and 2", "And again?"]
    expected, reference_specs = _projections("reference", turns, prompts, tools=True)
    seen, host_specs = _projections(host, turns, prompts, tools=True)
    assert len(seen) == len(expected) == 3
    # After the first call the baseline is the previous call's usage: the same on every host.
    assert seen[1:] == expected[1:]
    assert expected[1] == 47 + project_input_tokens(
        [
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": "t1",
                            "status": "success",
                            "content": [{"text": "3"}],
                        }
                    }
                ],
            }
        ]
    )
    # The first call differs by how the host writes the tool's schema, and by nothing else.
    assert expected[0] is not None and seen[0] is not None
    difference = _spec_tokens(host_specs[0]) - _spec_tokens(reference_specs[0])
    assert seen[0] - expected[0] == difference


@pytest.mark.skipif(
    "pydantic_ai" not in HOSTS, reason="pydantic-ai is installed on Python 3.11 and newer only"
)
def test_the_streamed_pydantic_ai_host_projects_from_the_usage_it_reports() -> None:
    """pydantic-ai estimates the usage of a streamed FunctionModel itself: the baseline is what
    it reports (the result handlers see), not the script's figure."""
    host = "pydantic_ai"
    seen: list[int | None] = []
    reported: list[Usage] = []

    @InvokeModelStage.input
    def look(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.projected_input_tokens)
        return context

    @InvokeModelStage.output
    def note(result: Any) -> Any:
        reported.append(result.result.usage)
        return result

    script = ScriptedModel([text_turn("Hello there."), text_turn("Four.")], usage=USAGE)
    driven = drive(host, script, [], [look, note])
    driven("Hi")
    driven("What is two and two?")
    first = reported[0]
    assert first != USAGE  # pydantic-ai's own estimate
    added = project_input_tokens([{"role": "user", "content": [{"text": "What is two and two?"}]}])
    assert seen[1] == first["inputTokens"] + first["outputTokens"] + added


# ---- the stage point and its record ------------------------------------------------------------


def _point(registry: MiddlewareRegistry, messages: list[Message], **given: Any) -> ModelStagePoint:
    return ModelStagePoint(
        registry,
        agent=None,
        messages=messages,
        system_prompt="Be brief.",
        tool_specs=[],
        tool_choice=None,
        invocation_state={},
        model=ScriptedModel([]),
        **given,
    )


def _with_handler() -> MiddlewareRegistry:
    registry = MiddlewareRegistry()
    registry.add_middleware(InvokeModelStage.Input, lambda context: context)
    return registry


def test_a_point_without_handlers_projects_nothing_and_a_given_figure_is_kept() -> None:
    messages: list[Message] = [{"role": "user", "content": [{"text": "Hi"}]}]
    assert _point(MiddlewareRegistry(), messages).context.projected_input_tokens is None
    assert (
        _point(_with_handler(), messages, projected_input_tokens=9).context.projected_input_tokens
        == 9
    )
    whole = project_input_tokens(messages, system_prompt="Be brief.")
    assert _point(_with_handler(), messages).context.projected_input_tokens == whole


def test_a_point_makes_its_estimate_when_a_handler_first_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[int] = []
    project = CallUsage.project

    def counted(self: CallUsage, *args: Any, **kwargs: Any) -> int:
        made.append(1)
        return project(self, *args, **kwargs)

    monkeypatch.setattr(CallUsage, "project", counted)
    messages: list[Message] = [{"role": "user", "content": [{"text": "Hi"}]}]
    point = _point(_with_handler(), messages, tracks_changes=True)
    context = point.context
    assert made == []  # no handler has read it: no estimate
    assert point.changed(context.replace(tool_choice=None)) == {}  # nor by a copy, or the record
    assert made == []
    whole = project_input_tokens(messages, system_prompt="Be brief.")
    assert context.projected_input_tokens == whole
    assert context.projected_input_tokens == whole
    assert made == [1]
    assert point.changed(context) == {}  # made, it is the figure the point handed out
    context.projected_input_tokens = 3
    assert point.changed(context) == {"projected_input_tokens": 3}
    # Of the request the point was given: a list put in its place later is not estimated.
    replaced = _point(_with_handler(), messages).context
    replaced.messages = [*messages, {"role": "user", "content": [{"text": "More words here."}]}]
    assert replaced.projected_input_tokens == whole


def test_a_finished_call_is_the_next_calls_baseline_in_a_fresh_translation() -> None:
    registry = _with_handler()
    question: Message = {"role": "user", "content": [{"text": "Hi"}]}
    point = _point(registry, [question])
    produced: Message = {"role": "assistant", "content": [{"text": "Hello."}]}
    point.finished(ModelStopReason("end_turn", produced, USAGE, {"latencyMs": 0}))
    # The next call's history is a new translation: equal turns, other objects.
    follow_up: Message = {"role": "user", "content": [{"text": "And you?"}]}
    history: list[Message] = [
        {"role": "user", "content": [{"text": "Hi"}]},
        {"role": "assistant", "content": [{"text": "Hello."}]},
        follow_up,
    ]
    projected = _point(registry, history).context.projected_input_tokens
    assert projected == 47 + project_input_tokens([follow_up])
    # Another agent's registry has no record: the whole request is estimated there.
    other = _point(_with_handler(), history).context.projected_input_tokens
    assert other == project_input_tokens(history, system_prompt="Be brief.")


async def test_the_point_notes_the_result_of_run_and_result() -> None:
    registry = _with_handler()
    produced: Message = {"role": "assistant", "content": [{"text": "Hello."}]}

    async def terminal(context: InvokeModelContext) -> Any:
        yield ModelStopReason("end_turn", produced, USAGE, {"latencyMs": 0})

    question: Message = {"role": "user", "content": [{"text": "Hi"}]}
    await _point(registry, [question]).result(terminal)
    history: list[Message] = [question, {"role": "assistant", "content": [{"text": "Hello."}]}]
    assert _point(registry, history).context.projected_input_tokens == 47

    streamed = _with_handler()
    async for _event in _point(streamed, [question]).run(terminal):
        pass
    assert _point(streamed, history).context.projected_input_tokens == 47


def test_the_record_finds_each_runs_own_turn_and_prefers_strands_metadata() -> None:
    record = CallUsage()
    record.record({"role": "assistant", "content": [{"text": "One."}]}, USAGE)
    other: Usage = {"inputTokens": 100, "outputTokens": 5, "totalTokens": 105}
    record.record(
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t9", "name": "add", "input": {}}}],
        },
        other,
    )
    first_run: list[Message] = [
        {"role": "user", "content": [{"text": "Hi"}]},
        {"role": "assistant", "content": [{"text": "One."}]},
    ]
    second_run: list[Message] = [
        {"role": "user", "content": [{"text": "Add"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t9", "name": "add", "input": {}}}],
        },
    ]
    assert record.project(first_run) == 47
    assert record.project(second_run) == 105
    # A turn the record never saw is no baseline: an earlier one it did see is (as strands
    # skips assistant messages without usage metadata).
    later: list[Message] = [
        *first_run,
        {"role": "user", "content": [{"text": "x" * 8}]},
        {"role": "assistant", "content": [{"text": "Unrecorded."}]},
    ]
    assert record.project(later) == 47 + project_input_tokens(later[2:])
    with_metadata: Any = {**first_run[1], "metadata": {"usage": other}}
    assert record.project([first_run[0], with_metadata]) == 105


def test_the_record_is_bounded() -> None:
    record = CallUsage()
    for index in range(200):
        record.record({"role": "assistant", "content": [{"text": f"turn {index}"}]}, USAGE)
    history: list[Message] = [{"role": "assistant", "content": [{"text": "turn 0"}]}]
    assert record.project(history) == project_input_tokens(history)
    recent: list[Message] = [{"role": "assistant", "content": [{"text": "turn 199"}]}]
    assert record.project(recent) == 47


def test_records_are_kept_per_registry_and_go_with_it() -> None:
    from strands_middleware.host import _model_call

    registry = _with_handler()
    _point(registry, []).finished(
        ModelStopReason("end_turn", text_turn("Hi"), USAGE, {"latencyMs": 0})
    )
    assert registry in _model_call._CALL_USAGE
    gone = weakref.ref(registry)
    del registry
    gc.collect()
    assert gone() is None  # the record did not keep the agent's registry alive


async def test_run_model_call_projects_for_a_host_that_gives_no_figure() -> None:
    registry = _with_handler()
    script = ScriptedModel([text_turn("Hello."), text_turn("Fine.")], usage=USAGE)
    history: list[Message] = [{"role": "user", "content": [{"text": "Hi"}]}]
    seen: list[int | None] = []
    for follow_up in ("How are you?", None):
        context = model_call_context(
            None,
            messages=history,
            system_prompt="Be brief.",
            tool_specs=[],
            tool_choice=None,
            invocation_state={},
            model=script,
        )
        stop: ModelStopReason | None = None
        async for event in run_model_call(registry, context):
            if isinstance(event, ModelStopReason):
                stop = event
        seen.append(context.projected_input_tokens)
        assert stop is not None
        history.append(stop.message)
        if follow_up is not None:
            history.append({"role": "user", "content": [{"text": follow_up}]})
    first_request = [{"role": "user", "content": [{"text": "Hi"}]}]
    assert (
        seen
        == [
            project_input_tokens(first_request, system_prompt="Be brief."),  # type: ignore[arg-type]
            47 + project_input_tokens(history[2:3]),
        ]
    )
