"""Validity study of the distribution metrics on real capture held out of the extractor's training.

The shipped FGD extractor was trained on the bundled CMU clips only; this study uses the real
capture in ../shared/data/mocap that is not among them (Bandai Namco walks/runs in styles,
Reallusion retargets of CMU subjects 02/07, CMU 11_01 and 131_02; files whose bytes match a
training file are dropped). The pool is split (seeded) into a reference half R and a test half T.

1. Degradations of T (corruptions of evalkit.models.corruptions: jitter, foot skate, time warp,
   freezing) at severities 0.25, 0.5, 0.75, 1.0, each clip with its own seed: every distance of T
   against R per level, with bootstrap intervals; is it monotonic?
2. Real vs real: unedited T against R, and the null distribution of each distance between two
   random halves of the pool (100 splits): is unedited T inside the null's 95 % range?
3. Motion graphs: SMG and BPMG transitions synthesised from T's Bandai clips (one rig), against
   R, beside the unedited sources and the sources corrupted at severity 0.5 (mixed types).
4. Across the 17 degradation conditions (one reference): Spearman correlations of each distance with the shipped discriminator's
   mean naturalness and with the means of evalkit score's per-clip metrics.

    python bench/study_distribution_validity.py --out docs/distribution-validity

Writes ``levels.csv``, ``null.csv``, ``graphs.csv``, ``correlations.csv`` and ``summary.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "mocap"
METRICS = ("fgd", "fgd_raw", "fid_k", "fid_g", "pfc")
KINDS = {"jitter": {"mode": "clip"}, "foot_skate": {}, "time_warp": {}, "freeze": {}}
LEVELS = (0.25, 0.5, 0.75, 1.0)
#: Similarity threshold of both graphs (RMS metres): at the default 0.3 the BPMG of these Bandai clips
#: reaches 1 transition of 56 requested, at 0.5 it reaches 41.
GRAPH_THRESHOLD = 0.5


def held_out_files(shared: Path) -> list[Path]:
    from evalkit.distribution.embedding import _file_hash, load_extractor

    trained = {d["sha256"] for d in load_extractor().card["protocol"]["data"]}
    trained_names = {d["name"].split(".")[0].split("-")[0] for d in load_extractor().card["protocol"]["data"]}
    files = sorted(f for f in (shared / "bandai-namco-1").glob("*.bvh") if "_normal_" not in f.name)
    files += sorted((shared / "cmu-reallusion").glob("*.bvh"))
    files += [f for f in sorted((shared / "cmu-asfamc").glob("*.amc")) + sorted((shared / "cmu-bvh").glob("*.bvh"))]
    keep = []
    for f in files:
        if _file_hash(f) in trained or (f.parent.name.startswith("cmu-") and f.stem.split("-")[0] in trained_names):
            continue
        keep.append(f)
    return keep


def _md(df, index: bool = False) -> str:
    """A pandas DataFrame as a Markdown table (no tabulate dependency)."""
    d = df.reset_index() if index else df
    fmt = (lambda v: f"{v:.4g}" if isinstance(v, (float, np.floating)) else str(v))
    head = "| " + " | ".join(map(str, d.columns)) + " |"
    sep = "|" + "|".join("---" for _ in d.columns) + "|"
    return "\n".join([head, sep] + ["| " + " | ".join(fmt(v) for v in r) + " |" for r in d.itertuples(index=False)])


def naturalness(motions) -> float:
    from evalkit.errors import EvalkitError
    from evalkit.models.discriminator import score_motion
    from evalkit.models.training import load_model

    model, _ = load_model(None)
    vals = []
    for m in motions:
        try:
            vals.append(score_motion(model, m).naturalness)
        except EvalkitError:
            pass
    return float(np.mean(vals)) if vals else float("nan")


def kinetic_bug_effect(R, T, jittered, fps: float) -> dict:
    """FID_k and Div_k of T (and of jittered T) against R, kinetic features computed with the
    public code's ``p[t] - p[t-1] / dt`` (restated loop in bench_kinetic.py) and fixed."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_kinetic import kinetic_features_loop

    from evalkit.distribution.diversity import diversity, reference_scaler
    from evalkit.distribution.frechet import frechet_from_features
    from evalkit.distribution.windows import canonical_positions

    def feats(ms, bug):
        out = []
        for m in ms:
            pos, _, _ = canonical_positions(m, fps)
            out.append(kinetic_features_loop(pos, fps, precedence_bug=bug).ravel())
        return np.array(out)

    res = {}
    for bug in (False, True):
        r, t, j = feats(R, bug), feats(T, bug), feats(jittered, bug)
        mean, scale = reference_scaler(r)
        z = lambda x: (x - mean) / scale  # noqa: E731
        key = "public code (bug)" if bug else "evalkit (fixed)"
        res[key] = {"fid_k unedited": frechet_from_features(z(t), z(r)),
                    "fid_k jitter@0.5": frechet_from_features(z(j), z(r)),
                    "div_k unedited": diversity(z(t)), "div_k reference": diversity(z(r)),
                    "energy_expenditure median m/s^2": float(np.median(t.reshape(len(t), -1, 3)[:, :, 2]))}
    return res


def _loco(ms):
    return [m for m in ms if m.name.startswith("bandai") and any(w in m.name for w in ("_walk_", "_run_", "_dash_"))]


def graph_study(R, T, opts, n_boot: int, seed: int, score_cols, out: Path):
    """SMG and BPMG transitions between T's Bandai locomotion clips, the unedited sources and the
    sources corrupted at severity 0.5 (each of the four types), all against R's Bandai
    locomotion, every set cut to the same number of clips (seeded) so that set size does not
    decide the order."""
    import pandas as pd

    from evalkit.distribution.extract import features_of_motions
    from evalkit.distribution.metrics import ClipSet, set_metrics
    from evalkit.models.corruptions import corrupt
    from evalkit.synth import build_bpmg, build_smg, synthesize_transition

    ref_ms = _loco(R)
    loco = _loco(T)[:8]
    ref = ClipSet(features_of_motions(ref_ms, "ref", opts))
    names = [m.name.split("/")[-1] for m in loco]
    named = [m.with_(name=n) for m, n in zip(loco, names)]
    smg = build_smg(named, fps=30.0, threshold=GRAPH_THRESHOLD)
    bpmg = build_bpmg(smg.clipset, fps=30.0, threshold=GRAPH_THRESHOLD)
    outs: dict[str, list] = {"SMG": [], "BPMG": []}
    failed = {"SMG": 0, "BPMG": 0}
    for gname, g in (("SMG", smg), ("BPMG", bpmg)):
        for x in names:
            for y in names:
                if x == y:
                    continue
                for t in (0.5, 1.0, 1.5):
                    try:
                        mo, _ = synthesize_transition(g, x, y, request_time_s=t, skate=False)
                        outs[gname].append(mo)
                        break
                    except Exception:  # noqa: BLE001 - a pair without a transition from there
                        failed[gname] += 1
    kinds = list(KINDS)
    corrupted = [corrupt(m, k, 0.5, seed=i, **KINDS[k]).motion for i, m in enumerate(loco) for k in kinds]
    sets = {"unedited sources": loco, "SMG": outs["SMG"], "BPMG": outs["BPMG"],
            "corrupted sources (0.5, each type)": corrupted}
    n = min(len(v) for v in sets.values() if len(v) >= 2)
    rng = np.random.default_rng(seed)
    rows = []
    for name, ms in sets.items():
        if len(ms) < 2:
            print(f"{name}: {len(ms)} clip(s), left out", flush=True)
            continue
        pick = sorted(rng.choice(len(ms), size=n, replace=False)) if len(ms) > n else range(len(ms))
        ms = [ms[i] for i in pick]
        r = set_metrics(ClipSet(features_of_motions(ms, name, opts)), ref, n_boot, seed, score_cols)
        rows.append({"system": name, "n_clips": len(ms), "n_available": len(sets[name]),
                     **{k: r[k] for k in r if not k.startswith("mean_")}, "naturalness": naturalness(ms)})
        print(f"{name:36s} n={len(ms)} " + " ".join(f"{k}={r[k]:.4g}" for k in METRICS), flush=True)
    print(f"transitions without a path (request times 0.5/1.0/1.5 s tried): {failed}; reference {len(ref_ms)} "
          f"Bandai locomotion clips", flush=True)
    graphs = pd.DataFrame(rows)
    graphs.to_csv(out / "graphs.csv", index=False)
    return graphs


def write_summary(out, files, R, T, ext, levels, mono, inside, graphs, bug, seconds) -> None:
    import pandas as pd
    from scipy.stats import spearmanr

    # correlations across conditions
    allrows = levels  # one reference for all of them (the graph part has another)
    others = ["naturalness"] + [c for c in levels.columns if c.startswith("mean_") and not c.endswith(("_low", "_high"))]
    corr = []
    for m in METRICS:
        for o in others:
            if o not in allrows:
                continue
            x, y = allrows[m].to_numpy(float), allrows[o].to_numpy(float)
            ok = np.isfinite(x) & np.isfinite(y)
            if ok.sum() >= 5 and np.ptp(y[ok]) > 0:
                rho, p = spearmanr(x[ok], y[ok])
                corr.append({"distance": m, "against": o, "spearman_rho": rho, "p": p, "n_conditions": int(ok.sum())})
    corr = pd.DataFrame(corr)
    corr.to_csv(out / "correlations.csv", index=False)


    summary = {"kinetic_precedence_bug": bug, "held_out_files": [str(f.relative_to(SHARED)) for f in files], "reference": len(R), "test": len(T),
               "extractor_hash": ext.extractor_hash, "real_vs_real": inside, "seconds": seconds}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    lines = ["# Validity study (generated by bench/study_distribution_validity.py)", "",
             f"{len(files)} held-out clips, reference {len(R)}, test {len(T)}; extractor {ext.extractor_hash}.", "",
             "## Monotonic growth with degradation (level 0 = unedited)", "", _md(mono), "",
             "## Real vs real inside its null (100 random half splits of the pool)", "",
             _md(pd.DataFrame(inside).T, index=True), "", "## Motion graphs", "",
             _md(graphs[["system", "n_clips"] + [m for m in METRICS] + ["naturalness"]])
             if len(graphs) else "(no graph outputs)", "",
             "## FID_k / Div_k with the public code's precedence bug", "", json.dumps(bug, indent=1), "",
             "## Spearman correlations across the 17 conditions of the degradation part (one reference)", "",
             _md(corr.pivot(index="against", columns="distance", values="spearman_rho").round(2), index=True)
             if len(corr) else "", ""]
    (out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="docs/distribution-validity")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--null-splits", type=int, default=100)
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--summary-only", action="store_true", help="rewrite summary.md from the files in --out")
    ap.add_argument("--graphs-only", action="store_true",
                    help="rerun the motion-graph part only; the other parts are read from --out")
    a = ap.parse_args()

    import pandas as pd

    from evalkit.distribution.embedding import load_extractor
    from evalkit.distribution.extract import ExtractOptions, features_of_motions
    from evalkit.distribution.metrics import ClipSet, half_split, set_metrics
    from evalkit.models.corruptions import corrupt
    from evalkit.motion import load_motion

    t0 = time.time()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    files = held_out_files(SHARED)
    motions = [load_motion(f) for f in files]
    for m, f in zip(motions, files):
        object.__setattr__(m, "name", f"{f.parent.name}/{f.stem}")
    ext = load_extractor()
    opts = ExtractOptions(extractor=ext, score=True)
    r_idx, t_idx = half_split(len(motions), a.seed)
    R = [motions[i] for i in r_idx]
    T = [motions[i] for i in t_idx]
    print(f"{len(files)} held-out clips: reference {len(R)}, test {len(T)}", flush=True)
    if a.summary_only:
        old = json.loads((out / "summary.json").read_text())
        write_summary(out, files, R, T, ext, pd.read_csv(out / "levels.csv"), pd.read_csv(out / "monotonic.csv"),
                      old["real_vs_real"], pd.read_csv(out / "graphs.csv"), old["kinetic_precedence_bug"],
                      old.get("seconds", 0))
        return
    if a.graphs_only:
        levels = pd.read_csv(out / "levels.csv")
        score_cols = [c[5:] for c in levels.columns if c.startswith("mean_") and not c.endswith(("_low", "_high"))]
        graphs = graph_study(R, T, opts, a.bootstrap, a.seed, score_cols, out)
        old = json.loads((out / "summary.json").read_text())
        write_summary(out, files, R, T, ext, levels, pd.read_csv(out / "monotonic.csv"), old["real_vs_real"],
                      graphs, old["kinetic_precedence_bug"], old.get("seconds", 0) + round(time.time() - t0, 1))
        return
    ref = ClipSet(features_of_motions(R, "ref", opts))

    conditions: dict[str, list] = {"unedited": T}
    for kind, kw in KINDS.items():
        for s in LEVELS:
            conditions[f"{kind}@{s}"] = [corrupt(m, kind, s, seed=i, **kw).motion for i, m in enumerate(T)]

    rows = []
    score_cols: list[str] = []
    for name, ms in conditions.items():
        feats = features_of_motions(ms, name, opts)
        if not score_cols:
            score_cols = [k for k in feats[0].scores if not k.startswith("beat")]
        row = {"condition": name, **set_metrics(ClipSet(feats), ref, a.bootstrap, a.seed, score_cols),
               "naturalness": naturalness(ms)}
        rows.append(row)
        print(f"{name:18s} " + " ".join(f"{k}={row[k]:.4g}" for k in METRICS) + f" nat={row['naturalness']:.3f}",
              flush=True)
    levels = pd.DataFrame(rows)
    levels.to_csv(out / "levels.csv", index=False)

    # monotonicity per degradation and metric (level 0 = unedited)
    mono = []
    base = levels.set_index("condition").loc["unedited"]
    for kind in KINDS:
        sub = levels[levels["condition"].str.startswith(kind + "@")]
        for m in METRICS:
            seq = [base[m]] + list(sub[m])
            mono.append({"degradation": kind, "metric": m, "values": " < ".join(f"{v:.4g}" for v in seq),
                         "strictly_increasing": bool(all(y > x for x, y in zip(seq, seq[1:])))})
    mono = pd.DataFrame(mono)
    mono.to_csv(out / "monotonic.csv", index=False)

    # real-vs-real null: distances between random halves of the whole pool
    pool = ClipSet(features_of_motions(motions, "pool", ExtractOptions(extractor=ext, score=False)))
    null = []
    for k in range(a.null_splits):
        ia, ib = half_split(pool.n, 1000 + k)
        r = set_metrics(pool.subset(ia), pool.subset(ib), 0, k)
        null.append({m: r[m] for m in METRICS})
    null = pd.DataFrame(null)
    null.to_csv(out / "null.csv", index=False)
    inside = {m: {"unedited": float(base[m]), "null_2.5%": float(null[m].quantile(0.025)),
                  "null_97.5%": float(null[m].quantile(0.975)),
                  "percentile_of_unedited": float((null[m] < base[m]).mean() * 100),
                  "inside": bool(null[m].quantile(0.025) <= base[m] <= null[m].quantile(0.975))} for m in METRICS}

    # motion graphs on T's Bandai locomotion (one rig) against R's Bandai locomotion
    graphs = graph_study(R, T, opts, a.bootstrap, a.seed, score_cols, out)

    # the public kinetic code's precedence bug: FID_k / Div_k with it and without it
    bug = kinetic_bug_effect(R, T, conditions["jitter@0.5"], ext.window_protocol.fps)
    print("kinetic precedence bug:", bug, flush=True)
    write_summary(out, files, R, T, ext, levels, mono, inside, graphs, bug, round(time.time() - t0, 1))
    print(f"done in {time.time() - t0:.0f} s -> {out}")


if __name__ == "__main__":
    main()
