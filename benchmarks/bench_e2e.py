"""End to end: what a user pays per invocation, on the reference agent and on ``strands.Agent``.

One process, one conversation for every contestant: the user asks, the model answers with a tool
call, the tool runs, the model answers in text; each model turn streams ``--deltas`` text deltas
(200 by default). Before anything is timed every contestant runs the conversation once and must
produce the same messages as its baseline, so no figure compares different work.

Each row is a ratio, contestant / baseline, measured side by side: rounds are interleaved (the
order rotates every round) so drift on a noisy machine hits both alike, each round times
``--calls`` invocations of each, and the figure is the median of the per-round ratios. Agents are
built before the clock starts; a row times invocations only, in CPU time of the process.

Run: ``make bench`` (or ``python benchmarks/bench_e2e.py --rounds 30``).

``--bridges`` measures only the bridged hosts (strands, pydantic-ai, LangChain, the OpenAI Agents
SDK; ``--hosts`` picks among them, ``--rows`` picks rows by their text) against each host's own
native wrappers: one against one, four against four, each stage alone, streamed and not, and
memory per agent. The LangChain model is a plain ``BaseChatModel`` subclass
(``langchain_contestants.py``). Each bridged row also measures its floor where the host has one
(the ``floor`` column, a ratio to the same baseline): the cheapest adapter the host's public API
allows that runs the same handler functions on the host's own objects and events, nothing
translated (see `BridgedHost` and each ``*_contestants.py``), so a reader sees how far the bridge
is from what the host allows.

Memory per agent (`_memory`) is what ``tracemalloc`` sees an agent hold: after 100 agents of the
kind are built, one run, and dropped (what a process builds or grows once is not counted), 100
agents are built and the memory still allocated after a garbage collection is divided among
them: the host's agent and all the bridge, the native wrappers or the floor add to it. Each
side registers the same handler objects on every agent (the bridged agents the same
`Middleware` objects, as a module that decorates its handlers builds them once; the native ones
the same function), and the same model and tool.

``--instructions`` counts instead of timing: each contestant runs in a process of its own under
valgrind's callgrind (as many at once as the machine has cores), and a row is the ratio of the
machine instructions its ``--calls`` invocations executed, after ``--warmups`` invocations
(``--rounds`` plays no part). The counts are those of a process that has served many invocations, as
an agent's process does: CPython 3.11 quickens a function's bytecode on its eighth call (or loop
turn) and specializes each instruction as it runs, so code an invocation runs once or twice runs
unspecialized, and dearer, through the first invocations of a process. After one warm-up invocation
the counts still held some of that one-time cost, unevenly: the OpenAI Agents SDK's
four-against-four row, at one version and hash seed 0, counted 15.34 M against 14.49 M an invocation
after one, 14.64 M against 13.90 M after ten and 14.62 M against 13.89 M after twenty. Ten, the
default, leave it out. Instruction counts barely move with the load of a shared machine: two runs
under one hash seed agree to about 0.1%, where timings move by several hundredths from run to run.
They do move with where things land in memory: CPython's type attribute cache picks the slot of a
class and a name from their addresses, so in one process two lookups made on every event may keep
evicting each other, and every invocation pays for the misses (measured: one contestant counted 0.8%
above the median of its counts under six other layouts, which lie within 0.4%). The hash seed moves
the layout, so each contestant is counted under several (``--seeds``, by default 0, 1 and 2) and a
row takes the median of its counts, which one unlucky layout cannot move. Counts leave out what
instructions do not show (cache misses, branch mispredictions, how many instructions a cycle
compiled code retires against the interpreter), so they complement the timed figures rather than
replace them. It needs ``valgrind`` (Debian: ``apt-get install valgrind``); on the 2-core
development machine the main rows take about 10 minutes a seed, with ``--scaling`` about 20.

``--bytecodes`` counts the Python bytecodes the ``--calls`` invocations execute, in this process
under a tracer: deterministic and quick (a minute for every row), but blind to what runs in C, so
a cross-check of a change to Python code rather than a figure of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import strands
from strands.middleware import ExecuteToolStage as NativeExecuteToolStage
from strands.middleware import InvokeModelStage as NativeInvokeModelStage
from strands.models import Model as StrandsModel
from strands.types import _events as strands_events

from floor_chain import Handler, around
from strands_middleware import ExecuteToolStage, InvokeModelStage, Middleware, TypedEvent
from strands_middleware.agent import Agent
from strands_middleware.bridges.strands import StrandsBridge
from strands_middleware.catalog import (
    Cache,
    CircuitBreaker,
    ContextWindow,
    Guardrail,
    ModelFacts,
    RateLimit,
    Redact,
    Retry,
    Summarize,
    Timeout,
    ToolResultTrim,
    Tracing,
    UsageBudget,
    Verdict,
)
from strands_middleware.content import Messages, StreamEvent
from strands_middleware.events import ModelStreamEvent, TextDeltaEvent
from strands_middleware.testing import ScriptedModel
from strands_middleware.tools import tool

PROMPT = "What is 2 + 40? Use the tool."

# --------------------------------------------------------------------------------------------
# The conversation: a model that streams pre-built chunks, so the model costs the same everywhere
# --------------------------------------------------------------------------------------------


def _text_chunks(text_deltas: int, tail: str) -> list[StreamEvent]:
    words = [f"w{i} " for i in range(text_deltas - 1)] + [tail]
    chunks: list[StreamEvent] = [{"contentBlockDelta": {"delta": {"text": w}}} for w in words]
    return [*chunks, {"contentBlockStop": {}}]


def _turns(text_deltas: int) -> tuple[list[StreamEvent], list[StreamEvent]]:
    usage: StreamEvent = {
        "metadata": {
            "usage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12},
            "metrics": {"latencyMs": 1},
        }
    }
    start: StreamEvent = {"messageStart": {"role": "assistant"}}
    tool_turn: list[StreamEvent] = [
        start,
        *_text_chunks(text_deltas, "calling add."),
        {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t1", "name": "add"}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"a": 2, "b": 40}'}}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "tool_use"}},
        usage,
    ]
    text_turn: list[StreamEvent] = [
        start,
        *_text_chunks(text_deltas, "It is 42."),
        {"messageStop": {"stopReason": "end_turn"}},
        usage,
    ]
    return tool_turn, text_turn


class _Turns:
    """Which pre-built turn answers a request: the tool call first, text once a result is in."""

    def __init__(self, text_deltas: int) -> None:
        self.tool_turn, self.text_turn = _turns(text_deltas)

    def for_request(self, messages: Messages) -> list[StreamEvent]:
        last = messages[-1]["content"] if messages else []
        answered = any("toolResult" in block for block in last)
        return self.text_turn if answered else self.tool_turn


class ReferenceModel:
    """A `strands_middleware.models.Model` replaying the conversation; stateless, so shared."""

    def __init__(self, turns: _Turns) -> None:
        self._turns = turns

    def get_config(self) -> Any:
        # A model id, as NativeModel reports: what UsageBudget(max_cost=...) prices a call by.
        return {"model_id": "bench"}

    async def stream(
        self,
        messages: Messages,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        *,
        tool_choice: Any = None,
        system_prompt_content: Any = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        for chunk in self._turns.for_request(messages):
            yield chunk


class NativeModel(StrandsModel):
    """The same replay as a ``strands.models.Model``."""

    def __init__(self, turns: _Turns) -> None:
        self._turns = turns

    def update_config(self, **model_config: Any) -> None:
        """Nothing to configure."""

    def get_config(self) -> Any:
        return {"model_id": "bench"}

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError("the benchmark streams only")
        yield {}

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        for chunk in self._turns.for_request(messages):
            yield chunk


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


REFERENCE_ADD = tool(add)
NATIVE_ADD = strands.tool(add)

# --------------------------------------------------------------------------------------------
# Middleware
# --------------------------------------------------------------------------------------------


async def passthrough(
    context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


async def native_passthrough(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
    async for event in next_fn(context):
        yield event


def wraps(count: int, *, model: bool = True, tools: bool = True) -> list[Middleware[Any, Any, Any]]:
    """``count`` pass-through Wrap handlers on the model stage and as many on the tool stage."""
    chosen: list[Middleware[Any, Any, Any]] = []
    if model:
        chosen += [InvokeModelStage.wrap(passthrough) for _ in range(count)]
    if tools:
        chosen += [ExecuteToolStage.wrap(passthrough) for _ in range(count)]
    return chosen


def catalog_stack() -> list[Any]:
    """The catalog stack of the speed table; a fresh `Cache` per agent, so every call misses."""
    return [
        Retry(),
        Timeout(seconds=60),
        Cache(),
        RateLimit(rate=1_000_000, burst=1_000),
        Redact(),
        Tracing(),
    ]


# --------------------------------------------------------------------------------------------
# Contestants
# --------------------------------------------------------------------------------------------


@dataclass
class Contestant:
    """Builds agents of one kind; ``invoke`` runs one conversation on a fresh agent."""

    name: str
    build: Callable[[], Any]

    async def invoke(self, agent: Any) -> None:
        await agent.invoke_async(PROMPT)


def reference(turns: _Turns, middleware: Callable[[], Sequence[Any]] = list) -> Callable[[], Any]:
    model = ReferenceModel(turns)
    return lambda: Agent(model=model, tools=[REFERENCE_ADD], middleware=list(middleware()))


def native(
    turns: _Turns, count: int = 0, *, model: bool = True, tools: bool = True, streamed: bool = False
) -> Callable[[], Any]:
    """``strands.Agent`` with ``count`` native pass-through wrappers on the chosen stages.

    strands streams every model call, so ``streamed`` (a keyword every bridged host takes)
    changes nothing here.
    """
    native_model = NativeModel(turns)

    def build() -> Any:
        agent = strands.Agent(model=native_model, tools=[NATIVE_ADD], callback_handler=None)
        for _ in range(count if model else 0):
            agent.add_middleware(NativeInvokeModelStage, native_passthrough)
        for _ in range(count if tools else 0):
            agent.add_middleware(NativeExecuteToolStage, native_passthrough)
        return agent

    return build


def bridged(
    turns: _Turns, middleware: Callable[[], Sequence[Any]], *, streamed: bool = False
) -> Callable[[], Any]:
    """``strands.Agent`` with its `StrandsBridge` holding ``middleware()``."""
    native_model = NativeModel(turns)

    def build() -> Any:
        agent = strands.Agent(model=native_model, tools=[NATIVE_ADD], callback_handler=None)
        StrandsBridge.of(agent).use(*middleware())
        return agent

    return build


def floor(
    turns: _Turns,
    handlers: Sequence[Handler],
    *,
    model: bool = True,
    tools: bool = True,
    streamed: bool = False,
) -> Callable[[], Any]:
    """``strands.Agent`` with the least adapter of ``handlers`` strands' public API allows.

    One strands Wrap handler per chosen stage runs the handler functions around strands'
    ``next_fn`` on strands' own context and events, and hands strands the outermost one's
    generator (no hop of its own): what the bridge's layer would cost translating nothing.
    """
    native_model = NativeModel(turns)

    def layer(context: Any, next_fn: Any) -> AsyncIterator[Any]:
        return around(handlers, context, next_fn)

    def build() -> Any:
        agent = strands.Agent(model=native_model, tools=[NATIVE_ADD], callback_handler=None)
        if model:
            agent.add_middleware(NativeInvokeModelStage, layer)
        if tools:
            agent.add_middleware(NativeExecuteToolStage, layer)
        return agent

    return build


# The translating floor: what any adapter that keeps this library's events pays per event.
class _Chunk(ModelStreamEvent):
    __slots__ = ("host", "value")


class _Text(TextDeltaEvent):
    __slots__ = ("host", "value")


class _Other(TypedEvent):
    __slots__ = ("host",)


for _class in (_Chunk, _Text, _Other):
    # dict's own __init__: making one runs no Python code, the cheapest way there is.
    type.__setattr__(_class, "__init__", dict.__init__)


async def _events_in(stream: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
    """strands' events as this library's: one object per event, strands' own kept in it."""
    chunk_class, text_class = strands_events.ModelStreamChunkEvent, strands_events.TextStreamEvent
    async for event in stream:
        cls = event.__class__
        # The value is also kept in a slot: the way back reads a slot rather than strands' event
        # (an item of a dict subclass costs a lookup of `__getitem__` on CPython 3.11).
        if cls is chunk_class:
            value = event["event"]
            chunk = _Chunk()
            chunk["event"] = value
            chunk.host = event
            chunk.value = value
            yield chunk
        elif cls is text_class:
            value = event["data"]
            text = _Text()
            text["data"] = value
            text.host = event
            text.value = value
            yield text
        else:
            other = _Other(event)
            other.host = event
            yield other


async def _events_out(stream: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
    """The handlers' events back: strands' own where the handlers left the value as it was."""
    async for ours in stream:
        host = ours.host
        cls = ours.__class__
        if cls is _Chunk:
            same = ours["event"] is ours.value
        elif cls is _Text:
            same = ours["data"] is ours.value
        else:
            same = ours == host
        if same:
            yield host
        elif cls is _Text:
            yield strands_events.TextStreamEvent({"text": ours["data"]}, ours["data"])
        else:
            changed = copy.copy(host)
            changed.clear()
            changed.update(ours)
            yield changed


def translating_floor(
    turns: _Turns,
    handlers: Sequence[Handler],
    *,
    model: bool = True,
    tools: bool = True,
    streamed: bool = False,
) -> Callable[[], Any]:
    """`floor` with every event crossing as this library's, both ways, and nothing else.

    The least an adapter that keeps this library's events can do: a generator around strands'
    stream making each event one of this library's (the deltas of their own classes, the rest
    as a `TypedEvent` with strands' items), and one around the handlers handing strands its
    own event back where the handlers left it unchanged. No contexts, no chain rules.
    """
    native_model = NativeModel(turns)

    def layer(context: Any, next_fn: Any) -> AsyncIterator[Any]:
        inner = around(handlers, context, lambda given: _events_in(next_fn(given)))
        return _events_out(inner)

    def build() -> Any:
        agent = strands.Agent(model=native_model, tools=[NATIVE_ADD], callback_handler=None)
        if model:
            agent.add_middleware(NativeInvokeModelStage, layer)
        if tools:
            agent.add_middleware(NativeExecuteToolStage, layer)
        return agent

    return build


def _conversation(agent: Any) -> list[tuple[str, list[str]]]:
    """The Converse content of an agent's history, host-only keys left out."""
    shown: list[tuple[str, list[str]]] = []
    for message in agent.messages:
        blocks: list[str] = []
        for block in message["content"]:
            if "text" in block:
                blocks.append(f"text:{block['text']}")
            elif "toolUse" in block:
                use = block["toolUse"]
                blocks.append(f"toolUse:{use['name']}:{sorted(use['input'].items())}")
            elif "toolResult" in block:
                result = block["toolResult"]
                texts = [item.get("text", "") for item in result["content"]]
                blocks.append(f"toolResult:{result['status']}:{texts}")
        shown.append((message["role"], blocks))
    return shown


# --------------------------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------------------------


@dataclass
class Row:
    label: str
    contestant: Contestant
    baseline: Contestant
    target: str = ""
    # The cheapest adapter the host's public API allows doing the contestant's work, measured
    # against the same baseline: how far the contestant is from what the host allows.
    floor: Contestant | None = None
    # The least an adapter that also translates every event both ways does (see
    # `translating_floor`): what keeping this library's events costs on the host at the least.
    translating: Contestant | None = None

    def contestants(self) -> list[Contestant]:
        """Everyone the row measures: the contestant, the baseline and the floors if any."""
        floors = [c for c in (self.floor, self.translating) if c is not None]
        return [self.contestant, self.baseline, *floors]


async def _time(contestant: Contestant, calls: int) -> float:
    agents = [contestant.build() for _ in range(calls)]
    gc.collect()
    # CPU time of this process: what the work costs, which other load on a shared machine
    # barely moves (wall-clock time would also count the time other processes ran).
    started = time.process_time()
    for agent in agents:
        await contestant.invoke(agent)
    return time.process_time() - started


async def _check_same_work(row: Row) -> None:
    baseline = row.baseline.build()
    await row.baseline.invoke(baseline)
    for contestant in (c for c in row.contestants() if c is not row.baseline):
        agent = contestant.build()
        await contestant.invoke(agent)
        if _conversation(agent) != _conversation(baseline):
            raise SystemExit(
                f"{row.label}: {contestant.name} and {row.baseline.name} produced different "
                f"conversations:\n{_conversation(agent)}\n{_conversation(baseline)}"
            )


async def _ratios(row: Row, rounds: int, calls: int) -> tuple[float, float | None, float | None]:
    """Median per-round ratios to the baseline: the contestant's, the floor's and the
    translating floor's (None where the row has none)."""
    everyone = row.contestants()
    ratios: dict[str, list[float]] = {c.name: [] for c in everyone}
    for index in range(rounds):
        # The order rotates every round, so drift hits every contestant alike.
        turn = everyone[index % len(everyone) :] + everyone[: index % len(everyone)]
        timings = {c.name: await _time(c, calls) for c in turn}
        for contestant in everyone:
            ratios[contestant.name].append(timings[contestant.name] / timings[row.baseline.name])
    floor, translating = (
        None if c is None else statistics.median(ratios[c.name])
        for c in (row.floor, row.translating)
    )
    return statistics.median(ratios[row.contestant.name]), floor, translating


def _cell(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}x"


async def _memory(contestant: Contestant) -> tuple[float, float]:
    """KiB retained per agent built, and KiB allocated at peak by one invocation.

    First 100 agents are built and one is run, then dropped: what a process builds once
    (imports, class-level tables) and the growth of process-wide tables that outlives their
    agents are then not counted per agent, whichever contestant is measured first. Then 100
    agents are built and what they hold, everything allocated while building them that a
    garbage collection leaves, is divided among them.
    """
    count = 100
    warm = [contestant.build() for _ in range(count)]
    await contestant.invoke(warm[0])
    del warm
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    agents = [contestant.build() for _ in range(count)]
    gc.collect()
    per_agent = (tracemalloc.get_traced_memory()[0] - before) / count / 1024
    agent = agents[0]
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    await contestant.invoke(agent)
    per_invocation = (tracemalloc.get_traced_memory()[1] - base) / 1024
    tracemalloc.stop()
    del agents
    return per_agent, per_invocation


def _rows(deltas: int) -> list[Row]:
    turns = _Turns(deltas)
    bare_reference = Contestant("reference", reference(turns))
    bare_native = Contestant("strands", native(turns))
    return [
        Row(
            "catalog stack / no middleware",
            Contestant("reference+catalog", reference(turns, catalog_stack)),
            bare_reference,
            "<= 1.6x",
        ),
        Row(
            "Timeout alone / no middleware",
            Contestant("reference+timeout", reference(turns, lambda: [Timeout(seconds=60)])),
            bare_reference,
            "<= 1.15x",
        ),
        Row(
            "Tracing (no-op) alone / no middleware",
            Contestant("reference+tracing", reference(turns, lambda: [Tracing()])),
            bare_reference,
            "<= 1.10x",
        ),
        Row(
            "ContextWindow (within budget) alone / no middleware",
            Contestant(
                "reference+context_window",
                reference(
                    turns,
                    lambda: [ContextWindow(max_tokens=("fraction", 0.8), context_window=200_000)],
                ),
            ),
            bare_reference,
            "<= 1.10x",
        ),
        Row(
            "Summarize (within budget) alone / no middleware",
            Contestant(
                "reference+summarize",
                reference(turns, lambda: [Summarize(ScriptedModel([]), max_tokens=100_000)]),
            ),
            bare_reference,
            "<= 1.10x",
        ),
        Row(
            "Redact alone / no middleware",
            Contestant("reference+redact", reference(turns, lambda: [Redact()])),
            bare_reference,
        ),
        *_pass_through_rows(turns, bare_reference),
        Row(
            "strands.Agent / reference agent, no middleware",
            bare_native,
            bare_reference,
            "about 3x",
        ),
    ]


def _allow(subject: Any) -> Verdict:
    return Verdict.allow()


def _pass_through_rows(turns: _Turns, baseline: Contestant) -> list[Row]:
    """Catalog items on the hot path, each configured so that it lets every call through as it
    is: what a run pays for having it registered when it has nothing to do."""
    priced = {"bench": ModelFacts(200_000, 3.0, 15.0)}
    items: list[tuple[str, str, Callable[[], Sequence[Any]]]] = [
        ("CircuitBreaker (closed)", "circuit", lambda: [CircuitBreaker()]),
        (
            "UsageBudget max_cost (under budget)",
            "budget-cost",
            lambda: [UsageBudget(max_cost=1_000.0, prices=priced)],
        ),
        (
            "ToolResultTrim (under threshold)",
            "trim-threshold",
            lambda: [ToolResultTrim(threshold=10_000)],
        ),
        (
            "Guardrail monitor (allows)",
            "guardrail-monitor",
            lambda: [Guardrail(_allow, mode="monitor")],
        ),
        (
            "Redact reversible (nothing to mask)",
            "redact-reversible",
            lambda: [Redact(reversible=True)],
        ),
    ]
    return [
        Row(
            f"{label} / no middleware",
            Contestant(f"reference+{name}", reference(turns, make)),
            baseline,
            "<= 1.10x",
        )
        for label, name, make in items
    ]


_HOSTS = ("strands", "pydantic-ai", "langchain", "openai-agents")

# What each bridged-host row compares: (label, stages, handlers per stage, target).
_SHAPES = (
    ("1 Wrap per stage / 1 native", "model+tool", 1, "<= 1.10x"),
    ("4 Wrap per stage / 4 native", "model+tool", 4, "<= 1.05x"),
    ("model stage only, 1 / 1", "model", 1, ""),
    ("tool stage only, 1 / 1", "tool", 1, ""),
)


@dataclass
class BridgedHost:
    """How one bridged host builds its three kinds of agent, each for a mode (streamed or not).

    ``bridged(turns, middleware, streamed=)``: the host's agents with the bridge holding
    ``middleware()``. ``native(turns, count, model=, tools=, streamed=)``: with ``count`` of the
    host's own pass-through wrappers on the chosen stages. ``floor(turns, handlers, model=,
    tools=, streamed=)``: with the cheapest adapter the host's public API allows, running
    ``handlers`` (this library's Wrap handler functions) on the host's own objects and events,
    nothing translated (it returns None for a mode it has no floor for); None where the host
    has none. ``translating_floor``, with the same arguments: that floor with every event also
    crossing as this library's both ways (`translating_floor`), where the bench has one.
    """

    label: str
    modes: Sequence[tuple[str, bool, Sequence[tuple[str, str, int, str]]]]
    bridged: Callable[..., Callable[[], Any]]
    native: Callable[..., Callable[[], Any]]
    floor: Callable[..., Callable[[], Any] | None] | None = None
    translating_floor: Callable[..., Callable[[], Any] | None] | None = None


def _bridged_host(name: str) -> BridgedHost | None:
    """The builders of host ``name``, or None where its framework is not installed."""
    if name == "strands":
        modes = (("", False, _SHAPES),)
        return BridgedHost("strands", modes, bridged, native, floor, translating_floor)
    if name == "pydantic-ai" and importlib.util.find_spec("pydantic_ai") is not None:
        from pydantic_ai_contestants import (
            bridged_pydantic_ai,
            floor_pydantic_ai,
            native_pydantic_ai,
        )

        modes = (("streamed", True, _SHAPES), ("unstreamed", False, _SHAPES[:3]))
        return BridgedHost(
            "pydantic-ai", modes, bridged_pydantic_ai, native_pydantic_ai, floor_pydantic_ai
        )
    if name == "langchain":
        from langchain_contestants import (
            bridged_langchain,
            floor_langchain,
            native_langchain,
            translating_floor_langchain,
        )

        modes = (("ainvoke", False, _SHAPES), ("astream", True, _SHAPES[:3]))
        return BridgedHost(
            "LangChain",
            modes,
            bridged_langchain,
            native_langchain,
            floor_langchain,
            translating_floor_langchain,
        )
    if name == "openai-agents" and importlib.util.find_spec("agents") is not None:
        from openai_agents_contestants import (
            bridged_openai_agents,
            floor_openai_agents,
            native_openai_agents,
            translating_openai_agents,
        )

        modes = (("Runner.run_streamed", True, _SHAPES), ("Runner.run", False, _SHAPES[:3]))
        return BridgedHost(
            "OpenAI Agents SDK",
            modes,
            bridged_openai_agents,
            native_openai_agents,
            floor_openai_agents,
            translating_openai_agents,
        )
    return None


def _bridge_rows(deltas: int, hosts: Sequence[str]) -> list[Row]:
    """Every bridged host against its own native wrappers, with its floor where it has one.

    The bridged agents register the same `Middleware` objects (built once per row, as a module
    that decorates its handlers builds them once), and the native agents the same function: a
    row compares what each host holds and runs per agent, not the handlers' own objects.
    """
    turns = _Turns(deltas)
    rows: list[Row] = []
    for name in hosts:
        host = _bridged_host(name)
        if host is None:
            continue
        for mode, streamed, shapes in host.modes:
            for label, stages, count, target in shapes:
                model, tools = "model" in stages, "tool" in stages
                tag = f"{name}{mode and '+' + mode}+{stages}+{count}"
                chosen = wraps(count, model=model, tools=tools)
                floor = translating = None
                handlers = [passthrough] * count
                if host.floor is not None:
                    built = host.floor(turns, handlers, model=model, tools=tools, streamed=streamed)
                    floor = None if built is None else Contestant(f"{tag}+floor", built)
                if host.translating_floor is not None:
                    made = host.translating_floor(
                        turns, handlers, model=model, tools=tools, streamed=streamed
                    )
                    if made is not None:
                        translating = Contestant(f"{tag}+translating", made)
                rows.append(
                    Row(
                        f"{host.label}{mode and ', ' + mode}: {label}",
                        Contestant(
                            f"{tag}+bridge",
                            host.bridged(turns, lambda c=chosen: c, streamed=streamed),
                        ),
                        Contestant(
                            f"{tag}+native",
                            host.native(turns, count, model=model, tools=tools, streamed=streamed),
                        ),
                        target,
                        floor,
                        translating,
                    )
                )
    return rows


def _scaling_rows(deltas: int) -> list[Row]:
    turns = _Turns(deltas)
    bare = Contestant("reference", reference(turns))
    rows = [
        Row(
            f"{n} Wrap (model + tool) / none, {deltas} deltas",
            Contestant(f"reference+{n}", reference(turns, lambda n=n: wraps(n))),
            bare,
        )
        for n in (1, 4, 16)
    ]
    for count in (10, 100, 1000):
        sized = _Turns(count)
        rows.append(
            Row(
                f"catalog stack / none, {count} deltas",
                Contestant(f"catalog@{count}", reference(sized, catalog_stack)),
                Contestant(f"reference@{count}", reference(sized)),
            )
        )
    return rows


# --------------------------------------------------------------------------------------------
# Counting instructions (--instructions)
# --------------------------------------------------------------------------------------------


def _mark() -> None:
    """A boundary callgrind cuts its counts at (``--dump-before=getppid``): nothing else here
    calls ``getppid``, so the counts between two marks are exactly the work between them."""
    os.getppid()


async def _counted_worker(contestant: Contestant, calls: int, warmups: int) -> None:
    """The body of one counted process: ``warmups`` invocations, then ``calls`` between marks."""
    agents = [contestant.build() for _ in range(calls + warmups)]
    for agent in agents[:warmups]:
        await contestant.invoke(agent)
    gc.collect()
    _mark()
    for agent in agents[warmups:]:
        await contestant.invoke(agent)
    _mark()


async def _count(
    name: str, argv: list[str], directory: str, script: str = __file__, seed: int = 0
) -> int:
    """Instructions executed by ``name``'s counted invocations, in a callgrind process whose
    hash seed is ``seed``.

    ``script`` is run with ``--counted-worker name`` and calls `_counted_worker` for it.
    """
    out = os.path.join(directory, f"{name}.{seed}.out")
    process = await asyncio.create_subprocess_exec(
        "valgrind",
        "--tool=callgrind",
        "--dump-before=getppid",
        f"--callgrind-out-file={out}",
        sys.executable,
        script,
        *argv,
        "--counted-worker",
        name,
        env={**os.environ, "PYTHONHASHSEED": str(seed)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{name}: the counted run failed:\n{stderr.decode()[-2000:]}")
    return _segment_total(name, out)


def _segment_total(name: str, out: str) -> int:
    # The dump the first mark starts and the second ends is the second one callgrind writes; a
    # third means something else called getppid, and the counts would be cut in the wrong place.
    segment = f"{out}.2"
    if os.path.exists(f"{out}.3"):
        raise SystemExit(f"{name}: getppid was called besides the two marks; the counts are cut")
    if os.path.exists(segment):
        with open(segment) as dump:
            for line in dump:
                if line.startswith("totals:"):
                    return int(line.split()[1])
    raise SystemExit(f"{name}: callgrind wrote no counts between the marks ({segment})")


async def _instruction_ratios(
    rows: list[Row],
    argv: list[str],
    calls: int,
    script: str = __file__,
    seeds: Sequence[int] = (0,),
) -> None:
    """Count every contestant of ``rows`` under each hash seed of ``seeds`` (``script`` runs
    one, see `_count`); print the table of the median counts."""
    names = sorted({c.name for row in rows for c in row.contestants()})
    slots = asyncio.Semaphore(os.cpu_count() or 1)
    with tempfile.TemporaryDirectory() as directory:

        async def counted(name: str, seed: int) -> int:
            async with slots:
                return await _count(name, argv, directory, script, seed)

        each = await asyncio.gather(*(counted(name, seed) for name in names for seed in seeds))
    by_name = {name: each[i * len(seeds) : (i + 1) * len(seeds)] for i, name in enumerate(names)}
    counts = {name: round(statistics.median(seeded)) for name, seeded in by_name.items()}

    def shown(count: int) -> str:
        return f"{count / calls / 1e6:.2f} M"

    print(
        f"machine instructions per invocation, {calls} invocations counted per contestant; "
        f"the median over hash seeds {', '.join(map(str, seeds))}"
    )
    if len(seeds) > 1:
        print()
        print("each seed's count, per invocation:")
        for name, seeded in by_name.items():
            print(f"  {name}: {', '.join(map(shown, seeded))}")
    _print_counts(rows, counts, calls, shown)


def _print_counts(
    rows: list[Row], counts: dict[str, int], calls: int, shown: Callable[[int], str]
) -> None:
    """The table of counted rows: each contestant's count per invocation, and the ratios."""
    print()
    print("| figure | contestant | baseline | ratio | floor | translating floor | target |")
    print("| --- | ---: | ---: | --- | --- | --- | --- |")
    for row in rows:
        mine, theirs = counts[row.contestant.name], counts[row.baseline.name]
        floor, translating = (
            None if c is None else counts[c.name] / theirs for c in (row.floor, row.translating)
        )
        print(
            f"| {row.label} | {shown(mine)} | {shown(theirs)} | {mine / theirs:.3f}x "
            f"| {_cell(floor, 3)} | {_cell(translating, 3)} | {row.target} |",
            flush=True,
        )


async def _bytecode_ratios(rows: list[Row], calls: int) -> None:
    """Count the Python bytecodes each contestant's ``calls`` invocations execute (after one
    warm-up), in this process under a tracer; print the table. Deterministic and quick, but
    blind to work done in C (the interpreter itself, builtins, the event loop)."""
    executed = 0

    def traced(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes, frame.f_trace_lines = True, False
        return opcode

    def opcode(frame: Any, event: str, arg: Any) -> Any:
        nonlocal executed
        if event == "opcode":
            executed += 1
        return opcode

    async def counted(contestant: Contestant) -> int:
        nonlocal executed
        agents = [contestant.build() for _ in range(calls + 1)]
        await contestant.invoke(agents[0])
        executed = 0
        sys.settrace(traced)  # frames opened from here on are traced
        try:
            for agent in agents[1:]:
                await contestant.invoke(agent)
        finally:
            sys.settrace(None)
        return executed

    counts: dict[str, int] = {}
    for row in rows:
        for contestant in row.contestants():
            if contestant.name not in counts:
                # A task of its own, so that its frames are opened after the tracer is set.
                counts[contestant.name] = await asyncio.create_task(counted(contestant))
    print(f"Python bytecodes per invocation, {calls} invocations counted per contestant")
    _print_counts(rows, counts, calls, lambda count: str(count // calls))


def _seeds(given: str) -> tuple[int, ...]:
    """``--seeds``: hash seeds, comma-separated, each an integer in PYTHONHASHSEED's range."""
    try:
        seeds = tuple(int(part) for part in given.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated integers: {given!r}") from None
    if not seeds or any(not 0 <= seed <= 4294967295 for seed in seeds):
        raise argparse.ArgumentTypeError(f"hash seeds run from 0 to 4294967295: {given!r}")
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"a seed given twice counts the same layout: {given!r}")
    return seeds


def parser(description: str, calls: int) -> argparse.ArgumentParser:
    """The options every end-to-end benchmark script takes (``calls``: the default ``--calls``)."""
    options = argparse.ArgumentParser(description=description)
    options.add_argument("--rounds", type=int, default=15, help="interleaved rounds per row")
    options.add_argument(
        "--calls", type=int, default=calls, help="invocations per contestant a round"
    )
    options.add_argument("--deltas", type=int, default=200, help="text deltas per model turn")
    options.add_argument(
        "--instructions",
        action="store_true",
        help="count machine instructions under valgrind's callgrind instead of timing "
        "(--calls invocations counted per contestant; --rounds is not used)",
    )
    options.add_argument(
        "--rows",
        action="append",
        metavar="TEXT",
        help="run only the rows whose label holds TEXT (repeatable; all rows when omitted)",
    )
    options.add_argument(
        "--seeds",
        type=_seeds,
        default=(0, 1, 2),
        metavar="N,N,...",
        help="the hash seeds each contestant is counted under with --instructions (a count is "
        "the median over them; default 0,1,2)",
    )
    options.add_argument(
        "--warmups",
        type=int,
        default=10,
        help="invocations each counted process runs before its counted ones, with "
        "--instructions (default 10: see the module docstring)",
    )
    options.add_argument("--counted-worker", help=argparse.SUPPRESS)
    return options


async def main(argv: list[str]) -> None:
    options = parser(__doc__.splitlines()[0], calls=5)
    options.add_argument("--scaling", action="store_true", help="add the scaling rows")
    options.add_argument(
        "--bridges",
        action="store_true",
        help="only the bridged hosts against their native wrappers, and their memory",
    )
    options.add_argument(
        "--hosts",
        default=",".join(_HOSTS),
        help=f"the bridged hosts to measure, comma-separated (default: {','.join(_HOSTS)})",
    )
    options.add_argument(
        "--bytecodes",
        action="store_true",
        help="count the Python bytecodes executed instead of timing (quick, in this process)",
    )
    args = options.parse_args(argv)
    if args.warmups < 0:
        raise SystemExit(f"--warmups: {args.warmups} is negative; give 0 or more invocations")
    hosts = [host.strip() for host in args.hosts.split(",") if host.strip()]
    unknown = sorted(set(hosts) - set(_HOSTS))
    if unknown:
        raise SystemExit(f"--hosts: unknown {unknown}; choose from {list(_HOSTS)}")

    rows = [] if args.bridges else _rows(args.deltas)
    rows += _bridge_rows(args.deltas, hosts)
    if args.scaling:
        rows += _scaling_rows(args.deltas)
    if args.counted_worker is not None:
        by_name = {c.name: c for row in rows for c in row.contestants()}
        await _counted_worker(by_name[args.counted_worker], args.calls, args.warmups)
        return
    if args.rows:
        rows = [row for row in rows if any(text in row.label for text in args.rows)]
    if args.instructions and shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    for row in rows:
        await _check_same_work(row)
    if args.bytecodes:
        await _bytecode_ratios(rows, args.calls)
        return
    if args.instructions:
        shared = [
            f"--calls={args.calls}",
            f"--warmups={args.warmups}",
            f"--deltas={args.deltas}",
            f"--hosts={args.hosts}",
        ]
        if args.scaling:
            shared.append("--scaling")
        if args.bridges:
            shared.append("--bridges")
        await _instruction_ratios(rows, shared, args.calls, seeds=args.seeds)
        await _bridge_memory(args.deltas, hosts)
        return

    print(
        f"Python {sys.version.split()[0]}, strands-agents {_strands_version()}; "
        f"{args.deltas} deltas per model turn, {args.rounds} rounds x {args.calls} calls, "
        "medians of per-round ratios"
    )
    print()
    print("| figure | ratio | floor | translating floor | target |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        ratio, floor, translating = await _ratios(row, args.rounds, args.calls)
        print(
            f"| {row.label} | {ratio:.2f}x | {_cell(floor)} | {_cell(translating)} "
            f"| {row.target} |",
            flush=True,
        )

    await _bridge_memory(args.deltas, hosts)
    if args.bridges:
        return
    print()
    print("| agent | KiB per agent | KiB peak per invocation |")
    print("| --- | --- | --- |")
    turns = _Turns(args.deltas)
    for contestant in (
        Contestant("reference agent", reference(turns)),
        Contestant("reference agent + catalog stack", reference(turns, catalog_stack)),
        Contestant("strands.Agent", native(turns)),
        Contestant("strands.Agent + bridge, 4 Wrap", bridged(turns, lambda: wraps(4))),
    ):
        per_agent, per_invocation = await _memory(contestant)
        print(f"| {contestant.name} | {per_agent:.1f} | {per_invocation:.1f} |")


async def _bridge_memory(deltas: int, hosts: Sequence[str]) -> None:
    """Memory per agent of each host's 1/1 row: one bridged Wrap per stage against one native
    (and the floor's, where the host has one), as `_memory` counts it."""
    print()
    print("| host: 1 Wrap per stage / 1 native | KiB per agent | native | ratio | floor | target |")
    print("| --- | ---: | ---: | --- | --- | --- |")
    for row in _bridge_rows(deltas, hosts):
        if "1 Wrap per stage" not in row.label:
            continue
        mine, _ = await _memory(row.contestant)
        theirs, _ = await _memory(row.baseline)
        floor = None if row.floor is None else (await _memory(row.floor))[0] / theirs
        print(
            f"| {row.label.split(':')[0]} | {mine:.1f} | {theirs:.1f} | {mine / theirs:.3f}x "
            f"| {_cell(floor, 3)} | <= 1.10x |",
            flush=True,
        )


def _strands_version() -> str:
    from importlib.metadata import version

    return version("strands-agents")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
