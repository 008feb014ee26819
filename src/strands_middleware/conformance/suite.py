"""`ConformanceSuite`: the kit as a pytest base class, one test per clause.

Subclass it in your test suite under a name pytest collects, and give it your harness:

```python
from strands_middleware.conformance.suite import ConformanceSuite

class TestMyFrameworkConformance(ConformanceSuite):
    harness = MyHarness()
```

A clause that fails fails its test, with what went wrong. The clauses the harness lists in its
``known_failures`` must fail (their tests are reported as xfail with the reason); once one
passes, its test fails until the entry is removed, so the list never hides a fix or a new
failure. When the harness offers a native model, each model-stage clause has a second test,
``<clause id>[native model]``, run with it. This module imports pytest; nothing else in the kit
does.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from ._clause import Clause
from ._clauses import CLAUSES
from ._harness import NATIVE_MODEL, Harness, native_model_of
from ._runner import Outcome, known_failures_of, run_clause

__all__ = ["ConformanceSuite"]


class ConformanceSuite:
    """Every clause of the host contract as a test against `harness`.

    Attributes:
        harness: The host under test; its ``known_failures`` say which clauses must fail.
    """

    harness: ClassVar[Harness]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """One ``test_clause`` per clause, and per model-stage clause with the native model."""
        if "clause" not in metafunc.fixturenames:
            return
        runs = [(clause, False) for clause in CLAUSES]
        if native_model_of(self.harness) is not None:
            runs += [(clause, True) for clause in CLAUSES if clause.model_stage]
        metafunc.parametrize(
            ("clause", "native"),
            runs,
            ids=[f"{c.id}{NATIVE_MODEL}" if native else c.id for c, native in runs],
        )

    def test_clause(self, clause: Clause, native: bool) -> None:
        """The host keeps the clause (or, when the harness lists it as known, still breaks it)."""
        result = run_clause(self.harness, clause, native=native)
        reason = known_failures_of(self.harness).get(result.key)
        if reason is not None:
            if result.outcome is Outcome.FAIL:
                pytest.xfail(f"{reason}: {result.detail}")
            pytest.fail(
                f"{result.key} is listed in the harness's known_failures ({reason}) but gave "
                f"{result.outcome.value}: remove it from known_failures",
                pytrace=False,
            )
        if result.outcome is Outcome.FAIL:
            pytest.fail(
                f"{result.key} ({'; '.join(clause.cites)}): {clause.title}\n{result.detail}",
                pytrace=False,
            )

    def test_known_failures_name_clauses(self) -> None:
        """Every entry of the harness's known_failures names a clause run of the kit."""
        keys = {clause.id for clause in CLAUSES}
        if native_model_of(self.harness) is not None:
            keys |= {f"{clause.id}{NATIVE_MODEL}" for clause in CLAUSES if clause.model_stage}
        unknown = sorted(set(known_failures_of(self.harness)) - keys)
        assert not unknown, f"known_failures names no clause run: {unknown}"
