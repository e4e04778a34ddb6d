"""The clip verdict on long clips: a time average of stretch verdicts, which does
not fall with length, with the worst stretch reported beside it.

Long clips are built from real capture with known truth: a natural take looped ten times with a
continuous root (the loop points chosen where pose and speed repeat, the small mismatch spread
over the loop), and the same long clip with real corruptions (evalkit.models.corruptions) on
one 5-s stretch or on every 5-s stretch. Scored with the shipped default model, as users score.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import shared_data

from evalkit.models.corruptions import corrupt
from evalkit.models.dataset import trim_glitches
from evalkit.models.discriminator import score_naturalness
from evalkit.models.lengths import loop_points, repeat_loop
from evalkit.models.naturalness import frame_naturalness
from evalkit.models.training import load_model
from evalkit.motion import Motion, load_motion, resample
from evalkit.motion.model import concatenate


@pytest.fixture(scope="module")
def model():
    return load_model("default")[0]


def looped(path, copies: int = 10) -> tuple[Motion, Motion]:
    """The natural clip (between its loop points) and the clip repeated ``copies`` times."""
    m = resample(trim_glitches(load_motion(path)), 30)
    i, j = loop_points(m, min(3.0, 0.6 * m.duration))
    return m[i:j], repeat_loop(m, i, j, copies)


def test_loop_is_continuous(cmu_dir):
    clip, long = looped(cmu_dir / "16_15.amc")
    assert long.n_frames == 10 * clip.n_frames and long.duration > 30
    step = np.linalg.norm(np.diff(long.positions, axis=0), axis=2).max(axis=1)  # largest joint step
    seams = step[clip.n_frames - 1::clip.n_frames]
    assert seams.max() < 3 * np.median(step)


def _repeat_case(model, path):
    """The model itself on every frame of a loop (``fold_repeats=False``: the loop is not
    recognised as copies), and the loop as users score it (judged on its first two copies and
    their join)."""
    clip, long = looped(path)
    a, b = score_naturalness(model, clip), score_naturalness(model, long, fold_repeats=False)
    assert len(b.windows) >= 10 * len(a.windows) // 2
    assert abs(b.naturalness - a.naturalness) <= 0.05, (path, a.naturalness, b.naturalness)
    # the worst stretch is reported on its own: 6 s (the model's stretch_s; the last window is
    # aligned to the clip's end, so the last stretch may be up to one hop shorter), inside the clip
    assert b.worst_stretch_naturalness <= b.naturalness + 1e-12
    length = b.worst_stretch_end_s - b.worst_stretch_start_s
    assert model.stretch_s - model.window.hop_s - 1e-9 <= length <= model.stretch_s + 1e-9
    assert 0 <= b.worst_stretch_start_s and b.worst_stretch_end_s <= long.duration + 1e-9
    assert np.allclose(b.windows["local_naturalness"].mean(), b.naturalness)
    assert b.copies == 1
    folded = score_naturalness(model, long)
    assert folded.copies == pytest.approx(10) and folded.period_s == pytest.approx(clip.duration)
    two = long.with_(rotations=long.rotations[:2 * clip.n_frames], translations=long.translations[:2 * clip.n_frames])
    assert folded.naturalness == score_naturalness(model, two, fold_repeats=False).naturalness
    assert abs(folded.naturalness - a.naturalness) <= 0.05  # a seamless join: the clip's verdict


@pytest.mark.parametrize("name", ["16_15.amc", "07_05-walk.amc"])
def test_clip_repeated_ten_times_scores_as_the_clip(model, cmu_dir, name):
    _repeat_case(model, cmu_dir / name)


@pytest.mark.parametrize("name", ["dataset-1_walk_normal_001.bvh", "dataset-1_run_old_001.bvh",
                                  "dataset-1_walk-back_chimpira_001.bvh", "dataset-1_walk-left_normal_001.bvh"])
def test_clip_repeated_ten_times_shared(model, name):
    _repeat_case(model, shared_data("mocap", "bandai-namco-1", name))


def _corrupt_stretches(long: Motion, kind: str, which: list[int], seg_s: float = 5.0, **options) -> Motion:
    """``long`` with the 5-s stretches numbered in ``which`` corrupted (moderate severity)."""
    n = int(round(seg_s * long.fps))
    parts = []
    for k, a in enumerate(range(0, long.n_frames, n)):
        seg = long[a:a + n]
        if k in which and seg.n_frames == n:
            seg = corrupt(seg, kind, 0.5, seed=k, **options).motion
        parts.append(seg)
    return concatenate(parts)


@pytest.mark.parametrize("kind, options", [("jitter", {"mode": "clip"}), ("keyframe", {"mode": "body"})])
def test_short_bad_stretch_lowers_a_long_clip_but_not_as_if_bad_throughout(model, cmu_dir, kind, options):
    _, long = looped(cmu_dir / "16_15.amc")  # 35 s
    n_seg = int(long.duration // 5)
    clean = score_naturalness(model, long, fold_repeats=False)  # frame by frame, as the corrupted ones
    bad = _corrupt_stretches(long, kind, [3], **options)
    one = score_naturalness(model, bad)
    every = score_naturalness(model, _corrupt_stretches(long, kind, list(range(n_seg)), **options))
    assert every.naturalness < one.naturalness < clean.naturalness
    assert one.naturalness - every.naturalness > 0.3, (clean.naturalness, one.naturalness, every.naturalness)
    # the worst stretch overlaps the corrupted one (15-20 s) and is much worse than the clip
    assert one.worst_stretch_start_s < 20 and one.worst_stretch_end_s > 15
    assert one.worst_stretch_naturalness < one.naturalness - 0.2
    w = one.windows
    inside = w[(w.start_s >= 15) & (w.end_s <= 20)]["local_naturalness"].mean()
    far = w[(w.end_s <= 8) | (w.start_s >= 27)]["local_naturalness"].mean()
    assert inside < far - 0.3
    # per frame, for --frames traces: every frame has a value, and the bad stretch shows
    f = frame_naturalness(one, bad.n_frames, bad.fps)
    assert len(f) == bad.n_frames and f.notna().all().all()
    t = np.arange(bad.n_frames) / bad.fps
    assert f["naturalness_local"][(t >= 15) & (t < 20)].mean() < f["naturalness_local"][(t < 8) | (t >= 27)].mean() - 0.3
    assert f["naturalness_window"][(t >= 15) & (t < 20)].mean() < f["naturalness_window"][(t < 8) | (t >= 27)].mean()
    assert np.isclose(f["naturalness_local"].mean(), one.naturalness, atol=0.05)


def test_foot_sliding_through_a_45_s_clip_scores_far_below_its_clean_twin(model, cmu_dir):
    # the case: a 45-s clip with foot sliding and its clean twin (both scored about 0
    # when the verdict was the worst stretch times the clip-wide artifact factor)
    _, long = looped(cmu_dir / "16_15.amc", copies=13)
    assert long.duration > 44
    clean = score_naturalness(model, long, fold_repeats=False).naturalness  # every frame, as the skated ones
    skated = {}
    for seed in range(8):
        c = corrupt(long, "foot_skate", 0.5, seed=seed, mode="drift")
        (a, b), = c.provenance.intervals
        skated.setdefault("whole" if b - a > 0.99 * long.duration else "part", score_naturalness(model, c.motion))
    assert {"whole", "part"} <= set(skated)
    assert clean > 0.9
    assert skated["whole"].naturalness < clean - 0.5
    assert skated["whole"].naturalness < skated["part"].naturalness < clean


def test_score_frames_traces_carry_the_local_naturalness(cmu_dir, tmp_path):
    # real capture with one corrupted 5-s stretch, scored as a user scores a file: the trace of
    # every frame carries the naturalness of the windows around it, and it is low where the
    # stretch was corrupted
    import pandas as pd

    from evalkit.cli import main
    from evalkit.motion.formats.bvh import write_bvh

    _, long = looped(cmu_dir / "16_15.amc")  # 35 s
    clips = tmp_path / "clips"
    clips.mkdir()
    write_bvh(long, clips / "clean.bvh")
    write_bvh(_corrupt_stretches(long, "jitter", [3], mode="clip"), clips / "glitch.bvh")  # 15-20 s
    write_bvh(long[:10], clips / "tiny.bvh")  # 0.33 s: too short for the model
    frames = tmp_path / "traces"
    assert main(["score", str(clips), "--model", "default", "--frames", str(frames), "-q",
                 "-o", str(tmp_path / "s.csv")]) == 1  # tiny.bvh cannot be judged
    table = pd.read_csv(tmp_path / "s.csv").set_index("clip")
    traces = {c: pd.read_csv(frames / "clips" / f"{c}.csv") for c in ("clean", "glitch", "tiny")}
    for c in ("clean", "glitch"):
        t = traces[c]
        assert {"naturalness_window", "naturalness_local"} <= set(t.columns)
        assert t[["naturalness_window", "naturalness_local"]].notna().all().all()
        assert t["naturalness_local"].between(0, 1).all()
        # the clip's verdict is the time average of the local naturalness
        assert abs(t["naturalness_local"].mean() - table.loc[c, "naturalness"]) < 0.03
    g, clean = traces["glitch"], traces["clean"]
    bad = (g["time_s"] >= 15) & (g["time_s"] < 20)
    far = (g["time_s"] < 8) | (g["time_s"] >= 27)
    assert g["naturalness_local"][bad].mean() < g["naturalness_local"][far].mean() - 0.3
    assert g["naturalness_window"][bad].mean() < clean["naturalness_window"][bad].mean() - 0.3
    assert clean["naturalness_local"].min() > 0.5
    # the clip the model could not score keeps its trace, with the columns empty
    assert traces["tiny"][["naturalness_window", "naturalness_local"]].isna().all().all()
    assert "naturalness" in table.loc["tiny", "error"]


def _tile(m: Motion, copies: int) -> Motion:
    """The clip's frames played ``copies`` times over, as a clip is naively repeated."""
    return m.with_(rotations=np.concatenate([m.rotations] * copies),
                   translations=np.concatenate([m.translations] * copies))


@pytest.mark.parametrize("name", ["16_15.amc", "07_05-walk.amc", "09_06-run.amc"])
def test_clip_repeated_frame_for_frame_scores_as_the_clip(model, cmu_dir, name):
    """Real walks and a run repeated ten times frame for frame. As users score it, the clip is
    ten copies of one stretch, judged on its first two: the body jumps back metres at the join,
    a cut to a new take, so each copy is judged as the clip is and the cuts are reported at every
    join. Judged frame by frame instead (``fold_repeats=False``), the same."""
    m = load_motion(cmu_dir / name)
    one, folded = score_naturalness(model, m), score_naturalness(model, _tile(m, 10))
    assert one.copies == 1 and folded.copies == 10
    assert np.allclose(folded.cuts_s, np.arange(1, 10) * m.duration, atol=1.5 / m.fps)
    assert abs(folded.naturalness - one.naturalness) <= 1e-9
    assert folded.windows["end_s"].max() == pytest.approx(one.windows["end_s"].max() + 9 * m.duration)
    assert len(folded.windows) == 10 * len(one.windows)
    assert abs(folded.naturalness - score_naturalness(model, _tile(m, 10), fold_repeats=False).naturalness) <= 0.005
    ten = score_naturalness(model, _tile(m, 10), fold_repeats=False)
    assert len(ten.cuts_s) == 9 and ten.copies == 1
    assert np.allclose(np.diff(ten.cuts_s), m.duration)
    assert abs(ten.naturalness - one.naturalness) <= 0.005, (one.naturalness, ten.naturalness)
    # no window spans a cut (window times are at the model's 30 frames/s: within a frame of it)
    w, tol = ten.windows, 1.0 / model.window.fps + 1e-9
    assert not ((w["start_s"].to_numpy()[:, None] < np.array(ten.cuts_s) - tol)
                & (w["end_s"].to_numpy()[:, None] > np.array(ten.cuts_s) + tol)).any()
    # judged as one take, every repeat is a jump of metres: far less natural
    judged = score_naturalness(model, _tile(m, 10), split_cuts=False, fold_repeats=False)
    assert judged.naturalness < one.naturalness - 0.5


def _in_place(m: Motion) -> Motion:
    """``m`` with the root held over its mean floor position (real joint motion, no travel)."""
    tr = m.translations.copy()
    tr[:, 0, [0, 2]] = tr[:, 0, [0, 2]].mean(axis=0)
    return m.with_(translations=tr)


@pytest.mark.parametrize("name", ["131_04-dance.amc", "135_06-martialArts.amc"])
def test_in_place_clip_repeated_frame_for_frame_scores_as_the_clip(model, cmu_dir, name):
    """An in-place clip (a dance and martial arts held over one spot, as gestures are) repeated
    ten times and two and a half times frame for frame: no cut (the body does not jump), the
    pose jumps back at every join, a transition with no blend. The verdict is that of the first
    two copies and their join, judged once, whatever the number of copies; the least natural
    window is never better than the clip's own."""
    m = _in_place(load_motion(cmu_dir / name))
    one = score_naturalness(model, m)
    two = score_naturalness(model, _tile(m, 2), fold_repeats=False)
    for copies in (10, 2.5):
        rep = _tile(m, 10)[:int(round(copies * m.n_frames))]
        s = score_naturalness(model, rep)
        assert s.copies == pytest.approx(copies, rel=1e-3) and s.period_s == pytest.approx(m.duration)
        assert s.naturalness == two.naturalness and s.cuts_s == ()
        assert s.worst_naturalness <= one.worst_naturalness + 1e-9
        assert s.windows["end_s"].max() <= rep.duration + one.windows["end_s"].max() - m.duration + 1e-9
        assert s.windows["start_s"].min() == one.windows["start_s"].min()


def test_in_place_gesture_repeated_ten_times_shared(model):
    """A real gesture take (Bandai Namco, in place) repeated ten times frame for frame: the pose
    jumps from the take's end back to its start at every join, which everyone sees; the verdict
    falls well below the take's own, and the least natural window lies on a join."""
    m = load_motion(shared_data("gesture", "bandai-namco", "dataset-1_bye_tired_001.bvh"))
    one, ten = score_naturalness(model, m), score_naturalness(model, _tile(m, 10))
    assert ten.copies == 10 and ten.naturalness < one.naturalness - 0.2
    assert ten.worst_start_s - 1e-9 <= m.duration <= ten.worst_end_s + 1e-9


def test_a_near_repeat_is_judged_frame_by_frame(model, cmu_dir):
    """The second copy moved by 1 mm is not a repeat: capture is never that exact, and a
    generator's output that only nearly repeats is judged as it comes."""
    m = _in_place(load_motion(cmu_dir / "131_04-dance.amc"))
    second = m.translations.copy()
    second[:, 0, 1] += 0.001
    near = concatenate([m, m.with_(translations=second)])
    s = score_naturalness(model, near)
    assert s.copies == 1
    assert s.naturalness == score_naturalness(model, near, fold_repeats=False).naturalness


def test_two_takes_in_one_file_are_judged_each_on_its_own(model, cmu_dir):
    """A real take cut in two and its second part moved 5 m away, in one clip: the verdict is the
    frame-weighted mean of the two parts' own verdicts, and the cut is reported where it is."""
    walk = resample(load_motion(cmu_dir / "01_01.bvh")[1:], 30)  # 22.9 s; frame 0 is a T-pose
    first, later = walk[:300], walk[300:]
    moved = later.translations.copy()
    moved[:, 0, 0] += 5.0  # the root only
    later = later.with_(translations=moved)
    both = concatenate([first, later])
    s = score_naturalness(model, both)
    assert len(s.cuts_s) == 1 and s.cuts_s[0] == pytest.approx(300 / 30)
    p1, p2 = score_naturalness(model, both[:300]), score_naturalness(model, both[300:])
    expect = (p1.naturalness * first.n_frames + p2.naturalness * later.n_frames) / both.n_frames
    assert s.naturalness == pytest.approx(expect, abs=1e-9)
    assert s.worst_stretch_naturalness == pytest.approx(min(p1.worst_stretch_naturalness, p2.worst_stretch_naturalness))


def test_a_take_too_short_once_its_pops_are_dropped_is_left_out(model, cmu_dir):
    """A real walk, then a cut to a second take that starts with two frames of bind pose (a pop)
    and holds 0.47 s of walking after them: that take is too short to judge once its pop is
    dropped, so it is left out and the clip gets the first take's verdict (it used to fail the
    whole clip)."""
    walk = resample(load_motion(cmu_dir / "01_01.bvh")[1:], 30)
    first = walk[:300]
    later = walk[300:314]
    tr = later.translations.copy()
    tr[:, 0, 0] += 5.0
    later = later.with_(translations=tr)
    bind_rot = np.tile([0.0, 0.0, 0.0, 1.0], (2, walk.skeleton.n_joints, 1))
    bind_tr = np.repeat(later.translations[:1], 2, axis=0)
    bind = later.with_(rotations=bind_rot, translations=bind_tr)
    clip = concatenate([first, bind, later])
    s = score_naturalness(model, clip)
    assert len(s.cuts_s) == 1 and s.cuts_s[0] == pytest.approx(300 / 30)
    alone = score_naturalness(model, first)
    assert s.naturalness == pytest.approx(alone.naturalness, abs=1e-9)
    assert s.windows["end_s"].max() <= 300 / 30 + 1e-9


def test_score_reports_cuts_and_copies(cmu_dir, tmp_path, capsys):
    """Through the command, as a user scores files: a walk looped frame for frame (the
    ``copies`` column, a note) and two takes in one file (the ``cuts`` column, a note)."""
    import pandas as pd

    from evalkit.cli import main
    from evalkit.motion.formats.bvh import write_bvh

    m = resample(load_motion(cmu_dir / "16_15.amc"), 30)
    clips = tmp_path / "clips"
    clips.mkdir()
    write_bvh(m, clips / "once.bvh")
    write_bvh(_tile(m, 10), clips / "ten.bvh")
    later = m[60:].translations.copy()
    later[:, 0, 0] += 5.0
    write_bvh(concatenate([m[:60], m[60:].with_(translations=later)]), clips / "takes.bvh")
    assert main(["score", str(clips), "--model", "default", "-q", "-o", str(tmp_path / "s.csv")]) == 0
    err = capsys.readouterr().err
    table = pd.read_csv(tmp_path / "s.csv").set_index("clip")
    # the walk jumps back at every join of "ten": each join is a cut, each copy judged as "once"
    assert table["cuts"].to_dict() == {"once": 0, "ten": 9, "takes": 1}
    assert table["copies"].to_dict() == {"once": 1, "ten": 10, "takes": 1}
    assert abs(table.loc["ten", "naturalness"] - table.loc["once", "naturalness"]) <= 1e-6
    assert "2 clip(s) cut to a new take" in err and "1 clip(s) are copies of one stretch" in err
    assert "Traceback" not in err
    # --judge-joins: the loop judged frame by frame, its joins (here cuts: the walk jumps back) seen
    assert main(["score", str(clips / "ten.bvh"), "--model", "default", "--judge-joins", "-q",
                 "-o", str(tmp_path / "j.csv")]) == 0
    row = pd.read_csv(tmp_path / "j.csv").iloc[0]
    assert row["copies"] == 1 and row["cuts"] == 9
    assert abs(row["naturalness"] - table.loc["once", "naturalness"]) <= 0.005
