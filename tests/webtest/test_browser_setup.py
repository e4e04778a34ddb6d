"""Setup stages in chromium: the device check (a window too small, then enlarged; a touch-only
phone), the volume calibration and the antiphase headphone screening of a listening study, which
screens out a simulated participant who fails it and keeps one who passes."""

from __future__ import annotations

import re
import shutil
import wave
from pathlib import Path

import pytest
import yaml

from tests.webtest.test_browser import _serve, browser, expect  # noqa: F401

# Sounds play four times faster in these tests (a 4 s screening trial takes 1 s): what is heard
# does not matter to a simulated participant, the page's play-once / unlock-at-the-end logic does.
FAST_AUDIO = """
(() => { const play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function () { this.playbackRate = 4; return play.call(this); }; })();
"""


@pytest.fixture(scope="module")
def listening_study(tmp_path_factory) -> Path:
    """Two systems of speech (cut from LJ Speech) with all three setup stages, screen-out rule."""
    from evalkit.data import sample_path
    from webtest import prepare_study

    d = tmp_path_factory.mktemp("listening")
    for name, src in (("a.wav", "LJ001-0001.wav"), ("b.wav", "LJ001-0003.wav")):
        with wave.open(str(sample_path("speech", src)), "rb") as w:
            params, frames = w.getparams(), w.readframes(int(0.3 * w.getframerate()))
        with wave.open(str(d / name), "wb") as out:
            out.setparams(params)
            out.writeframes(frames)
    study = {
        "id": "listening", "title": "Listening", "consent": "ok", "instructions": "ok", "scale": "ab3",
        "stimuli": [{"id": "s.a", "item": "speech", "system": "a", "file": "a.wav"},
                    {"id": "s.b", "item": "speech", "system": "b", "file": "b.wav"}],
        "pairs": [["a", "b"]],
        "design": {"method": "full", "participants": 2},
        "setup": [{"device": {"min_width": 800, "min_height": 500, "allow_touch_only": False}}, "volume",
                  {"headphones": {"trials": 6, "pass": 5}}],
        "exclusion": {"action": "screen_out"},
    }
    (d / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    prepare_study(d)
    return d


@pytest.fixture
def served(listening_study, tmp_path):
    d = tmp_path / "listening"
    shutil.copytree(listening_study, d)
    server, app = _serve(d)
    yield f"http://127.0.0.1:{server.server_port}", app
    server.shutdown()
    app.extensions["webtest"].db.dispose()


def _to_setup(page, url):
    page.add_init_script(FAST_AUDIO)
    page.goto(url + "/")
    page.get_by_role("button", name="Start").click()
    page.get_by_role("button", name="I agree to take part").click()
    page.wait_for_url(re.compile(r"/setup/device$"))


def _volume(page):
    page.wait_for_url(re.compile(r"/setup/volume$"))
    comfortable = page.get_by_role("button", name="The volume is comfortable")
    assert comfortable.is_disabled()  # not before the sound has played
    page.get_by_role("button", name="Play the calibration sound").click()
    expect(comfortable).to_be_enabled()
    expect(page.locator("#play")).to_have_attribute("aria-pressed", "true")
    return comfortable


def _screening(page, app, right: int):
    """Answer the six trials by keyboard, ``right`` of them correctly (the server's own order)."""
    from webtest.setup import headphone_trials, quiet_position

    page.wait_for_url(re.compile(r"/setup/headphones$"))
    st = app.extensions["webtest"]
    with st.db.session() as s:
        from sqlalchemy import select

        from webtest.tables import Participant

        pid = s.execute(select(Participant.id).order_by(Participant.created_at.desc())).scalars().first()
    quiet = [quiet_position(k) for k in headphone_trials(st.study.id, pid, st.study.setup_stage("headphones"))]
    for i, q in enumerate(quiet, 1):
        trial = page.locator(f"#hp-{i}")
        expect(trial).to_be_visible()
        assert trial.locator("input[type=radio]").first.is_disabled()  # not before the sound
        play = trial.get_by_role("button", name="Play the sound")
        expect(play).to_be_enabled()
        play.click()
        expect(trial.locator("input[type=radio]").first).to_be_enabled(timeout=5000)
        assert trial.locator(".hp-play").is_disabled()  # each sound once
        page.keyboard.press(str(q if i <= right else q % 3 + 1))
        page.keyboard.press("Enter")
    page.wait_for_url(lambda u: "/setup/headphones" not in u)


def test_listening_study_keeps_who_passes_the_headphone_check(browser, served):
    url, app = served
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    _to_setup(page, url)
    page.get_by_role("button", name="Check my screen").click()
    _volume(page).click()
    _screening(page, app, right=5)
    assert page.url.endswith("/instructions")
    page.get_by_role("button", name="Begin").click()
    page.wait_for_selector("#trial.ready")
    assert not errors, errors
    from webtest.export import participants_table

    parts = participants_table(app.extensions["webtest"].db, "listening")
    row = parts.iloc[0]
    assert row["excluded"] == "" and row["setup_headphones"] == "passed (5/6 correct, 5 needed)"
    assert row["setup_device"] == "passed (1000×700 px)" and row["setup_volume"] == "passed"
    page.close()


def test_listening_study_screens_out_who_fails_the_headphone_check(browser, served):
    url, app = served
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    _to_setup(page, url)
    page.get_by_role("button", name="Check my screen").click()
    _volume(page).click()
    _screening(page, app, right=4)
    assert page.url.endswith("/stop")
    expect(page.locator("[role=status]")).to_contain_text("headphone check was not passed")
    from webtest.export import participants_table

    row = participants_table(app.extensions["webtest"].db, "listening").iloc[0]
    assert row["status"] == "screened_out" and row["excluded"] == "headphone check failed (4/6 correct, 5 needed)"
    page.close()


def test_device_check_asks_for_a_larger_window_then_passes(browser, served):
    url, app = served
    page = browser.new_page(viewport={"width": 700, "height": 600})
    _to_setup(page, url)
    page.get_by_role("button", name="Check my screen").click()
    expect(page.locator("#problem")).to_contain_text("Your browser window is 700 × 600 pixels; this study needs at least 800 × 500")
    page.set_viewport_size({"width": 1024, "height": 700})
    page.get_by_role("button", name="Check my screen").click()
    page.wait_for_url(re.compile(r"/setup/volume$"))
    from webtest.export import participants_table

    row = participants_table(app.extensions["webtest"].db, "listening").iloc[0]
    assert row["setup_device"] == "passed (1024×700 px), 2 attempts"
    page.close()


def test_device_check_refuses_a_touch_only_phone(browser, served):
    url, _ = served
    ctx = browser.new_context(viewport={"width": 900, "height": 800}, has_touch=True, is_mobile=True)
    page = ctx.new_page()
    _to_setup(page, url)
    assert page.evaluate("matchMedia('(any-pointer: fine)').matches") is False
    page.get_by_role("button", name="Check my screen").click()
    page.wait_for_url(re.compile(r"/stop$"))
    expect(page.locator("[role=status]")).to_contain_text("cannot be done on a phone or tablet")
    ctx.close()


def test_volume_page_cannot_hear_ends_a_listening_study(browser, served):
    url, _ = served
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    _to_setup(page, url)
    page.get_by_role("button", name="Check my screen").click()
    _volume(page)
    page.get_by_role("button", name="I cannot hear the sound").click()
    page.wait_for_url(re.compile(r"/stop$"))
    expect(page.locator("[role=status]")).to_contain_text("needs sound that you can hear")
    page.close()
