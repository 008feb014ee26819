"""The documentation site's build hook (docs/_hooks.py): what it generates, and from what.

``make docs`` (run by CI) builds the whole site with ``--strict``; these tests pin the parts of
the hook a broken build would not explain: which modules count as public, that a page shows a
module's ``__all__``, that the support matrix reads the harnesses' capabilities and known
failures, and that every catalog item and host has its page.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from strands_middleware import ExecuteToolStage, InvokeModelStage, catalog
from strands_middleware.catalog import CatalogMiddleware
from strands_middleware.conformance import Capability
from strands_middleware.conformance._harnesses._reference import ReferenceHarness
from strands_middleware.experimental import AgentStreamStage
from tests.test_exported_members import EXPORTED

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def hooks() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("docs_hooks_under_test", DOCS / "_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_public_modules_are_those_with_no_private_part(hooks: ModuleType) -> None:
    modules: list[str] = hooks.public_modules()
    assert modules == sorted(modules)
    assert all(not part.startswith("_") for name in modules for part in name.split("."))
    # The public surface is listed, module by module, in tests/test_exported_members.py.
    assert modules == sorted(EXPORTED)
    source = DOCS.parent / "src" / "strands_middleware"
    private_files = [p for p in source.rglob("_*.py") if p.name != "__init__.py"]
    assert private_files, "the package has private modules to leave out"
    for path in private_files:
        dotted = ".".join(path.relative_to(source.parent).with_suffix("").parts)
        assert dotted not in modules


def test_an_api_page_renders_exactly_the_module_all(hooks: ModuleType) -> None:
    assert hooks.exported_names("strands_middleware.catalog") == list(catalog.__all__)
    page: str = hooks.api_page("strands_middleware.catalog")
    assert page.startswith("# `strands_middleware.catalog`\n\n::: strands_middleware.catalog\n")
    listed = [line.strip()[2:] for line in page.splitlines() if line.startswith("        - ")]
    assert listed == list(catalog.__all__)


def test_catalog_items_are_every_exported_item_with_the_stages_it_uses(hooks: ModuleType) -> None:
    items: dict[str, set[object]] = hooks.catalog_items()
    exported = {
        name
        for name in catalog.__all__
        if inspect.isclass(getattr(catalog, name))
        and issubclass(getattr(catalog, name), CatalogMiddleware)
        and not inspect.isabstract(getattr(catalog, name))
    }
    assert set(items) == exported
    assert items["Retry"] == {InvokeModelStage}
    assert items["ToolApproval"] == {ExecuteToolStage}


def test_an_item_on_a_stage_a_host_lacks_is_marked_unsupported(hooks: ModuleType) -> None:
    without = hooks.HostFacts("bare", True, "", frozenset({Capability.HOOKS}), {})
    with_it = hooks.HostFacts("full", True, "", frozenset(Capability), {})
    absent = hooks.HostFacts("absent", False, "pip install x", frozenset(), {})
    assert hooks.item_support({AgentStreamStage}, without) == "no (agent-stream stage)"
    assert hooks.item_support({AgentStreamStage}, with_it) == "yes"
    assert hooks.item_support({InvokeModelStage}, without) == "yes"
    assert hooks.item_support({InvokeModelStage}, absent) == "not installed"


def test_an_option_needing_run_state_has_a_row_saying_which_hosts_lack_it(
    hooks: ModuleType,
) -> None:
    facts = {host.name: host for host in hooks.host_facts()}
    table: str = hooks.supported_hosts_table("Redact", list(facts.values()), hooks.catalog_items())
    row = next(line for line in table.splitlines() if "reversible" in line)
    cells = dict(zip(facts, [cell.strip() for cell in row.split("|")[2:-1]], strict=True))
    assert cells["reference"] == "yes"
    if facts["openai_agents"].installed:
        assert cells["openai_agents"] == "no (run state)"
    page: str = hooks.matrix_page(list(facts.values()), hooks.catalog_items())
    assert "| [`Redact(reversible=True)`](catalog/redact.md) |" in page
    # A count per invocation needs the dict every call of a run shares, too.
    for item in ("CallLimit", "UsageBudget"):
        table = hooks.supported_hosts_table(item, list(facts.values()), hooks.catalog_items())
        row = next(line for line in table.splitlines() if "scope='invocation'" in line)
        cells = dict(zip(facts, [cell.strip() for cell in row.split("|")[2:-1]], strict=True))
        assert cells["reference"] == "yes"
        if facts["openai_agents"].installed:
            assert cells["openai_agents"] == "no (run state)"
        assert f"| [`{item}(scope='invocation')`](catalog/{hooks._kebab(item)}.md) |" in page


def test_the_matrix_reads_each_harness_capabilities_and_known_failures(
    hooks: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    known = {"some_clause": "upstream does something else"}
    monkeypatch.setattr(ReferenceHarness, "known_failures", known, raising=False)
    facts = {host.name: host for host in hooks.host_facts()}
    assert facts["reference"].capabilities == frozenset(Capability)
    assert facts["reference"].known_failures == known
    page: str = hooks.matrix_page(list(facts.values()), hooks.catalog_items())
    assert "`some_clause`: upstream does something else" in page
    for capability in Capability:
        assert f"| {capability.value} |" in page
    assert "| [`Retry`](catalog/retry.md) |" in page


def test_a_harness_without_known_failures_has_none(
    hooks: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "known_failures" in vars(ReferenceHarness):
        monkeypatch.delattr(ReferenceHarness, "known_failures")
    facts = {host.name: host for host in hooks.host_facts()}
    assert facts["reference"].known_failures == {}
    page: str = hooks.matrix_page([facts["reference"]], {})
    assert "- **reference**: none." in page


def test_every_catalog_item_and_host_has_its_page(hooks: ModuleType) -> None:
    for item in hooks.catalog_items():
        page = DOCS / "catalog" / f"{hooks._kebab(item)}.md"
        assert page.exists(), f"{item} has no page: write {page}"
        assert f"<!-- supported-hosts: {item} -->" in page.read_text(encoding="utf-8")
    from strands_middleware.conformance import BUILT_IN_HOSTS

    for name in BUILT_IN_HOSTS:
        assert (DOCS / "hosts" / hooks._host_page(name)).exists(), name


def test_each_capability_has_its_meaning_from_the_source(hooks: ModuleType) -> None:
    meanings: dict[str, str] = hooks.capability_meanings()
    assert set(meanings) == {capability.name for capability in Capability}
    assert all(meanings.values())


def test_the_clause_table_is_the_kit_table_with_cited_pages_linked(hooks: ModuleType) -> None:
    from strands_middleware.conformance import CLAUSES, ClauseResult, HostReport, Outcome

    first = next(c for c in CLAUSES if c.cites[0].startswith("docs/"))
    known = {first.id: "upstream does something else"}
    reports = [
        HostReport("alpha", (ClauseResult(first, Outcome.PASS),), {}),
        HostReport("beta", (ClauseResult(first, Outcome.FAIL, "broke"),), known),
    ]
    table: str = hooks.clause_table(reports)
    page, heading = first.cites[0].removeprefix("docs/").split(" ", 1)
    assert table.splitlines()[0] == "| # | clause | cites | alpha | beta |"
    assert table.splitlines()[2] == (
        f"| 1 | `{first.id}` | [{heading.strip(chr(34))}]({page}) | pass | FAIL (known) |"
    )
    assert "broke" not in table  # the details below the kit's table stay out of the page
    matrix: str = hooks.matrix_page([], {}, table)
    assert "## Conformance clauses" in matrix
    assert table.rstrip() in matrix


def test_a_name_exported_by_several_modules_links_to_the_one_nearest_the_root(
    hooks: ModuleType,
) -> None:
    urls = [
        "api/strands_middleware.stages/#strands_middleware.stages.InvokeModelStage",
        "api/strands_middleware/#strands_middleware.InvokeModelStage",
        "api/strands_middleware.catalog.tracing/#x.InvokeModelStage",
    ]
    assert hooks.home_of(urls) == "api/strands_middleware/#strands_middleware.InvokeModelStage"
    assert hooks.home_of(urls[::2]) == urls[0]
