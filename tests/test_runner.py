"""The clip runner: one read per input, analyses in order, per-file errors, input order kept in
process and in worker processes, one options object for reading."""

from __future__ import annotations

import pickle
import shutil
from dataclasses import dataclass

import numpy as np
import pytest

from evalkit.data import SAMPLES_DIR
from evalkit.errors import EvalkitError, FileFormatError
from evalkit.motion.formats import LoadOptions, load_motion
from evalkit.runner import run_clips

CMU = SAMPLES_DIR / "cmu"
CLIPS = [CMU / "01_01.bvh", CMU / "16_15.amc", CMU / "131_01.bvh"]


@dataclass(frozen=True)
class Frames:
    """The clip's frame count and frame rate."""

    name: str = "frames"

    def __call__(self, motion, clip):
        return motion.n_frames, motion.fps


@dataclass(frozen=True)
class Doubled:
    """Uses what the analysis before it returned."""

    name: str = "doubled"

    def __call__(self, motion, clip):
        return 2 * clip.results["frames"][0]


@dataclass(frozen=True)
class Refuses:
    """Fails on clips of one stem."""

    stem: str
    name: str = "refuses"

    def __call__(self, motion, clip):
        if clip.path.stem == self.stem:
            raise EvalkitError(f"{clip.path}: refused")
        return clip.tag


def test_each_input_is_read_with_the_options_and_analysed_in_order():
    clips = list(CLIPS)
    opts = LoadOptions(fps=60.0)
    runs = run_clips(clips, (Frames(), Doubled()), opts)
    assert [r.path for r in runs] == [str(c) for c in clips]
    for c, r in zip(clips, runs):
        m = load_motion(c, fps=60.0)
        assert r.ok and r.results["frames"] == (m.n_frames, m.fps)
        assert r.results["doubled"] == 2 * m.n_frames
    amc = [r for r in runs if r.path.endswith(".amc")]
    assert amc and amc[0].results["frames"][1] == 60.0  # the AMC frame rate of the options, not 120


def test_a_bad_file_gives_its_error_and_the_others_are_still_analysed(tmp_path):
    bad = tmp_path / "broken.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n")
    clips = [CLIPS[0], bad, CLIPS[2]]
    runs = run_clips([(c, f"t{i}") for i, c in enumerate(clips)], (Frames(), Refuses("131_01")))
    assert [r.tag for r in runs] == ["t0", "t1", "t2"]
    assert runs[0].ok and runs[0].results["refuses"] == "t0"
    assert not runs[1].ok and "broken.bvh" in runs[1].error and "\n" not in runs[1].error
    assert runs[1].results == {}
    assert runs[2].error.endswith("refused") and "frames" in runs[2].results and "refuses" not in runs[2].results


def test_errors_raise_gives_the_first_failure_as_it_came(tmp_path):
    bad = tmp_path / "broken.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n")
    with pytest.raises(FileFormatError):
        run_clips([CLIPS[0], bad], (Frames(),), errors="raise")


def test_worker_processes_and_chunks_give_the_same_runs_in_input_order():
    clips = list(CLIPS) * 2
    here = run_clips(clips, (Frames(), Refuses("16_15")))
    pooled = run_clips(clips, (Frames(), Refuses("16_15")), jobs=2, chunk_size=1)
    assert [(r.path, r.error, r.results) for r in pooled] == [(r.path, r.error, r.results) for r in here]


@dataclass(frozen=True)
class WhereRead:
    """The path the worker read the clip from."""

    name: str = "where"

    def __call__(self, motion, clip):
        return str(clip.path)


def test_a_cluster_is_sent_absolute_paths_and_runs_name_the_inputs_as_given(tmp_path, monkeypatch):
    """Dask workers run in folders of their own: relative inputs reach them as absolute paths,
    and each run still names its input as the caller gave it."""
    import distributed  # in the 'test' extra

    for f in CLIPS[:2]:
        shutil.copyfile(f, tmp_path / f.name)
    shutil.copyfile(CMU / "16.asf", tmp_path / "16.asf")
    monkeypatch.chdir(tmp_path)
    given = [f.name for f in CLIPS[:2]]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, host="127.0.0.1",
                                  protocol="tcp://", dashboard_address=None) as cluster:
        runs = run_clips(given, (Frames(), WhereRead()), scheduler=cluster.scheduler_address, chunk_size=1)
    assert [r.path for r in runs] == given
    assert [r.results["where"] for r in runs] == [str(tmp_path / g) for g in given]
    assert [r.results["frames"][0] for r in runs] == [load_motion(f).n_frames for f in CLIPS[:2]]


def test_reading_warnings_are_recorded_per_clip(tmp_path):
    src = CLIPS[0]
    slow = tmp_path / "slow.bvh"
    shutil.copyfile(src, slow)
    runs = run_clips([slow], (Frames(),), LoadOptions(bvh_fps=2.0))  # far too slow for a body: a warning
    plain = run_clips([src], (Frames(),))
    assert runs[0].ok and runs[0].results["frames"][1] == 2.0
    assert runs[0].warnings and not plain[0].warnings


def test_the_options_are_one_picklable_value():
    opts = LoadOptions(units="cm", up="z", roles={"head": "Head"}, array_fps=30.0, allow_pickle=True)
    assert pickle.loads(pickle.dumps(opts)) == opts
    kw = opts.kwargs()
    assert kw["units"] == "cm" and kw["roles"] == {"head": "Head"} and kw["allow_pickle"] is True
    assert np.isclose(LoadOptions(fps=30.0).load(CLIPS[1]).fps, 30.0)


def test_bad_settings_are_refused():
    with pytest.raises(EvalkitError, match="jobs"):
        run_clips(CLIPS, (Frames(),), jobs=0)
    with pytest.raises(EvalkitError, match="distinct names"):
        run_clips(CLIPS, (Frames(), Frames()))
    assert run_clips([], (Frames(),)) == []


def _count_reads(monkeypatch):
    """Count the reads of BVH and AMC files per path, at the readers (the dispatcher imports
    them at each call, so every read by any caller is seen)."""
    from evalkit.motion.formats import amc, bvh

    reads: dict[str, int] = {}
    real_bvh, real_amc = bvh.read_bvh, amc.read_asf_amc

    def count(path):
        reads[str(path)] = reads.get(str(path), 0) + 1

    def read_bvh(path, *args, **kwargs):
        count(path)
        return real_bvh(path, *args, **kwargs)

    def read_asf_amc(asf, path, *args, **kwargs):
        count(path)
        return real_amc(asf, path, *args, **kwargs)

    monkeypatch.setattr(bvh, "read_bvh", read_bvh)
    monkeypatch.setattr(amc, "read_asf_amc", read_asf_amc)
    return reads


def test_study_scoring_reads_each_stimulus_once_for_metrics_and_naturalness(tmp_path, monkeypatch):
    from evalkit.pipeline import score_stimuli

    stimuli = []
    for name, src in (("a.smg.bvh", CLIPS[0]), ("a.original.bvh", CLIPS[2])):
        shutil.copyfile(src, tmp_path / name)
        stimuli.append(tmp_path / name)
    reads = _count_reads(monkeypatch)
    table = score_stimuli(stimuli, lambda msg: None)
    assert reads == {str(s): 1 for s in stimuli}
    assert table["naturalness"].between(0, 1).all() and table["jerk_mean"].notna().all()
    assert list(table.columns).index("item") < list(table.columns).index("naturalness")


def test_training_clips_are_read_once_each(monkeypatch):
    from evalkit.models.dataset import load_natural

    reads = _count_reads(monkeypatch)
    clips = load_natural(CLIPS)
    assert reads == {str(c): 1 for c in CLIPS}
    assert [c.path for c in clips] == [str(c) for c in CLIPS] and all(c.motion.fps == 30.0 for c in clips)
