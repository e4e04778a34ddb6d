"""The distribution metrics' acceptance rehearsal (docs/distribution.md, "Acceptance rehearsal"): held-out clips of
../shared/data/mocap split (stratified, seeded) into a reference folder and a test set; the test
clips written as files with Gaussian noise on every BVH rotation channel (1-32 degrees), on
every joint position of `evalkit convert`'s .npz (0.5-32 cm), held whole / half / one arm;
then `evalkit compare` and the checks of each acceptance line.

    python docs/distribution-validity/rehearsal/rehearse.py SEED N_REF N_TEST OUT_DIR
    python docs/distribution-validity/rehearsal/rehearse.py summary ROOT rehearsal_summary.csv

(the table in docs/distribution.md: seeds 0-3 with 27 26, 4 14 26, 5 27 13, 6 10 10;
rehearsal_summary.csv holds its per-split values, FID_g with the geometric scale floor).
"""
import re
import sys
from pathlib import Path
import numpy as np

WT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(WT)); sys.path.insert(0, str(WT / "bench"))
from study_distribution_validity import held_out_files, stratum, stratified_half_split, SHARED

ROT = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)  # degrees, Gaussian on every BVH rotation channel, every frame
POS = (0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32)  # metres, Gaussian on every joint position, every frame
ROT_NAMES = [f"rot{s:g}deg" for s in ROT]
POS_NAMES = [f"pos{s * 100:g}cm" for s in POS]

def read_bvh_text(p):
    txt = Path(p).read_text()
    head, motion = txt.split("MOTION", 1)
    lines = motion.strip().splitlines()
    frames = [l for l in lines if not l.startswith(("Frames", "Frame Time"))]
    data = np.array([[float(x) for x in l.split()] for l in frames])
    chans = []
    for m in re.finditer(r"CHANNELS\s+(\d+)\s+([^\n]*)", head):
        chans += m.group(2).split()[: int(m.group(1))]
    assert len(chans) == data.shape[1]
    return head, lines[:2], data, chans

def write_bvh_text(p, head, hdr, data):
    Path(p).parent.mkdir(parents=True, exist_ok=True)
    body = "\n".join(" ".join(f"{v:.6f}" for v in row) for row in data)
    Path(p).write_text(head + "MOTION\n" + "\n".join(hdr) + "\n" + body + "\n")

def main(seed, n_ref, n_test, out):
    from evalkit.cli import main as ek
    from evalkit.motion import load_motion, write_bvh
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    files = held_out_files(SHARED)
    labels = [stratum(f) for f in files]
    r_idx, t_idx = stratified_half_split(labels, seed)
    rng = np.random.default_rng(seed)
    r_idx = sorted(rng.choice(r_idx, size=min(n_ref, len(r_idx)), replace=False))
    t_idx = sorted(rng.choice(t_idx, size=min(n_test, len(t_idx)), replace=False))
    ref = out / "ref"; ref.mkdir(exist_ok=True)
    for i in r_idx:
        f = files[i]
        (ref / f"{f.parent.name}-{f.name}").symlink_to(f) if not (ref / f"{f.parent.name}-{f.name}").exists() else None
        if f.suffix == ".amc":
            asf = next(f.parent.glob(f.stem.split("_")[0] + ".asf"))
            if not (ref / f"{f.parent.name}-{f.stem}.asf").exists():
                (ref / f"{f.parent.name}-{f.stem}.asf").symlink_to(asf)
    for k, i in enumerate(t_idx):
        f = files[i]
        m = load_motion(f)
        name = f"{f.parent.name}-{f.stem}.bvh"
        base = out / "unedited" / name
        write_bvh(m, base)
        head, hdr, data, chans = read_bvh_text(base)
        rot = np.array([c.lower().endswith("rotation") for c in chans])
        g = np.random.default_rng(1000 * seed + k)
        for s in ROT:
            d = data.copy(); d[:, rot] += g.normal(0, s, size=(len(d), rot.sum()))
            write_bvh_text(out / f"rot{s:g}deg" / name, head, hdr, d)
        # frozen: whole clip at its middle pose; second half held; right arm held at frame 0
        n = len(data); mid = n // 2
        d = np.repeat(data[mid:mid + 1], n, 0); write_bvh_text(out / "frozen_whole" / name, head, hdr, d)
        d = data.copy(); d[mid:] = data[mid]; write_bvh_text(out / "frozen_half" / name, head, hdr, d)
        from evalkit.motion.roles import find_roles
        roles = find_roles(m.skeleton)
        sk = m.skeleton
        arm = {roles[r] for r in ("right_shoulder", "right_elbow", "right_wrist") if r in roles}
        names = list(sk.names)
        # joint of each channel column
        col_joint = []
        for mm in re.finditer(r"(ROOT|JOINT)\s+(\S+)[^C]*?CHANNELS\s+(\d+)", head, re.S):
            col_joint += [mm.group(2)] * int(mm.group(3))
        arm_idx = {names[j] if isinstance(j, int) else j for j in arm}
        cols = np.array([cj in arm_idx and c.lower().endswith("rotation") for cj, c in zip(col_joint, chans)])
        assert cols.sum() >= 6, (arm_idx, cols.sum())
        d = data.copy(); d[:, cols] = data[0, cols]; write_bvh_text(out / "frozen_arm" / name, head, hdr, d)
        # positions: evalkit convert to .npz, Gaussian noise on every joint position
        npz = out / "unedited_pos" / (name[:-4] + ".npz"); npz.parent.mkdir(exist_ok=True)
        assert ek(["convert", str(base), str(npz)]) == 0
        z = dict(np.load(npz, allow_pickle=False))
        for s in POS:
            zz = dict(z); zz["positions"] = z["positions"] + g.normal(0, s, size=z["positions"].shape)
            p = out / f"pos{s*100:g}cm" / npz.name; p.parent.mkdir(exist_ok=True); np.savez(p, **zz)
    systems = ["unedited"] + ROT_NAMES + ["unedited_pos"] + POS_NAMES + ["frozen_whole", "frozen_half", "frozen_arm"]
    return ref, systems

def check(out):
    import pandas as pd
    t = pd.read_csv(Path(out) / "report" / "distribution.csv").set_index("system")
    res = []
    for fam in (["unedited"] + ROT_NAMES, ["unedited_pos"] + POS_NAMES):
        for m in ("fgd", "fid_k", "fid_g", "fgd_raw", "fgd_pose"):
            v = t.loc[fam, m].to_numpy()
            ok = bool(np.all(np.diff(v) > 0))
            res.append(f"{fam[1][:3]} {m:8s} {'OK ' if ok else 'FAIL'} " + " < ".join(f"{x:.4g}" for x in v))
    for fz in ("frozen_whole", "frozen_half", "frozen_arm"):
        for m in ("fgd", "fid_k", "fid_g", "fgd_raw", "fgd_pose"):
            a, b = t.loc["unedited", m], t.loc[fz, m]
            res.append(f"{fz:12s} {m:8s} {'OK ' if b > a else 'FAIL'} {a:.4g} -> {b:.4g}")
    bad = [(s, m) for s in t.index for m in ("fgd", "fgd_raw", "fgd_pose", "fid_k", "fid_g", "div_k", "div_g",
                                              "l1_div", "pfc")
           if not (t.loc[s, m + "_ci_low"] <= t.loc[s, m] <= t.loc[s, m + "_ci_high"])]
    res.append(f"intervals violating low<=value<=high: {bad}")
    print("\n".join(res))


SPLITS = ((0, 27, 26), (1, 27, 26), (2, 27, 26), (3, 27, 26), (4, 14, 26), (5, 27, 13), (6, 10, 10))
METRICS = ("fgd", "fid_k", "fid_g", "fgd_raw")


def _rises(v) -> bool:
    return bool(np.all(np.diff(np.asarray(v, float)) > 0))


def summary(root, csv_out):
    """Per split and distance: does it rise strictly over each range of levels, do the freezes
    score worse than the unedited clips (reports under ROOT/s{seed}_r{ref}_t{test}/report or
    ROOT/reh{seed}/report); writes CSV_OUT and prints the count table of docs/distribution.md."""
    import pandas as pd
    rows = []
    for seed, n_ref, n_test in SPLITS:
        d = next(x for x in (Path(root) / f"reh{seed}", Path(root) / f"s{seed}_r{n_ref}_t{n_test}") if x.exists())
        t = pd.read_csv(d / "report" / "distribution.csv").set_index("system")
        for m in METRICS:
            rot = t.loc[["unedited"] + ROT_NAMES, m].to_numpy()
            pos = t.loc[["unedited_pos"] + POS_NAMES, m].to_numpy()
            r = {"split": f"s{seed}_r{n_ref}_t{n_test}", "metric": m,
                 "rot 1-8": _rises(rot[:5]), "rot 1-32": _rises(rot),
                 "pos 0.5-32": _rises(pos), "pos 1-32": _rises(np.r_[pos[0], pos[2:]]),
                 "pos 2-32": _rises(np.r_[pos[0], pos[3:]]),
                 "pos 0.5-4": _rises(pos[:5]), "pos 2-4": _rises(np.r_[pos[0], pos[3:5]])}
            for fz in ("whole", "half", "arm"):
                r[f"{fz}>unedited"] = bool(t.loc[f"frozen_{fz}", m] > t.loc["unedited", m])
            r["values rot"] = " ".join(f"{x:.3g}" for x in rot)
            r["values pos"] = " ".join(f"{x:.3g}" for x in pos)
            r["frozen w/h/a"] = " ".join(f"{t.loc[f'frozen_{fz}', m]:.3g}" for fz in ("whole", "half", "arm"))
            r["rvr"] = float(t.loc["real vs real", m])
            rows.append(r)
    df = pd.DataFrame(rows)
    df.to_csv(csv_out, index=False)
    cols = ["rot 1-8", "rot 1-32", "pos 0.5-4", "pos 0.5-32", "pos 1-32", "pos 2-32",
            "whole>unedited", "half>unedited", "arm>unedited"]
    print("| distance | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for m in METRICS:
        sub = df[df.metric == m]
        print(f"| {m} | " + " | ".join(str(int(sub[c].sum())) for c in cols) + " |")


if __name__ == "__main__":
    if sys.argv[1] == "summary":  # rehearse.py summary ROOT CSV_OUT
        summary(sys.argv[2], sys.argv[3])
        sys.exit(0)
    seed, n_ref, n_test, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    ref, systems = main(seed, n_ref, n_test, out)
    from evalkit.cli import main as ek
    code = ek(["compare", "--reference", str(ref), *[str(out / s) if s != "unedited_pos" else f"unedited_pos={out / s}"
               for s in systems], "--no-score", "--bootstrap", "200", "--jobs", "2", "-q", "--out", str(out / "report")])
    if code:
        sys.exit(code)
    check(out)
