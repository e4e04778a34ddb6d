"""How far ``naturalness`` moves for edits no one can see, and for the same take in another form.

For every clip given (real capture of several rigs), the clip is written to files the way users
have them and read back through :func:`evalkit.motion.load_motion`, then scored with a model:

* ``nudge1e-9`` / ``nudge1e-6``: every channel value of the BVH text moved by +-1e-9 / +-1e-6
  (file units: degrees, and the file's length unit), signs drawn per value;
* ``turn37`` / ``turn90``: the body turned about the vertical; ``moved``: moved 3 m on the floor;
  ``mirror``: left and right swapped;
* ``fps20`` / ``fps30`` / ``fps60`` / ``fps120``: the take at another frame rate, made the way the
  field makes it (every k-th frame of a 120-fps take, as HumanML3D and most pipelines do; a rate
  the source rate does not divide is resampled);
* ``hml_joints``: HumanML3D-style joint positions (SMPL's 22 joints at 20 fps, ``.npy``);
  ``smplh``: SMPL-H parameters (``.npz``, AMASS layout, Z-up), both retargeted from the clip by
  its joint roles (files made here from real capture, not by those tools).

Prints one row per clip and variant (``delta`` is the variant's verdict minus the reference's:
the BVH round trip for nudges and turns, the 30-fps take for frame rates and formats) and a
summary of the largest moves. Usage::

    python bench/naturalness_invariance.py [--model default] [--out table.csv] CLIP_OR_DIR ...
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.motion import Motion, load_motion, mirror, resample, write_bvh
from evalkit.motion.formats import iter_motion_files


def nudged_bvh(src: Path, dst: Path, delta: float, seed: int = 0) -> Path:
    """Copy of the BVH ``src`` with every MOTION value moved by ``+-delta`` (file units)."""
    lines = src.read_text().splitlines()
    start = next(i for i, s in enumerate(lines) if s.strip().startswith("Frame Time")) + 1
    rng = np.random.default_rng(seed)
    body = np.loadtxt(lines[start:], ndmin=2)
    body = body + delta * rng.choice([-1.0, 1.0], size=body.shape)
    text = "\n".join(lines[:start]) + "\n" + "\n".join(" ".join(f"{v:.12f}" for v in row) for row in body) + "\n"
    dst.write_text(text)
    return dst


def turned(m: Motion, degrees: float, shift=(0.0, 0.0, 0.0)) -> Motion:
    """The clip turned about the vertical (Y) by ``degrees`` and moved by ``shift`` metres."""
    from scipy.spatial.transform import Rotation

    r = Rotation.from_euler("y", degrees, degrees=True)
    rot = m.rotations.copy()
    tr = m.translations.copy()
    rot[:, 0] = (r * Rotation.from_quat(rot[:, 0])).as_quat()
    tr[:, 0] = r.apply(tr[:, 0]) + np.asarray(shift)
    return m.with_(rotations=rot, translations=tr)


def at_rate(m: Motion, fps: float) -> Motion:
    """The take at ``fps``: every k-th frame where the rate divides, else resampled."""
    k = m.fps / fps
    if abs(k - round(k)) < 1e-9 and round(k) >= 1:
        return m.slice(0, None, int(round(k))).with_(fps=float(fps))
    return resample(m, fps)


def variants(path: Path, tmp: Path) -> dict[str, tuple[str, Motion]]:
    """``{variant: (reference variant, motion)}`` of one clip, every one read back from a file."""
    from evalkit.motion.formats.smpl import retarget_positions, smpl_arrays, to_smpl

    m = load_motion(path)
    stem = path.stem
    base = tmp / f"{stem}.bvh"
    write_bvh(m, base, precision=6)
    out: dict[str, tuple[str, Motion]] = {"bvh": ("bvh", load_motion(base))}
    for d in (1e-9, 1e-6):
        out[f"nudge{d:g}"] = ("bvh", load_motion(nudged_bvh(base, tmp / f"{stem}_n{d:g}.bvh", d)))
    for name, mm in (("turn37", turned(m, 37.0)), ("turn90", turned(m, 90.0)),
                     ("moved", turned(m, 0.0, (3.0, 0.0, -2.0))), ("mirror", mirror(m))):
        f = tmp / f"{stem}_{name}.bvh"
        write_bvh(mm, f, precision=6)
        out[name] = ("bvh", load_motion(f))
    for fps in (20, 30, 60, 120):
        if fps > m.fps + 1e-6:
            continue
        f = tmp / f"{stem}_fps{fps}.bvh"
        write_bvh(at_rate(m, fps), f, precision=6)
        out[f"fps{fps}"] = ("fps30", load_motion(f))
    m20 = at_rate(m, 20)
    joints = retarget_positions(m20, "smpl22").astype(np.float32)
    f = tmp / f"{stem}_hml_joints.npy"
    np.save(f, joints)
    out["hml_joints"] = ("fps30", load_motion(f))
    f = tmp / f"{stem}_smplh.npz"
    np.savez(f, **smpl_arrays(to_smpl(at_rate(m, 30), "smplh52"), style="amass"))
    out["smplh"] = ("fps30", load_motion(f))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--model", default="default")
    ap.add_argument("--out", help="CSV of every row")
    args = ap.parse_args(argv)
    from evalkit.models.discriminator import score_naturalness
    from evalkit.models.training import load_model

    model, _ = load_model(args.model)
    rows = []
    for path in iter_motion_files(args.paths):
        with tempfile.TemporaryDirectory() as d:
            try:
                vs = variants(Path(path), Path(d))
            except Exception as exc:  # a clip this bench cannot turn into every form
                print(f"{path}: skipped ({exc})", file=sys.stderr)
                continue
        scores = {}
        for name, (_, mm) in vs.items():
            s = score_naturalness(model, mm)
            scores[name] = (s.naturalness, s.worst_naturalness)
        for name, (ref, _) in vs.items():
            if ref not in scores:
                continue
            rows.append({"clip": Path(path).name, "variant": name, "naturalness": scores[name][0],
                         "worst_window": scores[name][1], "delta": scores[name][0] - scores[ref][0],
                         "delta_worst": scores[name][1] - scores[ref][1]})
        print(pd.DataFrame([r for r in rows if r["clip"] == Path(path).name]).round(4).to_string(index=False))
    table = pd.DataFrame(rows)
    if args.out:
        table.to_csv(args.out, index=False)
    summary = table.groupby("variant")[["delta", "delta_worst"]].agg(lambda x: np.abs(x).max())
    print("\nlargest |delta| per variant over clips:\n" + summary.round(4).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
