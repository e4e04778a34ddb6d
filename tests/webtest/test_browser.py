"""End-to-end in a real browser: Playwright driving Debian's chromium against a live server.

The example study is served with its clips trimmed to 0.25 s (the "short stimulus" setting for
tests), so a participant completes all 14 trials in seconds; everything else is the real study.
"""

from __future__ import annotations

import io
import re
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.conftest import require_system
from tests.webtest.helpers import EXAMPLE

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]
CLIP_S = 0.25


@pytest.fixture(scope="module")
def browser():
    require_system("chromium", CHROMIUM.exists(), "install Debian's chromium (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover
        require_system("playwright", False, "pip install playwright")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def short_example(tmp_path_factory) -> Path:
    """studies/example-cmu with every clip cut to CLIP_S seconds."""
    d = tmp_path_factory.mktemp("example-short")
    data = yaml.safe_load((EXAMPLE / "study.yaml").read_text())
    for s in data["stimuli"]:
        start = s.get("trim", [0.0, 1.0])[0]
        s["trim"] = [start, start + CLIP_S]
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    from webtest import prepare_study

    prepare_study(d)  # the stimulus cache is copied with the folder for each test
    return d


@pytest.fixture
def live(short_example, tmp_path):
    """The study served by a real HTTP server on 127.0.0.1 (random port); yields (url, app)."""
    from werkzeug.serving import make_server

    from webtest import create_app

    d = tmp_path / "study"
    shutil.copytree(short_example, d, ignore=shutil.ignore_patterns("ratings.sqlite*"))
    app = create_app(d)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", app
    server.shutdown()
    thread.join(5)
    app.extensions["webtest"].db.dispose()


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def _enter_study(page, url):
    page.goto(url + "/")
    page.get_by_role("button", name="Start").click()
    page.get_by_role("button", name="I agree to take part").click()
    page.get_by_label("Experience with animation or motion capture").select_option("some")
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Begin").click()
    page.wait_for_url(re.compile(r"/trial/1$"))


def _play_both(page):
    page.wait_for_selector("#trial.ready")
    page.keyboard.press("a")  # left
    expect(page.locator("#stim-left button.play")).to_contain_text("again")
    page.keyboard.press("l")  # right
    expect(page.locator("#stim-right button.play")).to_contain_text("again")


def _answer_current(page):
    """Play both clips, give an answer (the instructed one on attention pages) and go on."""
    url = page.url
    _play_both(page)
    legend = page.locator("fieldset.scale legend").inner_text()
    labels = page.locator("fieldset.scale .point span").all_inner_texts()
    key = "5"  # "Slightly better"
    m = re.search(r"please answer “(.+?)”", legend)
    if m:
        key = str(next(i for i, lab in enumerate(labels, 1) if lab.endswith(m.group(1))))
    page.keyboard.press(key)
    expect(page.locator("#next")).to_be_enabled()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda u: u != url)


def _skeleton_pixels(png: bytes) -> int:
    from PIL import Image

    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    bone = np.array([0x1F, 0x3B, 0x73])  # the figure's colour in player.js
    return int((np.abs(img - bone).sum(axis=-1) < 60).sum())


def test_participant_completes_example_study(browser, live):
    url, app = live
    ctx = browser.new_context(viewport={"width": 1100, "height": 900})
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    _enter_study(page, url)

    # Next stays disabled until both clips have played to the end
    page.wait_for_selector("#trial.ready")
    assert page.locator("#next").is_disabled()
    page.keyboard.press("4")  # an answer alone is not enough
    assert page.locator("#next").is_disabled()
    # the motion canvases are not blank: the stick figure is drawn on both sides
    for side in ("left", "right"):
        shot = page.locator(f"#stim-{side} canvas").screenshot()
        assert _skeleton_pixels(shot) > 300, f"{side} canvas shows no figure"
    page.keyboard.press("a")
    expect(page.locator("#stim-left button.play")).to_contain_text("again")
    assert page.locator("#next").is_disabled()  # one clip is not enough either
    page.keyboard.press("l")
    expect(page.locator("#next")).to_be_enabled()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/trial/2$"))

    while "/trial/" in page.url:
        _answer_current(page)
    assert page.url.endswith("/done")
    assert page.locator("#completion-code").inner_text() == "EVALKIT-DEMO"
    assert not errors, errors

    from webtest.export import ratings_long

    df = ratings_long(app.extensions["webtest"].db)
    assert len(df) == 13  # 14 trials minus the practice trial
    assert (df["response_time_s"] >= 2 * CLIP_S * 0.9).all()
    assert not df["flags"].str.contains("fail|excluded").any()  # gold, attention, repeat all passed
    ctx.close()


def test_reload_mid_study_resumes_at_the_right_trial(browser, live):
    url, _ = live
    ctx = browser.new_context()
    page = ctx.new_page()
    _enter_study(page, url)
    _answer_current(page)
    _answer_current(page)
    assert page.url.endswith("/trial/3")
    page.reload()
    assert page.url.endswith("/trial/3")
    assert page.locator(".progress-text").inner_text() == "Step 3 of 14"
    page.close()  # close the tab, come back through the study link
    page = ctx.new_page()
    page.goto(url + "/")
    assert page.url.endswith("/trial/3")
    assert page.locator("#progress").get_attribute("value") == "2"
    ctx.close()


def test_phone_width_layout_stacks_the_clips(browser, live):
    url, _ = live
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, device_scale_factor=2)
    page = ctx.new_page()
    _enter_study(page, url)
    page.wait_for_selector("#trial.ready")
    left = page.locator("#stim-left").bounding_box()
    right = page.locator("#stim-right").bounding_box()
    assert right["y"] >= left["y"] + left["height"] - 1  # one above the other
    assert page.evaluate("document.documentElement.scrollWidth") <= 360  # no sideways scrolling
    assert _skeleton_pixels(page.locator("#stim-left canvas").screenshot()) > 100
    ctx.close()


@pytest.fixture(scope="module")
def media_study(tmp_path_factory) -> Path:
    """Video (rendered from CMU capture), audio (cut from LJ Speech) and motion-with-audio."""
    import wave

    from evalkit.data import sample_path
    from evalkit.motion import load_motion
    from webtest import prepare_study
    from webtest.stimuli import jitter
    from webtest.video import render_video

    d = tmp_path_factory.mktemp("media-study")
    walk = load_motion(sample_path("cmu", "16_15.amc")).slice(0, 48)  # 0.4 s
    render_video(walk, d / "walk_a.mp4", fps=10, size=(320, 240), progress=False)
    render_video(jitter(walk, 3.0, seed=1), d / "walk_b.mp4", fps=10, size=(320, 240), progress=False)
    for name, src in (("speech_a.wav", "LJ001-0001.wav"), ("speech_b.wav", "LJ001-0003.wav")):
        with wave.open(str(sample_path("speech", src)), "rb") as w:
            params = w.getparams()
            frames = w.readframes(int(0.4 * w.getframerate()))
        with wave.open(str(d / name), "wb") as out:
            out.setparams(params)
            out.writeframes(frames)
    study = {
        "id": "media", "title": "Media", "consent": "ok", "instructions": "ok", "scale": "ab3",
        "stimuli": [
            {"id": "v.a", "item": "walk", "system": "a", "file": "walk_a.mp4"},
            {"id": "v.b", "item": "walk", "system": "b", "file": "walk_b.mp4"},
            {"id": "s.a", "item": "speech", "system": "a", "file": "speech_a.wav"},
            {"id": "s.b", "item": "speech", "system": "b", "file": "speech_b.wav"},
            {"id": "m.a", "item": "run", "system": "a", "file": "sample:cmu/09_06-run.amc", "trim": [0, 0.3],
             "audio": "speech_a.wav"},
            {"id": "m.b", "item": "run", "system": "b", "file": "sample:cmu/09_06-run.amc", "trim": [0, 0.3],
             "audio": "speech_b.wav", "transform": [{"jitter": {"deg": 3, "seed": 1}}]},
        ],
        "pairs": [["a", "b"]],
        "design": {"method": "full", "participants": 2},
    }
    (d / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    prepare_study(d)
    return d


def test_video_audio_and_motion_with_audio_play_through(browser, media_study, tmp_path):
    import json

    from werkzeug.serving import make_server

    from webtest import create_app

    d = tmp_path / "media"
    shutil.copytree(media_study, d)
    app = create_app(d)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        ctx = browser.new_context()
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        page.get_by_role("button", name="Start").click()
        page.get_by_role("button", name="I agree to take part").click()
        page.get_by_role("button", name="Begin").click()
        kinds = []
        while "/trial/" in page.url:
            page.wait_for_selector("#trial.ready")
            kinds.append(page.locator("#stim-left").get_attribute("data-kind"))
            assert page.locator("#next").is_disabled()
            url_before = page.url
            _play_both(page)
            page.keyboard.press("3")  # "Right"
            expect(page.locator("#next")).to_be_enabled()
            page.keyboard.press("Enter")
            page.wait_for_url(lambda u: u != url_before)
        assert sorted(kinds) == ["audio", "motion", "video"] and page.url.endswith("/done")
        assert not errors, errors
        from sqlalchemy import select

        from webtest.models import Answer

        with app.extensions["webtest"].db.session() as s:
            answers = s.execute(select(Answer)).scalars().all()
        assert len(answers) == 3
        for a in answers:
            ev = json.loads(a.events_json)
            for side in ("left", "right"):
                types = [e["type"] for e in ev if e["side"] == side]
                assert "play" in types and "ended" in types
            assert a.response_time_s >= 0.9 * 0.8  # two 0.4 s stimuli, one after the other
        ctx.close()
    finally:
        server.shutdown()
        app.extensions["webtest"].db.dispose()


def test_trial_status_follows_the_state_and_failed_clips_say_so(browser, live):
    url, app = live
    ctx = browser.new_context(viewport={"width": 390, "height": 844})  # a phone: the pair is stacked
    page = ctx.new_page()
    _enter_study(page, url)
    page.wait_for_selector("#trial.ready")
    # stacked clips say which one is "left"
    assert page.locator("#cap-left .stacked-hint").is_visible()
    assert page.locator("#cap-left").inner_text().endswith("(top)")
    _play_both(page)
    expect(page.locator("#status")).to_have_text("Choose an answer, then continue.")
    page.keyboard.press("4")
    expect(page.locator("#status")).to_have_text("Press Next to continue.")
    # the play button's accessible name is its visible state, the caption says which clip
    play = page.get_by_role("button", name="Play again").first
    assert play.get_attribute("aria-describedby") == "cap-left"
    # clips that cannot be downloaded: said so (not "your answer could not be saved")
    page.route("**/stimulus/**", lambda route: route.abort())
    page.reload()
    expect(page.locator("#status")).to_contain_text("The clips could not be loaded")
    assert "could not be saved" not in page.locator("#status").inner_text()
    ctx.close()
