"""End-pop trimming (evalkit.motion.trim) on real capture."""

from __future__ import annotations

import numpy as np
import pytest

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


def _tile(m, copies):
    """The clip's frames played ``copies`` times over (the body jumps back at every repeat)."""
    return m.with_(rotations=np.concatenate([m.rotations] * copies),
                   translations=np.concatenate([m.translations] * copies))


def test_no_cut_in_continuous_capture(cmu_dir):
    from evalkit.motion.trim import find_cuts

    for path in sorted(cmu_dir.glob("*.amc")) + sorted(cmu_dir.glob("*.bvh")):
        m = load_motion(path)
        clean, _, _ = drop_end_pops(m, body_index(m).scale)
        assert len(find_cuts(clean.positions, clean.fps, body_index(m).scale)) == 0, path.name


@pytest.mark.parametrize("name", ["16_15.amc", "07_05-walk.amc", "09_06-run.amc"])
def test_a_clip_repeated_frame_for_frame_cuts_at_every_repeat(cmu_dir, name):
    """A walk or run repeated frame for frame jumps back metres at every repeat: a cut there and
    nowhere else, at 30 and at 120 frames/s (09_06 is captured at 120)."""
    from evalkit.motion.trim import find_cuts

    m = load_motion(cmu_dir / name)
    m, _, _ = drop_end_pops(m, body_index(m).scale)
    cuts = find_cuts(_tile(m, 4).positions, m.fps, body_index(m).scale)
    assert cuts.tolist() == [m.n_frames, 2 * m.n_frames, 3 * m.n_frames]


def test_a_dropped_frames_stall_is_not_a_cut(cmu_dir):
    """The body holds a frame, then jumps to where the walk has got to: the jump is as far as a
    cut's, but it comes out of frozen frames, so it is motion gone wrong, not a new take."""
    from evalkit.models.corruptions import corrupt
    from evalkit.motion.trim import CutConfig, find_cuts

    m = load_motion(cmu_dir / "07_05-walk.amc")
    scale = body_index(m).scale
    stalled = corrupt(m, "freeze", 1.0, seed=0, mode="body").motion
    step = np.linalg.norm(np.diff(stalled.positions.mean(axis=1), axis=0), axis=1)
    assert step.max() > CutConfig().distance * scale  # the jump itself would pass for a cut
    assert len(find_cuts(stalled.positions, stalled.fps, scale)) == 0
    assert len(find_cuts(stalled.positions, stalled.fps, scale, CutConfig(stall_frames=0))) == 1


def _min_frames(m) -> int:
    return int(np.ceil(0.5 * m.fps))  # the shipped model's shortest clip, 0.5 s


def test_no_repeat_in_real_capture(cmu_dir):
    """No real take is copies of one stretch (0.1 mm over every joint for a whole period)."""
    from evalkit.motion.trim import find_repeat

    for path in sorted(cmu_dir.glob("*.amc")) + sorted(cmu_dir.glob("*.bvh")):
        m = load_motion(path)
        assert find_repeat(m, _min_frames(m), body_index(m).scale) == 0, path.name


@pytest.mark.parametrize("name", ["16_15.amc", "131_04-dance.amc"])
def test_repeats_are_found_frame_for_frame_and_carried_on(cmu_dir, name):
    """Copies played frame for frame (whole, or the last cut short) and a loop with the body
    carried on and turned at every copy (:func:`repeat_loop`) have the copy's length as period."""
    from evalkit.models.lengths import loop_points, repeat_loop
    from evalkit.motion.trim import find_repeat

    m = load_motion(cmu_dir / name)
    scale, k = body_index(m).scale, _min_frames(m)
    assert find_repeat(_tile(m, 10), k, scale) == m.n_frames
    assert find_repeat(_tile(m, 3)[:int(2.5 * m.n_frames)], k, scale) == m.n_frames
    i, j = loop_points(m, 0.6 * m.duration)
    looped = repeat_loop(m, i, j, 4)
    assert find_repeat(looped, k, scale) == j - i
    # the second copy turned 90 degrees about the vertical and moved 3 m: still a copy
    from evalkit.motion import quat

    turn = quat.about_y(np.pi / 2)
    rot, tr = m.rotations.copy(), m.translations.copy()
    rot[:, 0] = quat.multiply(np.broadcast_to(turn, rot[:, 0].shape), rot[:, 0])
    tr[:, 0] = quat.rotate(turn, tr[:, 0]) + np.array([3.0, 0.0, 1.0])
    turned = concatenate([m, m.with_(rotations=rot, translations=tr)])
    assert find_repeat(turned, k, scale) == m.n_frames
    # 1.5 copies is not a repeat (at least two whole copies are), nor is a copy moved 1 mm up
    assert find_repeat(_tile(m, 2)[:int(1.5 * m.n_frames)], k, scale) == 0
    up = m.translations.copy()
    up[:, 0, 1] += 0.001
    assert find_repeat(concatenate([m, m.with_(translations=up)]), k, scale) == 0


def test_a_held_pose_is_not_a_repeat(cmu_dir):
    """A pose held still for seconds repeats itself at every frame, but holds no motion to judge once."""
    from evalkit.motion.trim import find_repeat

    m = load_motion(cmu_dir / "16_15.amc")
    held = m.with_(rotations=np.repeat(m.rotations[:1], 400, axis=0), translations=np.repeat(m.translations[:1], 400, axis=0))
    assert find_repeat(held, _min_frames(m), body_index(m).scale) == 0
