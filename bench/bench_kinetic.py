"""Kinetic features: evalkit's vectorised version against a loop-style restatement of the
common public implementation (AIST++ / Bailando "kinetic features", fairmotion-derived).

The restatement below is written from the published description of that code, not copied: for
every joint and every frame it averages velocities (and accelerations) over a ±window of frames
with plain Python loops, as the public version does. The public version computes the previous
velocity inside the acceleration as ``p[t] - p[t-1] / dt`` — an operator-precedence bug (only
``p[t-1]`` is divided by the frame time). ``precedence_bug=True`` reproduces it; ``False`` fixes it,
and with the fix the loop must equal ``evalkit.features.kinetic.kinetic_features``.

Both sides are timed alike: CPU seconds, best of ``--repeat`` runs after one untimed run.
The peer is our restatement of public code (see above), not a package.

Run:  .venv/bin/python bench/bench_kinetic.py [--frames N] [--repeat R]
"""

from __future__ import annotations

import argparse

import numpy as np


def _avg_velocity(pos, i, j_idx, window, dt, axes):
    total = np.zeros(len(axes))
    count = 0
    for j in range(-window, window + 1):
        if i + j - 1 < 0 or i + j >= len(pos):
            continue
        total += pos[i + j][j_idx][axes] - pos[i + j - 1][j_idx][axes]
        count += 1
    return total / (count * dt)


def _avg_acceleration(pos, i, j_idx, window, dt, precedence_bug):
    total = np.zeros(3)
    count = 0
    for j in range(-window, window + 1):
        if i + j - 1 < 0 or i + j + 1 >= len(pos):
            continue
        v_next = (pos[i + j + 1][j_idx] - pos[i + j][j_idx]) / dt
        if precedence_bug:
            v_prev = pos[i + j][j_idx] - pos[i + j - 1][j_idx] / dt  # the public version's slip
        else:
            v_prev = (pos[i + j][j_idx] - pos[i + j - 1][j_idx]) / dt
        total += (v_next - v_prev) / dt
        count += 1
    return np.linalg.norm(total / count)


def kinetic_features_loop(positions: np.ndarray, fps: float, window: int = 2, up_axis: int = 1,
                          precedence_bug: bool = True) -> np.ndarray:
    """``(joints, 3)`` horizontal KE, vertical KE, energy expenditure — loop style."""
    dt = 1.0 / fps
    n, n_j = positions.shape[:2]
    horiz = [a for a in range(3) if a != up_axis]
    out = np.zeros((n_j, 3))
    for jt in range(n_j):
        ke_h = ke_v = ee = 0.0
        for i in range(1, n):
            vh = _avg_velocity(positions, i, jt, window, dt, horiz)
            vv = _avg_velocity(positions, i, jt, window, dt, [up_axis])
            ke_h += float(np.linalg.norm(vh)) ** 2
            ke_v += float(vv[0]) ** 2
            ee += _avg_acceleration(positions, i, jt, window, dt, precedence_bug)
        out[jt] = [ke_h / (n - 1), ke_v / (n - 1), ee / (n - 1)]
    return out


def main() -> None:
    from evalkit.data import sample_path
    from evalkit.features.kinetic import kinetic_features
    from evalkit.motion import load_motion

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=600, help="frames of CMU 01_01 to use (default 600)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    m = load_motion(sample_path("cmu", "01_01.bvh")).slice(1, 1 + args.frames)
    pos = np.asarray(m.positions)
    print(f"input: CMU 01_01.bvh, {m.n_frames} frames x {m.n_joints} joints @ {m.fps:g} fps")

    from timing import best_cpu  # bench/timing.py (this script's folder is on sys.path)

    def best(fn):
        return best_cpu(fn, args.repeat)

    t_loop, loop_fixed = best(lambda: kinetic_features_loop(pos, m.fps, precedence_bug=False))
    loop_bug = kinetic_features_loop(pos, m.fps, precedence_bug=True)
    t_vec, ours = best(lambda: kinetic_features(pos, m.fps))
    print(f"both sides: CPU seconds, best of {args.repeat} runs after a warm-up run")
    print(f"loop restatement : {t_loop:8.3f} s")
    print(f"evalkit vectorised: {t_vec:8.4f} s   speed-up x{t_loop / t_vec:,.0f}")
    print(f"max |ours - loop(fixed)|      = {np.abs(ours - loop_fixed).max():.3e}")
    rel = np.abs(loop_bug[:, 2] - loop_fixed[:, 2]) / np.maximum(loop_fixed[:, 2], 1e-12)
    print(f"energy expenditure, buggy vs fixed: median relative difference {np.median(rel):.1%} "
          f"(the KE columns are unaffected: {np.abs(loop_bug[:, :2] - loop_fixed[:, :2]).max():.1e})")


if __name__ == "__main__":
    main()
