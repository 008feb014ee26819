"""Imports in src/ point down the layers of DESIGN.md, and each framework stays in its home.

The layers, lowest first: plain data and shapes; the engine; the built-in stages; the adapter
layer (host and stores); hosts, catalog and kit. A module may import its own layer and the ones
below it, never one above, so the engine stays host-agnostic and the catalog runs on every host.
A framework (strands, pydantic-ai, LangChain, Redis, OpenTelemetry) is imported only by the one
module or package that exists to carry it, so using the library never needs one installed.

Every import counts: top-level ones, those under ``if TYPE_CHECKING:`` (a type checker still
follows them, and they tie the layers together as much as run-time ones do), and those inside
functions.
"""

from __future__ import annotations

import ast
import pathlib
from dataclasses import dataclass

import pytest

PACKAGE = "strands_middleware"
SOURCE = pathlib.Path(__file__).resolve().parent.parent / "src"

LAYERS: dict[str, int] = {
    # 1. Plain data and shapes: no engine knowledge.
    "content": 1,
    "_interrupt": 1,
    "events": 1,
    "_typed_event": 1,
    "_stream_events": 1,
    "interrupts": 1,
    "exceptions": 1,
    "models": 1,
    "tools": 1,
    # 2. The engine: knows nothing of models, tools or agents.
    "engine": 2,
    # 3. The built-in stages.
    "stages": 3,
    "experimental": 3,
    # 4. The adapter layer.
    "host": 4,
    "stores": 4,
    # 5. Hosts, catalog, kit.
    "agent": 5,
    "bridges": 5,
    "catalog": 5,
    "testing": 5,
    "conformance": 5,
    "mcp": 5,
    "durable": 5,
}
"""The layer of each top-level module or package of the library (DESIGN.md, "Layers")."""

FRONT_DOOR = 6
"""The package root re-exports from below and is imported by nothing inside the library."""

FRAMEWORK_HOMES: dict[str, str] = {
    "strands": f"{PACKAGE}.bridges.strands",
    "strands_tools": f"{PACKAGE}.bridges.strands",
    "pydantic_ai": f"{PACKAGE}.bridges.pydantic_ai",
    "langchain": f"{PACKAGE}.bridges.langchain",
    "langgraph": f"{PACKAGE}.bridges.langchain",
    "redis": f"{PACKAGE}.stores.redis",
    "opentelemetry": f"{PACKAGE}.catalog._tracing",
    "mcp": f"{PACKAGE}.mcp",
    "mcp_types": f"{PACKAGE}.mcp",
    "uvicorn": f"{PACKAGE}.mcp",
    "temporalio": f"{PACKAGE}.durable",
}
"""Each framework's top-level import name and the only module (or package) that may import it.

``langchain`` stands for every ``langchain*`` distribution (``langchain_core``, ...).
"""


@dataclass(frozen=True)
class Import:
    """One imported module, resolved to its absolute name."""

    target: str
    line: int


def imports_of(module: str, source: str, *, is_package: bool = False) -> list[Import]:
    """Every module ``source`` imports, wherever the import statement sits.

    Relative imports are resolved against ``module``. ``from strands_middleware import x`` (or
    ``from .. import x`` reaching the root) is reported as ``strands_middleware.x`` when ``x``
    is one of the library's top-level modules, and as the package root otherwise.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(Import(alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                origin = f"{base}.{node.module}" if node.module else base
            else:
                origin = node.module or ""
            if origin == PACKAGE:
                found.extend(
                    Import(
                        f"{PACKAGE}.{alias.name}" if alias.name in LAYERS else PACKAGE, node.lineno
                    )
                    for alias in node.names
                )
            else:
                found.append(Import(origin, node.lineno))
    return sorted(found, key=lambda imported: imported.line)


def _layer_name(module: str) -> str | None:
    """The top-level library module ``module`` belongs to; None for the package root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _layer(module: str) -> int:
    name = _layer_name(module)
    if name is None:
        return FRONT_DOOR
    if name not in LAYERS:
        raise KeyError(
            f"{PACKAGE}.{name} has no layer: add it to LAYERS in tests/test_layers.py, in the "
            "layer DESIGN.md gives it"
        )
    return LAYERS[name]


def _framework_home(target: str) -> tuple[str, str] | None:
    """The framework ``target`` belongs to and that framework's home, if it is one."""
    top = target.split(".", maxsplit=1)[0]
    for framework, home in FRAMEWORK_HOMES.items():
        if top == framework or (framework == "langchain" and top.startswith("langchain")):
            return top, home
    return None


def _inside(module: str, home: str) -> bool:
    return module == home or module.startswith(f"{home}.")


def layer_violations(module: str, source: str, *, is_package: bool = False) -> list[str]:
    """What is wrong with the imports of ``module`` (whose text is ``source``); empty if nothing.

    Args:
        module: The module's absolute name, e.g. ``strands_middleware.engine._registry``.
        source: Its Python source.
        is_package: Whether it is a package's ``__init__``, which changes what ``.`` means.
    """
    problems: list[str] = []
    own = _layer(module)
    own_bridge = _bridge_of(module)
    for imported in imports_of(module, source, is_package=is_package):
        where = f"{module} line {imported.line}"
        if imported.target == PACKAGE or imported.target.startswith(f"{PACKAGE}."):
            if imported.target == PACKAGE:
                if module != PACKAGE:
                    problems.append(
                        f"{where} imports the package root; import from the module that "
                        "defines the name instead"
                    )
                continue
            target_layer = _layer(imported.target)
            if target_layer > own:
                problems.append(
                    f"{where} imports {imported.target} (layer {target_layer}) from layer {own}; "
                    "imports point down the layers: move the shared code down to the lower "
                    "layer instead"
                )
            target_bridge = _bridge_of(imported.target)
            if target_bridge is not None and target_bridge != own_bridge:
                problems.append(
                    f"{where} imports the bridge {target_bridge}; nothing outside a bridge "
                    "imports it, so a framework stays optional for everyone else"
                )
            continue
        framework = _framework_home(imported.target)
        if framework is not None and not _inside(module, framework[1]):
            name, home = framework
            problems.append(
                f"{where} imports {name}, which only {home} may import (FRAMEWORK_HOMES in "
                "tests/test_layers.py); move the code that needs it there"
            )
    return problems


def _bridge_of(module: str) -> str | None:
    """``strands_middleware.bridges.<name>`` when ``module`` lives in that bridge."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "bridges":
        return ".".join(parts[:3])
    return None


def _library_modules() -> list[tuple[str, pathlib.Path]]:
    modules: list[tuple[str, pathlib.Path]] = []
    for path in sorted((SOURCE / PACKAGE).rglob("*.py")):
        parts = path.relative_to(SOURCE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules.append((".".join(parts), path))
    return modules


# ---- the library -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "path"), _library_modules(), ids=[name for name, _ in _library_modules()]
)
def test_imports_point_down_the_layers_and_frameworks_stay_home(
    module: str, path: pathlib.Path
) -> None:
    source = path.read_text(encoding="utf-8")
    assert layer_violations(module, source, is_package=path.name == "__init__.py") == []


def test_every_top_level_module_has_a_layer() -> None:
    names = {_layer_name(module) for module, _ in _library_modules()} - {None}
    assert names <= set(LAYERS), f"place these in LAYERS: {sorted(names - set(LAYERS))}"


# ---- the checker catches what it is for ------------------------------------------------------


def test_an_upward_import_is_caught() -> None:
    [problem] = layer_violations(
        "strands_middleware.engine._registry", "from ..host._model_call import run_model_call\n"
    )
    assert "imports strands_middleware.host._model_call (layer 4) from layer 2" in problem
    assert "strands_middleware.engine._registry line 1" in problem


def test_an_upward_import_under_type_checking_or_in_a_function_is_caught() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from strands_middleware.agent import Agent\n"
        "def later():\n"
        "    import strands_middleware.catalog._retry\n"
    )
    problems = layer_violations("strands_middleware.events", source)
    assert len(problems) == 2
    assert "line 3 imports strands_middleware.agent (layer 5) from layer 1" in problems[0]
    assert "line 5 imports strands_middleware.catalog._retry (layer 5) from layer 1" in problems[1]


def test_a_relative_import_of_a_sibling_package_resolves_from_a_package_init() -> None:
    [problem] = layer_violations(
        "strands_middleware.stages", "from ..host import run_tool_call\n", is_package=True
    )
    assert "imports strands_middleware.host (layer 4) from layer 3" in problem
    assert (
        layer_violations(
            "strands_middleware.stages", "from . import invoke_model\n", is_package=True
        )
        == []
    )


def test_imports_down_or_within_a_layer_pass() -> None:
    source = (
        "from ..content import Message\n"
        "from ..engine._registry import MiddlewareRegistry\n"
        "from .interrupt_state import InterruptState\n"
        "import asyncio\n"
    )
    assert layer_violations("strands_middleware.host._tool_call", source) == []


def test_importing_the_package_root_from_inside_is_caught() -> None:
    [problem] = layer_violations(
        "strands_middleware.catalog._retry", "from .. import MiddlewareStage\n"
    )
    assert "imports the package root" in problem
    [problem] = layer_violations("strands_middleware.host._mixin", "import strands_middleware\n")
    assert "imports the package root" in problem


def test_a_bridge_imported_from_outside_it_is_caught() -> None:
    [problem] = layer_violations(
        "strands_middleware.catalog._retry", "from ..bridges.strands import StrandsBridge\n"
    )
    assert "imports the bridge strands_middleware.bridges.strands" in problem
    [problem] = layer_violations(
        "strands_middleware.bridges.langchain.bridge", "from ..strands import translate\n"
    )
    assert "imports the bridge strands_middleware.bridges.strands" in problem
    assert (
        layer_violations("strands_middleware.bridges.strands.bridge", "from . import translate\n")
        == []
    )


@pytest.mark.parametrize(
    ("module", "statement", "home"),
    [
        ("strands_middleware.agent._agent", "import strands", "strands_middleware.bridges.strands"),
        (
            "strands_middleware.catalog._retry",
            "from strands.agent import Agent",
            "strands_middleware.bridges.strands",
        ),
        (
            "strands_middleware.host._model_call",
            "from pydantic_ai import Agent",
            "strands_middleware.bridges.pydantic_ai",
        ),
        (
            "strands_middleware.bridges.strands.bridge",
            "from langchain_core.messages import AIMessage",
            "strands_middleware.bridges.langchain",
        ),
        (
            "strands_middleware.catalog._cache",
            "import redis.asyncio",
            "strands_middleware.stores.redis",
        ),
        (
            "strands_middleware.catalog._retry",
            "from opentelemetry import trace",
            "strands_middleware.catalog._tracing",
        ),
    ],
)
def test_a_framework_outside_its_home_is_caught(module: str, statement: str, home: str) -> None:
    source = f"def lazily():\n    {statement}\n"
    [problem] = layer_violations(module, source)
    assert f"which only {home} may import" in problem


def test_a_framework_in_its_home_passes() -> None:
    assert (
        layer_violations("strands_middleware.catalog._tracing", "from opentelemetry import trace\n")
        == []
    )
    assert layer_violations("strands_middleware.stores.redis", "import redis.asyncio\n") == []
    assert layer_violations("strands_middleware.stores.redis.lease", "import redis\n") == []
    assert (
        layer_violations("strands_middleware.bridges.strands.translate", "import strands\n") == []
    )


def test_the_library_itself_is_not_mistaken_for_the_strands_framework() -> None:
    assert (
        layer_violations("strands_middleware.agent._agent", "import strands_middleware.content\n")
        == []
    )


def test_a_module_without_a_layer_is_reported_with_what_to_do() -> None:
    with pytest.raises(KeyError, match="add it to LAYERS"):
        layer_violations("strands_middleware.plugins", "import json\n")


# ---- no import circles ---------------------------------------------------------------------


def import_graph(modules: list[tuple[str, pathlib.Path]]) -> dict[str, set[str]]:
    """Each library module and the library modules it imports, wherever the import sits.

    ``from package import name`` counts as importing ``package.name`` when that is a module, and
    ``package`` otherwise (a name its ``__init__`` holds).
    """
    known = {name for name, _ in modules}
    graph: dict[str, set[str]] = {}
    for module, path in modules:
        is_package = path.name == "__init__.py"
        package = module if is_package else module.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in known)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - (node.level - 1)])
                    origin = f"{base}.{node.module}" if node.module else base
                else:
                    origin = node.module or ""
                for alias in node.names:
                    submodule = f"{origin}.{alias.name}"
                    if submodule in known:
                        edges.add(submodule)
                    elif origin in known:
                        edges.add(origin)
        edges.discard(module)
        graph[module] = edges
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import one another, directly or through others (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_no_two_modules_import_each_other_even_under_type_checking() -> None:
    circles = import_circles(import_graph(_library_modules()))
    assert circles == [], (
        "these modules import one another (a type-only import counts): move what both need "
        f"into a lower module: {circles}"
    )


def test_the_circle_check_finds_a_circle_through_a_third_module() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_circles(graph) == [["a", "b", "c"]]


def test_no_module_is_over_600_lines() -> None:
    """A module longer than that holds more than one idea: split it where the ideas part."""
    long = {
        module: lines
        for module, path in _library_modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert long == {}
