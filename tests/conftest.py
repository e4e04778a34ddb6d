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


class MissingShared:
    """A parametrize value standing for "this glob of ../shared/data found nothing"."""

    def __init__(self, patterns: tuple[str, ...]):
        self.patterns = patterns

    def __repr__(self) -> str:
        return f"no files match {', '.join(self.patterns)} under {SHARED_DATA}"


def shared_glob(*patterns: str) -> list:
    """Sorted files under ../shared/data matching ``patterns``, for ``parametrize``. When none
    match, one parameter (:class:`MissingShared`) that :func:`shared_param` turns into a failure
    under CI and a visible skip elsewhere: never an empty, silently skipped parametrize."""
    found = sorted({p for pat in patterns for p in SHARED_DATA.glob(pat)})
    return found or [pytest.param(MissingShared(patterns), id="no-shared-data")]


def shared_param(value):
    """``value`` unless it is :class:`MissingShared` (see :func:`shared_glob`)."""
    if isinstance(value, MissingShared):
        if IN_CI:
            pytest.fail(f"{value} under CI; CI runs with ../shared beside the clone")
        pytest.skip(f"{value} (tests on the full shared data set need ../shared/data)")
    return value


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
