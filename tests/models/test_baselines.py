"""Baselines on real CMU capture, and the evaluation harness that runs them beside the
discriminator on the same grouped splits."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import InputError
from evalkit.models.baselines import (
    RenGMMBaseline, SingleMetricBaseline, TransitionCostBaseline, default_baselines,
)
from evalkit.models.corruptions import corrupt
from evalkit.models.dataset import ExampleSpec, load_natural, segments, trim_glitches
from evalkit.models.discriminator import NaturalnessDiscriminator
from evalkit.models.evaluate import (
    EvalConfig, markdown_table, rig_families, within_fold_auc, write_report,
)
from evalkit.motion import resample


@pytest.fixture(scope="module")
def clips(cmu_dir):
    return load_natural([cmu_dir])


@pytest.fixture(scope="module")
def walk30(walk_motion):
    return resample(trim_glitches(walk_motion), 30)


def test_ren_gmm_prefers_natural(clips, walk30):
    train = [s for c in clips if c.group != "cmu:16" for s in segments(c)]
    gmm = RenGMMBaseline(n_components=4)
    gmm.fit([gmm.prepare(m) for m in train])
    natural, jittery = gmm.score_samples([gmm.prepare(walk30), gmm.prepare(corrupt(walk30, "jitter", 1.0, seed=1).motion)])
    assert np.isfinite([natural, jittery]).all()
    assert natural > jittery
    clip_mean = RenGMMBaseline(n_components=4, aggregate="clip_min").fit([gmm.prepare(m) for m in train])
    assert clip_mean.score_samples([gmm.prepare(walk30)])[0] >= natural  # a mean over the clip >= worst window
    with pytest.raises(InputError, match="natural"):
        RenGMMBaseline().fit([gmm.prepare(walk30)], [0])
    with pytest.raises(InputError, match="aggregate"):
        RenGMMBaseline(n_components=4, aggregate="median").fit([gmm.prepare(m) for m in train]).score_samples(
            [gmm.prepare(walk30)])


def test_transition_cost_sees_the_seam(walk30):
    tc = TransitionCostBaseline()
    costs = tc.prepare(walk30)
    assert costs.shape == (walk30.n_frames - 2,) and (costs >= 0).all()
    cut = corrupt(walk30, "transition", 1.0, seed=3).motion
    natural, seam = tc.fit([costs]).score_samples([costs, tc.prepare(cut)])
    assert seam < natural
    # the worst seam is where the corruption put it
    i = np.argmax(tc.prepare(cut))
    seam_frame = cut.meta["provenance"]["params"]["seam_frame"]
    assert abs(i + 1 - seam_frame) <= 2


def test_single_metrics(walk30):
    skate = SingleMetricBaseline("skate_ratio")
    jerk = SingleMetricBaseline("jerk")
    sliding = corrupt(walk30, "foot_skate", 0.8, seed=1, mode="drift").motion
    noisy = corrupt(walk30, "jitter", 0.8, seed=1, mode="clip").motion
    s = skate.score_samples([skate.prepare(walk30), skate.prepare(sliding)])
    j = jerk.score_samples([jerk.prepare(walk30), jerk.prepare(noisy)])
    assert s[0] > s[1] and j[0] > j[1]
    assert -1 <= s[0] <= 0
    with pytest.raises(InputError, match="metric"):
        SingleMetricBaseline("beauty").prepare(walk30)
    assert [b.name for b in default_baselines()][0].startswith("Ren")


def test_within_fold_auc():
    y = np.array([1, 0, 1, 0])
    # each fold alone separates perfectly, though fold 1's scores are all higher than fold 0's
    assert within_fold_auc(y, np.array([0.2, 0.1, 10.0, 9.0]), np.array([0, 0, 1, 1])) == 1.0
    assert within_fold_auc(y, np.array([0.1, 0.2, 9.0, 10.0]), np.array([0, 0, 1, 1])) == 0.0


def test_rig_families(clips):
    fam = rig_families(clips)
    by_file = {c.path.split("/")[-1]: f for c, f in zip(clips, fam)}
    assert by_file["16_15.amc"] == by_file["07_05-walk.amc"]  # ASF/AMC skeletons of CMU
    assert by_file["131_01.bvh"] == by_file["01_01.bvh"]  # cgspeed BVH conversions
    assert by_file["16_15.amc"] != by_file["131_01.bvh"]  # other joint names: another rig


def test_evaluation_report(clips, tmp_path):
    """The whole harness on a small configuration: grouped CV, leave-one-type-out, baselines on
    the same splits, the ROC figure, the leave-one-rig-out test and the Markdown report."""
    cfg = EvalConfig(
        n_splits=2,
        train=ExampleSpec(types=("jitter", "foot_skate"), per_type=1, mirror=False),
        sweep=(1.0,),
        model=NaturalnessDiscriminator(max_iter=30, min_samples_leaf=5, cv=2),
    )
    files = write_report(clips, tmp_path, cfg, progress=False)
    names = {f.name for f in files}
    assert names == {"scores.csv", "metrics.csv", "roc.png", "report.md", "rig_transfer.csv",
                     "lengths.csv", "length_clips.csv"}
    scores = pd.read_csv(tmp_path / "scores.csv")
    assert set(scores["setting"]) == {"seen", "loco:jitter", "loco:foot_skate"}
    methods = set(scores["method"])
    assert "discriminator" in methods and len(methods) == 1 + len(default_baselines())
    # the same test examples for every method within a setting and fold
    per = scores.groupby(["setting", "fold", "method"])["example"].apply(frozenset)
    for (setting, fold), g in per.groupby(level=[0, 1]):
        assert len(set(g)) == 1
    # grouped: no group on both sides (test groups of the two folds are disjoint and cover all)
    tg = scores[scores["setting"] == "seen"].groupby("fold")["group"].apply(set)
    assert not (tg.iloc[0] & tg.iloc[1]) and (tg.iloc[0] | tg.iloc[1]) == {c.group for c in clips}
    # leave-one-type-out tests only the held-out type
    loco = scores[scores["setting"] == "loco:jitter"]
    assert set(loco["corruption"]) == {"none", "jitter"}
    metrics = pd.read_csv(tmp_path / "metrics.csv")
    assert {"roc_auc", "accuracy", "mcc"} <= set(metrics.columns)
    d = metrics[(metrics["setting"] == "seen") & (metrics["method"] == "discriminator") & (metrics["corruption"] == "jitter")]
    assert d["roc_auc"].iloc[0] > 0.8  # jitter at severity 0.5 is plain to see
    report = (tmp_path / "report.md").read_text()
    assert "held-out type" in report and "rig family left out" in report
    rt = pd.read_csv(tmp_path / "rig_transfer.csv")
    assert set(rt["held_out_rig"]) == set(rig_families(clips))
    assert rt["naturalness"].between(0, 1).all()
    assert (tmp_path / "roc.png").stat().st_size > 10_000
    # the evaluation by length: the seen-types fold models on the same clips at 5, 20 and 60 s,
    # each clip scored by the fold that held its group out
    info = pd.read_csv(tmp_path / "length_clips.csv")
    lengths = pd.read_csv(tmp_path / "lengths.csv")
    assert set(info["length_s"]) == {5.0, 20.0, 60.0} and info["used"].any()
    assert set(lengths["setting"]) == {"length:5s", "length:20s", "length:60s"}
    assert set(lengths["corruption"]) == {"none", "jitter", "foot_skate"}
    fold_of = scores[scores["setting"] == "seen"].groupby("group")["fold"].first()
    assert (lengths["fold"].to_numpy() == fold_of.loc[lengths["group"]].to_numpy()).all()
    assert "## By clip length" in report


def test_markdown_table():
    df = pd.DataFrame({"a": [0.12345, np.nan]}, index=pd.Index(["x", "y"], name="k"))
    assert markdown_table(df).splitlines() == ["| k | a |", "|---|---:|", "| x | 0.123 |", "| y |  |"]


def test_parallel_preparation_fits_and_staged_report_give_the_serial_results(clips, tmp_path):
    """``evalkit train --evaluate --jobs 2``: examples prepared and fits run in two processes give
    the serial tables and scores, and the staged run's last report has nothing still to come."""
    from evalkit.models.evaluate import cross_validate, prepare_data, run_evaluation

    few = [c for c in clips if c.motion.duration < 10][:5]  # 3 subjects, 2 folds: small and quick
    cfg = EvalConfig(
        n_splits=2, sweep=(1.0,), lengths=(),
        train=ExampleSpec(types=("jitter", "foot_skate"), per_type=1, mirror=False, long_lengths=(15.0,)),
        model=NaturalnessDiscriminator(max_iter=10, min_samples_leaf=5, cv=2, artifact_check=False),
    )
    serial_data = prepare_data(few, cfg, progress=False)
    data = prepare_data(few, cfg, progress=False, jobs=2)
    pd.testing.assert_frame_equal(serial_data.train_windows, data.train_windows)
    pd.testing.assert_frame_equal(serial_data.test_windows, data.test_windows)
    assert [e.segment for e in serial_data.test] == [e.segment for e in data.test]
    assert any("@" in e.segment for e in data.train)  # the long examples are in training
    serial = cross_validate(data, cfg, progress=False)
    parallel = cross_validate(data, cfg, progress=False, jobs=2)
    pd.testing.assert_frame_equal(serial, parallel)
    # the baselines fitted once and shared by single-setting runs give the same rows
    from evalkit.models.evaluate import fit_baselines

    fits = fit_baselines(data, cfg)
    one = cross_validate(data, cfg, progress=False, include_seen=False, only=["loco:jitter"], baseline_fits=fits)
    pd.testing.assert_frame_equal(one.reset_index(drop=True),
                                  serial[serial["setting"] == "loco:jitter"].reset_index(drop=True))
    with pytest.raises(InputError, match="fit_baselines"):
        cross_validate(data, cfg, progress=False, baseline_fits=fits[:1])
    run_evaluation(few, tmp_path, cfg, jobs=2, progress=False, rig_transfer_test=False)
    staged = pd.read_csv(tmp_path / "scores.csv")
    assert set(staged["setting"]) == {"seen", "loco:jitter", "loco:foot_skate"}
    key = ["setting", "fold", "example", "method"]
    a = staged.sort_values(key).reset_index(drop=True)
    b = serial.sort_values(key).reset_index(drop=True)
    np.testing.assert_allclose(a["score"], b["score"], rtol=1e-9)
    report = (tmp_path / "report.md").read_text()
    assert "still to come" not in report and "Run time" in report

    # a stopped run resumes: with the last stage's results removed, a second run recomputes only
    # that stage (the others are read back) and writes the same scores; other settings, another key
    from evalkit.models.evaluate import stage_key

    stage_dir = tmp_path / "stages" / stage_key(few, cfg)
    stored = sorted(p.name for p in stage_dir.iterdir())
    assert stored == ["baselines.joblib", "examples.joblib", "loco-foot_skate.joblib", "loco-jitter.joblib",
                      "seen.joblib"]
    (stage_dir / "loco-foot_skate.joblib").unlink()
    (tmp_path / "scores.csv").unlink()
    run_evaluation(few, tmp_path, cfg, jobs=1, progress=False, rig_transfer_test=False)
    resumed = pd.read_csv(tmp_path / "scores.csv")
    pd.testing.assert_frame_equal(resumed, staged)
    report = (tmp_path / "report.md").read_text()
    assert "seen-types fits: resumed" in report and "leave-one-type-out jitter: resumed" in report
    assert "leave-one-type-out foot_skate: resumed" not in report
    assert "baselines fitted: resumed" in report  # fitted once, in the first run, for every setting
    assert (stage_dir / "loco-foot_skate.joblib").exists()
    assert stage_key(few, replace(cfg, seed=1)) != stage_key(few, cfg)
    assert stage_key(few[:4], cfg) != stage_key(few, cfg)


def test_a_damaged_stage_file_is_computed_again_with_a_warning(tmp_path):
    """A stored stage that cannot be read (e.g. copied half) is not fatal: it is recomputed,
    stored again, and read back next time."""
    from evalkit.models.evaluate import _Stages

    stages = _Stages(tmp_path)
    assert stages.get("x", lambda: {"a": 1}) == ({"a": 1}, False)
    assert stages.get("x", lambda: {"a": 2}) == ({"a": 1}, True)
    (tmp_path / "x.joblib").write_bytes(b"not a joblib file")
    with pytest.warns(UserWarning, match="could not be read"):
        assert stages.get("x", lambda: {"a": 3}) == ({"a": 3}, False)
    assert stages.get("x", lambda: {"a": 4}) == ({"a": 3}, True)
