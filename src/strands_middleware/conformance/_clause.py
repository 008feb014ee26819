"""A clause of the host contract, and the `Trial` a clause's check runs in.

A clause is an async check named for what it verifies, citing where the contract says so. It
builds agents through the harness (`Trial.build`), drives them, and fails with `ClauseFailed`
when the host breaks the rule. A check may return a short note the table shows beside "pass"
(what it checked when a capability is undeclared, say).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..content import SystemPrompt, ToolChoice, Usage
from ..engine._registry import MiddlewareSource
from ..testing import ScriptedModel, ScriptedTurn
from ._harness import NATIVE_MODEL, AgentSetup, Capability, Harness, HostAgent, native_model_of

__all__ = [
    "Built",
    "Clause",
    "ClauseFailed",
    "NotApplicable",
    "Toolbox",
    "Trial",
    "clause",
    "expect",
]

Check = Callable[["Trial"], Awaitable["str | None"]]


class ClauseFailed(AssertionError):
    """The host broke the clause; the message says how."""


class NotApplicable(Exception):
    """The clause has nothing to observe on this host (it declares no such capability)."""


def expect(condition: bool, failure: str) -> None:
    """Fail the clause with ``failure`` unless ``condition`` holds."""
    if not condition:
        raise ClauseFailed(failure)


@dataclass(frozen=True)
class Clause:
    """One rule of the host contract.

    Attributes:
        id: The clause's name, saying what it checks.
        title: One sentence: what a conforming host does.
        cites: Where the contract says so (spec, docs and DESIGN sections, issues).
        check: The check itself.
        needs: A capability the clause needs, or None.
        otherwise: What is checked instead when ``needs`` is not declared; None means there is
            nothing to check ("n/a").
        model_stage: The clause checks a model call: it runs a second time with the host's
            native model when the harness offers one.
    """

    id: str
    title: str
    cites: tuple[str, ...]
    check: Check
    needs: Capability | None = None
    otherwise: Check | None = None
    model_stage: bool = False


def clause(
    *cites: str,
    needs: Capability | None = None,
    otherwise: Check | None = None,
    model_stage: bool = False,
) -> Callable[[Check], Clause]:
    """Make an async check function into a `Clause` named after it, titled by its docstring."""

    def make(check: Check) -> Clause:
        doc = (check.__doc__ or "").strip()
        if not doc or not cites:
            raise TypeError(f"clause {check.__name__} needs a docstring and at least one citation")
        return Clause(
            id=check.__name__,
            title=" ".join(doc.split("\n\n")[0].split()),
            cites=cites,
            check=check,
            needs=needs,
            otherwise=otherwise,
            model_stage=model_stage,
        )

    return make


class Toolbox:
    """The tools a trial offers, as plain functions that record their calls.

    Attributes:
        calls: ``(tool name, arguments)`` for every call, in order.
        waiting: Set once ``wait_for_cancel`` is running.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.waiting = asyncio.Event()
        calls = self.calls
        waiting = self.waiting

        def add(a: int, b: int) -> int:
            """Add two integers.

            Args:
                a: The first addend.
                b: The second addend.
            """
            calls.append(("add", {"a": a, "b": b}))
            return a + b

        def delete_file(path: str) -> str:
            """Delete a file.

            Args:
                path: The file to delete.
            """
            calls.append(("delete_file", {"path": path}))
            return f"deleted {path}"

        def fail(reason: str) -> str:
            """Fail with a reason.

            Args:
                reason: What goes wrong.
            """
            calls.append(("fail", {"reason": reason}))
            raise ValueError(reason)

        async def wait_for_cancel() -> str:
            """Wait until the run is cancelled."""
            calls.append(("wait_for_cancel", {}))
            waiting.set()
            await asyncio.Event().wait()
            return "not cancelled"

        self.add = add
        self.delete_file = delete_file
        self.fail = fail
        self.wait_for_cancel = wait_for_cancel

    def called(self, name: str) -> list[dict[str, Any]]:
        """The arguments of every call of the tool ``name``."""
        return [arguments for tool, arguments in self.calls if tool == name]


@dataclass(frozen=True)
class Built:
    """An agent a trial built, with its script and setup."""

    agent: HostAgent
    script: ScriptedModel
    setup: AgentSetup


class Trial:
    """What a clause's check works with: the harness under test and a fresh `Toolbox`.

    Args:
        harness: The host under test.
        native: Play scripts through the harness's native model rather than `Harness.model`.
    """

    def __init__(self, harness: Harness, *, native: bool = False) -> None:
        self.harness = harness
        self.tools = Toolbox()
        native_model = native_model_of(harness) if native else None
        if native and native_model is None:
            raise ValueError(f"the {harness.name} harness offers no native_model()")
        self._native = native_model

    @property
    def label(self) -> str:
        """The host's name, followed by which model plays the scripts when it is the native one."""
        return self.harness.name if self._native is None else f"{self.harness.name} {NATIVE_MODEL}"

    def declares(self, capability: Capability) -> bool:
        """Whether the harness declares ``capability``."""
        return capability in self.harness.capabilities

    def model(self, script: ScriptedModel) -> object:
        """The host's model playing ``script``: the native one when the trial runs with it."""
        if self._native is not None:
            return self._native(script)
        return self.harness.model(script)

    def setup(
        self,
        turns: Sequence[ScriptedTurn],
        *,
        tools: Sequence[Callable[..., Any]] = (),
        middleware: Sequence[MiddlewareSource] = (),
        system_prompt: SystemPrompt = None,
        tool_choice: ToolChoice | None = None,
    ) -> AgentSetup:
        """An `AgentSetup` with a fresh script of ``turns``, played by `model`."""
        script = ScriptedModel(turns)
        return AgentSetup(
            script=script,
            tools=tuple(tools),
            middleware=tuple(middleware),
            system_prompt=system_prompt,
            tool_choice=tool_choice,
            model=self.model(script),
        )

    def build(
        self,
        turns: Sequence[ScriptedTurn],
        *,
        tools: Sequence[Callable[..., Any]] = (),
        middleware: Sequence[MiddlewareSource] = (),
        system_prompt: SystemPrompt = None,
        tool_choice: ToolChoice | None = None,
        usage: Usage | None = None,
    ) -> Built:
        """A fresh agent of the host playing ``turns`` (each reporting ``usage``, if given)."""
        script = ScriptedModel(turns, usage=usage)
        setup = AgentSetup(
            script=script,
            tools=tuple(tools),
            middleware=tuple(middleware),
            system_prompt=system_prompt,
            tool_choice=tool_choice,
            model=self.model(script),
        )
        return Built(self.harness.build(setup), script, setup)
