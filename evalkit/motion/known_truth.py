"""SMPL-family, HumanML3D and MDM files with known truth, built from real capture.

No AMASS, BEAT2, HumanML3D or MDM file may be downloaded or shipped here (their licences forbid
it), so evalkit's readers are checked on files written by :func:`write_samples` from the bundled
CMU capture: each clip is retargeted onto the SMPL topology by its joint roles
(:func:`evalkit.motion.smpl.retarget_positions`), rotations are fitted on evalkit's default
SMPL skeleton (:func:`evalkit.motion.smpl.to_smpl`), and the result is written in each format.
The returned truth is the world positions (metres, Y-up) each file must read back as. These are
files made here, not by the original tools: docs/formats.md says which checks rest on them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from evalkit.motion.model import Motion

DEFAULT_CLIPS = ("16_15.amc", "07_05-walk.amc", "09_06-run.amc")


def _clip(path: str | os.PathLike) -> Motion:
    from evalkit.motion.io import load_motion

    return load_motion(path)


def write_samples(out_dir: str | os.PathLike, clips: Sequence[str | os.PathLike], fps: float = 30.0) -> dict:
    """Write one file per format into ``out_dir`` from the capture files ``clips`` (e.g. the bundled
    CMU clips :data:`DEFAULT_CLIPS` in ``evalkit/data/samples/cmu``) and return
    ``{file name: truth}`` where truth is
    ``{"path", "positions" (frames, joints, 3) or a list of them, "fps", "skeleton", "source"}``.

    Files: ``amass_smplh.npz`` (SMPL-H, Z-up), ``amass_smplx.npz`` (SMPL-X, Z-up),
    ``beat2_smplx.npz`` (SMPL-X, Y-up, expressions), ``hml_joints.npy`` (22 joints, 20 fps),
    ``hml_vecs.npy`` (263 features, 20 fps; truth: the joints turned to HumanML3D's start pose),
    ``results.npy`` (MDM dict, one sample per clip, 20 fps), ``positions_smpl24.npy`` (24 joints,
    ``--array-fps`` needed), ``positions.csv`` (24 joints, ``--array-fps`` needed).
    """
    from evalkit.motion import humanml3d as hml
    from evalkit.motion.ops import resample
    from evalkit.motion.smpl import retarget_positions, smpl_arrays, to_smpl

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    motions = [resample(_clip(c), fps) for c in clips]
    first = motions[0]
    truth: dict = {}

    def put(name, positions, rate, skeleton, **extra):
        truth[name] = {"path": out / name, "positions": positions, "fps": rate, "skeleton": skeleton,
                       "source": str(clips[0]), **extra}

    for name, topology, style in (("amass_smplh.npz", "smplh52", "amass"), ("amass_smplx.npz", "smplx55", "amass"),
                                  ("beat2_smplx.npz", "smplx55", "beat2")):
        m = to_smpl(first, topology)
        np.savez(out / name, **smpl_arrays(m, style=style))
        put(name, np.array(m.positions), fps, topology)

    m20 = resample(_clip(clips[0]), hml.FPS)
    joints = retarget_positions(m20, "smpl22")
    np.save(out / "hml_joints.npy", joints.astype(np.float32))
    put("hml_joints.npy", joints.astype(np.float32).astype(np.float64), hml.FPS, "smpl22")
    np.save(out / "hml_vecs.npy", hml.joints_to_features(joints).astype(np.float32))
    put("hml_vecs.npy", hml.canonical(joints), hml.FPS, "smpl22")

    samples = [retarget_positions(resample(_clip(c), hml.FPS), "smpl22") for c in clips]
    t_max = max(len(s) for s in samples)
    motion = np.zeros((len(samples), 22, 3, t_max), dtype=np.float32)
    for i, s in enumerate(samples):
        motion[i, :, :, : len(s)] = np.moveaxis(s, 0, 2)
    texts = [f"a person moves as in capture clip {Path(c).stem}" for c in clips]
    np.save(out / "results.npy", {"motion": motion, "text": texts, "lengths": np.array([len(s) for s in samples]),
                                  "num_samples": len(samples), "num_repetitions": 1}, allow_pickle=True)
    put("results.npy", [s.astype(np.float32).astype(np.float64) for s in samples], hml.FPS, "smpl22", text=texts)

    p24 = retarget_positions(first, "smpl24")
    np.save(out / "positions_smpl24.npy", p24)
    put("positions_smpl24.npy", p24, fps, "smpl24")
    from evalkit.motion.topology import TOPOLOGIES

    cols = [f"{n}_{a}" for n in TOPOLOGIES["smpl24"][0] for a in "xyz"]
    np.savetxt(out / "positions.csv", p24.reshape(len(p24), -1), fmt="%.7f", delimiter=",",
               header=",".join(cols), comments="")
    put("positions.csv", p24, fps, "smpl24")
    return truth
