"""Build-time pages of the documentation site: the API reference and the support matrix.

MkDocs loads this file as a hook (``hooks:`` in ``mkdocs.yml``), so neither is ever written by
hand and neither can drift from the code:

- **API reference.** A public module is every module of ``strands_middleware`` whose dotted path
  has no part starting with ``_``. Each gets a page rendering the names of its ``__all__`` with
  mkdocstrings, and the nav's "API reference" entry becomes one entry per module.
- **Support matrix.** Hosts by capabilities and hosts by catalog items, from the harnesses of
  ``strands_middleware.conformance.BUILT_IN_HOSTS``: each harness's ``capabilities`` and
  its ``known_failures`` (clause id to reason; an empty mapping when a harness has none); and
  the conformance kit's clauses by host, from running the kit on every host.
- **Supported hosts on a catalog page.** The marker ``<!-- supported-hosts: Item -->`` becomes
  the row of the matrix for that item.

A host whose framework is not installed, a catalog item without a page, or a marker naming no
item is logged as a warning, which ``mkdocs build --strict`` turns into a failed build.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import itertools
import logging
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

PACKAGE = "strands_middleware"
API_DIR = "api"
MATRIX_PAGE = "support-matrix.md"
CATALOG_DIR = "catalog"
API_NAV_TITLE = "API reference"

log = logging.getLogger("mkdocs.plugins.strands_middleware_docs")
GRIFFE_LOGGER = "mkdocs.plugins.griffe"  # where mkdocstrings sends griffe's messages


# --- The public modules and their __all__ ---------------------------------------------------


def public_modules() -> list[str]:
    """Every module of the package whose dotted path has no part starting with ``_``, sorted.

    Found from the files (no import), so a bridge whose framework is missing is still listed.
    """
    package = importlib.import_module(PACKAGE)
    names = [PACKAGE]
    for info in pkgutil.walk_packages(package.__path__, f"{PACKAGE}.", onerror=lambda _: None):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def _module_file(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ImportError(f"cannot find the source of {name}")
    return Path(spec.origin)


def exported_names(name: str) -> list[str] | None:
    """The module's ``__all__``, read from its source, or None when it has none.

    A literal list is read without importing the module (a bridge's framework may be missing);
    a computed one is read by importing it.
    """
    tree = ast.parse(_module_file(name).read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = node.value
            try:
                return [str(item) for item in ast.literal_eval(value)] if value else []
            except ValueError:
                return [str(item) for item in importlib.import_module(name).__all__]
    return None


def _summary(name: str) -> str:
    """The first line of the module's docstring."""
    tree = ast.parse(_module_file(name).read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def api_page(name: str) -> str:
    """The Markdown of one module's API page."""
    names = exported_names(name)
    lines = [f"# `{name}`", "", "::: " + name, "    options:", "      show_root_heading: false"]
    if names is not None:
        lines.append("      members:" + ("" if names else " false"))
        lines.extend(f"        - {member}" for member in names)
    return "\n".join(lines) + "\n"


def api_path(name: str) -> str:
    return f"{API_DIR}/{name}.md"


def api_index(modules: list[str]) -> str:
    lines = [
        "# API reference",
        "",
        "Generated from the code when the site is built: one page per public module (a module",
        "whose dotted path has no part starting with `_`), showing what its `__all__` exports.",
        "Anything else is private and may change in any release.",
        "",
        "| module | what it holds |",
        "| --- | --- |",
    ]
    for name in modules:
        lines.append(f"| [`{name}`]({name}.md) | {_summary(name)} |")
    return "\n".join(lines) + "\n"


def _api_nav(modules: list[str]) -> list[Any]:
    """Nav entries: the index, then modules grouped under their first-level package."""
    nav: list[Any] = [{"Overview": f"{API_DIR}/index.md"}]
    groups: dict[str, list[Any]] = {}
    for name in modules:
        parts = name.split(".")
        if len(parts) <= 2 and not any(m.startswith(f"{name}.") for m in modules):
            nav.append({parts[-1] if len(parts) > 1 else name: api_path(name)})
            continue
        group = parts[1] if len(parts) > 1 else name
        groups.setdefault(group, []).append({".".join(parts[1:]) or name: api_path(name)})
    root = [entry for entry in nav[1:] if PACKAGE in entry]
    rest = [entry for entry in nav[1:] if PACKAGE not in entry]
    ordered: list[Any] = [nav[0], *root]
    for entry in sorted(rest + [{g: items} for g, items in groups.items()], key=_nav_key):
        ordered.append(entry)
    return ordered


def _nav_key(entry: Mapping[str, Any]) -> str:
    return next(iter(entry))


# --- The support matrix ---------------------------------------------------------------------


@dataclass(frozen=True)
class HostFacts:
    """What the docs say about one built-in host."""

    name: str
    installed: bool
    install: str
    capabilities: frozenset[Any]
    known_failures: Mapping[str, str]


def host_facts() -> list[HostFacts]:
    """Every built-in host, its harness loaded when its framework is installed here."""
    from strands_middleware.conformance import BUILT_IN_HOSTS, load_harness

    facts: list[HostFacts] = []
    for name, host in BUILT_IN_HOSTS.items():
        if not host.installed:
            log.warning(
                "the %s host's framework is not installed, so the support matrix cannot show "
                "it: install the dev extra (make install) before building the docs",
                name,
            )
            facts.append(HostFacts(name, False, host.install, frozenset(), {}))
            continue
        harness = load_harness(name)
        # A class attribute of the harness, read with a default: a harness without one has none.
        known: Mapping[str, str] = getattr(harness, "known_failures", None) or {}
        facts.append(
            HostFacts(name, True, host.install, frozenset(harness.capabilities), dict(known))
        )
    return facts


def _needs_construction_arguments() -> dict[str, Callable[[], object]]:
    """How to build the items that have required arguments, to see which stages they use."""
    from strands_middleware.catalog import (
        CallLimit,
        ConcurrencyLimit,
        ContextWindow,
        Guardrail,
        ModelFallback,
        RateLimit,
        Summarize,
        Timeout,
        ToolMock,
        ToolSelector,
        UsageBudget,
        Verdict,
    )
    from strands_middleware.testing import ScriptedModel

    return {
        "CallLimit": lambda: CallLimit(model_calls=1),
        "ConcurrencyLimit": lambda: ConcurrencyLimit(limit=1),
        "ContextWindow": lambda: ContextWindow(max_messages=10),
        "Guardrail": lambda: Guardrail(lambda _subject: Verdict.allow()),
        "ModelFallback": lambda: ModelFallback([ScriptedModel([])]),
        "RateLimit": lambda: RateLimit(rate=1.0, burst=1),
        "Summarize": lambda: Summarize(ScriptedModel([]), max_tokens=1_000),
        "Timeout": lambda: Timeout(seconds=1.0),
        "ToolMock": lambda: ToolMock({}),
        "ToolSelector": lambda: ToolSelector(lambda _spec, _context: True),
        "UsageBudget": lambda: UsageBudget(max_total_tokens=1),
    }


def catalog_items() -> dict[str, set[Any]]:
    """Each catalog item (a `CatalogMiddleware` the catalog exports) and the stages it uses.

    An item is built with no arguments, or as `_needs_construction_arguments` says; the stages
    are those of the `Middleware` it registers.
    """
    from strands_middleware import catalog
    from strands_middleware.catalog import CatalogMiddleware

    factories = _needs_construction_arguments()
    items: dict[str, set[Any]] = {}
    for name in catalog.__all__:
        cls = getattr(catalog, name)
        if not (inspect.isclass(cls) and issubclass(cls, CatalogMiddleware)):
            continue
        if inspect.isabstract(cls):
            continue
        try:
            item = factories[name]() if name in factories else cls()
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"docs/_hooks.py cannot build the catalog item {name} with no arguments ({error}):"
                " add how to build it to _needs_construction_arguments"
            ) from error
        items[name] = {middleware.stage for middleware in item}
    return dict(sorted(items.items()))


def _stage_needs() -> dict[Any, Any]:
    """The capability a host must declare to run handlers on each stage (none: every host)."""
    from strands_middleware.conformance import Capability
    from strands_middleware.experimental import AgentStreamStage

    return {AgentStreamStage: Capability.AGENT_STREAM}


def option_needs() -> dict[str, tuple[str, Any]]:
    """Item options that need a host capability beyond their stages: the option as written, to
    the item and the capability (the item refuses to be registered on a host without it)."""
    from strands_middleware.conformance import Capability

    return {
        "Redact(reversible=True)": ("Redact", Capability.RUN_STATE),
        # Counted per invocation by the dict every call of a run shares.
        "CallLimit(scope='invocation')": ("CallLimit", Capability.RUN_STATE),
        "UsageBudget(scope='invocation')": ("UsageBudget", Capability.RUN_STATE),
    }


def option_support(capability: Any, host: HostFacts) -> str:
    """A cell of an option's row: whether the host has the capability the option needs."""
    if not host.installed:
        return "not installed"
    return "yes" if capability in host.capabilities else f"no ({capability.value})"


def conformance_reports(hosts: list[HostFacts]) -> list[Any]:
    """The conformance kit run on every installed host, with the host's known failures."""
    from strands_middleware.conformance import load_harness, run_conformance

    # Clauses provoke failures on purpose, which hosts log; the table reports them instead.
    silence = logging.NullHandler()
    root = logging.getLogger()
    root.addHandler(silence)
    # The OpenAI Agents SDK parses the clauses' tool docstrings with griffe and turns griffe's
    # logger down while it does; under mkdocstrings griffe logs through mkdocs' own logger
    # instead, so its notes on those test tools would count as warnings of this build.
    griffe = logging.getLogger(GRIFFE_LOGGER)
    griffe_level = griffe.level
    griffe.setLevel(logging.ERROR)
    try:
        return [
            run_conformance(load_harness(host.name), known_failures=host.known_failures)
            for host in hosts
            if host.installed
        ]
    finally:
        griffe.setLevel(griffe_level)
        root.removeHandler(silence)


_DOCS_CITE = re.compile(r'docs/(?P<page>[\w/.-]+\.md) "(?P<heading>[^"]+)"')


def clause_table(reports: list[Any]) -> str:
    """``make conformance``'s table of clauses by host, a cited page linked to it."""
    from strands_middleware.conformance import format_table

    table = format_table(reports).split("\n\n", 1)[0]
    return _DOCS_CITE.sub(lambda m: f"[{m['heading']}]({m['page']})", table) + "\n"


def capability_meanings() -> dict[str, str]:
    """Each `Capability` member's docstring (the string under it in the source), by name."""
    source = _module_file(f"{PACKAGE}.conformance._harness").read_text(encoding="utf-8")
    meanings: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == "Capability":
            body = node.body
            for first, second in itertools.pairwise(body):
                if (
                    isinstance(first, ast.Assign)
                    and isinstance(first.targets[0], ast.Name)
                    and isinstance(second, ast.Expr)
                    and isinstance(second.value, ast.Constant)
                    and isinstance(second.value.value, str)
                ):
                    text = inspect.cleandoc(second.value.value)
                    meanings[first.targets[0].id] = " ".join(text.split())
    return meanings


def item_support(stages: set[Any], host: HostFacts) -> str:
    """A cell of the hosts-by-items table."""
    if not host.installed:
        return "not installed"
    needs = _stage_needs()
    missing = [needs[s].value for s in stages if s in needs and needs[s] not in host.capabilities]
    return "yes" if not missing else f"no ({', '.join(missing)})"


def matrix_page(hosts: list[HostFacts], items: dict[str, set[Any]], clauses: str = "") -> str:
    from strands_middleware.conformance import Capability

    header = "| | " + " | ".join(f"[{h.name}](hosts/{_host_page(h.name)})" for h in hosts) + " |"
    rule = "| --- |" + " :---: |" * len(hosts)
    lines = [
        "# Support matrix",
        "",
        "Generated when the site is built, from each built-in host's conformance harness (its",
        "declared `capabilities` and `known_failures`) and from the stages each catalog item",
        "registers handlers on. A capability a host does not have is refused when a handler that",
        "needs it is registered, with an error naming it; it is never ignored in silence.",
        "",
        "## Capabilities",
        "",
        header,
        rule,
    ]
    for capability in Capability:
        cells = [
            "not installed" if not h.installed else "yes" if capability in h.capabilities else "no"
            for h in hosts
        ]
        lines.append(f"| {capability.value} | " + " | ".join(cells) + " |")
    lines += ["", "What each capability means (from `Capability` in the conformance kit):", ""]
    meanings = capability_meanings()
    for capability in Capability:
        lines.append(f"- **{capability.value}**: {meanings.get(capability.name, '')}")
    lines += [
        "",
        "## Catalog items",
        "",
        "An item runs on a host when the host carries every stage it registers handlers on; an",
        "option that needs a capability as well has a row of its own.",
        "",
        header,
        rule,
    ]
    for item, stages in items.items():
        cells = [item_support(stages, h) for h in hosts]
        lines.append(f"| [`{item}`]({CATALOG_DIR}/{_kebab(item)}.md) | " + " | ".join(cells) + " |")
    for option, (item, capability) in option_needs().items():
        cells = [option_support(capability, h) for h in hosts]
        page = f"{CATALOG_DIR}/{_kebab(item)}.md"
        lines.append(f"| [`{option}`]({page}) | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Known failures",
        "",
        "Conformance clauses a host breaks today, as its harness lists them, each with the",
        "upstream behaviour that causes it. `make conformance` runs the kit on every host.",
        "",
    ]
    for host in hosts:
        if not host.known_failures:
            lines.append(f"- **{host.name}**: none.")
            continue
        lines.append(f"- **{host.name}**:")
        for clause_id, reason in sorted(host.known_failures.items()):
            lines.append(f"    - `{clause_id}`: {' '.join(reason.split())}")
    if clauses:
        lines += [
            "",
            "## Conformance clauses",
            "",
            "Every clause of the host conformance kit, run on every host when the site was built",
            "(`make conformance` prints the same table), with the section of the contract it",
            'checks. "n/a" is a clause about a capability the host does not declare, checked as',
            "what an honest host without it does instead (it refuses such handlers).",
            "",
            clauses.rstrip("\n"),
        ]
    return "\n".join(lines) + "\n"


def supported_hosts_table(item: str, hosts: list[HostFacts], items: dict[str, set[Any]]) -> str:
    header = "| host | " + " | ".join(h.name for h in hosts) + " |"
    rule = "| --- |" + " :---: |" * len(hosts)
    cells = " | ".join(item_support(items[item], h) for h in hosts)
    rows = [f"| `{item}` | {cells} |"]
    for option, (of, capability) in option_needs().items():
        if of == item:
            rows.append(
                f"| `{option}` | " + " | ".join(option_support(capability, h) for h in hosts) + " |"
            )
    return f"{header}\n{rule}\n" + "\n".join(rows) + "\n"


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def _host_page(name: str) -> str:
    return f"{name.replace('_', '-')}.md"


# --- The MkDocs events ----------------------------------------------------------------------


_state: dict[str, Any] = {}


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    modules = public_modules()
    _state["modules"] = modules
    nav = config.nav or []
    for index, entry in enumerate(nav):
        if isinstance(entry, dict) and API_NAV_TITLE in entry:
            nav[index] = {API_NAV_TITLE: _api_nav(modules)}
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    modules: list[str] = _state["modules"]
    hosts = host_facts()
    items = catalog_items()
    _state["hosts"], _state["items"] = hosts, items
    files.append(File.generated(config, f"{API_DIR}/index.md", content=api_index(modules)))
    for name in modules:
        files.append(File.generated(config, api_path(name), content=api_page(name)))
    clauses = clause_table(conformance_reports(hosts))
    files.append(File.generated(config, MATRIX_PAGE, content=matrix_page(hosts, items, clauses)))
    for item in items:
        if files.get_file_from_path(f"{CATALOG_DIR}/{_kebab(item)}.md") is None:
            log.warning(
                "the catalog item %s has no page: write docs/%s/%s.md",
                item,
                CATALOG_DIR,
                _kebab(item),
            )
    for host in hosts:
        if files.get_file_from_path(f"hosts/{_host_page(host.name)}") is None:
            log.warning(
                "the host %s has no page: write docs/hosts/%s", host.name, _host_page(host.name)
            )
    return files


def home_of(urls: list[str]) -> str:
    """The API page a name exported by several public modules links to: the module nearest
    the package root (``strands_middleware`` before ``strands_middleware.stages``)."""

    def depth(url: str) -> tuple[int, str]:
        module = url.split("#", 1)[0].strip("/").rsplit("/", 1)[-1]
        return (module.count("."), url)

    return min(urls, key=depth)


def on_env(env: Any, /, *, config: MkDocsConfig, files: Files) -> Any:
    """Give a name exported by several public modules one home before links are resolved.

    Such a name is rendered on each module's API page, so a signature that mentions it (by its
    defining, private path) has several equal candidates, which autorefs reports. This runs
    before autorefs resolves links (its ``on_env`` runs late) and keeps, for such a name, the
    page of the module nearest the package root.
    """
    autorefs = config.plugins.get("autorefs")
    aliases: dict[str, list[str]] | None = getattr(autorefs, "_secondary_url_map", None)
    if aliases is None:
        log.warning("mkdocs-autorefs changed: docs/_hooks.py cannot find its secondary URL map")
        return env
    prefix = f"{API_DIR}/"
    for urls in aliases.values():
        if len(set(urls)) > 1 and all(url.startswith(prefix) for url in urls):
            urls[:] = [home_of(urls)]
    return env


_MARKER = re.compile(r"<!--\s*supported-hosts:\s*(?P<item>\w+)\s*-->")


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    def replace(match: re.Match[str]) -> str:
        item = match["item"]
        if item not in _state["items"]:
            log.warning(
                "%s: supported-hosts marker names %s, not a catalog item", page.file.src_uri, item
            )
            return match[0]
        return supported_hosts_table(item, _state["hosts"], _state["items"])

    return _MARKER.sub(replace, markdown)
