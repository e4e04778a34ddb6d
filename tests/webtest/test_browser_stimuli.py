"""Stimuli that always play or say why, in chromium: a stimulus that cannot be loaded is tried
again once, then said so on the page and reported to the server (not waited on), the scale stays
disabled until both stimuli are loaded, and without WebGL the clips play from the study's
fallback videos (the same renderer's MP4s, ``playback.video_fallback``)."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
import yaml

from tests.webtest.test_browser import ARGS, CHROMIUM, _enter_study, _serve, browser, expect, live, short_example  # noqa: F401

CLIP_S = 0.3


@pytest.fixture(scope="module")
def fallback_study(tmp_path_factory) -> Path:
    """Two real CMU clips (one with jitter) with ``playback.video_fallback: true``, prepared:
    the fallback MP4s rendered headless once for the module."""
    from webtest import prepare_study

    d = tmp_path_factory.mktemp("fallback-study")
    study = {
        "id": "fallback", "title": "Fallback", "consent": "ok", "instructions": "ok", "scale": "ab3",
        "stimuli": [
            {"id": "w.a", "item": "walk", "system": "a", "file": "sample:cmu/16_15.amc", "trim": [0, CLIP_S]},
            {"id": "w.b", "item": "walk", "system": "b", "file": "sample:cmu/16_15.amc", "trim": [0, CLIP_S],
             "transform": [{"jitter": {"deg": 3, "seed": 1}}]},
        ],
        "pairs": [["a", "b"]],
        "design": {"method": "full", "participants": 2},
        "playback": {"video_fallback": True},
    }
    (d / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    prepare_study(d)
    return d


def _events(app) -> list[tuple]:
    from sqlalchemy import select

    from webtest.tables import Event

    with app.extensions["webtest"].db.session() as s:
        return [(e.position, e.type, e.side, e.detail) for e in s.execute(select(Event)).scalars()]


def test_a_stimulus_that_cannot_be_loaded_is_retried_then_reported(browser, live):
    url, app = live
    ctx = browser.new_context()
    page = ctx.new_page()
    _enter_study(page, url)
    left = page.locator("#stim-left").get_attribute("data-src")
    asked = []

    def refuse(route):
        asked.append(route.request.url)
        route.fulfill(status=404, body="gone")

    page.route(re.compile(re.escape(left) + "$"), refuse)  # the left clip's route fails, the right one works
    started = time.monotonic()
    page.reload()
    expect(page.locator("#status")).to_contain_text("The clips could not be loaded (HTTP 404)", timeout=5000)
    assert time.monotonic() - started < 5  # reported after one retry, not after the 15 s media wait
    assert len(asked) == 2  # the first load and one retry
    # nothing can be answered: the scale and Next stay disabled, the keys choose nothing
    assert page.locator("input[name=answer]").first.is_disabled()  # inside the disabled fieldset
    page.keyboard.press("4")
    page.keyboard.press("ArrowRight")
    assert page.locator("input[name=answer]:checked").count() == 0
    assert page.locator("#next").is_disabled()
    assert "ready" not in (page.locator("#trial").get_attribute("class") or "")
    # the server's event log has it, once, with the side and the browser's reason
    for _ in range(50):
        if _events(app):
            break
        page.wait_for_timeout(100)
    assert _events(app) == [(1, "load_failed", "left", "HTTP 404")]
    page.reload()  # the same failure again is not stored twice
    expect(page.locator("#status")).to_contain_text("could not be loaded", timeout=5000)
    page.wait_for_timeout(300)
    assert len(_events(app)) == 1
    ctx.close()


def test_a_stimulus_that_fails_once_loads_on_the_retry(browser, live):
    url, app = live
    ctx = browser.new_context()
    page = ctx.new_page()
    _enter_study(page, url)
    right = page.locator("#stim-right").get_attribute("data-src")
    failures = {"n": 0}

    def once(route):
        if failures["n"] == 0:
            failures["n"] += 1
            route.fulfill(status=503, body="busy")
        else:
            route.continue_()

    page.route(re.compile(re.escape(right) + "$"), once)
    page.reload()
    page.wait_for_selector("#trial.ready", timeout=5000)
    assert failures["n"] == 1 and page.locator("input[name=answer]").first.is_enabled()
    assert _events(app) == []  # a retry that worked is no problem to report
    ctx.close()


def test_without_webgl_the_clips_play_from_the_fallback_videos(browser, fallback_study, tmp_path):
    from sqlalchemy import select

    from webtest.tables import Answer

    d = tmp_path / "fallback"
    shutil.copytree(fallback_study, d)
    videos = sorted((d / ".webtest" / "stimuli").glob("*.mp4"))
    assert len(videos) == 2  # one per motion stimulus (both sides share the default colour)
    server, app = _serve(d)
    url = f"http://127.0.0.1:{server.server_port}"
    b = browser.browser_type.launch(executable_path=str(CHROMIUM), args=ARGS + ["--disable-3d-apis", "--disable-webgl"])
    try:
        page = b.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        _enter_study(page, url, demographics=False)
        assert page.evaluate("!!document.createElement('canvas').getContext('webgl')") is False
        page.wait_for_selector("#trial.ready", timeout=15000)
        for side in ("left", "right"):
            fig = page.locator(f"#stim-{side}")
            assert fig.get_attribute("data-fallback") == "video"
            assert fig.locator("canvas").count() == 0 and fig.locator("video").count() == 1
        assert "cannot show the 3-D figures" not in page.locator("#status").inner_text()
        page.keyboard.press("a")
        expect(page.locator("#stim-left button.play")).to_contain_text("again")
        page.keyboard.press("l")
        expect(page.locator("#stim-right button.play")).to_contain_text("again")
        played = page.evaluate("[...document.querySelectorAll('video')].map(v => v.currentTime)")
        assert all(t >= 0.9 * CLIP_S for t in played), played
        page.keyboard.press("3")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/done$"))
        assert not errors, errors
    finally:
        b.close()
        server.shutdown()
        app.extensions["webtest"].db.dispose()
    with app.extensions["webtest"].db.session() as s:
        (answer,) = s.execute(select(Answer)).scalars().all()
    types = {(e["side"], e["type"]) for e in json.loads(answer.events_json)}
    assert {("left", "fallback_video"), ("right", "fallback_video"), ("left", "ended"), ("right", "ended")} <= types
    assert _events(app) == []


def test_the_scale_is_answered_by_keyboard_with_labels_and_visible_focus(browser, live):
    """Arrow keys move along the scale (from outside it too), number keys choose a point, Enter
    sends; each point is a radio named by its label, and the focused point shows an outline."""
    url, app = live
    ctx = browser.new_context(viewport={"width": 1100, "height": 900})
    page = ctx.new_page()
    _enter_study(page, url)
    page.wait_for_selector("#trial.ready")
    page.keyboard.press("a")
    expect(page.locator("#stim-left button.play")).to_contain_text("again")
    page.keyboard.press("l")
    expect(page.locator("#stim-right button.play")).to_contain_text("again")
    radios = page.get_by_role("radio")
    assert radios.count() == 7
    assert page.get_by_role("radio", name="About the same").count() == 1  # the label names the radio
    assert page.get_by_role("group", name=re.compile("Compared with the left clip")).count() == 1
    page.keyboard.press("ArrowRight")  # from outside the scale: its first point
    assert page.locator("input[name=answer]:checked").get_attribute("value") == "-3"
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    assert page.locator("input[name=answer]:checked").get_attribute("value") == "1"
    page.keyboard.press("ArrowLeft")
    checked = page.locator("input[name=answer]:checked")
    assert checked.get_attribute("value") == "0"
    assert page.evaluate("document.activeElement.value") == "0"  # focus follows the choice
    outline = page.evaluate("getComputedStyle(document.activeElement.nextElementSibling).outlineStyle")
    assert outline == "solid"  # :focus-visible on the point the keyboard reached
    page.keyboard.press("6")
    assert page.locator("input[name=answer]:checked").get_attribute("value") == "2"
    expect(page.locator("#next")).to_be_enabled()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/trial/2$"))
    from webtest.tables import Answer
    from sqlalchemy import select

    with app.extensions["webtest"].db.session() as s:
        (answer,) = s.execute(select(Answer)).scalars().all()
    assert answer.raw_answer == "2"
    ctx.close()


def test_fallback_videos_are_made_once_in_each_sides_colour(fallback_study, tmp_path):
    """Two side colours give two videos per motion stimulus, each in its colour, with as many
    frames as the clip; preparing the study again renders nothing (the videos are reused)."""
    import imageio_ffmpeg
    import numpy as np

    from tests.webtest.helpers import figure_mask
    from webtest import prepare_study
    from webtest.stimuli import stimulus_names

    d = tmp_path / "colours"
    shutil.copytree(fallback_study, d)
    data = yaml.safe_load((d / "study.yaml").read_text())
    data["playback"]["colors"] = {"left": "#b03a2e"}
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    prepared = prepare_study(d)
    videos = {sid: p.fallback for sid, p in prepared.stimuli.items()}
    assert all(left != right and left.exists() and right.exists() for left, right in videos.values())
    for (left, right), clip in ((v, json.loads(prepared.stimuli[sid].path.read_text())) for sid, v in videos.items()):
        for path, red_side in ((left, True), (right, False)):
            gen = imageio_ffmpeg.read_frames(str(path))
            meta = next(gen)
            frames = [np.frombuffer(b, np.uint8).reshape(meta["size"][1], meta["size"][0], 3).astype(int) for b in gen]
            assert len(frames) == clip["frames"] and meta["size"] == (640, 480)
            red = ((frames[0][..., 0] - frames[0][..., 2]) > 40).sum()
            assert (red > 2000) == red_side and (figure_mask(frames[0]).sum() > 2000) != red_side
    made = {p: p.stat().st_mtime_ns for pair in videos.values() for p in pair}
    again = prepare_study(d)
    assert {p: p.stat().st_mtime_ns for s in again.stimuli.values() for p in s.fallback} == made
    urls, files = stimulus_names(again.stimuli, {sid: "0" * 32 for sid in again.stimuli}, "secret")
    for sid, entry in urls.items():
        assert entry["video_left"] != entry["video_right"]
        assert files[entry["video_left"]] == (str(videos[sid][0]), "video/mp4")
