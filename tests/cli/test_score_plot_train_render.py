"""Option checks of `evalkit score`, `plot`, `train` and `render`: a user mistake is a one-line
error (exit 2) before any work, and nothing is written; outputs follow the umask."""

from __future__ import annotations

import os
import stat

import pytest

from evalkit.cli import main


@pytest.fixture
def clip(tmp_path, cmu_dir):
    p = tmp_path / "good.bvh"
    p.write_bytes((cmu_dir / "131_01.bvh").read_bytes())
    return p


def refused(capsys, args, message):
    assert main(args) == 2, args
    err = capsys.readouterr().err
    assert message in err, err
    assert err.count("\n") == 1, err  # one line, no traceback


@pytest.mark.parametrize("args,message", [
    (["--chunk-size", "-1"], "--chunk-size must be a positive number of clips, got -1"),
    (["--jobs", "-5"], "--jobs must be a positive number or -1 (all cores), got -5"),
    (["--contact-height", "nan"], "--contact-height must be a positive number, got nan"),
    (["--skate-speed", "nan"], "--skate-speed must be a positive number, got nan"),
    (["--cutoff", "nan"], "--cutoff must be a positive number, got nan"),
    (["--ground-level", "nan"], "--ground-level must be a height in metres, got nan"),
    (["--amc-fps", "0"], "--amc-fps must be a frame rate above 0"),
    (["--audio", "nosuch.wav"], "--audio nosuch.wav: no such file or folder"),
    (["--model", "nosuch.joblib"], "--model nosuch.joblib: model file not found"),
    (["-o", "x.xlsx"], "x.xlsx: unsupported output format '.xlsx'"),
    (["-o", "/proc/x.csv"], "/proc/x.csv: cannot write in /proc"),
])
def test_score_refuses_bad_options_before_scoring(clip, capsys, args, message):
    refused(capsys, ["score", str(clip), "-q", *args], message)


def test_score_frames_path_and_name_clashes_are_checked_first(tmp_path, clip, capsys):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "clip.bvh").write_bytes(clip.read_bytes())
    frames = tmp_path / "fr"
    refused(capsys, ["score", str(tmp_path / "a" / "clip.bvh"), str(tmp_path / "b" / "clip.bvh"), "--system", "S",
                     "--frames", str(frames), "-o", str(tmp_path / "s.csv"), "-q"],
            f"would both write {frames / 'S' / 'clip.csv'}")
    assert not frames.exists() and not (tmp_path / "s.csv").exists()
    refused(capsys, ["score", str(clip), "--frames", str(clip), "-q"], "is a file, not a folder")
    # without --system each clip's folder is its system: both traces are kept
    assert main(["score", str(tmp_path / "a"), str(tmp_path / "b"), "--frames", str(frames), "-q",
                 "-o", str(tmp_path / "s.csv")]) == 0
    assert (frames / "a" / "clip.csv").stat().st_size > 0 and (frames / "b" / "clip.csv").stat().st_size > 0


def test_score_and_plot_outputs_follow_the_umask(tmp_path, clip):
    old = os.umask(0o022)
    try:
        assert main(["score", str(clip), "-q", "-o", str(tmp_path / "s.csv"), "--frames", str(tmp_path / "fr")]) == 0
        assert main(["plot", str(clip), "-o", str(tmp_path / "p.png"), "--dpi", "30"]) == 0
    finally:
        os.umask(old)
    for p in (tmp_path / "s.csv", tmp_path / "fr" / clip.parent.name / "good.csv", tmp_path / "p.png"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p


@pytest.mark.parametrize("args,message", [
    (["--dpi", "0"], "--dpi must be 20 to 600, got 0"),
    (["--dpi", "-5"], "--dpi must be 20 to 600, got -5"),
    (["--dpi", "100000"], "--dpi must be 20 to 600, got 100000"),
])
def test_plot_refuses_an_implausible_dpi(tmp_path, clip, capsys, args, message):
    refused(capsys, ["plot", str(clip), "-o", str(tmp_path / "p.png"), *args], message)
    assert not (tmp_path / "p.png").exists()


@pytest.mark.parametrize("args,message", [
    (["-o", "m.joblib", "--seed", "-1"], "--seed must be 0 to 4294967295"),
    (["-o", "m.joblib", "--seed", "99999999999999999999"], "--seed must be 0 to 4294967295"),
    (["-o", "m.joblib", "--window", "0.01"], "--window must span 8 frames at --fps 30"),
    (["-o", "m.joblib", "--fps", "1e6"], "--fps must be 5 to 240 frames per second"),
    (["-o", "m.joblib", "--band-hz", "15"], "--band-hz must be above 0 and below half of --fps (15 Hz)"),
    (["-o", "m.txt"], "m.txt: unsupported output format '.txt'; use .joblib"),
    (["--evaluate", "rep", "--folds", "1"], "--folds must be at least 2"),
    (["-o", "m.joblib", "--roles", "nosuch.yaml"], "nosuch.yaml: role map file not found"),
])
def test_train_refuses_bad_options_before_training(tmp_path, clip, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    refused(capsys, ["train", "--natural", str(clip), "-q", *args], message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.bvh"]


def test_train_refuses_an_existing_file_as_report_folder(clip, capsys):
    before = clip.read_bytes()
    refused(capsys, ["train", "--natural", str(clip), "--evaluate", str(clip), "-q"],
            "is a file; the report goes into a folder")
    assert clip.read_bytes() == before


@pytest.mark.parametrize("args,message", [
    (["--fps", "1e9"], "--fps must be 1 to 240 video frames per second"),
    (["--size", "32000x32000"], "--size 32000x32000: each side must be 64 to 7680 pixels"),
    (["--start", "nan"], "--start must be a time in seconds, 0 or more, got nan"),
    (["--end", "nan"], "--end must be a time in seconds, 0 or more, got nan"),
    (["--audio", "nosuch.wav"], "--audio nosuch.wav: no such file"),
    (["--roles", "nosuch.yaml"], "nosuch.yaml: role map file not found"),
    (["--start", "2", "--end", "1"], "--end 1 s must come after --start 2 s"),
    (["--color", "blue"], "--color 'blue' is not a colour; give #rrggbb"),
    (["--background", "#12345"], "--background '#12345' is not a colour"),
    (["--at", "1"], "v.mp4: --at and --strip write a .png image; name the output .png"),
    (["--at", "-1"], "--at must be a time in seconds, 0 or more, got -1"),
    (["--size", "100x100"], "--size 100x100: each side of a video must be a multiple of 16"),
])
def test_render_refuses_bad_options_before_rendering(tmp_path, clip, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    refused(capsys, ["render", str(clip), "-o", "v.mp4", "--quiet", *args], message)
    assert not (tmp_path / "v.mp4").exists()


def test_render_makes_missing_folders_and_checks_the_output_first(tmp_path, clip, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["render", str(clip), "-o", "new/sub/v.mp4", "--end", "0.3", "--quiet"]) == 0
    assert (tmp_path / "new" / "sub" / "v.mp4").stat().st_size > 0
    capsys.readouterr()
    (tmp_path / "dir.mp4").mkdir()
    refused(capsys, ["render", str(clip), "-o", "dir.mp4", "--quiet"], "dir.mp4: is a folder; give the output file's name")
    refused(capsys, ["render", str(clip), "-o", "v.avi", "--quiet"], "v.avi: unsupported output format '.avi'; use .mp4, .png")


@pytest.mark.parametrize("args,message", [
    ([], "p.png: a .png output needs --at SECONDS (one pose) or --strip START:END:STEP"),
    (["--at", "1", "--strip", "0:1:0.5"], "give --at (one pose) or --strip (several), not both"),
    (["--strip", "0:1"], "--strip '0:1' is not START:END:STEP in seconds"),
    (["--strip", "2:1:0.5"], "--strip 2:1:0.5: needs 0 <= START <= END and STEP > 0"),
    (["--strip", "0:100:0.1"], "at most 40 fit a strip"),
    (["--at", "1", "--start", "0.5"], "--start, --end and --audio are for videos"),
])
def test_render_still_options_are_checked_first(tmp_path, clip, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    refused(capsys, ["render", str(clip), "-o", "p.png", *args], message)
    assert not (tmp_path / "p.png").exists()


def test_render_start_past_the_end_names_the_clip_length(tmp_path, clip, capsys, monkeypatch):
    """`--start 50` alone used to say "--end None"; a still past the end says so too."""
    monkeypatch.chdir(tmp_path)
    refused(capsys, ["render", str(clip), "-o", "v.mp4", "--start", "50", "--quiet"],
            "--start 50 s is past the end of the")
    refused(capsys, ["render", str(clip), "-o", "p.png", "--at", "50"], "--at: 50 s is past the end of the")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.bvh"]


def test_render_without_chromium_says_how_to_get_it(tmp_path, clip, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EVALKIT_CHROMIUM", str(tmp_path / "no-such-chromium"))
    refused(capsys, ["render", str(clip), "-o", "v.mp4", "--end", "0.2", "--quiet"],
            "cannot start chromium")
    refused(capsys, ["render", str(clip), "-o", "p.png", "--at", "0.2"], "apt-get install chromium")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.bvh"]


def test_render_writes_a_still_and_a_strip(tmp_path, clip, capsys):
    """--at: one pose as PNG (the body drawn); --strip: the poses side by side, labelled."""
    import numpy as np
    from PIL import Image

    from tests.webtest.helpers import figure_mask
    from webtest.render import find_chromium

    from tests.conftest import require_system

    require_system("chromium", find_chromium() is not None, "install Debian's chromium (apt-get install chromium)")
    assert main(["render", str(clip), "--at", "0.5", "-o", str(tmp_path / "pose.png"), "--size", "320x240"]) == 0
    assert "the pose at 0.5 s" in capsys.readouterr().out
    pose = np.asarray(Image.open(tmp_path / "pose.png").convert("RGB"))
    assert pose.shape == (240, 320, 3) and figure_mask(pose).sum() > 1500
    assert main(["render", str(clip), "--strip", "0:1:0.5", "-o", str(tmp_path / "strip.png"),
                 "--size", "160x160", "--framing", "upper"]) == 0
    assert "3 poses from 0 to 1 s" in capsys.readouterr().out
    strip = np.asarray(Image.open(tmp_path / "strip.png").convert("RGB"))
    assert strip.shape[1] == 3 * 160 + 2 * 6 and strip.shape[0] > 160
    panels = [strip[:160, i * 166:i * 166 + 160] for i in range(3)]
    assert all(figure_mask(p).sum() > 500 for p in panels)
    assert np.abs(panels[0].astype(int) - panels[2]).mean() > 1  # different poses
    assert not list(tmp_path.glob(".*"))


def test_score_audio_folder_without_the_clips_wav(tmp_path, clip, capsys):
    from evalkit.data import SAMPLES_DIR

    audio = tmp_path / "audio"
    audio.mkdir()
    refused(capsys, ["score", str(clip), "--audio", str(audio), "-q"], "no <clip>.wav for any clip (e.g. good.wav)")
    wav = next(SAMPLES_DIR.rglob("*.wav"))
    (audio / "good.wav").write_bytes(wav.read_bytes())
    other = tmp_path / "other.bvh"
    other.write_bytes(clip.read_bytes())
    assert main(["score", str(clip), str(other), "--audio", str(audio), "-q", "-o", str(tmp_path / "s.csv")]) == 0
    err = capsys.readouterr().err
    assert "has no <clip>.wav for 1 clip(s), whose beat metrics stay blank: other" in err
    import pandas as pd

    table = pd.read_csv(tmp_path / "s.csv").set_index("clip")
    assert table.loc["good", "beat_align"] >= 0 and pd.isna(table.loc["other", "beat_align"])


@pytest.mark.parametrize("args,usage", [
    (["score", "x.bvh", "--foo"], "usage: evalkit score "),
    (["study", "build", "x", "--foo"], "usage: evalkit study build "),
    (["--foo"], "usage: evalkit [-h]"),
])
def test_an_unknown_option_shows_the_commands_own_usage(capsys, args, usage):
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(usage) and "error: unrecognized arguments: --foo" in err and "Traceback" not in err


def test_train_judges_clips_on_the_working_band_unless_told_not_to():
    import argparse

    from evalkit.cli import train as train_cli

    def options(*argv):
        p = argparse.ArgumentParser()
        train_cli.register(p.add_subparsers())
        return train_cli._options(p.parse_args(["train", "--natural", "x", "-o", "m.joblib", *argv]))

    assert options().window.working_band is True
    assert options("--no-working-band").window.working_band is False
