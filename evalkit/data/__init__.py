"""Bundled sample data (real CMU motion capture, public-domain LJ Speech audio).

See ``evalkit/data/samples/README.md`` for sources, licences and the CMU acknowledgement.
"""

from __future__ import annotations

from pathlib import Path

SAMPLES_DIR = Path(__file__).parent / "samples"


def sample_path(*parts: str) -> Path:
    """Path of a bundled sample, e.g. ``sample_path("cmu", "16_15.amc")``."""
    p = SAMPLES_DIR.joinpath(*parts)
    if not p.exists():
        from evalkit.errors import InputError

        raise InputError(f"no bundled sample {'/'.join(parts)}; see {SAMPLES_DIR}")
    return p


def cmu_clips() -> list[Path]:
    """All bundled CMU motion files (BVH and AMC)."""
    d = SAMPLES_DIR / "cmu"
    return sorted(list(d.glob("*.bvh")) + list(d.glob("*.amc")))


def speech_files() -> list[Path]:
    """Bundled speech recordings (WAV)."""
    return sorted((SAMPLES_DIR / "speech").glob("*.wav"))
