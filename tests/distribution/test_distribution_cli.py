"""``evalkit compare`` and ``evalkit embed`` end to end on the bundled capture."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from evalkit.cli import main


@pytest.fixture(scope="module")
def systems(cmu_dir, tmp_path_factory):
    """Two systems as BVH files: the bundled clips unedited and with jitter (audio for 4 of them)."""
    from evalkit.data import SAMPLES_DIR
    from evalkit.models.corruptions import corrupt
    from evalkit.motion import load_motion, write_bvh

    root = tmp_path_factory.mktemp("systems")
    wavs = sorted((SAMPLES_DIR / "speech").glob("*.wav"))
    (root / "audio").mkdir()
    from evalkit.motion.formats import iter_motion_files

    for i, path in enumerate(iter_motion_files([cmu_dir])):
        m = load_motion(path)
        write_bvh(m, root / "capture" / f"{path.stem}.bvh")
        write_bvh(corrupt(m, "jitter", 0.6, seed=i, mode="clip").motion, root / "jitter" / f"{path.stem}.bvh")
        if i < len(wavs):
            shutil.copy(wavs[i], root / "audio" / f"{path.stem}.wav")
    return root


def test_compare_writes_table_latex_figure_and_protocol(cmu_dir, systems, tmp_path, capsys):
    out = tmp_path / "report"
    code = main(["compare", "--reference", str(cmu_dir), f"capture={systems / 'capture'}", str(systems / "jitter"),
                 "--audio", str(systems / "audio"), "--bootstrap", "200", "--out", str(out), "-q"])
    assert code == 0, capsys.readouterr().err
    t = pd.read_csv(out / "distribution.csv")
    assert list(t["system"]) == ["capture", "jitter", "real vs real"]
    need = {"system", "n_clips", "fgd", "fgd_ci_low", "fgd_ci_high", "fid_k", "fid_g", "div_k", "div_g", "fgd_raw", "fgd_pose",
            "l1_div", "pfc", "beat_consistency", "mean_skate_fraction", "window", "stride", "fps", "joint_set",
            "extractor_hash", "n_windows", "n_ref_clips"}
    assert need <= set(t.columns), need - set(t.columns)
    for m in ("fgd", "fgd_raw", "fgd_pose", "fid_k", "fid_g", "div_k", "div_g", "l1_div", "pfc", "beat_consistency",
              "mean_jerk_mean"):
        ok = t[m].notna()
        assert ok[:2].all(), m
        assert (t.loc[ok, f"{m}_ci_low"] <= t.loc[ok, m]).all() and (t.loc[ok, m] <= t.loc[ok, f"{m}_ci_high"]).all(), m
    t = t.set_index("system")
    assert t.loc["capture", "fgd"] < 1e-6  # the reference itself
    assert t.loc["jitter", "fgd"] > t.loc["capture", "fgd"] + 0.1
    assert t.loc["jitter", "fid_k"] > t.loc["capture", "fid_k"]
    assert t.loc["jitter", "pfc"] > t.loc["capture", "pfc"]
    assert (t["n_clips"] == [8, 8, 4]).all() and t.loc["capture", "n_ref_clips"] == 8
    tex = (out / "distribution.tex").read_text()
    assert "\\begin{tabular}" in tex and "real vs real" in tex and "FID$_k$" in tex
    assert (out / "distribution.png").stat().st_size > 10_000 and (out / "distribution.pdf").exists()
    proto = json.loads((out / "protocol.json").read_text())
    assert proto["window_frames"] == 30 and proto["stride_frames"] == 10 and proto["fps"] == 30
    assert proto["fgd_raw"]["window_frames"] == 30 and proto["fgd_raw"]["stride_frames"] == 15
    assert proto["fgd_raw"]["dims"] == 30 * 17 * 3 and (t["raw_stride"] == 15).all()
    assert len(proto["joint_set"]) == 18 and proto["extractor"]["extractor_hash"] == t.loc["capture", "extractor_hash"]
    assert proto["reference"]["n_clips"] == 8 and proto["systems"]["jitter"]["n_clips"] == 8
    clips = pd.read_csv(out / "clips.csv")
    assert len(clips) == 24 and set(clips["system"]) == {"reference", "capture", "jitter"}
    # reproducing that protocol with the same extractor works; with another one it is refused
    assert main(["compare", "-r", str(cmu_dir), str(systems / "capture"), "--protocol", str(out / "protocol.json"),
                 "--bootstrap", "0", "--no-score", "--out", str(tmp_path / "again"), "-q"]) == 0
    capsys.readouterr()


def test_other_protocol_is_refused_with_the_reason(cmu_dir, systems, tmp_path, capsys):
    code = main(["compare", "-r", str(cmu_dir), str(systems / "capture"), "--window", "64", "--out",
                 str(tmp_path / "x"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "window=64 (the extractor was trained with window=30)" in err and "embed train" in err
    ext = tmp_path / "ext"
    assert main(["embed", "train", str(cmu_dir / "16_15.amc"), str(cmu_dir / "131_03.bvh"), "--window", "20",
                 "--epochs", "2", "--hidden", "8", "--latent", "4", "--out", str(ext), "-q"]) == 0
    capsys.readouterr()
    default_proto = {"extractor": json.loads((ext.parent / "ext" / "card.json").read_text())}
    (tmp_path / "p.json").write_text(json.dumps(default_proto))
    code = main(["compare", "-r", str(cmu_dir), str(systems / "capture"), "--protocol", str(tmp_path / "p.json"),
                 "--out", str(tmp_path / "y"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "comparison.window: 20 vs 30" in err
    assert main(["embed", "info", str(ext)]) == 0
    assert "window          20 frames" in capsys.readouterr().out


def test_bad_input_is_one_line(cmu_dir, tmp_path, capsys):
    assert main(["compare", "-r", str(cmu_dir), str(tmp_path / "nothing"), "--out", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert main(["compare", "-r", str(cmu_dir), str(cmu_dir), "--out", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err
    assert main(["compare", "-r", str(cmu_dir), str(cmu_dir), "--extractor", str(tmp_path), "--out",
                 str(tmp_path / "o")]) == 2
    assert "not an extractor folder" in capsys.readouterr().err


def test_jobs_and_dask_give_identical_numbers(cmu_dir, systems):
    import distributed  # in the 'test' extra

    from evalkit.distribution import compare

    args = ([cmu_dir], {"capture": [systems / "capture"], "jitter": [systems / "jitter"]})
    kw = dict(n_boot=100, progress=False, score=True)
    local = compare(*args, jobs=1, **kw).table
    procs = compare(*args, jobs=2, chunk_size=2, **kw).table
    pd.testing.assert_frame_equal(local, procs)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, host="127.0.0.1",
                                  protocol="tcp://", dashboard_address=None) as cluster:
        remote = compare(*args, scheduler=cluster.scheduler_address, chunk_size=1, **kw).table
    pd.testing.assert_frame_equal(local, remote)
    assert np.isfinite(local["fgd"]).all()


def test_compare_warns_when_the_reference_halves_cannot_support_a_floor(cmu_dir, systems, tmp_path, capsys):
    """8 bundled reference clips: halves of 4 clips, fewer than FID_k's and FID_g's feature
    dimensions, so their floors are flagged in the table, the LaTeX caption and on stderr; the
    output path is printed as given, without a doubled slash."""
    out = str(tmp_path / "report") + "/"
    code = main(["compare", "--reference", str(cmu_dir), f"capture={systems / 'capture'}", "--bootstrap", "20",
                 "--no-score", "--out", out, "-q"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "//" not in err and f"-> {tmp_path / 'report' / 'distribution.csv'}" in err
    t = pd.read_csv(tmp_path / "report" / "distribution.csv").set_index("system")
    warning = t.loc["real vs real", "floor_warning"]
    proto = json.loads((tmp_path / "report" / "protocol.json").read_text())
    kin = proto["real_vs_real"]["support"]["fid_k"]
    assert kin == {"samples_per_half": 4, "dims": 54, "unit": "clips"}  # 18 joints x 3 kinetic features
    assert proto["real_vs_real"]["support"]["fid_g"]["dims"] == 32
    assert "FID_k: 4 clips per half <= 54 dimensions" in warning and "FID_g: 4 clips per half <= 32" in warning
    assert "covariance is singular" in warning  # where the limit comes from
    assert "evalkit: warning: real-vs-real floor not meaningful for " in err and "FID_k: 4 clips per half" in err
    assert pd.isna(t.loc["capture", "floor_warning"]) or t.loc["capture", "floor_warning"] == ""
    tex = (tmp_path / "report" / "distribution.tex").read_text()
    assert "floor not meaningful for" in tex and "FID\\_k" in tex.split("floor not meaningful for")[1]
    # FGD's windows outnumber its embedding's dimensions: no warning for it
    fgd = proto["real_vs_real"]["support"]["fgd"]
    assert fgd["samples_per_half"] > fgd["dims"] and "FGD:" not in warning


def test_compare_figure_shows_every_system_whatever_the_floor():
    """A floor of 7,657 beside systems of 37 and 47 (as with 4-clip halves): each metric has its
    own scale set by the systems, the floor sits at the axis edge with its value."""
    from matplotlib.figure import Figure

    from evalkit.distribution.compare import REAL_VS_REAL, Comparison, figure

    rows = []
    for name, fid_k, fgd in (("A", 37.0, 0.8), ("B", 47.0, 1.1), (REAL_VS_REAL, 7657.0, 0.5)):
        r = {"system": name, "n_clips": 4.0}
        for m, v in (("fgd", fgd), ("fgd_raw", fgd * 100), ("fid_k", fid_k), ("fid_g", fid_k / 10)):
            r.update({m: v, f"{m}_ci_low": v * 0.8, f"{m}_ci_high": v * 1.2})
        r["floor_warning"] = "floor not meaningful for FID_k: 4 clips per half <= 54 dimensions" if name == REAL_VS_REAL else ""
        rows.append(r)
    proto = {"reference": {"n_clips": 8}, "window_frames": 30, "stride_frames": 10, "fps": 30.0,
             "extractor": {"extractor_hash": "x"}}
    fig = figure(Comparison(table=pd.DataFrame(rows), clips=None, protocol=proto))
    assert isinstance(fig, Figure)
    fid_k_ax = fig.axes[2]
    lo, hi = fid_k_ax.get_xlim()
    assert 47 * 1.2 <= hi < 200  # scaled to the systems, not to the floor
    assert 37 > lo
    texts = [t.get_text() for t in fid_k_ax.texts]
    assert "7.66e+03 →" in texts or "7,657 →" in texts
    assert any("floor not meaningful" in t for t in texts)
    assert not any("floor not meaningful" in t.get_text() for t in fig.axes[0].texts)  # FGD's floor is fine
    fgd_ax = fig.axes[0]
    assert fgd_ax.get_xlim()[1] >= 1.1 * 1.2  # the floor (0.5) inside the systems' scale: drawn as a dot
    fig.canvas.draw()
