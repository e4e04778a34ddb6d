"""Load + joint positions of a 10-minute 30 fps SMPL-X parameter file (18,000 frames x 55 joints).

evalkit: ``load_motion(clip.npz, body_model=model.npz).positions`` (numpy: joint regressor x
shaped template, axis-angle -> quaternions, quaternion forward kinematics), and the same
without a model (default skeleton).

Peer: the field's usual path, the ``smplx`` package with PyTorch on the CPU, used as its README
says: ``smplx.SMPLX(model_path, ...)`` then ``model(betas=..., global_orient=..., body_pose=...,
jaw_pose=..., leye_pose=..., reye_pose=..., left_hand_pose=..., right_hand_pose=...,
expression=..., transl=...)``, joints = ``output.joints[:, :55]``; in batches of 1,000 frames
(a whole 18,000-frame batch needs ~5 GB for the posed vertices). It runs in a separate
interpreter that has torch and smplx (``--peer-python``, e.g. a venv made with ``pip install
torch==2.13.0 smplx``) so torch never becomes an evalkit dependency; the same files are timed
the same way (best of ``--repeats`` wall-clock runs, from reading the files to joints in memory).

No licensed model data exists here: the SMPL-X model file is synthetic with the official layout
and sizes (10,475 vertices, 400 shape+expression components, 486 pose correctives, 55 joints);
the clip is CMU capture retargeted to SMPL-X and tiled to 18,000 frames. Both sides get the same
files, and the joints they compute are compared (max difference printed).

    python bench/bench_formats.py --peer-python /tmp/formats-bench-venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N_VERTS, N_JOINTS, N_SHAPE, N_EXPR, N_POSE_BASIS = 10475, 55, 300, 100, 486


def make_model(path: Path, seed: int = 0) -> None:
    """A synthetic SMPL-X model file with the official keys, shapes and kinematic tree."""
    from evalkit.motion import topology as topo

    rng = np.random.default_rng(seed)
    names, parents = topo.TOPOLOGIES["smplx55"]
    rest = topo.default_rest_joints("smplx55")
    per = N_VERTS // N_JOINTS
    owner = np.minimum(np.arange(N_VERTS) // per, N_JOINTS - 1)
    v = (rest[owner] + rng.normal(0, 0.03, (N_VERTS, 3))).astype(np.float32)
    jr = np.zeros((N_JOINTS, N_VERTS), dtype=np.float32)
    for j in range(N_JOINTS):
        idx = np.flatnonzero(owner == j)[:8]
        jr[j, idx] = 1.0 / len(idx)
    w = np.zeros((N_VERTS, N_JOINTS), dtype=np.float32)
    w[np.arange(N_VERTS), owner] = 1.0
    kt = np.stack([np.array(parents), np.arange(N_JOINTS)]).astype(np.int64)
    kt[0, 0] = 4294967295
    np.savez(path, v_template=v, f=rng.integers(0, N_VERTS, (20908, 3)).astype(np.int64),
             shapedirs=rng.normal(0, 0.005, (N_VERTS, 3, N_SHAPE + N_EXPR)).astype(np.float32),
             posedirs=rng.normal(0, 0.001, (N_VERTS, 3, N_POSE_BASIS)).astype(np.float32),
             J_regressor=jr, kintree_table=kt, weights=w,
             hands_componentsl=np.eye(45, dtype=np.float32), hands_componentsr=np.eye(45, dtype=np.float32),
             hands_meanl=np.zeros(45, dtype=np.float32), hands_meanr=np.zeros(45, dtype=np.float32),
             lmk_faces_idx=np.arange(51, dtype=np.int64), lmk_bary_coords=np.full((51, 3), 1 / 3, dtype=np.float32))


def make_clip(path: Path, frames: int, seed: int = 1) -> None:
    """CMU capture retargeted to SMPL-X (BEAT2 layout, Y-up), tiled to ``frames`` at 30 fps,
    with random betas and expressions."""
    from evalkit.constructed.known_truth import _clip
    from evalkit.motion.ops import resample
    from evalkit.motion.formats.smpl import smpl_arrays, to_smpl

    from evalkit.data import SAMPLES_DIR

    m = to_smpl(resample(_clip(SAMPLES_DIR / "cmu" / "16_15.amc"), 30), "smplx55")
    a = smpl_arrays(m, style="beat2")
    reps = frames // m.n_frames + 1
    rng = np.random.default_rng(seed)
    poses = np.tile(a["poses"], (reps, 1))[:frames]
    step = a["trans"][-1] - a["trans"][0]
    trans = np.concatenate([a["trans"] + k * step * np.array([1, 0, 1]) for k in range(reps)])[:frames]
    np.savez(path, poses=poses, trans=trans.astype(np.float32), betas=rng.normal(0, 1, N_SHAPE).astype(np.float32),
             expressions=rng.normal(0, 0.5, (frames, N_EXPR)).astype(np.float32),
             mocap_frame_rate=np.array(30.0), gender=np.array("neutral"), model=np.array("smplx2020"))


def best(fn, repeats: int) -> tuple[float, object]:
    out, times = None, []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def run_evalkit(clip: Path, model: Path, repeats: int) -> dict:
    import warnings

    from evalkit.motion import load_motion
    from evalkit.motion.formats.dispatch import _cached_body_model
    from evalkit.motion.formats.smpl import joint_positions

    def with_model(cold: bool):
        if cold:
            _cached_body_model.cache_clear()
        return joint_positions(load_motion(clip, body_model=model))

    def default():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return joint_positions(load_motion(clip))

    default()  # imports and first-call costs out of the timings
    t_cold, joints = best(lambda: with_model(True), repeats)
    t_warm, _ = best(lambda: with_model(False), repeats)
    t_default, _ = best(default, repeats)
    return {"cold": t_cold, "warm": t_warm, "default": t_default, "joints": joints}


def peer(clip: str, model: str, repeats: int, out: str, batch: int = 1000) -> None:
    """Runs inside the interpreter with torch + smplx."""
    import torch
    import smplx

    def load_model():
        return smplx.SMPLX(model_path=model, ext="npz", num_betas=N_SHAPE, num_expression_coeffs=N_EXPR,
                           use_pca=False, flat_hand_mean=True, batch_size=batch)

    def run(body):
        d = np.load(clip)
        poses = torch.tensor(d["poses"], dtype=torch.float32)
        trans = torch.tensor(d["trans"], dtype=torch.float32)
        expr = torch.tensor(d["expressions"], dtype=torch.float32)
        betas = torch.tensor(d["betas"], dtype=torch.float32)[None]
        joints = []
        with torch.no_grad():
            for s in range(0, len(poses), batch):
                p = poses[s:s + batch]
                n = len(p)
                o = body(betas=betas.expand(n, -1), global_orient=p[:, :3], body_pose=p[:, 3:66],
                         jaw_pose=p[:, 66:69], leye_pose=p[:, 69:72], reye_pose=p[:, 72:75],
                         left_hand_pose=p[:, 75:120], right_hand_pose=p[:, 120:165],
                         expression=expr[s:s + batch], transl=trans[s:s + batch])
                joints.append(o.joints[:, :N_JOINTS].numpy())
        return np.concatenate(joints)

    t_cold, joints = best(lambda: run(load_model()), repeats)
    body = load_model()
    t_warm, _ = best(lambda: run(body), repeats)
    np.save(out, joints)
    from importlib.metadata import version

    print(json.dumps({"cold": t_cold, "warm": t_warm, "torch": torch.__version__, "smplx": version("smplx")}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=18000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-python", default=None, help="interpreter with torch and smplx installed")
    ap.add_argument("--peer", nargs=3, metavar=("CLIP", "MODEL", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer:
        peer(args.peer[0], args.peer[1], args.repeats, args.peer[2])
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model, clip = tmp / "SMPLX_NEUTRAL.npz", tmp / "clip.npz"
        make_model(model)
        make_clip(clip, args.frames)
        ours = run_evalkit(clip, model, args.repeats)
        print(f"SMPL-X clip, {args.frames} frames x 55 joints (best of {args.repeats}):")
        print(f"  evalkit, --body-model, model file read each time   {ours['cold']:.3f} s")
        print(f"  evalkit, --body-model, model already read          {ours['warm']:.3f} s")
        print(f"  evalkit, default skeleton (no model)                {ours['default']:.3f} s")
        if not args.peer_python:
            print("  peer: not run (give --peer-python, an interpreter with torch and smplx)")
            return 0
        out = tmp / "peer.npy"
        proc = subprocess.run([args.peer_python, __file__, "--peer", str(clip), str(model), str(out),
                               "--repeats", str(args.repeats)], capture_output=True, text=True)
        if proc.returncode != 0:
            print("  peer failed:", proc.stderr.strip().splitlines()[-1:] or proc.stderr)
            return 1
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        diff = float(np.abs(np.load(out) - ours["joints"]).max())
        print(f"  smplx {res['smplx']} + torch {res['torch']} CPU, model loaded each time  {res['cold']:.3f} s")
        print(f"  smplx + torch CPU, model already loaded             {res['warm']:.3f} s")
        print(f"  largest joint difference evalkit vs smplx: {diff * 1000:.4f} mm (float32 in smplx)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
