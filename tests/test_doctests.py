"""The ``>>>`` examples in the public docstrings run as written (on the bundled data)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: every module of the three packages whose source holds an example
MODULES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts)
    for pkg in ("evalkit", "reports", "webtest") for p in (ROOT / pkg).rglob("*.py")
    if ">>> " in p.read_text(encoding="utf-8")
)


def test_the_main_entry_points_carry_examples():
    for name in ("evalkit.motion.formats.dispatch", "evalkit.features.score", "evalkit.models.discriminator",
                 "evalkit.distribution.frechet", "reports.table"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted > 0, f"{name}: no example found"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (run pytest --doctest-modules {name.replace('.', '/')}.py)"
