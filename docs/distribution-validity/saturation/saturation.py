"""Does FGD keep rising with gross degradations? One rehearsal split (rehearse.py's split and
degradations, at wide levels: rotation noise 0.5-32 degrees on every BVH channel, position noise
0.5-32 cm on every joint of `evalkit convert`'s .npz, the three freezes), FGD of each degraded set
against the reference for each extractor given (docs/distribution.md, "FGD at gross levels").

    python docs/distribution-validity/saturation/saturation.py SEED N_REF N_TEST OUT_DIR EXTRACTOR [EXTRACTOR ...]
    python docs/distribution-validity/saturation/saturation.py limits OUT_DIR

``limits``: FGD (shipped extractor), FID_g and FID_k of the split's unedited test clips
(OUT_DIR/unedited_pos) with Gaussian noise of 0-30 m on every joint position (written as .npz
files), against OUT_DIR/ref: FID_g's features are fractions of frames (bounded), so it converges;
FID_k grows with the square of the noise; FGD's windows are divided by the body height measured on
the (noisy) file, so it is bounded too as the noise outgrows the body. Then rotation noise of
8-256 degrees on every BVH channel: every distance levels off once the rotations are as good as
uniformly random.

Windows are cut once per clip (the extractors must share window, stride and frame rate) and every
extractor embeds the same windows; FGD is the Frechet distance of the pooled window embeddings,
as `evalkit compare` computes it (no bootstrap here).
"""
import pickle
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "rehearsal"))
import rehearse  # noqa: E402

rehearse.ROT = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
rehearse.POS = (0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32)
SYSTEMS = (["unedited"] + [f"rot{s:g}deg" for s in rehearse.ROT] + ["unedited_pos"]
           + [f"pos{s * 100:g}cm" for s in rehearse.POS] + ["frozen_whole", "frozen_half", "frozen_arm"])


def folder_windows(folder: Path, protocol) -> np.ndarray:
    from evalkit.distribution.canonical import canonical_positions, windows
    from evalkit.motion import load_motion
    from evalkit.motion.formats import iter_motion_files

    out = []
    for f in iter_motion_files([str(folder)]):
        pos, height, _ = canonical_positions(load_motion(f), protocol.fps)
        out.append(windows(pos, height, protocol.window, protocol.stride))
    return np.concatenate(out)


def main(seed: int, n_ref: int, n_test: int, out: Path, extractors: list[str]) -> None:
    from evalkit.distribution.embedding import load_extractor
    from evalkit.distribution.frechet import frechet_from_features

    exts = [load_extractor(e) for e in extractors]
    wp = exts[0].window_protocol
    assert all(e.window_protocol == wp for e in exts)
    cache = out / "windows.pkl"
    if cache.exists():
        win = pickle.loads(cache.read_bytes())
    else:
        if not (out / "frozen_arm").exists():
            rehearse.main(seed, n_ref, n_test, out)
        win = {s: folder_windows(out / s, wp) for s in ["ref", *SYSTEMS]}
        cache.write_bytes(pickle.dumps(win))
    print(f"split seed {seed}: {n_ref} reference / {n_test} test clips; windows: ref {len(win['ref'])}, "
          f"test {len(win['unedited'])}")
    fams = {"rot": ["unedited"] + [f"rot{s:g}deg" for s in rehearse.ROT],
            "pos": ["unedited_pos"] + [f"pos{s * 100:g}cm" for s in rehearse.POS]}
    for e, name in zip(exts, extractors):
        ref = e.encode(win["ref"])
        fgd = {s: frechet_from_features(e.encode(win[s]), ref) for s in SYSTEMS}
        print(f"extractor {e.extractor_hash} ({name}, {e.activation})")
        for fam, names in fams.items():
            v = [fgd[s] for s in names]
            ok = all(b > a for a, b in zip(v, v[1:]))
            print(f"  {fam} {'rises' if ok else 'NOT strictly'}: " + " < ".join(f"{x:.4g}" for x in v))
        print("  frozen whole/half/arm vs unedited: " + " ".join(
            f"{fgd[s]:.4g}{'>' if fgd[s] > fgd['unedited'] else '<='}{fgd['unedited']:.4g}"
            for s in ("frozen_whole", "frozen_half", "frozen_arm")))


def limits(out: Path) -> None:
    from evalkit.distribution.diversity import GEOMETRIC_MIN_SCALE, reference_scaler
    from evalkit.distribution.embedding import load_extractor
    from evalkit.distribution.frechet import frechet_from_features
    from evalkit.distribution.geometric import geometric_features
    from evalkit.distribution.canonical import canonical_positions, windows
    from evalkit.features.kinetic import kinetic_features
    from evalkit.motion import load_motion
    from evalkit.motion.formats import iter_motion_files

    ext = load_extractor()
    wp = ext.window_protocol

    def feats(motions):
        g, k, e = [], [], []
        for m in motions:
            pos, height, _ = canonical_positions(m, 30.0)
            g.append(geometric_features(pos, 30.0))
            k.append(kinetic_features(pos, 30.0, 2).reshape(-1))
            e.append(ext.encode(windows(pos, height, wp.window, wp.stride)))
        return np.array(g), np.array(k), np.concatenate(e)

    g_ref, k_ref, e_ref = feats(load_motion(f) for f in iter_motion_files([str(out / "ref")]))
    mg, sg = reference_scaler(g_ref, GEOMETRIC_MIN_SCALE)
    mk, sk = reference_scaler(k_ref)
    rng = np.random.default_rng(0)
    for s in (0.0, 0.02, 0.08, 0.32, 1.0, 3.0, 10.0, 30.0):
        folder = out / "limits" / f"pos{s * 100:g}cm"  # written as files: the skeleton is read from them
        folder.mkdir(parents=True, exist_ok=True)
        for f in sorted((out / "unedited_pos").glob("*.npz")):
            z = dict(np.load(f, allow_pickle=False))
            z["positions"] = z["positions"] + rng.normal(0, s, z["positions"].shape)
            np.savez(folder / f.name, **z)
        g, k, e = feats(load_motion(f) for f in sorted(folder.glob("*.npz")))
        print(f"{s * 100:6g} cm  FGD {frechet_from_features(e, e_ref):10.4g}  "
              f"FID_g {frechet_from_features((g - mg) / sg, (g_ref - mg) / sg):8.4g}  "
              f"FID_k {frechet_from_features((k - mk) / sk, (k_ref - mk) / sk):10.4g}  mean relation {g.mean():.3f}",
              flush=True)
    ref_bvh = e_ref
    for deg in (8, 16, 32, 64, 128, 256):  # rotation noise on every BVH channel, written as files
        folder = out / "limits" / f"rot{deg}deg"
        folder.mkdir(parents=True, exist_ok=True)
        for f in sorted((out / "unedited").glob("*.bvh")):
            head, hdr, data, chans = rehearse.read_bvh_text(f)
            rot = np.array([c.lower().endswith("rotation") for c in chans])
            x = data.copy()
            x[:, rot] += rng.normal(0, deg, size=(len(x), int(rot.sum())))
            rehearse.write_bvh_text(folder / f.name, head, hdr, x)
        g, k, e = feats(load_motion(f) for f in sorted(folder.glob("*.bvh")))
        print(f"{deg:6g} deg FGD {frechet_from_features(e, ref_bvh):10.4g}  "
              f"FID_g {frechet_from_features((g - mg) / sg, (g_ref - mg) / sg):8.4g}  "
              f"FID_k {frechet_from_features((k - mk) / sk, (k_ref - mk) / sk):10.4g}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "limits":
        limits(Path(sys.argv[2]))
        sys.exit(0)
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), sys.argv[5:])
