"""Real walks on **constructed** uneven ground: support recovery, ground metrics and naturalness.

No real capture of walking over steps or slopes can be had here (the ``evalkit data fetch``
entries are CMU takes on a level floor, and the machine has no internet access besides package
registries), so real walks are lifted onto constructed terrain with known truth
(:func:`evalkit.constructed.known_truth.lift_onto_terrain`: root raised, legs re-posed by two-bone IK)
and written as BVH files. Then each lifted clip is scored as a user would -- ``evalkit score DIR
--model default`` -- and the per-contact support evalkit estimates is compared with the
constructed truth.

    python bench/terrain_naturalness.py OUT            # bundled CMU walks 16_15, 07_05
    python bench/terrain_naturalness.py OUT --shared   # + ../shared Reallusion and Bandai Namco walks

``OUT/clips/*.bvh`` are the constructed clips (the name says source~terrain), ``OUT/scores.csv``
the score table, and the summary (naturalness per terrain, natural vs feet sinking 10 cm into
the treads, support error per contact) is printed and written to ``OUT/summary.csv``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "mocap"
SHARED_WALKS = ("cmu-reallusion/002_01.bvh", "cmu-reallusion/007_01.bvh", "cmu-reallusion/007_06.bvh",
                "bandai-namco-1/dataset-1_walk_normal_001.bvh", "bandai-namco-1/dataset-1_walk_old_001.bvh",
                "bandai-namco-1/dataset-1_walk_happy_001.bvh")

#: name -> (terrain maker, sink depth in metres or 0)
TERRAINS = {
    "stairs-up-12cm": (lambda m, kt: kt.step_terrain(m, 0.12, every=1, first=2), 0.0),
    "stairs-down-12cm": (lambda m, kt: kt.step_terrain(m, -0.12, every=1, first=2), 0.0),
    "steps-15cm-x2": (lambda m, kt: kt.step_terrain(m, 0.15, every=2, first=3), 0.0),
    "slope-up-8pc": (lambda m, kt: kt.slope_terrain(m, 0.08), 0.0),
    "slope-down-12pc": (lambda m, kt: kt.slope_terrain(m, -0.12), 0.0),
    "stairs-up-12cm-sink10": (lambda m, kt: kt.step_terrain(m, 0.12, every=1, first=2), 0.10),
    "steps-15cm-x2-sink10": (lambda m, kt: kt.step_terrain(m, 0.15, every=2, first=3), 0.10),
}


def _support_error(track, flat_track, lifted, fps: float) -> float:
    """Largest |estimated − constructed| support under a contact (contacts of at least 0.15 s:
    a clip's first or last contact can be a sliver), relative to the first such contact and to
    the source clip's own floor estimate, metres."""
    keep = [i for i, (_, a, b) in enumerate(lifted.contacts) if b - a + 1 >= 0.15 * fps]

    def under(t):
        sup = np.zeros((t.smooth.shape[0], 2)) if t.support is None else t.support
        out = []
        for side, a, b in (lifted.contacts[i] for i in keep):
            g = t.frame_to_grid[(a + b) // 2]
            xz = t.smooth[g, side][:, [0, 2]].mean(axis=0)
            out.append(t.levels[side].min() + float(t.ground_rise(xz)) + sup[g, side])
        return np.asarray(out)

    got = under(track) - under(flat_track)
    got = got - got[0]
    want = lifted.support[keep] - lifted.support[keep[0]]
    return float(np.abs(got - want).max())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--shared", action="store_true", help="also lift the ../shared walks (when present)")
    args = ap.parse_args()
    import pandas as pd

    from evalkit.data import SAMPLES_DIR
    from evalkit.features import foot_track
    from evalkit.features.ground import ground_metrics
    from evalkit.constructed import known_truth as kt
    from evalkit.motion import load_motion
    from evalkit.motion.formats.bvh import write_bvh

    sources = [SAMPLES_DIR / "cmu" / "16_15.amc", SAMPLES_DIR / "cmu" / "07_05-walk.amc"]
    if args.shared:
        if not SHARED.is_dir():
            sys.exit(f"--shared: {SHARED} not found")
        sources += [SHARED / w for w in SHARED_WALKS]
    clips = args.out / "clips"
    clips.mkdir(parents=True, exist_ok=True)
    rows = []
    for src in sources:
        m = load_motion(src)
        flat = foot_track(m)
        write_bvh(m, clips / f"{src.stem}~flat.bvh")
        rows.append({"clip": f"{src.stem}~flat", "source": src.stem, "terrain": "flat", "sink_m": 0.0})
        for name, (make, sink) in TERRAINS.items():
            lifted = kt.lift_onto_terrain(m, make(m, kt), sink=sink, sink_from=2)
            write_bvh(lifted.motion, clips / f"{src.stem}~{name}.bvh")
            t = foot_track(lifted.motion)
            g = ground_metrics(t)
            rows.append({"clip": f"{src.stem}~{name}", "source": src.stem, "terrain": name, "sink_m": sink,
                         "ik_error_m": lifted.ik_error,
                         "support_error_m": _support_error(t, flat, lifted, m.fps) if sink == 0 else np.nan,
                         "penetration_max_m": g["penetration_max"], "floating_mean_m": g["floating_mean"]})
    truth = pd.DataFrame(rows)
    scores_csv = args.out / "scores.csv"
    subprocess.run([sys.executable, "-m", "evalkit", "score", str(clips), "--model", "default", "--jobs", "2",
                    "--out", str(scores_csv)], check=True)
    scores = pd.read_csv(scores_csv)[["clip", "naturalness", "penetration_mean", "floating_mean"]]
    table = truth.merge(scores, on="clip", suffixes=("", "_score"))
    table.to_csv(args.out / "summary.csv", index=False)
    pd.set_option("display.width", 200)
    print("naturalness (shipped model) by source and terrain; CONSTRUCTED terrain under real walks:")
    print(table.pivot(index="source", columns="terrain", values="naturalness").round(3).to_string())
    by = table.groupby("terrain").agg(naturalness=("naturalness", "mean"),
                                      natural_share=("naturalness", lambda v: (v >= 0.5).mean()),
                                      support_error_max_m=("support_error_m", "max"),
                                      penetration_max_m=("penetration_max_m", "mean"))
    print("\nper terrain (mean over sources; natural_share = share scoring >= 0.5):")
    print(by.round(3).to_string())


if __name__ == "__main__":
    main()
