"""Check the built wheel as a user gets it: run by ``make check-wheel`` in a fresh venv.

Usage: ``python -I .ci/check_wheel.py DIST_DIR {bare|extras}``, from a folder outside the source
tree (``-I`` keeps the current folder and PYTHON* variables off ``sys.path``), so every import
below is of the installed wheel.

- ``bare``: the wheel installed without extras. Every public module imports, except those that
  need an extra, which must say which one in their ``ImportError`` (and ``BROUGHT_BY_THE_USER``).
- ``extras``: the wheel installed with every extra (and pytest, which the conformance kit's
  pytest base class needs). Every public module imports.

Both check that the wheel and an sdist are in DIST_DIR, that the wheel ships ``py.typed``, and
that the package is imported from the venv, not from the source tree. A public module is one
whose dotted path has no part starting with ``_``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import sysconfig
import zipfile
from pathlib import Path

PACKAGE = "strands_middleware"

# Public modules that import a package no extra installs, because the user brings it: the
# conformance kit's pytest base class is for a pytest suite. The Makefile installs it with the
# extras.
BROUGHT_BY_THE_USER = {f"{PACKAGE}.conformance.suite": "pytest"}


def fail(message: str) -> None:
    print(f"check-wheel: {message}", file=sys.stderr)
    raise SystemExit(1)


def main(dist: Path, mode: str) -> None:
    wheels = sorted(dist.glob("strands_middleware-*.whl"))
    sdists = sorted(dist.glob("strands_middleware-*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        fail(f"expected one wheel and one sdist in {dist}, found {wheels + sdists}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        if f"{PACKAGE}/py.typed" not in wheel.namelist():
            fail(f"{wheels[0].name} has no {PACKAGE}/py.typed: type checkers would ignore it")
    package = importlib.import_module(PACKAGE)
    location = Path(package.__file__ or "").resolve()
    site_packages = Path(sysconfig.get_paths()["purelib"]).resolve()
    if site_packages not in location.parents:
        fail(f"{PACKAGE} was imported from {location}, not from the venv's {site_packages}")
    names = [PACKAGE] + [
        info.name
        for info in pkgutil.walk_packages(package.__path__, f"{PACKAGE}.")
        if not any(part.startswith("_") for part in info.name.split("."))
    ]
    needs_extra: list[str] = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as error:
            brought = BROUGHT_BY_THE_USER.get(name)
            if mode == "bare" and (
                "strands-middleware[" in str(error) or (brought and error.name == brought)
            ):
                needs_extra.append(name)
                continue
            fail(f"importing {name} from the installed wheel failed: {error!r}")
    imported = len(names) - len(needs_extra)
    print(
        f"check-wheel ({mode}): {wheels[0].name} and {sdists[0].name}; py.typed shipped; "
        f"{imported} of {len(names)} public modules imported from {site_packages}"
        + (f"; {len(needs_extra)} need an extra (or pytest)" if needs_extra else "")
    )


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("bare", "extras"):
        fail("usage: check_wheel.py DIST_DIR {bare|extras}")
    main(Path(sys.argv[1]), sys.argv[2])
