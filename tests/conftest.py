"""Shared fixtures: real motion capture (bundled CMU clips; ../shared data when present)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.data import SAMPLES_DIR

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data; skips the test (fails under CI) when it is absent."""
    p = SHARED_DATA.joinpath(*parts)
    if not p.exists():
        if IN_CI:
            pytest.fail(f"{p} is missing under CI; CI runs with ../shared beside the clone")
        pytest.skip(f"{p} not present (tests on the full shared data set need ../shared/data)")
    return p


def require_system(component: str, available: bool, reason: str) -> None:
    """Skip with a visible reason if a system component is missing; never skip under CI."""
    if not available:
        if IN_CI:
            pytest.fail(f"{component} is required under CI (.ci/run installs it): {reason}")
        pytest.skip(f"{component} not available: {reason}")


@pytest.fixture(scope="session")
def cmu_dir() -> Path:
    return SAMPLES_DIR / "cmu"


@pytest.fixture(scope="session")
def walk_motion(cmu_dir):
    from evalkit.motion import load_motion

    return load_motion(cmu_dir / "16_15.amc")


@pytest.fixture(scope="session")
def bvh_motion(cmu_dir):
    from evalkit.motion import load_motion

    return load_motion(cmu_dir / "131_01.bvh")
