"""The discriminator without the artifact check, with it (the default: any excess lowers the
score), and with a natural range (``artifact_quantile``), on the same grouped splits.

Not a speed benchmark: an evaluation of model options against each other, on identical
examples and folds (the default evaluation configuration, ``EvalConfig()``, with 3 folds to keep
the run under an hour on 2 cores). Prints ROC AUC per corruption type for the types seen in
training ("all": pooled) and for each type held out of training (leave-one-corruption-type-out;
"mean": their mean), at severity 0.5; then, per variant, accuracy and MCC pooled over the seen types
and the naturalness of the natural test segments (unseen subjects).
Needs the real capture in ../shared/data/mocap (falls back to the bundled CMU clips only).

    .venv/bin/python bench/compare_artifact_check.py [--folds 3] [--out DIR] [--variants no_check,default,natural_range]
        [--quantiles 0.5,0.8] [--ranges 0.97,0.99] [--held-out transplant,foot_skate]

``--quantiles`` adds a variant per ``artifact_quantile`` value and ``--ranges`` one per
``artifact_range`` value (the sweeps in docs/discriminator.md); ``--held-out`` restricts the
leave-one-type-out fits to those types.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


#: model options compared: no artifact check, the default (the check, any excess beyond the
#: natural windows' 98th percentile lowering the score) and the check lowering it only beyond
#: 70 % of the natural training clips' excess
VARIANTS = {"no_check": {"artifact_check": False}, "default": {}, "natural_range": {"artifact_quantile": 0.7}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="also write metrics_<variant>.csv here")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated subset of " + ", ".join(VARIANTS))
    ap.add_argument("--quantiles", default="", help="comma-separated artifact_quantile values, a variant each")
    ap.add_argument("--ranges", default="", help="comma-separated artifact_range values, a variant each")
    ap.add_argument("--held-out", default="", help="comma-separated corruption types to hold out (default: all)")
    args = ap.parse_args()
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    variants = {v: VARIANTS[v] for v in names}
    try:
        for q in (float(x) for x in args.quantiles.split(",") if x.strip()):
            variants[f"artifact_quantile={q:g}"] = {"artifact_quantile": q}
    except ValueError:
        ap.error(f"--quantiles must be numbers, got {args.quantiles!r}")
    try:
        for q in (float(x) for x in args.ranges.split(",") if x.strip()):
            variants[f"artifact_range={q:g}"] = {"artifact_range": q}
    except ValueError:
        ap.error(f"--ranges must be numbers, got {args.ranges!r}")
    held_out = tuple(t.strip() for t in args.held_out.split(",") if t.strip())
    from evalkit.models.corruptions import CORRUPTION_TYPES

    if set(held_out) - set(CORRUPTION_TYPES):
        ap.error(f"unknown corruption type(s) in --held-out; choose from {', '.join(CORRUPTION_TYPES)}")

    import pandas as pd

    from evalkit.data import SAMPLES_DIR
    from evalkit.models.dataset import load_natural
    from evalkit.models.discriminator import NaturalnessDiscriminator
    from evalkit.models.evaluate import DISCRIMINATOR, EvalConfig, cross_validate, metrics_table, prepare_data

    paths = [SAMPLES_DIR / "cmu"]
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mocap"
    if shared.exists():
        paths.append(shared)
    t0 = time.perf_counter()
    clips = load_natural(paths, progress=True)
    data = prepare_data(clips, EvalConfig(), baselines=[], progress=True)
    cols, extra = {}, {}
    from dataclasses import replace

    base = EvalConfig()
    train = replace(base.train, types=held_out) if held_out else base.train
    for name, params in variants.items():
        cfg = EvalConfig(n_splits=args.folds, model=NaturalnessDiscriminator(**params), train=train)
        scores = cross_validate(data, cfg, baselines=[], progress=True)
        m = metrics_table(scores)
        m = m[m["method"] == DISCRIMINATOR]
        pooled = m[(m["setting"] == "seen") & (m["corruption"] == "all")].iloc[0]
        nat = scores[(scores["method"] == DISCRIMINATOR) & (scores["setting"] == "seen")
                     & (scores["clip_natural"] == 1)]["score"]
        extra[name] = {"seen pooled accuracy": pooled["accuracy"], "seen pooled MCC": pooled["mcc"],
                       "natural segments: mean naturalness": nat.mean(),
                       "natural segments: share > 0.5": (nat > 0.5).mean()}
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            m.to_csv(args.out / f"metrics_{name}.csv", index=False)
        cols[f"{name} seen"] = m[m["setting"] == "seen"].set_index("corruption")["roc_auc"]
        held = m[m["setting"] == "loco:" + m["corruption"]].set_index("corruption")["roc_auc"]
        cols[f"{name} held out"] = pd.concat([held, pd.Series({"mean": held.mean()})])
    table = pd.DataFrame(cols)
    print(f"{len(clips)} natural clips, {args.folds} grouped folds, severity 0.5, "
          f"{time.perf_counter() - t0:.0f} s")
    print(table.round(3).to_string())
    print(pd.DataFrame(extra).round(3).to_string())


if __name__ == "__main__":
    main()
