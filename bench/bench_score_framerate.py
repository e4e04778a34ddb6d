"""How much each metric moves when only the frame rate changes (120 → 60 → 30 fps).

Not a speed benchmark: it prints, per real CMU clip and metric, the largest relative change of
the 60 and 30 fps versions (slerp resampling of the 120 fps original) against 120 fps, and the
absolute change in brackets. Uses ../shared/data when present, else the bundled samples.

    .venv/bin/python bench/bench_score_framerate.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

METRICS = ["contact_frac", "skate_distance_per_s", "skate_distance_mean", "skate_speed_mean", "skate_fraction",
           "penetration_mean", "floating_mean", "skating_ratio", "skating_ratio_20fps", "zmp_outside_mean",
           "ballistic_error_mean"]


def main() -> None:
    from evalkit.data import SAMPLES_DIR
    from evalkit.features.score import score_motion
    from evalkit.motion import load_motion, resample

    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mocap" / "cmu-asfamc"
    names = [SAMPLES_DIR / "cmu" / n for n in ("16_15.amc", "07_05-walk.amc", "09_06-run.amc", "131_01.bvh",
                                                "131_03.bvh", "01_01.bvh")]
    if shared.exists():
        names += [shared / n for n in ("131_04-dance.amc", "135_06-martialArts.amc", "11_01.amc")]
    worst: dict[str, float] = {k: 0.0 for k in METRICS}
    print("clip".ljust(24) + "".join(k[:14].rjust(16) for k in METRICS))
    for p in names:
        m = load_motion(p)
        ref = score_motion(m)
        cells = []
        for k in METRICS:
            rel, ab = 0.0, 0.0
            for fps in (60.0, 30.0):
                v = score_motion(resample(m, fps))[k]
                d = abs(v - ref[k])
                if np.isfinite(d):
                    ab = max(ab, d)
                    rel = max(rel, d / max(abs(ref[k]), 1e-12))
            if p.stem != "09_06-run":
                worst[k] = max(worst[k], rel)
            cells.append(f"{rel * 100:5.0f}% ({ab:.3f})")
        print(p.stem[:24].ljust(24) + "".join(c.rjust(16) for c in cells))
    print("max except the 1.2 s run:".ljust(24) + "".join(f"{worst[k] * 100:15.0f}%" for k in METRICS))


if __name__ == "__main__":
    main()
