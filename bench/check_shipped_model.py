"""A trained naturalness model on capture from rigs it never saw: natural clips and their corruptions.

Not a speed benchmark: the check behind the README's figures for the *shipped* model (trained
on the bundled CMU clips only), which the cross-validation cannot give, because the shipped
model's training set is fixed. For each folder of unseen capture it prints, per model:

* the naturalness of the unedited clips (mean, median, share > 0.5) and the lowest ones;
* ROC AUC of unedited clips against the same clips corrupted at severity 0.5, per corruption
  type (one corrupted version per clip and type, seeded; ``transition`` and ``transplant`` take
  their material from another clip of the folder on the same skeleton, as in training);
* the first reason (``naturalness_reasons``) of every corrupted clip the model rejects, per
  type, and how often it (or any of the reasons) names the group the corruption edited.

Whole clips are scored as ``evalkit score --model`` scores them. Needs ../shared/data (the
Bandai Namco capture may not be shipped, so it is read from there).

    .venv/bin/python bench/check_shipped_model.py [--models default,other.joblib]
        [--dirs ../shared/data/mocap/bandai-namco-1 ../shared/data/gesture/bandai-namco] [--severity 0.5]

With ``--lengths 5,20,60`` it checks instead how the verdict holds with clip length,
on every rig here (the bundled CMU clips -- the shipped model's own training data -- and every
folder of ../shared/data/mocap and ../shared/data/gesture unless ``--dirs`` says otherwise):

* natural clips brought to each length from their own frames (a middle excerpt, or a seamless
  loop: :func:`evalkit.models.lengths.length_examples`; only clips seamless at every length):
  mean naturalness per folder and length, and how the model reads the loop seams (window
  naturalness of windows holding a seam against the others);
* the foot-sliding twin: each such clip with every 5-s piece corrupted by ``foot_skate``
  (severity 0.5, :func:`~evalkit.models.lengths.corrupt_at_length`) against the clip itself
  (its cleaned twin): both means, the smallest margin, the share of pairs the twin wins;
* a natural clip repeated ten times (seamless loops only) against the clip (the stretch between
  its loop points) and against that loop played once with its closing correction (each copy);
* every clip's frames simply repeated ten times (``np.tile``, no loop, as a user would) against
  the clip, split by whether the repeats are cuts (the body jumps back, judged take by take).

Both repeats are reported twice: judged frame by frame (``fold_repeats=False``: the model on every
window, the measure of its own length behaviour) and as ``evalkit score`` scores them (found to be
copies of one stretch and judged on the first copy, which equals the once-played clip by
construction). Natural clips brought to a length are always judged frame by frame.

    .venv/bin/python bench/check_shipped_model.py --lengths 5,20,60 [--out DIR]

With ``--lengths-auc`` it scores every corruption type by length: the natural clips of the
evaluation of record (the bundled CMU clips and ../shared/data/mocap, read as ``evalkit train``
reads them) brought to 5, 20 and 60 s, seamless at every length, minus those whose take the
model was trained on, and one version per type and length with every 5-s piece corrupted
(:func:`evalkit.models.evaluate.length_windows`); ROC AUC per type and length, pooled, and the
natural clips' mean (about 20 min of CPU).

    .venv/bin/python bench/check_shipped_model.py --lengths-auc [--models default] [--out DIR]
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
                verdict = score_naturalness(model, v)
                rows.append({"model": name, "clip": m.name, "corruption": kind, "naturalness": verdict.naturalness,
                             "reason": verdict.reasons.split(" ")[0] if verdict.reasons else "",
                             "reasons": verdict.reasons})
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


def check_lengths(models: dict, folder: Path, lengths: tuple[float, ...], severity: float = 0.5,
                  seed: int = 0, types: tuple[str, ...] = ("foot_skate",)) -> pd.DataFrame:
    """One row per (model, clip, length, version): ``naturalness``, ``worst_stretch``,
    ``construction`` and, for natural versions, ``seam_window`` / ``other_window`` (mean window
    naturalness of windows holding a loop seam / the others). Version ``x10`` is the clip
    repeated ten times (its ``length_s`` is its duration), ``x1`` the loop it repeats."""
    from evalkit.errors import InputError
    from evalkit.models.dataset import load_natural
    from evalkit.models.discriminator import score_naturalness
    from evalkit.models.lengths import length_examples, loop_points, natural_at_length, repeat_loop

    clips = load_natural([folder], progress=False)
    rig_of = {c.motion.name: (c.rig, ",".join(c.motion.skeleton.names)) for c in clips}
    examples, info = length_examples(clips, lengths, types, severity, seed)
    seams = {(r.clip, r.length_s): r for r in info.itertuples()}
    rows = []
    for name, model in models.items():
        for L, ex in examples:
            s = score_naturalness(model, ex.motion, drop_pops=False, fold_repeats=False)  # the model on every frame
            row = {"model": name, "folder": folder.name, "clip": ex.segment.rsplit("@", 1)[0], "length_s": L,
                   "version": ex.provenance.corruption, "naturalness": s.naturalness,
                   "worst_stretch": s.worst_stretch_naturalness}
            info_row = seams[(row["clip"], L)]
            row["construction"] = info_row.construction
            row["rig"], row["joint_names"] = rig_of.get(row["clip"], ("", ""))
            if ex.natural and info_row.construction == "loop":
                lc = natural_at_length(next(c.motion for c in clips if c.motion.name == row["clip"]), L)
                w = s.windows
                t = np.asarray(lc.seams_s)
                has = ((w["start_s"].to_numpy()[:, None] <= t[None, :]) & (w["end_s"].to_numpy()[:, None] > t[None, :])).any(1)
                row["seam_window"] = w["naturalness"][has].mean()
                row["other_window"] = w["naturalness"][~has].mean()
            rows.append(row)
        for c in clips:  # every clip long enough for a length: its middle excerpt (no loop needed)
            for L in lengths:
                n = int(round(L * c.motion.fps))
                if c.motion.n_frames < n:
                    continue
                a = (c.motion.n_frames - n) // 2
                try:
                    v = score_naturalness(model, c.motion[a:a + n], drop_pops=False).naturalness
                except InputError:
                    continue
                rows.append({"model": name, "folder": folder.name, "clip": c.motion.name, "length_s": L,
                             "version": "excerpt", "naturalness": v, "construction": "excerpt", "rig": c.rig,
                             "joint_names": ",".join(c.motion.skeleton.names)})
        for c in clips:  # the clip repeated ten times
            try:
                i, j = loop_points(c.motion, min(3.0, 0.6 * c.motion.duration))
            except InputError:
                continue
            lc = natural_at_length(c.motion, 2 * c.motion.duration + 1)  # a loop: its seam measures
            if not lc.seamless:
                continue
            x10 = repeat_loop(c.motion, i, j, 10)
            for version, m, fold in (("x1", c.motion[i:j], True), ("x1c", repeat_loop(c.motion, i, j, 1), True),
                                     ("x10", x10, False), ("x10_folded", x10, True)):
                try:
                    v = score_naturalness(model, m, drop_pops=False, fold_repeats=fold).naturalness
                except InputError:
                    break
                rows.append({"model": name, "folder": folder.name, "clip": c.motion.name, "length_s": m.duration,
                             "version": version, "naturalness": v, "construction": "loop", "rig": c.rig,
                             "joint_names": ",".join(c.motion.skeleton.names)})
        for c in clips:  # the clip's frames repeated ten times, as a user would (np.tile): no loop, no seam test
            try:
                v1 = score_naturalness(model, c.motion).naturalness
                s10 = score_naturalness(model, tile(c.motion, 10), fold_repeats=False)
                f10 = score_naturalness(model, tile(c.motion, 10))
            except InputError:
                continue
            for version, v, m, cuts, copies in (("whole", v1, c.motion, 0, 1.0),
                                                ("tile10", s10.naturalness, None, len(s10.cuts_s), s10.copies),
                                                ("tile10_folded", f10.naturalness, None, len(f10.cuts_s), f10.copies)):
                rows.append({"model": name, "folder": folder.name, "clip": c.motion.name,
                             "length_s": c.motion.duration * (1 if m is not None else 10), "version": version,
                             "naturalness": v, "construction": "tile", "cuts": cuts, "copies": copies, "rig": c.rig,
                             "joint_names": ",".join(c.motion.skeleton.names)})
    return pd.DataFrame(rows)


def tile(motion, copies: int):
    """``motion``'s frames played ``copies`` times over (``np.tile``): the body jumps back to its
    first frame at every repeat, as a clip naively repeated does."""
    return motion.with_(rotations=np.concatenate([motion.rotations] * copies),
                        translations=np.concatenate([motion.translations] * copies), name=f"{motion.name}x{copies}")


def _print_rigs(scores: pd.DataFrame) -> None:
    """The by-length acceptance line, "natural capture of every rig here scores >= 0.8 on average at
    5, 20 and 60 s": the natural clips of every folder pooled by rig family (joint-name sets overlapping by 80 %,
    as the evaluation of record forms them; one family can span folders, e.g. Bandai Namco's locomotion and gestures)."""
    from types import SimpleNamespace

    from evalkit.models.evaluate import rig_families

    nat = scores[scores["version"].isin(["none", "excerpt"])].copy()
    if not len(nat) or "rig" not in nat:
        return
    # rig families as the evaluation of record forms them (joint-name sets overlapping >= 80 %)
    kinds = nat[["rig", "joint_names"]].drop_duplicates()
    fams = rig_families([SimpleNamespace(rig=r, motion=SimpleNamespace(skeleton=SimpleNamespace(names=n.split(","))))
                         for r, n in zip(kinds["rig"], kinds["joint_names"])])
    nat["rig family"] = nat["rig"].map(dict(zip(kinds["rig"], fams)))
    for (model, version), s in nat.groupby(["model", "version"], sort=False):
        tab = s.pivot_table(index=["rig family"], columns="length_s", values="naturalness", aggfunc="mean")
        counts = s.pivot_table(index=["rig family"], columns="length_s", values="clip", aggfunc="nunique")
        tab = tab.round(3).astype(str) + " (" + counts.reindex_like(tab).fillna(0).astype(int).astype(str) + ")"
        tab["folders"] = s.groupby("rig family")["folder"].agg(lambda f: ", ".join(sorted(set(f))))
        what = ("natural clips seamless at every length (excerpts or loops)" if version == "none" else
                "middle excerpts of every natural clip at least that long (no loops)")
        print(f"\n== every rig family here ({model}), mean naturalness (clips) by length: {what} ==")
        print(tab.to_string())


def _print_natural_table(nat: pd.DataFrame, s: pd.DataFrame) -> None:
    """By length: the natural clips' mean and minimum, the loop seams, and each corruption's twin pairs."""
    tab = nat.groupby("length_s").agg(natural_mean=("naturalness", "mean"),
                                      natural_min=("naturalness", "min"),
                                      loops=("construction", lambda c: int((c == "loop").sum())))
    if "seam_window" in nat:
        tab["seam_windows"] = nat.groupby("length_s")["seam_window"].mean()
        tab["other_windows"] = nat.groupby("length_s")["other_window"].mean()
    for kind in sorted(set(s["version"]) - {"none", "x1", "x1c", "x10", "x10_folded", "excerpt", "whole", "tile10",
                                            "tile10_folded"}):
        pair = nat.merge(s[s["version"] == kind], on=["clip", "length_s"], suffixes=("", "_bad"))
        g = pair.assign(margin=pair["naturalness"] - pair["naturalness_bad"]).groupby("length_s")
        tab[f"{kind}_mean"] = g["naturalness_bad"].mean()
        tab[f"{kind}_min_margin"] = g["margin"].min()
        tab[f"{kind}_twin_wins"] = g["margin"].apply(lambda m: float((m > 0).mean()))
    print(tab.round(3).to_string())


def _print_lengths(scores: pd.DataFrame, folder: Path) -> None:
    if not len(scores):
        print(f"\n== {folder.name}: no clip is seamless at every length ==")
        return
    for (model, folder), s in scores.groupby(["model", "folder"], sort=False):
        nat = s[s["version"] == "none"]
        print(f"\n== {folder} ({model}): {nat['clip'].nunique()} clips seamless at every length ==")
        if len(nat):
            _print_natural_table(nat, s)
        x = s[s["version"].isin(["x1", "x10"])].pivot(index="clip", columns="version", values="naturalness").dropna()
        if len(x):
            d = x["x10"] - x["x1"]
            print(f"clip x10 judged frame by frame vs clip ({len(x)} seamless loops): largest |difference| {d.abs().max():.3f}, "
                  f"mean difference {d.mean():+.3f}, within 0.05: {int((d.abs() <= 0.05).sum())}/{len(x)}")
        x = s[s["version"].isin(["x1c", "x10"])].pivot(index="clip", columns="version", values="naturalness").dropna()
        if len(x):  # each copy of x10 is this loop, its closing correction included
            d = x["x10"] - x["x1c"]
            print(f"clip x10 judged frame by frame vs the loop once as `convert --loop 1` writes it ({len(x)}): largest |difference| "
                  f"{d.abs().max():.3f}, mean difference {d.mean():+.3f}, within 0.05: {int((d.abs() <= 0.05).sum())}/{len(x)}")
        x = s[s["version"].isin(["x1c", "x10_folded"])].pivot(index="clip", columns="version", values="naturalness").dropna()
        if len(x):  # as users score it: the loop recognised as copies and judged on the first
            d = x["x10_folded"] - x["x1c"]
            print(f"  as `evalkit score` scores it (copies judged once): largest |difference| "
                  f"{d.abs().max():.3f}, within 0.05: {int((d.abs() <= 0.05).sum())}/{len(x)}")
        t = s[s["version"].isin(["whole", "tile10", "tile10_folded"])]
        if len(t):
            x = t.pivot(index="clip", columns="version", values="naturalness").dropna()
            cut = set(t.loc[(t["version"] == "tile10") & (t["cuts"] > 0), "clip"])
            folded = set(t.loc[(t["version"] == "tile10_folded") & (t["copies"] >= 9.999), "clip"])
            d = x["tile10"] - x["whole"]
            df = x["tile10_folded"] - x["whole"]
            for label, sel in (("cut at every repeat (the body jumps back)", d.index.isin(cut)),
                               ("no cut (the body stays in place: the pose jumps)", ~d.index.isin(cut))):
                if sel.any():
                    print(f"whole clip repeated x10 frame for frame, judged frame by frame, {label}: {int(sel.sum())} clips, "
                          f"largest |difference| {d[sel].abs().max():.3f}, mean {d[sel].mean():+.3f}, "
                          f"within 0.05: {int((d[sel].abs() <= 0.05).sum())}/{int(sel.sum())}")
                    print(f"  as `evalkit score` scores it (found to be 10 copies: {int(d.index[sel].isin(folded).sum())}/"
                          f"{int(sel.sum())}): largest |difference| {df[sel].abs().max():.3f}, "
                          f"within 0.05: {int((df[sel].abs() <= 0.05).sum())}/{int(sel.sum())}")


def lengths_auc(models: dict, lengths: tuple[float, ...] = (5.0, 20.0, 60.0)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ROC AUC per corruption type and length of each model on the evaluation of record's clips
    that it was not trained on (module docstring). Returns ``(summary, scores)``."""
    from sklearn.metrics import roc_auc_score

    from evalkit.models.dataset import group_of, load_natural
    from evalkit.models.evaluate import EvalConfig, length_windows
    from evalkit.models.training import load_model

    paths = [Path(__file__).resolve().parents[1] / "evalkit" / "data" / "samples" / "cmu", SHARED / "mocap"]
    clips = load_natural(paths)
    windows, meta, _ = length_windows(clips, EvalConfig(lengths=lengths), progress=True)
    rows, out = [], []
    for name, model in models.items():
        trained = {group_of(f["path"])[1] for f in load_model(name)[1].get("training_data", [])}
        cp = model.predict_clip_proba(windows, windows["example"].to_numpy())
        d = meta.loc[cp.index].copy()
        d["score"] = cp["naturalness"].to_numpy()
        d["take"] = [group_of(Path(seg.rsplit("@", 1)[0] + ".bvh"))[1] for seg in d["segment"]]
        d = d[~d["take"].isin(trained)].assign(model=name)
        out.append(d)
        for L, g in d.groupby("length_s"):
            nat = g[g["clip_natural"] == 1]
            r = {"model": name, "length_s": L, "natural": len(nat), "corrupted": int((g["clip_natural"] == 0).sum()),
                 "all": roc_auc_score(g["clip_natural"], g["score"]), "natural_mean": nat["score"].mean()}
            for t, b in g[g["clip_natural"] == 0].groupby("corruption"):
                s2 = pd.concat([nat, b])
                r[t] = roc_auc_score(s2["clip_natural"], s2["score"])
            rows.append(r)
    return pd.DataFrame(rows), pd.concat(out)


#: The reason group a corrupted clip's first reason should name, for the corruptions that edit
#: one thing (the others -- freeze, time warp, keyframes, transition, transplant -- change
#: several at once, and their first reasons are only tabulated).
EDITED_GROUP = {"foot_skate": "feet", "ground": "ground", "jitter": "smoothness", "bone_length": "pose"}


def _print_reasons(scores: pd.DataFrame) -> None:
    """First reason of each corrupted clip the model rejects (naturalness < 0.5), per type, and
    how often it names the group the corruption edited (:data:`EDITED_GROUP`)."""
    bad = scores[(scores["corruption"] != "none") & (scores["naturalness"] < 0.5)]
    for name, s in bad.groupby("model", sort=False):
        print(f"first reason of the rejected corrupted clips ({name}):")
        print(pd.crosstab(s["corruption"], s["reason"]).to_string())
        for kind, group in EDITED_GROUP.items():
            k = s[s["corruption"] == kind]
            if len(k):
                named = k["reasons"].map(lambda r: group in [x.split(" ")[0] for x in r.split("; ")])
                print(f"  {kind}: first reason {group} in {int((k['reason'] == group).sum())} of {len(k)}, "
                      f"among the reasons in {int(named.sum())}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="default", help="comma-separated model files ('default': the shipped one)")
    ap.add_argument("--dirs", nargs="+", type=Path, default=list(DEFAULT_DIRS), help="folders of unseen capture")
    ap.add_argument("--severity", type=float, default=0.5)
    ap.add_argument("--out", type=Path, default=None, help="also write scores_<folder>.csv here")
    ap.add_argument("--lowest", type=int, default=3, help="unedited clips to list with the lowest naturalness")
    ap.add_argument("--lengths", default=None, metavar="L1,L2",
                    help="check the verdict by clip length instead (seconds, e.g. 5,20,60; see the docstring)")
    ap.add_argument("--length-types", default="foot_skate", metavar="T1,T2",
                    help="--lengths: corruption types of the unnatural twins (default: foot_skate)")
    ap.add_argument("--lengths-auc", action="store_true",
                    help="ROC AUC of every corruption type at 5, 20 and 60 s (see the docstring)")
    args = ap.parse_args()
    if args.lowest < 0:
        ap.error(f"--lowest must be 0 or more, got {args.lowest}")

    from evalkit.errors import EvalkitError
    from evalkit.models.training import load_model

    try:
        models = {m: load_model(m)[0] for m in (s.strip() for s in args.models.split(",")) if m}
    except EvalkitError as e:
        ap.error(str(e))
    if args.lengths_auc:
        summary, scores = lengths_auc(models)
        for name, t in summary.groupby("model", sort=False):
            print(f"\n== {name}: ROC AUC by clip length, clips it was not trained on ==")
            print(t.drop(columns="model").set_index("length_s").round(3).T.to_string())
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            scores.to_csv(args.out / "lengths_auc.csv", index=False)
        return
    if args.lengths:
        try:
            lengths = tuple(float(x) for x in args.lengths.split(","))
        except ValueError:
            ap.error(f"--lengths must be seconds separated by commas, got {args.lengths!r}")
        dirs = args.dirs if args.dirs != list(DEFAULT_DIRS) else [
            Path(__file__).resolve().parents[1] / "evalkit" / "data" / "samples" / "cmu",
            *sorted(p for p in (SHARED / "mocap").iterdir() if p.is_dir()),
            *sorted(p for p in (SHARED / "gesture").iterdir() if p.is_dir())]
        types = tuple(t.strip() for t in args.length_types.split(",") if t.strip())
        allscores = []
        for d in dirs:
            scores = check_lengths(models, d, lengths, args.severity, types=types)
            _print_lengths(scores, d)
            allscores.append(scores)
        _print_rigs(pd.concat(allscores))
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            pd.concat(allscores).to_csv(args.out / "lengths.csv", index=False)
        return
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
        _print_reasons(scores)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            scores.to_csv(args.out / f"scores_{d.name}.csv", index=False)


if __name__ == "__main__":
    main()
