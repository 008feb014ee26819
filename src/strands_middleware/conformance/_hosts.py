"""Finding a harness: this repository's hosts by name, any other as ``package.module:factory``."""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import cast

from ._harness import Harness

__all__ = ["BUILT_IN_HOSTS", "BuiltInHost", "harness_reference", "load_harness"]


@dataclass(frozen=True)
class BuiltInHost:
    """A host of this repository: where its harness lives, what it needs and how to install it."""

    harness: str
    needs: str | None = None
    install: str = ""

    @property
    def installed(self) -> bool:
        """Whether the framework the host runs on can be imported here."""
        return self.needs is None or importlib.util.find_spec(self.needs) is not None


BUILT_IN_HOSTS: dict[str, BuiltInHost] = {
    "reference": BuiltInHost(
        "strands_middleware.conformance._harnesses._reference:ReferenceHarness"
    ),
    "strands": BuiltInHost(
        "strands_middleware.bridges.strands.conformance:StrandsHarness",
        needs="strands",
        install='pip install "strands-middleware[strands]"',
    ),
    "pydantic_ai": BuiltInHost(
        "strands_middleware.bridges.pydantic_ai.conformance:PydanticAIHarness",
        needs="pydantic_ai",
        install='pip install "strands-middleware[pydantic-ai]" (Python 3.11 or newer)',
    ),
}
BUILT_IN_HOSTS["langchain"] = BuiltInHost(
    "strands_middleware.bridges.langchain.conformance:LangChainHarness",
    needs="langchain",
    install='pip install "strands-middleware[langchain]"',
)
BUILT_IN_HOSTS["openai_agents"] = BuiltInHost(
    "strands_middleware.bridges.openai_agents.conformance:OpenAIAgentsHarness",
    needs="agents",
    install='pip install "strands-middleware[openai-agents]"',
)
"""This repository's hosts, by the name ``python -m strands_middleware.conformance`` takes.

A bridge keeps its harness in its own folder (only a bridge imports its framework), so the kit
names it by path and imports it only when that host is asked for.
"""


def harness_reference(harness: Harness) -> str:
    """``<module>:<class>`` of ``harness``, which `load_harness` turns back into a harness."""
    return f"{type(harness).__module__}:{type(harness).__qualname__}"


def load_harness(reference: str) -> Harness:
    """The harness ``reference`` names: a host of this repository, or ``package.module:factory``.

    ``factory`` is a harness class (built with no arguments), a function returning a harness,
    or a harness object.

    Raises:
        ValueError: ``reference`` names no host and is not of the ``module:factory`` form.
        ImportError: the module (or the framework the host runs on) is not installed.
        TypeError: what it names does not give a harness.
    """
    built_in = BUILT_IN_HOSTS.get(reference)
    if built_in is not None and not built_in.installed:
        raise ImportError(
            f"the {reference} host runs on {built_in.needs}, which is not installed here: "
            f"{built_in.install}"
        )
    target = built_in.harness if built_in is not None else reference
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ValueError(
            f"unknown host {reference!r}: name one of {', '.join(sorted(BUILT_IN_HOSTS))}, or "
            "give your harness as package.module:harness_factory"
        )
    found: object = importlib.import_module(module_name)
    for part in attribute.split("."):
        found = getattr(found, part)
    harness = found if _is_harness(found) else found() if callable(found) else found
    if not _is_harness(harness):
        raise TypeError(
            f"{reference} gave {harness!r}, not a harness: a harness has name, capabilities, "
            "model(), build() and restore() (see strands_middleware.conformance.Harness)"
        )
    return cast(Harness, harness)


def _is_harness(candidate: object) -> bool:
    if isinstance(candidate, type):
        return False
    return all(
        hasattr(candidate, member)
        for member in ("name", "capabilities", "model", "build", "restore")
    )
