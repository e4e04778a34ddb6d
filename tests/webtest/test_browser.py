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
from tests.webtest.helpers import EXAMPLE, figure_mask, png_rgb
from webtest.render import LAUNCH_ARGS

CHROMIUM = Path("/usr/bin/chromium")
ARGS = list(LAUNCH_ARGS)  # headless, WebGL by SwiftShader: the flags `evalkit render` uses
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


def _enter_study(page, url, demographics: bool = True):
    """Landing, consent, (the example study's demographics), instructions: to trial 1."""
    page.goto(url + "/")
    page.get_by_role("button", name="Start").click()
    page.get_by_role("button", name="I agree to take part").click()
    if demographics:
        page.get_by_label("Experience with animation or motion capture").select_option("some")
        page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Begin").click()
    page.wait_for_url(re.compile(r"/trial/1$"))


def _serve(study_dir: Path):
    """The study served by a real HTTP server on 127.0.0.1 (random port): (server, app)."""
    from werkzeug.serving import make_server

    from webtest import create_app

    app = create_app(study_dir)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, app


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


def _figure_box(png: bytes) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """The canvas image and the (top, bottom, left, right) pixels of the mannequin in it."""
    img = png_rgb(png)
    mask = figure_mask(img)
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    assert len(rows), "no figure drawn"
    return img, (rows[0], rows[-1], cols[0], cols[-1])


def _figure_pixels(png: bytes) -> int:
    return int(figure_mask(png_rgb(png)).sum())


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
    # the motion canvases are not blank: a shaded body is drawn on both sides
    for side in ("left", "right"):
        shot = page.locator(f"#stim-{side} canvas").screenshot()
        assert _figure_pixels(shot) > 3000, f"{side} canvas shows no body"
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
    # one counter on the page: the heading (practice counted apart); the progress line is a share
    assert page.locator("#trial-title").inner_text() == "Comparison 2 of 13"
    assert page.locator(".progress-text").inner_text() == "14% done"  # 2 of 14 pages done
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
    assert _figure_pixels(page.locator("#stim-left canvas").screenshot()) > 800
    ctx.close()


@pytest.fixture(scope="module")
def media_study(tmp_path_factory) -> Path:
    """Video (rendered from CMU capture), audio (cut from LJ Speech) and motion-with-audio."""
    import wave

    from evalkit.data import sample_path
    from evalkit.motion import load_motion
    from webtest import prepare_study
    from webtest.stimuli import jitter
    from webtest.render import render_video

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

    d = tmp_path / "media"
    shutil.copytree(media_study, d)
    server, app = _serve(d)
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        ctx = browser.new_context()
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        _enter_study(page, url, demographics=False)
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

        from webtest.tables import Answer

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


WALK_S = 3.0  # CMU 16_15 walks about 3.3 m in these 3 s


@pytest.fixture(scope="module")
def walk_studies(tmp_path_factory) -> dict[str, Path]:
    """A 3 s walk against the same walk with jitter, one study per playback.camera."""
    from webtest import prepare_study

    out = {}
    for camera in ("follow", "fixed"):
        d = tmp_path_factory.mktemp(f"walk-{camera}")
        study = {
            "id": f"walk-{camera}", "title": "Walk", "consent": "ok", "instructions": "ok", "scale": "ab3",
            "stimuli": [
                {"id": "w.a", "item": "walk", "system": "a", "file": "sample:cmu/16_15.amc", "trim": [0, WALK_S]},
                {"id": "w.b", "item": "walk", "system": "b", "file": "sample:cmu/16_15.amc", "trim": [0, WALK_S],
                 "transform": [{"jitter": {"deg": 1, "seed": 1}}]},
            ],
            "pairs": [["a", "b"]],
            "design": {"method": "full", "participants": 2},
            "playback": {"must_end": False, "exclusive": False, "camera": camera},
        }
        (d / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
        prepare_study(d)
        out[camera] = d
    return out



def _open_first_trial(browser, url: str):
    """A 1100x900 browser context on the study at `url`, entered up to its first trial with both
    stimuli loaded; returns (context, page, the page's script errors as they come)."""
    ctx = browser.new_context(viewport={"width": 1100, "height": 900}, device_scale_factor=1)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    _enter_study(page, url, demographics=False)
    page.wait_for_selector("#trial.ready")
    return ctx, page, errors


def _first_and_last_frames(browser, study_dir: Path, tmp_path: Path) -> dict:
    """Open the study's trial page, screenshot both canvases at the first frame and again after
    both clips played to the end; also fetch the clips the page drew."""
    d = tmp_path / study_dir.name
    shutil.copytree(study_dir, d)
    server, app = _serve(d)
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        ctx, page, errors = _open_first_trial(browser, url)
        shots = {side: [page.locator(f"#stim-{side} canvas").screenshot()] for side in ("left", "right")}
        frames = {side: [int(page.locator(f"#stim-{side}").get_attribute("data-frame"))] for side in ("left", "right")}
        page.keyboard.press("a")
        page.keyboard.press("l")  # not exclusive: both play at once
        for side in ("left", "right"):
            expect(page.locator(f"#stim-{side} button.play")).to_contain_text("again", timeout=3 * WALK_S * 1000)
            shots[side].append(page.locator(f"#stim-{side} canvas").screenshot())
            frames[side].append(int(page.locator(f"#stim-{side}").get_attribute("data-frame")))
        clips = {side: page.request.get(url + page.locator(f"#stim-{side}").get_attribute("data-src")).json()
                 for side in ("left", "right")}
        camera = page.locator("#trial").get_attribute("data-camera")
        ctx.close()
        assert not errors, errors
        return {"shots": shots, "frames": frames, "clips": clips, "camera": camera}
    finally:
        server.shutdown()
        app.extensions["webtest"].db.dispose()


@pytest.fixture(scope="module")
def walk_seen(browser, walk_studies, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("walk-seen")
    return {camera: _first_and_last_frames(browser, d, tmp) for camera, d in walk_studies.items()}


def test_follow_camera_draws_a_walking_figure_large_and_centred(walk_seen):
    from scipy.ndimage import binary_dilation

    seen = walk_seen
    assert seen["follow"]["camera"] == "follow" and seen["fixed"]["camera"] == "fixed"
    heights = {"follow": [], "fixed": []}
    for camera, got in seen.items():
        for side in ("left", "right"):
            for png in got["shots"][side]:
                img, (top, bottom, left, right) = _figure_box(png)
                h, w = img.shape[:2]
                heights[camera].append((bottom - top + 1) / h)
                if camera == "follow":  # in the middle, feet and head inside the canvas
                    assert 0.3 < (left + right) / 2 / w < 0.7 and top > 0.03 * h and bottom < 0.97 * h
    # measured here (500 x 376 canvas): follow 0.68-0.69 of the canvas height at the first and
    # last frames of both sides, fixed 0.44-0.45 at the first and 0.56 at the last (the walk comes closer)
    assert min(heights["follow"]) >= 0.55 and max(heights["follow"]) <= 0.75, heights
    assert min(heights["fixed"]) < 0.5 and np.mean(heights["fixed"]) < 0.8 * np.mean(heights["follow"]), heights
    # the ground grid moved under the figure between the first and the last frame (it is fixed to
    # the world, not to the canvas); the fixed camera's ground stays where it was (away from the
    # figure and its contact shadow)
    for side in ("left", "right"):
        for camera, moved in (("follow", True), ("fixed", False)):
            first, last = (png_rgb(png) for png in seen[camera]["shots"][side])
            free = ~binary_dilation(figure_mask(first) | figure_mask(last), iterations=25)
            changed = (np.abs(first - last).sum(-1) > 12)[free].mean()
            assert (changed > 0.03) if moved else (changed < 0.01), (camera, side, changed)


@pytest.mark.parametrize("camera", ["follow", "fixed"])
def test_browser_and_video_show_the_same_pixels(walk_seen, camera, tmp_path):
    """The trial page's canvas and `evalkit render`'s frame of the same clip at the same time
    (one camera fitted to both clips, as on the page) are the same picture: the raw frame to
    within rounding, the H.264 video frame within a few levels on average."""
    from webtest.render import Look, Renderer, write_video

    got = walk_seen[camera]
    clips = got["clips"]

    def compare(shot: np.ndarray, frame: np.ndarray) -> np.ndarray:
        """|frame - shot| where the screenshot (its box rounded out to whole pixels, so up to one
        row/column larger) lines up with the canvas; the canvas's rounded corners left out."""
        h, w = frame.shape[:2]
        best = None
        for dy in range(shot.shape[0] - h + 1):
            for dx in range(shot.shape[1] - w + 1):
                d = np.abs(frame.astype(int) - shot[dy:dy + h, dx:dx + w])
                if best is None or d.mean() < best.mean():
                    best = d
        keep = np.ones(best.shape[:2], bool)
        for rows in (slice(0, 6), slice(-6, None)):
            for cols in (slice(0, 6), slice(-6, None)):
                keep[rows, cols] = False
        return best[keep]

    with Renderer() as r:
        for side, other in (("left", "right"), ("right", "left")):
            for png, f in zip(got["shots"][side], got["frames"][side]):
                shot = png_rgb(png)
                w = shot.shape[1] - 1 if shot.shape[1] % 2 else shot.shape[1]
                h = 2 * int(np.floor(w * 0.375 + 0.5))  # the page's canvas: whole pixels, 4:3, even height
                r.load(clips[side], (w, h), Look(camera=camera), fit=[clips[other]])
                diff = compare(shot, r.frame(f))
                # measured here: identical, pixel for pixel (the same code on the same SwiftShader)
                assert diff.mean() < 0.5 and (diff.max(-1) > 2).mean() < 0.001, (side, f, diff.mean(), diff.max())
        # the video of the left clip: its frame f is the page's frame f
        f_last = got["frames"]["left"][-1]
        r.load(clips["left"], (w, h), Look(camera=camera), fit=[clips["right"]])
        out = write_video(r, tmp_path / "left.mp4", n_frames=f_last + 1, fps=clips["left"]["fps"])
    import imageio_ffmpeg

    gen = imageio_ffmpeg.read_frames(str(out))
    meta = next(gen)
    frames = [np.frombuffer(b, np.uint8).reshape(meta["size"][1], meta["size"][0], 3) for b in gen]
    assert len(frames) == f_last + 1
    for png, f in zip(got["shots"]["left"], got["frames"]["left"]):
        diff = compare(png_rgb(png), frames[f])
        assert diff.mean() < 3.0, (f, diff.mean())  # H.264 at its default quality; measured 1.4-2.1


def test_without_webgl_the_page_says_so(browser, live):
    """A browser without WebGL: a clear message, and the clips cannot be played."""
    url, _ = live
    if True:
        b = browser.browser_type.launch(executable_path=str(CHROMIUM), args=ARGS + ["--disable-3d-apis", "--disable-webgl"])
        try:
            page = b.new_page()
            _enter_study(page, url)
            expect(page.locator("#status")).to_contain_text("cannot show the 3-D figures (WebGL")
            assert page.locator("#stim-left button.play").is_disabled()
            assert page.locator("#next").is_disabled()
            assert "ready" not in (page.locator("#trial").get_attribute("class") or "")
        finally:
            b.close()


def test_play_both_keeps_the_sides_in_step_in_the_study_colours(browser, walk_studies, tmp_path):
    """playback.play_both: one button (key B) plays both sides from the start on one clock; the
    two canvases show the same frame number throughout. The sides and the background take the
    colours of playback.colors / playback.background. Frame times are measured while playing."""
    d = tmp_path / "both"
    shutil.copytree(walk_studies["follow"], d)
    data = yaml.safe_load((d / "study.yaml").read_text())
    data["playback"].update({"play_both": True, "colors": {"left": "#b03a2e"}, "background": "#fbf7ea"})
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    server, app = _serve(d)
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        ctx, page, errors = _open_first_trial(browser, url)
        left, right = (png_rgb(page.locator(f"#stim-{s} canvas").screenshot()) for s in ("left", "right"))
        red = lambda im: ((im[..., 0] - im[..., 2]) > 40).sum()  # noqa: E731
        assert red(left) > 3000 and figure_mask(left).sum() < 100  # the left figure is red
        assert figure_mask(right).sum() > 3000 and red(right) < 100  # the right one the default blue
        assert np.abs(left[2, 2] - [0xFB, 0xF7, 0xEA]).max() <= 3  # the study's background
        page.keyboard.press("b")
        gaps = []
        for _ in range(8):
            page.wait_for_timeout(250)
            fl, fr = page.evaluate("[document.getElementById('stim-left').dataset.frame, "
                                   "document.getElementById('stim-right').dataset.frame]")
            gaps.append(abs(int(fl) - int(fr)))
        for side in ("left", "right"):
            expect(page.locator(f"#stim-{side} button.play")).to_contain_text("again", timeout=3 * WALK_S * 1000)
        assert max(gaps) <= 1, gaps
        stats = np.array(page.evaluate("window.evalkitTrial.frames"))
        assert len(stats) > 20 and (stats >= 0).all() and np.median(stats[:, 0]) > 0
        page.keyboard.press("1")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/done$"))
        ctx.close()
        assert not errors, errors
    finally:
        server.shutdown()
        app.extensions["webtest"].db.dispose()
    import json

    from sqlalchemy import select

    from webtest.tables import Answer

    with app.extensions["webtest"].db.session() as s:
        (answer,) = s.execute(select(Answer)).scalars().all()
    ev = json.loads(answer.events_json)
    for side in ("left", "right"):
        assert [e["type"] for e in ev if e["side"] == side] == ["play", "ended"]
    plays = [e["t"] for e in ev if e["type"] == "play"]
    assert abs(plays[0] - plays[1]) < 50  # ms: started together


def test_scale_buttons_have_one_height_per_row(browser, live):
    url, _ = live
    ctx = browser.new_context(viewport={"width": 1100, "height": 900})
    page = ctx.new_page()
    _enter_study(page, url)
    boxes = [page.locator("fieldset.scale .point span").nth(i).bounding_box()
             for i in range(page.locator("fieldset.scale .point span").count())]
    rows: dict[int, list[float]] = {}
    for b in boxes:
        rows.setdefault(round(b["y"]), []).append(b["height"])
    assert boxes and all(max(h) - min(h) < 1 for h in rows.values()), rows
    ctx.close()
