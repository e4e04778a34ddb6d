"""How much each metric moves when only the frame rate changes (120 → 60 → 30 fps).

Not a speed benchmark: it prints, per real CMU clip and metric, the largest relative change of
the 60 and 30 fps versions (slerp resampling of the 120 fps original) against 120 fps, and the
absolute change in brackets, then the verdict of the frame-rate acceptance rule per metric:
less than 10 % of the value, or an absolute change below the metric's floor (0.01 for shares,
1 mm for lengths, 1 mm/s for speeds). Uses ../shared/data when present, else the bundled samples.

    .venv/bin/python bench/bench_score_framerate.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: metric -> absolute floor of the acceptance rule (units of the metric)
ACCEPTANCE = {
    "contact_frac": 0.01, "skate_fraction": 0.01, "skate_speed_mean": 0.001, "skate_distance_mean": 0.001,
    "skate_distance_max": 0.001, "skate_distance_per_s": 0.001, "skating_ratio_20fps": 0.01,
    "penetration_mean": 0.001, "penetration_max": 0.001, "penetration_frac": 0.01,
    "floating_mean": 0.001, "floating_max": 0.001, "floating_frac": 0.01,
}
#: printed for information: the literal clip-rate skating ratio (frame-rate dependent by its
#: published definition, see docs/metrics.md) and the physics metrics (not skate/penetration)
INFO = ["skating_ratio", "zmp_outside_mean", "ballistic_error_mean"]


def main() -> None:
    from evalkit.data import SAMPLES_DIR
    from evalkit.features.score import score_motion
    from evalkit.motion import load_motion, resample

    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mocap" / "cmu-asfamc"
    names = [SAMPLES_DIR / "cmu" / n for n in ("16_15.amc", "07_05-walk.amc", "09_06-run.amc", "131_01.bvh",
                                                "131_03.bvh", "01_01.bvh")]
    if shared.exists():
        names += [shared / n for n in ("131_04-dance.amc", "135_06-martialArts.amc", "11_01.amc")]
    metrics = list(ACCEPTANCE) + INFO
    worst_rel = {k: 0.0 for k in metrics}
    worst_abs = {k: 0.0 for k in metrics}
    failures: dict[str, list[str]] = {k: [] for k in ACCEPTANCE}
    for p in names:
        m = load_motion(p)
        ref = score_motion(m)
        versions = [score_motion(resample(m, fps)) for fps in (60.0, 30.0)]
        for k in metrics:
            ab = max(abs(v[k] - ref[k]) for v in versions if np.isfinite(v[k] - ref[k])) if np.isfinite(ref[k]) else 0.0
            rel = ab / max(abs(ref[k]), 1e-12)
            worst_rel[k] = max(worst_rel[k], rel)
            worst_abs[k] = max(worst_abs[k], ab)
            if k in ACCEPTANCE and rel >= 0.10 and ab >= ACCEPTANCE[k]:
                failures[k].append(f"{p.stem} {rel * 100:.0f}% ({ab:.4f})")
    print(f"{len(names)} real CMU clips, 120 fps vs slerp-resampled 60 and 30 fps versions")
    print("metric".ljust(24) + "max rel".rjust(10) + "max abs".rjust(10) + "  verdict (10 % or abs floor)")
    for k in metrics:
        verdict = ("ok" if not failures[k] else "FAIL: " + "; ".join(failures[k])) if k in ACCEPTANCE else "(info)"
        print(k.ljust(24) + f"{worst_rel[k] * 100:9.0f}%" + f"{worst_abs[k]:10.4f}  {verdict}")


if __name__ == "__main__":
    main()
