"""Stored scores of the bundled capture, for checking that speed work changes no output.

``python tests/features/score_golden.py`` (from the repository root, PYTHONPATH=.) rewrites
``tests/features/data/score_golden.json``; it was written once from the scoring code as it stood
before its speed work, and ``test_score_golden.py`` compares every
later version against it. Rewrite it only for a deliberate change of a metric's definition, and
say so in the commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evalkit.data import SAMPLES_DIR

GOLDEN = Path(__file__).parent / "data" / "score_golden.json"
CMU = SAMPLES_DIR / "cmu"
CLIPS = ("01_01.bvh", "131_01.bvh", "131_03.bvh", "07_05-walk.amc", "09_06-run.amc",
         "131_04-dance.amc", "135_06-martialArts.amc", "16_15.amc")
WAV = SAMPLES_DIR / "speech" / "LJ001-0001.wav"
#: Frames of the traces table stored in full (the rest is checked through column sums).
TRACE_FRAMES = (0, 1, 5, 50, 150, -1)


def cases():
    """``(case name, motion)``: every bundled clip in full and its first 200 frames (where
    the end-frame pops are), plus its frames 100–300 resampled by a step of 2."""
    from evalkit.motion import load_motion

    for c in CLIPS:
        m = load_motion(CMU / c)
        yield c, m
        yield f"{c}[:200]", m[:200]
        yield f"{c}[100:500:2]", m[100:500:2]


def _num(x) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


def compute() -> dict:
    """Rows and trace summaries of every case, scored with a reference of all bundled clips and
    the onsets of one bundled utterance."""
    from evalkit.features.beats import BeatConfig, audio_onsets, read_wav
    from evalkit.features.reference import reference_from_motions
    from evalkit.features.score import analyse, score_analysis, traces_table
    from evalkit.motion import load_motion

    ref = reference_from_motions([load_motion(CMU / c) for c in CLIPS])
    x, rate = read_wav(WAV)
    onsets = audio_onsets(x, rate, BeatConfig())
    out = {}
    for name, m in cases():
        an = analyse(m)
        row = score_analysis(an, ref, onsets)
        tr = traces_table(an)
        traces = {}
        for col in tr.columns:
            v = tr[col].to_numpy(dtype=float)
            traces[col] = {
                "nansum": _num(np.nansum(v)),
                "nanabs": _num(np.nansum(np.abs(v))),
                "nans": int(np.isnan(v).sum()),
                "at": [_num(v[i]) if -len(v) <= i < len(v) else None for i in TRACE_FRAMES],
            }
        out[name] = {
            "row": {k: _num(v) for k, v in row.items()},
            "positions_sum": _num(an.positions.sum()),
            "positions_abs": _num(np.abs(an.positions).sum()),
            "traces": traces,
        }
    return out


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(compute(), indent=0, sort_keys=True))
    print(f"wrote {GOLDEN}")
