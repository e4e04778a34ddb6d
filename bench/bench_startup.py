"""Whole-process start-up of the command against a minimal numpy BVH reader, timed alike.

Sides, each a fresh Python process run to its end:

* ``evalkit --help``;
* ``evalkit info CLIP`` (read the clip, detect units and roles, print one table row);
* peer: ``pybvh`` 0.9 (a vectorised numpy BVH reader from PyPI) reading the same clip and
  computing world positions of every joint on every frame, as its documentation shows. Without
  pybvh installed, the peer is only a minimal numpy BVH reader written for this bench (our
  *restatement*: split the file, one ``numpy`` array of the frame block), and the output says so;
  with pybvh installed, that reader is timed too, as a second row.

All sides run with the same interpreter and environment; bytecode of every module is written to
a temporary cache by one untimed warm-up run of each side (as an installed package has it), then
sides alternate for ``--runs`` rounds. Reported: best wall and best CPU (user + system of the
child) of each side, and their ratios to the peer.

    python bench/bench_startup.py [CLIP.bvh] [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PYBVH = "import pybvh, sys; pybvh.read_bvh_file(sys.argv[1]).joint_positions()"

#: Our restatement of a minimal numpy BVH reader: hierarchy lines skipped, frame block as one array.
MINIMAL = """import sys, numpy as np
text = open(sys.argv[1]).read()
head, _, motion = text.partition("MOTION")
lines = motion.splitlines()
n_frames = int(lines[1].split(":")[1])
frames = np.array(" ".join(lines[3:]).split(), dtype=np.float64).reshape(n_frames, -1)
"""


def _run(cmd: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU seconds of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, cwd=str(ROOT), stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    from evalkit.data import sample_path

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("clip", nargs="?", default=str(sample_path("cmu", "01_01.bvh")))
    ap.add_argument("--runs", type=int, default=7, help="alternating rounds (best of each side)")
    args = ap.parse_args()
    clip = str(Path(args.clip).resolve())
    try:
        import pybvh  # noqa: F401

        peer_name, peer = "pybvh 0.9 (read + joint positions)", [sys.executable, "-c", PYBVH, clip]
    except ImportError:
        peer_name, peer = "minimal numpy reader (restatement)", [sys.executable, "-c", MINIMAL, clip]
    evalkit = [sys.executable, "-m", "evalkit"]
    sides = {peer_name: peer}
    if peer is not None and "pybvh" in peer_name:
        sides["minimal numpy reader (restatement)"] = [sys.executable, "-c", MINIMAL, clip]
    sides |= {"evalkit --help": evalkit + ["--help"], "evalkit info CLIP": evalkit + ["info", clip]}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=cache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for cmd in sides.values():  # untimed: writes bytecode, fills the OS file cache
            _run(cmd, env)
        best = {name: [float("inf"), float("inf")] for name in sides}
        for _ in range(args.runs):
            for name, cmd in sides.items():
                wall, cpu = _run(cmd, env)
                best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
    load = os.getloadavg()[0]
    print(f"clip: {Path(clip).name}; best of {args.runs} alternating fresh processes; load average {load:.1f}")
    pw, pc = best[peer_name]
    print(f"{'side':38s} {'wall':>8s} {'CPU':>8s} {'wall ratio':>11s} {'CPU ratio':>10s}")
    for name, (wall, cpu) in best.items():
        print(f"{name:38s} {wall:7.3f}s {cpu:7.3f}s {wall / pw:10.2f}x {cpu / pc:9.2f}x")


if __name__ == "__main__":
    main()
