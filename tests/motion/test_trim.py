"""End-pop trimming (evalkit.motion.trim) on real capture."""

from __future__ import annotations

import numpy as np

from evalkit.features.body import body_index
from evalkit.features.score import score_motion
from evalkit.motion import load_motion
from evalkit.motion.model import concatenate
from evalkit.motion.trim import drop_end_pops, find_end_pops


def test_t_pose_pop_at_frame_0_is_dropped_only_when_it_pops(cmu_dir):
    m = load_motion(cmu_dir / "01_01.bvh")  # cgspeed conversion: frame 0 is a T-pose
    body = body_index(m)
    assert find_end_pops(np.asarray(m.positions), m.fps, body.scale) == (1, 0)
    clean, a, b = drop_end_pops(m, body.scale)
    assert (a, b) == (1, 0) and clean.n_frames == m.n_frames - 1
    # no pop in a clip that has none, in either direction
    w = load_motion(cmu_dir / "131_03.bvh")
    assert find_end_pops(np.asarray(w.positions), w.fps, body_index(w).scale) == (0, 0)
    # append the T-pose at the end of a clean clip: it is found there
    tail = concatenate([clean.slice(0, 300), m.slice(0, 1)])
    assert find_end_pops(np.asarray(tail.positions), tail.fps, body.scale) == (0, 1)
    row = score_motion(m)
    assert row["dropped_frames"] == 1


def test_trimmed_clip_keeps_the_solved_positions(cmu_dir):
    m = load_motion(cmu_dir / "01_01.bvh")
    full = m.positions
    clean, a, _ = drop_end_pops(m, body_index(m).scale)
    assert "positions" in clean.__dict__  # sliced from the parent, not solved again
    assert np.array_equal(clean.positions, full[a:])
    fresh = clean.with_(rotations=clean.rotations, translations=clean.translations)
    assert np.allclose(fresh.positions, clean.positions, atol=1e-12)
    assert not clean.rotations.flags.writeable and not clean.positions.flags.writeable
