"""``evalkit serve`` and ``evalkit render`` as a user runs them."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from evalkit.cli import main
from evalkit.data import sample_path

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_check_prints_summary(example_study, capsys):
    assert main(["serve", str(example_study), "--check"]) == 0
    out = capsys.readouterr().out
    assert "study 'example-cmu': 15 stimuli, 12 design cells (sides balanced), scale ccr7" in out
    # one count: the pages the participant is shown ("Comparison i of 13" after one practice page)
    assert ("each participant: 14 pages: 1 practice page + 13 rated pages (10 main trials + 3 quality checks; "
            "shown as comparisons 1 to 13)") in out
    assert f"sqlite:///{example_study.resolve()}/ratings.sqlite" in out
    assert (example_study / "ratings.sqlite").exists()


def test_serve_reports_study_errors_in_one_line_without_traceback(make_study, capsys):
    d = make_study(scale="ccr9")
    assert main(["serve", str(d), "--check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalkit: error: ") and "scale: 'ccr9' is not one of" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert main(["serve"]) == 2
    assert "needs STUDY_DIR" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["letmein123", "pass:word", "x$y$z", "scrypt:3:8:1$salt$abc"])
def test_serve_refuses_a_plain_password_in_the_environment(make_study, capsys, monkeypatch, value):
    monkeypatch.setenv("EVALKIT_ADMIN_PASSWORD_HASH", value)
    assert main(["serve", str(make_study()), "--check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalkit: error: EVALKIT_ADMIN_PASSWORD_HASH is not a password hash; "
                          "fix: run 'evalkit serve --hash-password'")
    assert len(err.strip().splitlines()) == 1 and value not in err and "Traceback" not in err


def test_serve_accepts_a_real_hash_in_the_environment(make_study, capsys, monkeypatch):
    from werkzeug.security import generate_password_hash

    monkeypatch.setenv("EVALKIT_ADMIN_PASSWORD_HASH", generate_password_hash("s3cret-pass"))
    assert main(["serve", str(make_study()), "--check"]) == 0
    assert "study 'mini'" in capsys.readouterr().out


@pytest.mark.parametrize("name, value", [("EVALKIT_ADMIN_MAX_FAILURES", "ten"), ("EVALKIT_ADMIN_MAX_FAILURES", "0"),
                                         ("EVALKIT_ADMIN_LOCKOUT_MINUTES", "-5"), ("EVALKIT_ADMIN_LOCKOUT_MINUTES", "nan")])
def test_serve_reports_a_bad_login_limit_setting(make_study, capsys, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    assert main(["serve", str(make_study()), "--check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evalkit: error: {name}={value!r} is not a ") and "fix: set it to e.g." in err
    assert len(err.strip().splitlines()) == 1


def test_login_limit_settings_from_the_environment(make_study, monkeypatch):
    from webtest import WebtestConfig

    assert (WebtestConfig.from_env(make_study()).login_max_failures, WebtestConfig.from_env(make_study()).login_window_s) \
        == (10, 900.0)
    monkeypatch.setenv("EVALKIT_ADMIN_MAX_FAILURES", "3")
    monkeypatch.setenv("EVALKIT_ADMIN_LOCKOUT_MINUTES", "2.5")
    cfg = WebtestConfig.from_env(make_study())
    assert (cfg.login_max_failures, cfg.login_window_s) == (3, 150.0)


def test_create_app_refuses_a_plain_password(make_study):
    from evalkit.errors import ConfigError
    from webtest import create_app

    with pytest.raises(ConfigError, match=r"is not a password hash; fix: run 'evalkit serve --hash-password'"):
        create_app(make_study(), testing=True, admin_password_hash="letmein123")


def test_serve_reports_a_non_utf8_study_file_in_one_line(tmp_path, capsys):
    (tmp_path / "study.yaml").write_bytes(b"id: x\n\xff\xfe bad: 1\n")
    assert main(["serve", str(tmp_path), "--check"]) == 2
    err = capsys.readouterr().err
    assert err == f"evalkit: error: {tmp_path / 'study.yaml'}, line 2: not UTF-8 text (byte 0xff at column 1); " \
                  "fix: save the file with UTF-8 encoding\n"


def test_serve_hash_password_from_stdin():
    from werkzeug.security import check_password_hash

    r = subprocess.run([sys.executable, "-m", "evalkit", "serve", "--hash-password"], input="s3cret-pass\n",
                       capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 0
    assert check_password_hash(r.stdout.strip(), "s3cret-pass")
    r = subprocess.run([sys.executable, "-m", "evalkit", "serve", "--hash-password"], input="short\n",
                       capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and "at least 8" in r.stderr


@pytest.mark.parametrize("workers", [1, 2])  # 1: threaded server; 2: gunicorn in-process
def test_serve_runs_and_prints_urls(example_study, workers):
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("EVALKIT_ADMIN_PASSWORD_HASH", None)
    proc = subprocess.Popen([sys.executable, "-m", "evalkit", "serve", str(example_study), "--port", str(port),
                             "--workers", str(workers)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        lines = []
        deadline = time.time() + 60
        while time.time() < deadline and not any(ln.startswith("admin password") for ln in lines):
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
        text = "\n".join(lines)
        assert f"participant URL: http://127.0.0.1:{port}/" in text
        assert f"admin URL:       http://127.0.0.1:{port}/admin/" in text
        password = re.search(r"admin password \(this run only\): (\S+)", text).group(1)
        import requests

        for _ in range(300):
            try:
                r = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        assert r.json() == {"ok": True, "study": "example-cmu"}
        s = requests.Session()
        page = s.get(f"http://127.0.0.1:{port}/admin/login", timeout=5).text
        token = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
        r = s.post(f"http://127.0.0.1:{port}/admin/login", data={"csrf_token": token, "password": password}, timeout=5)
        assert r.url.endswith("/admin/") and "Live CMOS" in r.text
        assert "debugger" not in requests.get(f"http://127.0.0.1:{port}/nope", timeout=5).text.lower()
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _video_info(path: Path) -> tuple[dict, list[np.ndarray]]:
    import imageio_ffmpeg

    gen = imageio_ffmpeg.read_frames(str(path))
    meta = next(gen)
    w, h = meta["size"]
    frames = [np.frombuffer(f, np.uint8).reshape(h, w, 3) for f in gen]
    return meta, frames


def test_render_writes_mp4_with_audio(tmp_path, capsys):
    out = tmp_path / "run.mp4"
    wav = sample_path("speech", "LJ001-0005.wav")
    code = main(["render", str(sample_path("cmu", "09_06-run.amc")), "--audio", str(wav), "-o", str(out),
                 "--fps", "15", "--size", "320x240", "--quiet"])
    assert code == 0 and "with audio" in capsys.readouterr().out
    meta, frames = _video_info(out)
    from webtest.stimuli import media_duration

    audio_s = media_duration(wav)
    assert meta["audio_codec"] == "aac" and meta["size"] == (320, 240) and meta["fps"] == 15
    assert len(frames) == pytest.approx(audio_s * 15, abs=2)  # last pose held until the speech ends
    first, last = frames[0].astype(int), frames[-1].astype(int)
    from tests.webtest.helpers import figure_mask

    assert figure_mask(first).sum() > 1500  # the shaded body is drawn
    assert np.abs(frames[5].astype(int) - first).sum() > 0  # it moves
    assert np.array_equal(frames[-2], frames[-1]) or np.abs(last - frames[-2]).mean() < 1.0
    assert not list(tmp_path.glob(".tmp-*"))


def test_render_trims_and_reports_errors(tmp_path, capsys):
    clip = str(sample_path("cmu", "16_15.amc"))
    out = tmp_path / "walk.mp4"
    assert main(["render", clip, "-o", str(out), "--start", "1", "--end", "1.5", "--fps", "10", "--quiet"]) == 0
    _, frames = _video_info(out)
    assert len(frames) == 5
    assert main(["render", clip, "-o", str(tmp_path / "x.mp4"), "--size", "100x100"]) == 2
    assert "multiple of 16" in capsys.readouterr().err
    assert main(["render", clip, "-o", str(tmp_path / "x.mp4"), "--size", "big"]) == 2
    assert "WIDTHxHEIGHT" in capsys.readouterr().err
    assert main(["render", clip, "-o", str(tmp_path / "x.mp4"), "--start", "9"]) == 2
    assert "--start 9 s is past the end of the 3.92 s clip" in capsys.readouterr().err
    assert main(["render", clip, "-o", str(tmp_path / "x.mp4"), "--audio", "missing.wav"]) == 2
    assert "missing.wav" in capsys.readouterr().err


def test_serve_on_a_port_in_use_says_so_before_printing_urls_or_a_password(example_study, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", str(example_study), "--port", str(port)]) == 2
    captured = capsys.readouterr()
    assert f"cannot listen on 127.0.0.1:{port}" in captured.err and "--port" in captured.err
    assert "URL" not in captured.out and "password" not in captured.out and "Traceback" not in captured.err
    assert not (example_study / "ratings.sqlite").exists()  # nothing was prepared for a server that cannot run


def test_serve_names_a_missing_folder(tmp_path, capsys):
    assert main(["serve", str(tmp_path / "nosuchdir"), "--check"]) == 2
    err = capsys.readouterr().err
    assert "nosuchdir: no such folder" in err and "no study file" not in err


def test_a_cold_serve_shows_progress(make_study, capsys):
    import shutil

    d = make_study()
    shutil.rmtree(d / ".webtest" / "stimuli")  # cold: every stimulus must be computed
    assert main(["serve", str(d), "--check"]) == 0
    err = capsys.readouterr().err
    assert "preparing study" in err and "stimuli" in err and "4/4" in err  # tqdm's count of stimuli


def test_serve_check_names_the_setup_stages_and_refuses_a_bad_one_in_one_line(make_study, capsys):
    setup = [{"device": {"min_width": 1024, "min_height": 600, "allow_touch_only": False}}, "volume",
             {"headphones": {"pass": 6}}]
    assert main(["serve", str(make_study(setup=setup)), "--check"]) == 0
    assert ("setup stages before the instructions: device (window at least 1024x600 px, no touch-only devices), "
            "volume, headphones (6 of 6 to pass)") in capsys.readouterr().out
    assert main(["serve", str(make_study(setup=[{"headphones": {"pass": 9}}])), "--check"]) == 2
    err = capsys.readouterr().err
    assert "setup[0].headphones.pass: 9 correct of 6 trials can never be reached" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
