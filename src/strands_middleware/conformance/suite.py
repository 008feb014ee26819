"""`ConformanceSuite`: the kit as a pytest base class, one test per clause.

Subclass it in your test suite under a name pytest collects, and give it your harness:

```python
from strands_middleware.conformance.suite import ConformanceSuite

class TestMyFrameworkConformance(ConformanceSuite):
    harness = MyHarness()
    known_failures = {"handlers_see_no_host_only_keys": "our issue 12: messages keep ids"}
```

A clause that fails fails its test, with what went wrong. A clause listed in ``known_failures``
must fail (its test is reported as xfail with the reason); once it passes, its test fails until
the entry is removed, so the list never hides a fix or a new failure. This module imports
pytest; nothing else in the kit does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import pytest

from .clause import Clause
from .clauses import CLAUSES
from .harness import Harness
from .runner import Outcome, run_clause

__all__ = ["ConformanceSuite"]


class ConformanceSuite:
    """Every clause of the host contract as a test against `harness`.

    Attributes:
        harness: The host under test.
        known_failures: Clause id to the reason it is expected to fail for now (an issue).
    """

    harness: ClassVar[Harness]
    known_failures: ClassVar[Mapping[str, str]] = {}

    @pytest.mark.parametrize("clause", CLAUSES, ids=[clause.id for clause in CLAUSES])
    def test_clause(self, clause: Clause) -> None:
        """The host keeps the clause (or, when listed in known_failures, still breaks it)."""
        result = run_clause(self.harness, clause)
        reason = self.known_failures.get(clause.id)
        if reason is not None:
            if result.outcome is Outcome.FAIL:
                pytest.xfail(f"{reason}: {result.detail}")
            pytest.fail(
                f"{clause.id} is listed in known_failures ({reason}) but gave "
                f"{result.outcome.value}: remove it from known_failures",
                pytrace=False,
            )
        if result.outcome is Outcome.FAIL:
            pytest.fail(
                f"{clause.id} ({'; '.join(clause.cites)}): {clause.title}\n{result.detail}",
                pytrace=False,
            )

    def test_known_failures_name_clauses(self) -> None:
        """Every entry of known_failures names a clause of the kit."""
        unknown = sorted(set(self.known_failures) - {clause.id for clause in CLAUSES})
        assert not unknown, f"known_failures names no clause: {unknown}"
