"""``evalkit score`` and ``evalkit plot`` end to end on the bundled real clips."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from evalkit.cli import main
from evalkit.features.batch import BatchOptions, ID_COLUMNS, score_paths
from evalkit.motion.formats import iter_motion_files

CORE = ["penetration_mean", "floating_mean", "contact_frac", "skate_distance_mean", "skating_ratio",
        "zmp_outside_mean", "accel_mean", "jerk_mean", "kinetic_h", "energy_expenditure"]


@pytest.fixture(scope="module")
def scored(cmu_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("score") / "scores.csv"
    code = main(["score", str(cmu_dir), "--out", str(out), "-q"])
    return code, pd.read_csv(out, keep_default_na=False, na_values=[""])


def test_score_bundled_samples(scored, cmu_dir):
    code, df = scored
    assert code == 0
    assert list(df.columns[:len(ID_COLUMNS)]) == list(ID_COLUMNS)
    motion_files = sorted(p.stem for p in cmu_dir.iterdir() if p.suffix in (".bvh", ".amc"))
    assert sorted(df["clip"]) == motion_files and len(list(iter_motion_files([cmu_dir]))) == len(motion_files)
    assert set(df["system"]) == {"cmu"}
    assert df["error"].isna().all()  # empty strings read back as missing
    assert np.isfinite(df[CORE].to_numpy(float)).all()
    row = df.set_index("clip").loc["01_01"]
    assert row["dropped_frames"] == 1  # the cgspeed T-pose
    assert row["flight_frac"] > 0.05 and row["ballistic_error_mean"] < 2.0


def test_bad_file_is_reported_and_the_run_continues(cmu_dir, tmp_path, capsys):
    d = tmp_path / "sysA"
    d.mkdir()
    shutil.copy(cmu_dir / "131_03.bvh", d / "good.bvh")
    lines = (cmu_dir / "131_03.bvh").read_text().splitlines()
    bad = lines[:-3] + ["0.0 1.0 oops"]  # a frame with a non-number
    (d / "bad.bvh").write_text("\n".join(bad) + "\n")
    out = tmp_path / "s.json"
    code = main(["score", str(d), "--out", str(out), "-q"])
    assert code == 1
    err = capsys.readouterr().err
    assert "bad.bvh" in err and "Traceback" not in err
    rows = {r["clip"]: r for r in json.loads(out.read_text())}
    assert rows["good"]["error"] == "" and rows["good"]["skate_distance_mean"] > 0
    assert "bad.bvh" in rows["bad"]["error"] and "line" in rows["bad"]["error"]
    assert rows["bad"]["system"] == "sysA"


def test_formats_frames_system_and_parallel_jobs(cmu_dir, tmp_path, scored):
    _, csv = scored
    files = [str(cmu_dir / "16_15.amc"), str(cmu_dir / "131_01.bvh")]
    pq = tmp_path / "s.parquet"
    frames = tmp_path / "frames"
    code = main(["score", *files, "-o", str(pq), "--system", "mine", "--frames", str(frames), "-j", "2", "-q"])
    assert code == 0
    df = pd.read_parquet(pq)
    assert list(df["system"]) == ["mine", "mine"]
    ref = csv.set_index("clip").loc[df["clip"]]
    for k in CORE:
        assert np.allclose(df[k].to_numpy(), ref[k].to_numpy(), rtol=1e-9), k
    tr = pd.read_csv(frames / "mine" / "16_15.csv")
    assert len(tr) == int(df.set_index("clip").loc["16_15", "frames"])
    assert {"contact_left", "skate_right", "zmp_outside", "penetration", "com_y", "jerk"} <= set(tr.columns)


def test_dask_scheduler_gives_the_same_numbers(cmu_dir):
    import distributed  # in the 'test' extra
    files = [str(cmu_dir / n) for n in ("16_15.amc", "09_06-run.amc", "131_03.bvh")]
    local = score_paths(files, BatchOptions(), jobs=1, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, host="127.0.0.1",
                                  protocol="tcp://", dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        remote = score_paths(files, BatchOptions(), scheduler=cluster.scheduler_address, chunk_size=1,
                             progress=False)
    pd.testing.assert_frame_equal(local, remote)


def test_unknown_scheduler_and_format_are_one_line_errors(cmu_dir, tmp_path, capsys):
    assert main(["score", str(cmu_dir / "16_15.amc"), "-o", str(tmp_path / "x.xlsx"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "x.xlsx" in err and ".csv" in err and "Traceback" not in err
    assert main(["score", str(tmp_path / "nothing"), "-q"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_reference_and_audio_columns(cmu_dir, tmp_path):
    from evalkit.data import speech_files

    out = tmp_path / "s.csv"
    code = main(["score", str(cmu_dir / "16_15.amc"), "-o", str(out), "-q",
                 "--reference", str(cmu_dir / "07_05-walk.amc"), "--reference", str(cmu_dir / "131_03.bvh"),
                 "--audio", str(speech_files()[0])])
    assert code == 0
    row = pd.read_csv(out).iloc[0]
    for k in ("hellinger_speed", "hellinger_accel", "hellinger_jerk", "angle_outlier_frac", "fmd_ref_mean",
              "beat_align", "beat_consistency"):
        assert np.isfinite(row[k]), k
    assert 0 <= row["hellinger_jerk"] <= 1


def test_score_help_explains_options(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    text = capsys.readouterr().out
    for opt in ("--out", "--jobs", "--scheduler", "--reference", "--frames", "--audio", "--model", "m/s"):
        assert opt in text


def test_plot_png_and_pdf(cmu_dir, tmp_path, capsys):
    png = tmp_path / "t.png"
    pdf = tmp_path / "t.pdf"
    assert main(["plot", str(cmu_dir / "09_06-run.amc"), "-o", str(png)]) == 0
    assert main(["plot", str(cmu_dir / "09_06-run.amc"), "-o", str(pdf)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert main(["plot", str(cmu_dir / "09_06-run.amc"), "-o", str(tmp_path / "t.gif")]) == 2
    assert "t.gif" in capsys.readouterr().err
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind


def _png_size(path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_plot_with_model_adds_a_naturalness_panel(cmu_dir, tmp_path, capsys):
    plain, judged = tmp_path / "plain.png", tmp_path / "judged.png"
    clip = str(cmu_dir / "16_15.amc")
    assert main(["plot", clip, "-o", str(plain)]) == 0
    assert main(["plot", clip, "-o", str(judged), "--model", "default"]) == 0
    (w0, h0), (w1, h1) = _png_size(plain), _png_size(judged)
    assert w1 == w0 and h1 > h0  # one more panel, same width
    assert main(["plot", clip, "-o", str(tmp_path / "x.png"), "--model", str(tmp_path / "none.joblib")]) == 2
    err = capsys.readouterr().err
    assert "none.joblib" in err and "Traceback" not in err


def _timeline_axes(motion, verdict, tmp_path, monkeypatch):
    """The axes of the figure :func:`plot_timeline` saves for ``motion`` and ``verdict``."""
    import matplotlib.figure

    from evalkit.features.plot import plot_timeline

    saved = []
    orig = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: (saved.append(fig), orig(fig, *a, **k)))
    plot_timeline(motion, tmp_path / "t.png", verdict=verdict)
    return saved[0].axes


def test_plot_timeline_outlines_the_verdicts_worst_window(cmu_dir, tmp_path, monkeypatch):
    from evalkit.models.discriminator import score_naturalness
    from evalkit.models.training import load_model
    from evalkit.motion import load_motion

    motion = load_motion(cmu_dir / "16_15.amc")
    verdict = score_naturalness(load_model("default")[0], motion)
    assert (verdict.windows["local_naturalness"] >= 0.5).all()  # natural capture: nothing shaded
    axes = _timeline_axes(motion, verdict, tmp_path, monkeypatch)
    assert len(axes) == 5
    for ax in axes:  # the least natural window is outlined on every panel
        (span,) = ax.patches
        assert not span.get_fill()
        assert np.isclose(span.get_x(), verdict.worst_start_s)
        assert np.isclose(span.get_x() + span.get_width(), verdict.worst_end_s)
    assert np.allclose(axes[4].lines[0].get_ydata(), verdict.windows["naturalness"])
    assert np.allclose(axes[4].lines[1].get_ydata(), verdict.windows["local_naturalness"])


def test_plot_timeline_shades_every_unnatural_window(cmu_dir, tmp_path, monkeypatch):
    """Every window judged unnatural is shaded (darker the less natural), not only the worst:
    the real verdict on a real clip with two windows' local naturalness set below 0.5."""
    import dataclasses

    from evalkit.models.discriminator import score_naturalness
    from evalkit.models.training import load_model
    from evalkit.motion import load_motion

    motion = load_motion(cmu_dir / "16_15.amc")
    verdict = score_naturalness(load_model("default")[0], motion)
    w = verdict.windows.copy()
    bad = {1: 0.1, len(w) - 2: 0.4}
    for i, v in bad.items():
        w.loc[w.index[i], "local_naturalness"] = v
    axes = _timeline_axes(motion, dataclasses.replace(verdict, windows=w), tmp_path, monkeypatch)
    for ax in axes:
        filled = [p for p in ax.patches if p.get_fill()]
        assert [(round(p.get_x(), 6), round(p.get_x() + p.get_width(), 6)) for p in filled] == [
            (round(w["start_s"].iloc[i], 6), round(w["end_s"].iloc[i], 6)) for i in bad]
        assert filled[0].get_alpha() > filled[1].get_alpha()  # 0.1 is shaded darker than 0.4


def test_score_model_reads_clips_with_the_same_roles(cmu_dir, tmp_path):
    """A rig that needs --roles gets the naturalness columns too (the model reads the clip with
    the same role map as the metrics)."""
    text = (cmu_dir / "131_03.bvh").read_text()
    odd = tmp_path / "odd.bvh"
    odd.write_text(text.replace("JOINT LeftKnee", "JOINT Shin_A").replace("JOINT RightKnee", "JOINT Shin_B"))
    roles = tmp_path / "roles.yaml"
    roles.write_text("roles:\n  left_knee: Shin_A\n  right_knee: Shin_B\n")
    out = tmp_path / "s.csv"
    assert main(["score", str(odd), "-o", str(out), "-q", "--model", "default", "--roles", str(roles)]) == 0
    row = pd.read_csv(out, keep_default_na=False).iloc[0]
    assert row["error"] == "" and 0 <= float(row["naturalness"]) <= 1


def test_plot_timeline_draws_the_cuts(cmu_dir, tmp_path, monkeypatch):
    """A walk's frames repeated three times, judged frame by frame (not folded as a loop): the
    verdict has two cuts, drawn as vertical lines at their times on every panel and named in the title."""
    from evalkit.models.discriminator import score_naturalness
    from evalkit.models.training import load_model
    from evalkit.motion import load_motion

    m = load_motion(cmu_dir / "16_15.amc")
    motion = m.with_(rotations=np.concatenate([m.rotations] * 3), translations=np.concatenate([m.translations] * 3))
    verdict = score_naturalness(load_model("default")[0], motion, fold_repeats=False)
    assert len(verdict.cuts_s) == 2
    axes = _timeline_axes(motion, verdict, tmp_path, monkeypatch)
    for ax in axes:
        xs = [ln.get_xdata()[0] for ln in ax.lines if ln.get_linestyle() == ":" and ln.get_color() == "k"]
        assert np.allclose(xs, verdict.cuts_s)
    assert "2 cut(s) to a new take" in axes[0].figure.get_suptitle()


def test_plot_timeline_draws_the_joins_of_a_loop(cmu_dir, tmp_path, monkeypatch):
    """The same three copies as a user scores them: a loop judged on its first two copies, the
    joins drawn as solid lines at every copy's start and named in the title (the walk jumps back
    at every join, so each join is also a cut to a new take)."""
    from evalkit.models.discriminator import score_naturalness
    from evalkit.models.training import load_model
    from evalkit.motion import load_motion

    m = load_motion(cmu_dir / "16_15.amc")
    motion = m.with_(rotations=np.concatenate([m.rotations] * 3), translations=np.concatenate([m.translations] * 3))
    verdict = score_naturalness(load_model("default")[0], motion)
    assert verdict.copies == 3 and np.allclose(verdict.cuts_s, [m.duration, 2 * m.duration], atol=1.5 / m.fps)
    axes = _timeline_axes(motion, verdict, tmp_path, monkeypatch)
    for ax in axes:
        xs = [ln.get_xdata()[0] for ln in ax.lines if ln.get_linestyle() == "-" and ln.get_color() == "k" and ln.get_alpha() == 0.5]
        assert np.allclose(xs, [m.duration, 2 * m.duration])
    assert f"3 copies of a {m.duration:.2f}-s stretch" in axes[0].figure.get_suptitle()
