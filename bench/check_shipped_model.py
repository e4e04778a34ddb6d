"""A trained naturalness model on capture from rigs it never saw: natural clips and their corruptions.

Not a speed benchmark: the check behind the README's figures for the *shipped* model (trained
on the bundled CMU clips only), which the cross-validation cannot give, because the shipped
model's training set is fixed. For each folder of unseen capture it prints, per model:

* the naturalness of the unedited clips (mean, median, share > 0.5) and the lowest ones;
* ROC AUC of unedited clips against the same clips corrupted at severity 0.5, per corruption
  type (one corrupted version per clip and type, seeded; ``transition`` and ``transplant`` take
  their material from another clip of the folder on the same skeleton, as in training).

Whole clips are scored as ``evalkit score --model`` scores them. Needs ../shared/data (the
Bandai Namco capture may not be shipped, so it is read from there).

    .venv/bin/python bench/check_shipped_model.py [--models default,other.joblib]
        [--dirs ../shared/data/mocap/bandai-namco-1 ../shared/data/gesture/bandai-namco] [--severity 0.5]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DEFAULT_DIRS = (SHARED / "mocap" / "bandai-namco-1", SHARED / "gesture" / "bandai-namco")


def check(models: dict, folder: Path, severity: float = 0.5, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Score a folder's clips and their corruptions with each model.

    Returns ``(scores, summary)``: one row per (model, clip, corruption) with ``naturalness``
    (``corruption`` is ``"none"`` for the unedited clip), and one row per (model, corruption)
    with the ROC AUC of unedited vs corrupted clips (``"none"``: mean, median and share > 0.5 of
    the unedited clips).
    """
    from sklearn.metrics import roc_auc_score

    from evalkit.models.corruptions import CORRUPTION_TYPES, corrupt
    from evalkit.models.dataset import load_natural
    from evalkit.models.discriminator import score_naturalness
    from evalkit.errors import InputError

    clips = [c.motion for c in load_natural([folder], progress=False)]
    rng = np.random.default_rng(seed)
    rows = []
    for i, m in enumerate(clips):
        versions = [("none", m)]
        for k, kind in enumerate(CORRUPTION_TYPES):
            donor = None
            if kind in ("transition", "transplant"):
                same = [c for j, c in enumerate(clips) if j != i and c.skeleton.names == m.skeleton.names]
                donor = same[int(rng.integers(len(same)))] if same else None
            try:
                versions.append((kind, corrupt(m, kind, severity, seed=seed * 1000 + 10 * i + k, donor=donor).motion))
            except InputError:  # a clip too short for this corruption
                continue
        for name, model in models.items():
            for kind, v in versions:
                rows.append({"model": name, "clip": m.name, "corruption": kind,
                             "naturalness": score_naturalness(model, v).naturalness})
    scores = pd.DataFrame(rows)
    out = []
    for name, s in scores.groupby("model", sort=False):
        nat = s[s["corruption"] == "none"]["naturalness"]
        out.append({"model": name, "corruption": "none", "n": len(nat), "mean": nat.mean(),
                    "median": nat.median(), "share_gt_0.5": (nat > 0.5).mean()})
        for kind, bad in s[s["corruption"] != "none"].groupby("corruption"):
            y = np.r_[np.zeros(len(nat)), np.ones(len(bad))]
            out.append({"model": name, "corruption": kind, "n": len(bad),
                        "roc_auc": roc_auc_score(y, -np.r_[nat.to_numpy(), bad["naturalness"].to_numpy()])})
        bad = s[s["corruption"] != "none"]["naturalness"]
        y = np.r_[np.zeros(len(nat)), np.ones(len(bad))]
        out.append({"model": name, "corruption": "all", "n": len(bad),
                    "roc_auc": roc_auc_score(y, -np.r_[nat.to_numpy(), bad.to_numpy()])})
    return scores, pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="default", help="comma-separated model files ('default': the shipped one)")
    ap.add_argument("--dirs", nargs="+", type=Path, default=list(DEFAULT_DIRS), help="folders of unseen capture")
    ap.add_argument("--severity", type=float, default=0.5)
    ap.add_argument("--out", type=Path, default=None, help="also write scores_<folder>.csv here")
    ap.add_argument("--lowest", type=int, default=3, help="unedited clips to list with the lowest naturalness")
    args = ap.parse_args()
    if args.lowest < 0:
        ap.error(f"--lowest must be 0 or more, got {args.lowest}")

    from evalkit.errors import EvalkitError
    from evalkit.models.training import load_model

    try:
        models = {m: load_model(m)[0] for m in (s.strip() for s in args.models.split(",")) if m}
    except EvalkitError as e:
        ap.error(str(e))
    for d in args.dirs:
        if not d.is_dir():
            ap.error(f"{d} is not a folder (the Bandai Namco capture is read from ../shared/data)")
        scores, summary = check(models, d, args.severity)
        print(f"\n== {d} ==")
        nat = summary[summary["corruption"] == "none"].set_index("model")[["n", "mean", "median", "share_gt_0.5"]]
        print("unedited clips:\n" + nat.round(3).to_string())
        plain = scores[scores["corruption"] == "none"]
        for name, s in plain.groupby("model", sort=False):
            low = s.nsmallest(args.lowest, "naturalness")
            print(f"lowest ({name}): " + ", ".join(f"{c} {v:.2f}" for c, v in zip(low["clip"], low["naturalness"])))
        auc = summary[summary["corruption"] != "none"].pivot(index="corruption", columns="model", values="roc_auc")
        print("ROC AUC, unedited vs corrupted at severity %g:\n%s" % (args.severity, auc[list(models)].round(3).to_string()))
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            scores.to_csv(args.out / f"scores_{d.name}.csv", index=False)


if __name__ == "__main__":
    main()
