"""Clips of a chosen length from real capture (evalkit.models.lengths) and the evaluation by
length: excerpts are the capture's own frames, loops are judged seamless without any
model, corrupted pieces join without a jump, and a real walk with foot sliding scores far below
its clean twin at 5, 20 and 60 s with the shipped model."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.models.dataset import load_natural
from evalkit.models.discriminator import score_naturalness
from evalkit.models.lengths import (
    corrupt_at_length, join_continuous, length_examples, natural_at_length, seam_ratio,
)
from evalkit.models.training import load_model


@pytest.fixture(scope="module")
def walk(cmu_dir):
    return load_natural([cmu_dir / "16_15.amc"])[0]  # 3.9 s of walking, 30 fps


@pytest.fixture(scope="module")
def long_take(cmu_dir):
    return load_natural([cmu_dir / "01_01.bvh"])[0]  # 22.9 s


def _largest_step(motion):
    return np.linalg.norm(np.diff(motion.positions, axis=0), axis=2).max(axis=1)


def test_excerpt_is_the_capture_itself(long_take):
    m = long_take.motion
    lc = natural_at_length(m, 20)
    assert lc.construction == "excerpt" and lc.seamless and lc.seams_s == ()
    assert lc.motion.n_frames == 600
    a = (m.n_frames - 600) // 2
    np.testing.assert_array_equal(lc.motion.rotations, m.rotations[a:a + 600])
    np.testing.assert_array_equal(lc.motion.translations, m.translations[a:a + 600])


def test_a_walk_loops_seamlessly_and_a_dance_does_not(walk, cmu_dir):
    lc = natural_at_length(walk.motion, 60)
    assert lc.construction == "loop" and lc.motion.n_frames == 1800
    assert len(lc.seams_s) == int(np.ceil(60 / lc.loop_s)) - 1
    assert lc.seamless, (lc.seam_ratio, lc.correction_deg)
    step = _largest_step(lc.motion)
    seams = (np.asarray(lc.seams_s) * 30).round().astype(int)
    assert step[seams - 1].max() < 3 * np.median(step)
    # a dance that does not repeat: closing its loop turns joints by tens of degrees
    dance = load_natural([cmu_dir / "131_04-dance.amc"])[0]
    d = natural_at_length(dance.motion, 20)
    assert d.construction == "loop" and not d.seamless and d.correction_deg > 15


def test_seam_ratio_sees_a_jump(walk):
    m = walk.motion
    assert seam_ratio(m, [40]) <= 1.0  # a frame of the capture itself is no seam
    jumped = m.with_(translations=np.concatenate([m.translations[:40], m.translations[40:] + [0.3, 0, 0]]))
    assert seam_ratio(jumped, [40], m) > 10


def test_pieces_join_as_they_were_and_corrupted_ones_without_a_jump(walk):
    lc = natural_at_length(walk.motion, 20).motion
    pieces = [lc[a:a + 150] for a in range(0, 600, 150)]
    np.testing.assert_allclose(join_continuous(pieces, pieces).positions, lc.positions, atol=1e-9)
    skated, intervals = corrupt_at_length(lc, "foot_skate", 0.5, seed=3, mode="drift")
    assert skated.n_frames == lc.n_frames
    assert intervals and all(0 <= a < b <= 20 + 1e-6 for a, b in intervals)
    assert sum(b - a for a, b in intervals) > 0.2 * 20  # drift runs over part of every piece or more
    step = _largest_step(skated)
    joins = [150, 300, 450]
    assert step[[j - 1 for j in joins]].max() < 3 * np.median(step)
    # the root drifted away from the clean path (foot sliding), so the body is elsewhere at the end
    assert np.linalg.norm(skated.positions[-1, 0] - lc.positions[-1, 0]) > 0.3


def test_foot_sliding_twin_scores_far_below_its_clean_twin_at_every_length(walk):
    # a real clip with foot sliding (every 5-s piece slid by the project's corruption)
    # against its clean twin, at 5, 20 and 60 s, scored with the shipped model as users score
    model = load_model("default")[0]
    examples, info = length_examples([walk], (5.0, 20.0, 60.0), ("foot_skate",), 0.5, seed=0)
    assert info["used"].all() and set(info["length_s"]) == {5.0, 20.0, 60.0}
    scores: dict[tuple[float, str], float] = {}
    for L, ex in examples:
        assert abs(ex.motion.duration - L) < 1 / 30 + 1e-9
        scores[(L, ex.provenance.corruption)] = score_naturalness(model, ex.motion, drop_pops=False).naturalness
    for L in (5.0, 20.0, 60.0):
        clean, slid = scores[(L, "none")], scores[(L, "foot_skate")]
        assert clean >= 0.5 and slid < clean - 0.3, (L, clean, slid)
    # the clean twin does not fall with length
    assert max(abs(scores[(L, "none")] - scores[(5.0, "none")]) for L in (20.0, 60.0)) <= 0.1


def test_evaluation_by_length_scores_each_folds_own_test_clips(walk, cmu_dir):
    from evalkit.models.dataset import ExampleSpec
    from evalkit.models.evaluate import EvalConfig, evaluate_by_length, length_report, length_summary

    model = load_model("default")[0]
    run = load_natural([cmu_dir / "07_05-walk.amc"])[0]  # another subject's walk, seamless as a loop
    dance = load_natural([cmu_dir / "131_04-dance.amc"])[0]
    cfg = EvalConfig(train=ExampleSpec(types=("foot_skate", "jitter")), lengths=(5.0, 20.0))
    # fold 0 tests the first walk's subject, fold 1 the second's: each clip is scored by its fold only
    folds = {0: (model, [walk.group, dance.group]), 1: (model, [run.group])}
    scores, info = evaluate_by_length([walk, run, dance], cfg, folds, progress=False)
    assert set(info.loc[info["used"], "clip"]) == {walk.motion.name, run.motion.name}  # the dance is not seamless
    assert set(scores["setting"]) == {"length:5s", "length:20s"}
    assert (scores.groupby(["segment", "corruption"]).size() == 1).all()
    assert set(scores.loc[scores["group"] == run.group, "fold"]) == {1}
    summary = length_summary(scores)
    assert list(summary.index) == [5.0, 20.0]
    assert (summary["n_natural"] == 2).all() and (summary["n_unnatural"] == 4).all()
    assert summary["roc_auc"].between(0, 1).all()
    text = "\n".join(length_report(scores, info))
    assert "## By clip length" in text and "length:20s" in text and "2 of 3 natural clips" in text
