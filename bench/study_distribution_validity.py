"""Validity study of the distribution metrics on real capture held out of the extractor's training.

The shipped FGD extractor was trained on the bundled CMU clips only; this study uses the real
capture in ../shared/data/mocap that is not among them (Bandai Namco walks/runs in styles,
Reallusion retargets of CMU subjects 02/07, CMU 11_01 and 131_02; files whose bytes match a
training file are dropped). The pool is split (seeded) into a reference half R and a test half T,
stratified by source (each Bandai style and each other folder split evenly), so that both halves
sample the same mix.

1. Degradations of T (corruptions of evalkit.models.corruptions: jitter, foot skate, time warp,
   freezing) at severities 0.25, 0.5, 0.75, 1.0, each clip with its own seed: every distance of T
   against R per level, with bootstrap intervals; is it monotonic? The same for each degraded set
   against its own unedited clips (the degradation's effect without the R-vs-T sampling
   difference), and the mean over ``--splits`` other stratified splits (no bootstrap) with the
   number of splits in which each sequence rises strictly.
2. Real vs real: unedited T against R, and the null distribution of each distance between two
   random stratified halves of the pool (100 splits): is unedited T inside the null's 95 % range?
3. Motion graphs: SMG and BPMG transitions synthesised from T's Bandai clips (one rig), against
   R, beside the unedited sources and the sources corrupted at severity 0.5 (mixed types).
4. Across the 17 degradation conditions (one reference): Spearman correlations of each distance with the shipped discriminator's
   mean naturalness and with the means of evalkit score's per-clip metrics.

5. The wide range (``WIDE``): each degradation at severity 1.0 with its corruption's ``max_*``
   parameter at five physical levels reaching well past the defaults (foot-skate drift up to
   4 m/s, holds up to 12 s, playback rates up to 10x, rotation noise 0.5-8 degrees): in how many
   splits each distance rises strictly, and from which level it (and its interval's lower end)
   stays above the real-vs-real null's 97.5th percentile.

    python bench/study_distribution_validity.py --out docs/distribution-validity
    python bench/study_distribution_validity.py --out docs/distribution-validity --wide-only --splits 5

Writes ``levels.csv``, ``monotonic.csv``, ``levels_paired.csv``, ``monotonic_paired.csv``,
``splits.csv``, ``monotonic_splits.csv``, ``null.csv``, ``graphs.csv``, ``correlations.csv``,
``summary.json`` and ``summary.md``; part 5 ``wide_levels.csv``, ``wide_paired.csv``,
``wide_splits.csv``, ``wide_monotonic.csv`` and ``wide.md`` (``--wide-only`` runs part 5 alone,
with the null of an earlier full run read from ``null.csv``; FID_g's null is recomputed).
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
METRICS = ("fgd", "fgd_raw", "fgd_pose", "fid_k", "fid_g", "pfc")
KINDS = {"jitter": {"mode": "clip"}, "foot_skate": {}, "time_warp": {}, "freeze": {}}
LEVELS = (0.25, 0.5, 0.75, 1.0)
#: Similarity threshold of both graphs (RMS metres): at the default 0.3 the BPMG of these Bandai clips
#: reaches 1 transition of 56 requested, at 0.5 it reaches 41.
GRAPH_THRESHOLD = 0.5
#: The wide range (part 5): per degradation, the corruption's ``max_*`` parameter at severity 1.0
#: over five physical levels, the default maximum in the middle or below, so that every
#: degradation is followed past the real-vs-real floor. Units: jitter -- rotation noise std in
#: degrees per joint and frame (root noise scaled with it, 0.015 m at 4 degrees, as the default);
#: foot skate -- drift speed in m/s (``mode="drift"``: the body glides over 30-70 % of the clip,
#: sometimes all of it); time warp -- the largest playback-rate factor (``mode="steps"``: constant
#: rates over 0.25-0.8 s segments); freezing -- hold in seconds (capped at the clip's length; one
#: or two limbs three times in four, the whole body otherwise, as by default).
WIDE = {
    "jitter": ("max_rot_deg", (0.5, 1.0, 2.0, 4.0, 8.0), {"mode": "clip"}),
    "foot_skate": ("max_speed", (0.25, 0.5, 1.0, 2.0, 4.0), {"mode": "drift"}),
    "time_warp": ("max_rate", (1.5, 2.5, 3.5, 6.0, 10.0), {"mode": "steps"}),
    "freeze": ("max_hold_s", (0.75, 1.5, 3.0, 6.0, 12.0), {}),
}
WIDE_DEFAULT = {"jitter": 4.0, "foot_skate": 0.5, "time_warp": 3.5, "freeze": 1.5}


def wide_kwargs(kind: str, value: float) -> dict:
    """The corruption keywords of one wide-range level."""
    key, _, extra = WIDE[kind]
    kw = {key: value, **extra}
    if kind == "jitter":
        kw["max_root_m"] = 0.015 * value / 4.0
    return kw


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
    from evalkit.models.discriminator import score_naturalness
    from evalkit.models.training import load_model

    model, _ = load_model(None)
    vals = []
    for m in motions:
        try:
            vals.append(score_naturalness(model, m).naturalness)
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
    from evalkit.distribution.canonical import canonical_positions

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
    from evalkit.distribution.metrics import FeatureSet, set_metrics
    from evalkit.models.corruptions import corrupt
    from evalkit.synth import build_bpmg, build_smg, synthesize_transition

    ref_ms = _loco(R)
    loco = _loco(T)[:8]
    ref = FeatureSet(features_of_motions(ref_ms, "ref", opts))
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
        r = set_metrics(FeatureSet(features_of_motions(ms, name, opts)), ref, n_boot, seed, score_cols)
        rows.append({"system": name, "n_clips": len(ms), "n_available": len(sets[name]),
                     **{k: r[k] for k in r if not k.startswith("mean_")}, "naturalness": naturalness(ms)})
        print(f"{name:36s} n={len(ms)} " + " ".join(f"{k}={r[k]:.4g}" for k in METRICS), flush=True)
    print(f"transitions without a path (request times 0.5/1.0/1.5 s tried): {failed}; reference {len(ref_ms)} "
          f"Bandai locomotion clips", flush=True)
    graphs = pd.DataFrame(rows)
    graphs.to_csv(out / "graphs.csv", index=False)
    return graphs


def _monotonic(levels, metrics=METRICS, key: str = "condition"):
    """Per degradation and metric: the values from level 0 (unedited) up, strictly increasing?"""
    import pandas as pd

    rows = []
    base = levels.set_index(key).loc["unedited"]
    for kind in KINDS:
        sub = levels[levels[key].str.startswith(kind + "@")]
        for m in metrics:
            seq = [base[m]] + list(sub[m])
            rows.append({"degradation": kind, "metric": m, "values": " < ".join(f"{v:.4g}" for v in seq),
                         "strictly_increasing": bool(all(y > x for x, y in zip(seq, seq[1:])))})
    return pd.DataFrame(rows)


def write_summary(out, files, R, T, ext, levels, mono, paired, splits, inside, graphs, bug, seconds,
                  n_splits: int) -> None:
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

    # across splits: the mean over splits, and in how many splits each sequence rises strictly
    mean = splits.groupby("condition", sort=False)[list(METRICS)].mean().reset_index()
    mono_mean = _monotonic(mean)
    counts = []
    for k, sub in splits.groupby("split"):
        mk = _monotonic(sub.reset_index(drop=True))
        counts.append(mk.assign(split=k))
    counts = pd.concat(counts)
    count_tab = counts.groupby(["degradation", "metric"], sort=False)["strictly_increasing"].sum().astype(int)
    mono_mean["splits_strictly_increasing"] = [f"{count_tab.loc[(d, m)]}/{n_splits}" for d, m in
                                               zip(mono_mean["degradation"], mono_mean["metric"])]
    mono_mean.to_csv(out / "monotonic_splits.csv", index=False)

    summary = {"kinetic_precedence_bug": bug, "held_out_files": [str(f.relative_to(SHARED)) for f in files],
               "reference": len(R), "test": len(T), "extractor_hash": ext.extractor_hash, "real_vs_real": inside,
               "seconds": seconds, "splits": n_splits}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    lines = ["# Validity study (generated by bench/study_distribution_validity.py)", "",
             f"{len(files)} held-out clips, split in halves stratified by source and style: reference {len(R)}, "
             f"test {len(T)}; extractor {ext.extractor_hash}.", "",
             "## Monotonic growth with degradation: test half against the reference half (level 0 = unedited)", "",
             _md(mono), "",
             "## The same, each degraded set against its own unedited clips (the degradation's own effect)", "",
             _md(paired), "",
             f"## Mean over {n_splits} stratified splits (no bootstrap), and in how many splits the sequence rises "
             "strictly", "", _md(mono_mean), "",
             "## Real vs real inside its null (random stratified half splits of the pool)", "",
             _md(pd.DataFrame(inside).T, index=True), "", "## Motion graphs", "",
             _md(graphs[["system", "n_clips"] + [m for m in METRICS if m in graphs] + ["naturalness"]])
             if len(graphs) else "(no graph outputs)", "",
             "## FID_k / Div_k with the public code's precedence bug", "", json.dumps(bug, indent=1), "",
             "## Spearman correlations across the 17 conditions of the degradation part (one reference)", "",
             _md(corr.pivot(index="against", columns="distance", values="spearman_rho").round(2), index=True)
             if len(corr) else "", ""]
    (out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines))


def stratum(f: Path) -> str:
    """The source a clip comes from: Bandai Namco clips by style (``dataset-1_<motion>_<style>_NNN``),
    other folders as a whole."""
    if f.parent.name.startswith("bandai"):
        parts = f.stem.split("_")
        return "bandai/" + (parts[2] if len(parts) > 2 else "?")
    return f.parent.name


def stratified_half_split(labels, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Halves ``(a, b)`` of ``range(len(labels))`` with each label split evenly (seeded); an odd
    stratum's extra clip goes to the half that is smaller so far (``a`` first)."""
    rng = np.random.default_rng(seed)
    a: list[int] = []
    b: list[int] = []
    for lab in sorted(set(labels)):
        idx = [int(i) for i in rng.permutation([i for i, x in enumerate(labels) if x == lab])]
        h = len(idx) // 2
        small, big = idx[:h], idx[h:]
        if len(a) <= len(b):
            a += big
            b += small
        else:
            a += small
            b += big
    return np.array(sorted(a)), np.array(sorted(b))


def split_table(subset, labels, conditions, n_splits: int, t0: float):
    """Every condition's test half against the unedited reference half, over ``n_splits``
    stratified splits (seeds 100, 101, ...; no bootstrap): one row per split and condition."""
    import pandas as pd

    from evalkit.distribution.metrics import set_metrics

    rows = []
    for k in range(n_splits):
        ra, tb = stratified_half_split(labels, 100 + k)
        rk = subset("unedited", ra)
        for name in conditions:
            r = set_metrics(subset(name, tb), rk, 0, k)
            rows.append({"split": k, "condition": name, **{m: r[m] for m in METRICS}})
        print(f"split {k} done ({time.time() - t0:.0f} s)", flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="docs/distribution-validity")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--null-splits", type=int, default=100)
    ap.add_argument("--splits", type=int, default=10, help="stratified splits of the across-splits part")
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--wide-only", action="store_true",
                    help="run only part 5 (the wide degradation range), with the real-vs-real null read from "
                         "--out/null.csv of an earlier full run")
    ap.add_argument("--resume", action="store_true",
                    help="read parts 1 (levels.csv) and 2 (levels_paired.csv) from --out instead of recomputing them")
    a = ap.parse_args()

    import pandas as pd

    from evalkit.distribution.embedding import load_extractor
    from evalkit.distribution.extract import ExtractOptions, features_of_motions
    from evalkit.distribution.metrics import FeatureSet, set_metrics
    from evalkit.models.corruptions import corrupt
    from evalkit.motion import load_motion

    t0 = time.time()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    files = held_out_files(SHARED)
    motions = [load_motion(f) for f in files]
    for m, f in zip(motions, files):
        object.__setattr__(m, "name", f"{f.parent.name}/{f.stem}")
    labels = [stratum(f) for f in files]
    ext = load_extractor()
    opts = ExtractOptions(extractor=ext, score=True)
    r_idx, t_idx = stratified_half_split(labels, a.seed)
    R = [motions[i] for i in r_idx]
    T = [motions[i] for i in t_idx]
    print(f"{len(files)} held-out clips: reference {len(R)}, test {len(T)}", flush=True)
    if a.wide_only:
        wide_study(motions, labels, r_idx, t_idx, opts, a, out, pd.read_csv(out / "null.csv"), t0)
        return

    # every clip of the pool under every condition (each clip its own seed: its index in the pool),
    # so that any split's test half can be taken from it
    conditions = ["unedited"] + [f"{k}@{s}" for k in KINDS for s in LEVELS]
    feats: dict[str, list] = {}
    nat: dict[str, float] = {}
    in_t = set(int(i) for i in t_idx)
    for name in conditions:
        if name == "unedited":
            ms = motions
        else:
            kind, s = name.split("@")
            ms = [corrupt(m, kind, float(s), seed=i, **KINDS[kind]).motion for i, m in enumerate(motions)]
        feats[name] = features_of_motions(ms, name, opts)
        if not a.resume:
            nat[name] = naturalness([m for i, m in enumerate(ms) if i in in_t])
        print(f"features {name} ({time.time() - t0:.0f} s)", flush=True)
    score_cols = [k for k in feats["unedited"][0].scores if not k.startswith("beat")]

    def subset(name, idx):
        return FeatureSet([feats[name][i] for i in idx])

    # 1. the main split, with bootstrap intervals: test half (each condition) against the reference half
    ref = subset("unedited", r_idx)
    rows = []
    for name in ([] if a.resume else conditions):
        row = {"condition": name, **set_metrics(subset(name, t_idx), ref, a.bootstrap, a.seed, score_cols),
               "naturalness": nat[name]}
        rows.append(row)
        print(f"{name:18s} " + " ".join(f"{k}={row[k]:.4g}" for k in METRICS) + f" nat={row['naturalness']:.3f}",
              flush=True)
    levels = pd.read_csv(out / "levels.csv") if a.resume else pd.DataFrame(rows)
    levels.to_csv(out / "levels.csv", index=False)
    mono = _monotonic(levels)
    mono.to_csv(out / "monotonic.csv", index=False)

    # 2. paired: each degraded test half against its own unedited clips
    own = subset("unedited", t_idx)
    prow = [] if a.resume else [{"condition": name, **set_metrics(subset(name, t_idx), own, 0, a.seed)}
                                for name in conditions]
    paired_levels = pd.read_csv(out / "levels_paired.csv") if a.resume else pd.DataFrame(prow)
    paired_levels.to_csv(out / "levels_paired.csv", index=False)
    paired = _monotonic(paired_levels)
    paired.to_csv(out / "monotonic_paired.csv", index=False)

    # 3. across stratified splits (no bootstrap)
    splits = split_table(subset, labels, conditions, a.splits, t0)
    splits.to_csv(out / "splits.csv", index=False)

    # 4. real-vs-real null: distances between random stratified halves of the whole pool
    pool = feats["unedited"]
    base = levels.set_index("condition").loc["unedited"]
    null = []
    for k in range(a.null_splits):
        ia, ib = stratified_half_split(labels, 1000 + k)
        r = set_metrics(FeatureSet([pool[i] for i in ia]), FeatureSet([pool[i] for i in ib]), 0, k)
        null.append({m: r[m] for m in METRICS})
    null = pd.DataFrame(null)
    null.to_csv(out / "null.csv", index=False)
    inside = {m: {"unedited": float(base[m]), "null_2.5%": float(null[m].quantile(0.025)),
                  "null_97.5%": float(null[m].quantile(0.975)),
                  "percentile_of_unedited": float((null[m] < base[m]).mean() * 100),
                  "inside": bool(null[m].quantile(0.025) <= base[m] <= null[m].quantile(0.975))} for m in METRICS}

    # 5. motion graphs on T's Bandai locomotion (one rig) against R's Bandai locomotion
    graphs = graph_study(R, T, opts, a.bootstrap, a.seed, score_cols, out)

    # 6. the public kinetic code's precedence bug: FID_k / Div_k with it and without it
    jit = [corrupt(motions[i], "jitter", 0.5, seed=int(i), **KINDS["jitter"]).motion for i in t_idx]
    bug = kinetic_bug_effect(R, T, jit, ext.window_protocol.fps)
    print("kinetic precedence bug:", bug, flush=True)
    write_summary(out, files, R, T, ext, levels, mono, paired, splits, inside, graphs, bug,
                  round(time.time() - t0, 1), a.splits)
    wide_study(motions, labels, r_idx, t_idx, opts, a, out, null, t0)
    print(f"done in {time.time() - t0:.0f} s -> {out}")


def _first_level(values, bound) -> str:
    """The first level (1-based) from which every later value exceeds ``bound``; '-' if none."""
    over = [v > bound for v in values]
    for i in range(len(over)):
        if all(over[i:]):
            return str(i + 1)
    return "-"


def wide_study(motions, labels, r_idx, t_idx, opts, a, out: Path, null, t0: float) -> None:
    """Part 5: each degradation over the wide range of :data:`WIDE` (severity 1.0, the ``max_*``
    parameter at five levels): the test half against the reference half with bootstrap intervals,
    against its own unedited clips, and against R over ``--splits`` other stratified splits; per
    distance, in how many splits the sequence (unedited first) rises strictly, and from which level
    on the distance (and its interval's lower end) stays above the real-vs-real null's 97.5th
    percentile. Writes ``wide_levels.csv``, ``wide_paired.csv``, ``wide_splits.csv``,
    ``wide_monotonic.csv`` and ``wide.md``."""
    import dataclasses

    import pandas as pd

    from evalkit.distribution.extract import features_of_motions
    from evalkit.distribution.metrics import FeatureSet, set_metrics
    from evalkit.models.corruptions import corrupt

    opts = dataclasses.replace(opts, score=False)
    conds = ["unedited"] + [f"{k}@{v:g}" for k, (_, vals, _) in WIDE.items() for v in vals]
    feats = {"unedited": features_of_motions(motions, "unedited", opts)}
    for kind, (_, vals, _) in WIDE.items():
        for v in vals:
            ms = [corrupt(m, kind, 1.0, seed=i, **wide_kwargs(kind, v)).motion for i, m in enumerate(motions)]
            feats[f"{kind}@{v:g}"] = features_of_motions(ms, kind, opts)
            print(f"wide features {kind}@{v:g} ({time.time() - t0:.0f} s)", flush=True)

    def subset(name, idx):
        return FeatureSet([feats[name][i] for i in idx])

    # FID_g's null again with the current normalisation (the geometric scale floor of
    # evalkit.distribution.diversity came after null.csv's full run); same splits as part 2
    from evalkit.distribution.diversity import GEOMETRIC_MIN_SCALE, reference_scaler
    from evalkit.distribution.frechet import frechet_from_features

    geo = np.array([c.geometric for c in feats["unedited"]])
    null = null.copy()
    fid_g = []
    for k in range(len(null)):
        ia, ib = stratified_half_split(labels, 1000 + k)
        mean, scale = reference_scaler(geo[ib], GEOMETRIC_MIN_SCALE)
        fid_g.append(frechet_from_features((geo[ia] - mean) / scale, (geo[ib] - mean) / scale))
    null["fid_g"] = fid_g
    null.to_csv(out / "null.csv", index=False)

    ref, own = subset("unedited", r_idx), subset("unedited", t_idx)
    main_rows, paired_rows = [], []
    for c in conds:
        main_rows.append({"condition": c, **set_metrics(subset(c, t_idx), ref, a.bootstrap, a.seed)})
        paired_rows.append({"condition": c, **set_metrics(subset(c, t_idx), own, 0, a.seed)})
        print(f"wide {c:18s} " + " ".join(f"{k}={main_rows[-1][k]:.4g}" for k in METRICS), flush=True)
    levels, paired = pd.DataFrame(main_rows), pd.DataFrame(paired_rows)
    levels.to_csv(out / "wide_levels.csv", index=False)
    paired.to_csv(out / "wide_paired.csv", index=False)
    splits = split_table(subset, labels, conds, a.splits, t0)
    splits.to_csv(out / "wide_splits.csv", index=False)

    rows = []
    lv, pv = levels.set_index("condition"), paired.set_index("condition")
    for kind, (key, vals, _) in WIDE.items():
        names = [f"{kind}@{v:g}" for v in vals]
        for m in METRICS:
            hi = float(null[m].quantile(0.975))
            seq = [lv.loc["unedited", m]] + [lv.loc[c, m] for c in names]
            pseq = [pv.loc["unedited", m]] + [pv.loc[c, m] for c in names]
            n_up, n_clear = 0, []
            for k, sub in splits.groupby("split"):
                sv = sub.set_index("condition")[m]
                ss = [sv["unedited"]] + [sv[c] for c in names]
                n_up += all(y > x for x, y in zip(ss, ss[1:]))
                n_clear.append(_first_level(ss[1:], hi))
            rows.append({
                "degradation": kind, "parameter": key, "levels": " / ".join(f"{v:g}" for v in vals),
                "default_max": WIDE_DEFAULT[kind], "metric": m,
                "values": " < ".join(f"{v:.4g}" for v in seq),
                "strictly_increasing": bool(all(y > x for x, y in zip(seq, seq[1:]))),
                "paired_values": " < ".join(f"{v:.4g}" for v in pseq),
                "paired_strictly_increasing": bool(all(y > x for x, y in zip(pseq, pseq[1:]))),
                "splits_strictly_increasing": f"{n_up}/{a.splits}",
                "null_97.5%": hi,
                "clears_null_from_level": _first_level(seq[1:], hi),
                "interval_clears_null_from_level": _first_level([lv.loc[c, f"{m}_ci_low"] for c in names], hi),
                "clears_null_from_level_per_split": " ".join(n_clear)})
    mono = pd.DataFrame(rows)
    mono.to_csv(out / "wide_monotonic.csv", index=False)
    lines = ["# Validity study, wide degradation range (generated by bench/study_distribution_validity.py)", "",
             "Severity 1.0 with the corruption's `max_*` parameter at five levels (`WIDE` in the script); "
             "level 0 = unedited. The floor: the 97.5th percentile of each distance between two random "
             f"stratified halves of the pool (null.csv, {len(null)} splits). 'clears from level' = the first "
             "level from which every later value (or its bootstrap interval's lower end) lies above it "
             "(main split; per split in the last column).", "",
             _md(mono.drop(columns=["paired_values"])), ""]
    (out / "wide.md").write_text("\n".join(lines))
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
