"""Stored discriminator window features of the bundled capture (flat floors), for checking that
changes elsewhere (the per-contact ground support, say) leave them unchanged.

``python tests/features/window_golden.py`` (from the repository root, PYTHONPATH=.) rewrites
``tests/features/data/window_golden.json``; rewrite it only when the window features change on
purpose (and retrain the shipped model with them); ``test_ground_terrain.py`` compares the code with it.
Per clip and feature column: the sum, the sum of absolute values and the NaN count over windows
and the value of the middle window (the pose-sample columns as one block, without it).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evalkit.data import SAMPLES_DIR

GOLDEN = Path(__file__).parent / "data" / "window_golden.json"
CMU = SAMPLES_DIR / "cmu"
CLIPS = ("01_01.bvh", "131_01.bvh", "07_05-walk.amc", "09_06-run.amc", "131_04-dance.amc",
         "135_06-martialArts.amc", "16_15.amc")


def _num(x) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


def compute() -> dict:
    """``{clip: {column: {"sum", "abs", "nans", "at"}}}`` of the window feature table."""
    from evalkit.models.window_features import window_features
    from evalkit.motion import load_motion

    out = {}
    for c in CLIPS:
        table = window_features(load_motion(CMU / c))
        cols = {}
        pose = [c_ for c_ in table.columns if c_.startswith("pose_")]
        if pose:  # the pose samples as one block (hundreds of columns)
            v = table[pose].to_numpy(dtype=float)
            cols["pose_*"] = {"sum": _num(np.nansum(v)), "abs": _num(np.nansum(np.abs(v))),
                              "nans": int(np.isnan(v).sum())}
        for col in table.columns:
            if table[col].dtype == object or col.startswith("pose_"):
                continue
            v = table[col].to_numpy(dtype=float)
            cols[col] = {"sum": _num(np.nansum(v)), "abs": _num(np.nansum(np.abs(v))),
                         "nans": int(np.isnan(v).sum()), "mid": _num(v[len(v) // 2])}
        out[c] = cols
    return out


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(compute(), separators=(",", ":"), sort_keys=True))
    print(f"wrote {GOLDEN}")
