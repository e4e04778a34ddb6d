"""``naturalness`` as a measurement, on real CMU capture of two rigs (cgspeed BVH, ASF/AMC):
it ignores what no one can see (a nudge of every file value, the rig's proportions), catches
what everyone sees (a popped frame at 120 fps wherever it falls, a bad join in a loop), its
numbers agree with each other, and it says why and when it does not know."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from evalkit.models import window_features as windows
from evalkit.models.corruptions import corrupt
from evalkit.models.dataset import trim_glitches
from evalkit.models.discriminator import FEATURE_GROUPS, feature_group, score_naturalness, speed_notes
from evalkit.models.training import load_model
from evalkit.models.window_features import feature_columns, window_features
from evalkit.motion import load_motion, resample, write_bvh

RIGS = ("01_01.bvh", "131_03.bvh", "07_05-walk.amc", "16_15.amc")


@pytest.fixture(scope="module")
def model():
    return load_model("default")[0]


@pytest.fixture(scope="module")
def walk120(cmu_dir):
    m = trim_glitches(load_motion(cmu_dir / "07_05-walk.amc"))
    assert m.fps == 120.0
    return m


def _rig_constant_features(tables) -> list[str]:
    """Features constant within every clip (spread below rounding) whose value differs between
    clips: they say which rig a clip is, not how it moves."""
    out = []
    for c in feature_columns(tables[0]):
        spread = [np.nanstd(t[c].to_numpy()) if np.isfinite(t[c]).any() else 0.0 for t in tables]
        means = np.array([np.nanmean(t[c].to_numpy()) if np.isfinite(t[c]).any() else np.nan for t in tables])
        scale = max(1.0, float(np.nanmax(np.abs(means))) if np.isfinite(means).any() else 1.0)
        if max(spread) < 1e-9 * scale and np.nanmax(means) - np.nanmin(means) > 1e-12 * scale:
            out.append(c)
    return out


def test_no_window_feature_identifies_the_rig(cmu_dir, monkeypatch):
    tables = [window_features(load_motion(cmu_dir / f)) for f in RIGS]
    assert _rig_constant_features(tables) == []
    # the check finds such a feature: limb asymmetry without its tolerance is constant per rig
    monkeypatch.setattr(windows, "ASYMMETRY_TOLERANCE", 0.0)
    tables = [window_features(load_motion(cmu_dir / f)) for f in RIGS]
    assert "f_asym_max_max" in _rig_constant_features(tables)


def _nudged(src, dst, delta, seed=0):
    lines = src.read_text().splitlines()
    start = next(i for i, s in enumerate(lines) if s.strip().startswith("Frame Time")) + 1
    body = np.loadtxt(lines[start:], ndmin=2)
    body = body + delta * np.random.default_rng(seed).choice([-1.0, 1.0], size=body.shape)
    dst.write_text("\n".join(lines[:start]) + "\n" + "\n".join(" ".join(f"{v:.12f}" for v in r) for r in body) + "\n")
    return dst


@pytest.mark.parametrize("clip", ["01_01.bvh", "131_03.bvh", "16_15.amc"])
def test_a_nudge_of_every_file_value_does_not_move_the_verdict(model, cmu_dir, tmp_path, clip):
    base = tmp_path / "base.bvh"
    write_bvh(load_motion(cmu_dir / clip), base, precision=6)
    ref = score_naturalness(model, load_motion(base))
    for delta in (1e-9, 1e-6):  # file units: degrees and the file's length unit
        s = score_naturalness(model, load_motion(_nudged(base, tmp_path / f"n{delta:g}.bvh", delta)))
        assert abs(s.naturalness - ref.naturalness) <= 0.001, (clip, delta)
        assert abs(s.worst_naturalness - ref.worst_naturalness) <= 0.02, (clip, delta)


@pytest.mark.parametrize("clip", ["01_01.bvh", "07_05-walk.amc"])
def test_the_same_take_at_20_30_60_and_120_fps_reads_the_same(model, cmu_dir, clip):
    """The take at the rates datasets give (every k-th frame of the 120-fps capture, no filter)
    reads within 0.05 of the 30-fps take: the shipped model judges clips that come at or below
    its working rate on the band its resampling keeps of faster ones (the working band)."""
    assert model.window.working_band
    take = load_motion(cmu_dir / clip)
    at = {fps: score_naturalness(model, take.slice(0, None, 120 // fps).with_(fps=float(fps))).naturalness
          for fps in (20, 30, 60, 120)}
    assert max(abs(v - at[30]) for v in at.values()) <= 0.05, at


@pytest.mark.parametrize("clip", RIGS)
def test_the_numbers_of_a_clip_agree(model, cmu_dir, clip):
    s = score_naturalness(model, load_motion(cmu_dir / clip))
    assert s.worst_naturalness <= s.worst_stretch_naturalness + 1e-12 <= s.naturalness + 2e-12
    w = s.windows
    assert w["naturalness"].min() == pytest.approx(s.worst_naturalness)
    assert np.isclose(w["local_naturalness"].mean(), s.naturalness) or s.cuts_s


@pytest.mark.parametrize("offset", [1, 2, 3])  # 120 fps frames between those a 30-fps grid keeps
def test_a_popped_frame_at_120_fps_is_caught_wherever_it_falls(model, walk120, offset):
    clean = score_naturalness(model, walk120)
    k = walk120.n_frames // 2 - (walk120.n_frames // 2) % 4 + offset
    pose = walk120.rotations[0].copy()
    pose[:, :] = [0.0, 0.0, 0.0, 1.0]  # every joint at its rest rotation: the rig's bind pose
    rot = walk120.rotations.copy()
    rot[k:k + 2, 1:] = pose[1:]
    popped = score_naturalness(model, walk120.with_(rotations=rot), drop_pops=False)
    t = k / walk120.fps
    w = popped.windows
    held = w[(w["start_s"] <= t) & (w["end_s"] > t)]
    before = clean.windows.loc[held.index, "naturalness"]
    assert held["naturalness"].max() < before.min() - 0.3, (offset, held["naturalness"].round(3).tolist())
    assert popped.naturalness < clean.naturalness


def test_a_loops_joins_are_judged(model, cmu_dir):
    walk = resample(trim_glitches(load_motion(cmu_dir / "07_05-walk.amc")), 30.0)
    part = walk[: int(2.5 * walk.fps)]
    clean = score_naturalness(model, part)
    # ten copies with the body carried on along the floor (no teleport, so no cut): at every
    # seam the pose jumps from the last frame's to the first's
    tr = part.translations
    step = tr[-1, 0] - tr[0, 0] + (tr[-1, 0] - tr[-2, 0])
    step[1] = 0.0
    copies = []
    for c in range(10):
        t = tr.copy()
        t[:, 0] += c * step
        copies.append(t)
    loop = part.with_(rotations=np.concatenate([part.rotations] * 10), translations=np.concatenate(copies))
    s = score_naturalness(model, loop)
    assert s.copies == pytest.approx(10, abs=0.01)
    assert s.naturalness < clean.naturalness - 0.2
    assert s.worst_naturalness <= s.worst_stretch_naturalness <= s.naturalness


def test_reasons_name_the_feet_of_a_skated_clip(model, cmu_dir):
    walk = resample(trim_glitches(load_motion(cmu_dir / "07_05-walk.amc")), 30.0)
    s = score_naturalness(model, corrupt(walk, "foot_skate", 1.0, seed=1).motion)
    assert s.reasons.split(" ")[0] == "feet", s.reasons
    assert set(s.windows["reason"]) <= set(FEATURE_GROUPS) | {""}


def test_feature_groups_cover_every_model_feature(model):
    groups = {feature_group(c) for c in model.design_names_}
    assert groups <= set(FEATURE_GROUPS) and {"feet", "ground", "smoothness", "pose"} <= groups


def test_reliability_says_when_motion_is_unlike_the_training_data(model, cmu_dir):
    walk = load_motion(cmu_dir / "01_01.bvh")
    s = score_naturalness(model, walk)
    assert s.reliability >= 0.9 and not any("outside what the model" in n for n in s.notes)
    # the same take played ten times too fast: joints move faster than anyone
    fast = walk.with_(fps=walk.fps * 10)
    fs = score_naturalness(model, fast)
    assert fs.reliability < 0.5
    assert any("outside what the model was trained on" in n for n in fs.notes)
    assert any("faster than any person" in n and "120 fps" in n for n in fs.notes), fs.notes


def test_a_rig_unlike_the_training_rigs_is_noted(model, cmu_dir):
    walk = load_motion(cmu_dir / "16_15.amc")
    assert set(model.training_rigs_) == {"31j:Hips", "31j:root"}  # from the shipped model's card
    known = score_naturalness(model, walk)
    assert not any("not one the model was trained on" in n for n in known.notes), known.notes
    # the same capture as another tool writes it: the root joint named otherwise
    names = ("pelvis",) + tuple(walk.skeleton.names[1:])
    other = walk.with_(skeleton=replace(walk.skeleton, names=names))
    s = score_naturalness(model, other)
    note = [n for n in s.notes if "not one the model was trained on" in n]
    assert len(note) == 1 and "31 joints, root pelvis" in note[0] and "31 joints, root Hips" in note[0]
    assert s.naturalness == pytest.approx(known.naturalness, abs=1e-9)  # a note, not another verdict


def test_speed_notes_suggest_the_frame_rate(cmu_dir):
    walk = load_motion(cmu_dir / "07_05-walk.amc")
    assert speed_notes(walk) == []
    note = speed_notes(walk.with_(fps=1200.0))
    assert len(note) == 1 and "1200 fps" in note[0] and "120 fps" in note[0]


def _starting_in_bind_pose(walk, hold_s=0.6, blend_s=0.5):
    """Real walk preceded by its rig's bind pose (CMU ASF: a T-pose, arms out), held still, then
    blended into the walk's first frame by slerp: how capture sessions start."""
    from evalkit.motion import quat

    n_hold, n_blend = int(hold_s * walk.fps), int(blend_s * walk.fps)
    rest = np.zeros_like(walk.rotations[:1])
    rest[..., 3] = 1.0
    rest[:, 0] = walk.rotations[0, 0]
    hold = np.repeat(rest, n_hold, axis=0)
    t = np.linspace(0, 1, n_blend)[:, None]
    t = 10 * t ** 3 - 15 * t ** 4 + 6 * t ** 5  # minimum-jerk timing: arms lowered as people do
    blend = quat.slerp(np.repeat(rest, n_blend, 0), np.repeat(walk.rotations[:1], n_blend, 0),
                       np.broadcast_to(t, (n_blend, walk.n_joints)))
    rot = np.concatenate([hold, blend, walk.rotations])
    tr = np.concatenate([np.repeat(walk.translations[:1], n_hold + n_blend, 0), walk.translations])
    return walk.with_(rotations=rot, translations=tr), n_hold


def test_a_take_starting_in_its_calibration_pose_is_found_and_left_out(model, walk120):
    from evalkit.models.discriminator import calibration_frames

    assert calibration_frames(walk120) == (0, 0)
    take, n_hold = _starting_in_bind_pose(walk120)
    head, tail = calibration_frames(take)
    assert n_hold <= head < n_hold + int(0.5 * walk120.fps) + 1 and tail == 0
    s = score_naturalness(model, take)
    assert any("calibration pose" in n for n in s.notes)
    assert s.windows["start_s"].min() >= head / take.fps - 1e-9
    # left out: the verdict is the verdict of the take without those frames, and it reads natural
    # (the constructed start, arms lowered over a still root and then walking at speed, is a join
    # and costs its window a little: about 0.1 below the walk alone)
    assert s.naturalness == pytest.approx(score_naturalness(model, take.slice(head, None)).naturalness, abs=1e-9)
    assert s.naturalness > 0.8 and s.naturalness > score_naturalness(model, walk120).naturalness - 0.15
