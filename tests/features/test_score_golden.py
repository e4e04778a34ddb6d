"""Scoring gives the same numbers as the code before the speed work (stored values).

The stored file was computed from the bundled CMU capture by ``tests/features/score_golden.py``
before any optimisation; every metric, the world positions and the per-frame traces must match
to 1e-9 relative (floating-point reassociation only).
"""

from __future__ import annotations

import json
import math

import pytest

from score_golden import GOLDEN, compute


@pytest.fixture(scope="module")
def fresh():
    return compute()


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def test_every_case_and_metric_matches_the_stored_values(fresh):
    stored = json.loads(GOLDEN.read_text())
    assert set(fresh) == set(stored)
    bad = []
    for case, want in stored.items():
        got = fresh[case]
        assert set(got["row"]) == set(want["row"]), case
        for k, v in want["row"].items():
            if not _close(got["row"][k], v):
                bad.append(f"{case} {k}: {got['row'][k]!r} != stored {v!r}")
        for k in ("positions_sum", "positions_abs"):
            if not _close(got[k], want[k]):
                bad.append(f"{case} {k}: {got[k]!r} != stored {want[k]!r}")
        for col, w in want["traces"].items():
            g = got["traces"][col]
            if g["nans"] != w["nans"]:
                bad.append(f"{case} traces {col}: {g['nans']} NaNs != stored {w['nans']}")
            for k in ("nansum", "nanabs"):
                if not _close(g[k], w[k]):
                    bad.append(f"{case} traces {col} {k}: {g[k]!r} != stored {w[k]!r}")
            for i, (a, b) in enumerate(zip(g["at"], w["at"])):
                if not _close(a, b):
                    bad.append(f"{case} traces {col} at #{i}: {a!r} != stored {b!r}")
    assert not bad, "\n".join(bad[:40])
