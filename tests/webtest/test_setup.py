"""Setup stages (``setup:`` in study.yaml): validation, the screening's sounds, the flow through
device check, volume calibration and headphone screening, what is stored, the exclusion rules,
the admin page and the participants export."""

from __future__ import annotations

import wave

import numpy as np
import pytest

from evalkit.errors import ConfigError

SETUP = [{"device": {"min_width": 800, "min_height": 500, "allow_touch_only": False}}, "volume", {"headphones": {}}]


def _wav(path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as w:
        assert w.getnchannels() == 2 and w.getsampwidth() == 2
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, 2).astype(float) / 32767, w.getframerate()


def test_setup_is_validated_with_line_and_fix(make_study):
    from webtest.study import load_study

    with pytest.raises(ConfigError) as exc:
        load_study(make_study(setup=[{"headphone": {}}, {"device": {"min_widht": 3}}, "volume", "volume",
                                     {"headphones": {"trials": 6, "pass": 7}}]))
    text = str(exc.value)
    assert "setup[0]: 'headphone' is not one of device, volume, headphones; fix: did you mean 'headphones'?" in text
    assert "setup[1].device.min_widht: unknown key" in text and "did you mean 'min_width'?" in text
    assert "setup[3]: the volume stage is listed twice" in text
    assert "setup[4].headphones.pass: 7 correct of 6 trials can never be reached" in text
    assert "line " in text
    study = load_study(make_study(setup=SETUP))
    assert [s.name for s in study.setup] == ["device", "volume", "headphones"]
    assert study.setup_stage("headphones").pass_min == 5 and study.setup_stage("headphones").trials == 6
    assert study.stage_after("consent") == "device" and study.stage_after("headphones") == "instructions"


def test_screening_sounds_are_woods_antiphase_trials(make_study):
    """Each trial: three 1 s 200 Hz tones 0.5 s apart; the quiet one 6 dB down in phase, the
    antiphase one at the reference level with the right channel inverted."""
    from webtest import prepare_study
    from webtest.setup import ORDERS

    prepared = prepare_study(make_study(setup=SETUP))
    sounds = prepared.setup_sounds
    assert sorted(sounds) == ["calibration"] + [f"order-{k}" for k in range(6)]
    for k, order in enumerate(ORDERS):
        x, rate = _wav(sounds[f"order-{k}"])
        assert rate == 44100 and abs(len(x) / rate - 4.0) < 1e-3
        levels = {}
        for i, name in enumerate(order):
            tone = x[int((i * 1.5 + 0.2) * rate):int((i * 1.5 + 0.8) * rate)]  # the steady middle
            left, right = tone[:, 0], tone[:, 1]
            spectrum = np.abs(np.fft.rfft(left))
            assert abs(np.fft.rfftfreq(len(left), 1 / rate)[spectrum.argmax()] - 200) < 2
            corr = np.corrcoef(left, right)[0, 1]
            assert (corr < -0.999) if name == "antiphase" else (corr > 0.999), (name, corr)
            levels[name] = np.sqrt(np.mean(left ** 2))
        assert abs(20 * np.log10(levels["quiet"] / levels["reference"]) + 6) < 0.1
        assert abs(levels["antiphase"] / levels["reference"] - 1) < 0.01
        gap = x[int(1.05 * rate):int(1.45 * rate)]
        assert np.abs(gap).max() == 0
    noise, _ = _wav(sounds["calibration"])
    mid = noise[len(noise) // 4: 3 * len(noise) // 4, 0]
    assert abs(np.sqrt(np.mean(mid ** 2)) - 0.25 / np.sqrt(2)) < 0.01  # the reference tone's RMS


def _correct(app, pid):
    from webtest.setup import headphone_trials, quiet_position

    st = app.extensions["webtest"]
    return [quiet_position(k) for k in headphone_trials(st.study.id, pid, st.study.setup_stage("headphones"))]


def _pid(client, study_id="mini"):
    with client.session_transaction() as sess:
        return sess[f"p:{study_id}"]


def _through_setup(p, app, headphones_right: int, volume="comfortable"):
    """Consent, then the three stages; ``headphones_right`` of the 6 answers correct."""
    p.start()
    assert p.consent().location == "/setup/device"
    r = p.c.post("/setup/device", data={"csrf_token": p.token, "width": "640", "height": "700", "touch_only": "0"})
    assert r.status_code == 200 and "640 × 700 pixels" in r.get_data(as_text=True)  # too narrow: again
    r = p.c.post("/setup/device", data={"csrf_token": p.token, "width": "1200", "height": "700", "touch_only": "0"})
    assert r.location == "/setup/volume"
    r = p.c.post("/setup/volume", data={"csrf_token": p.token, "choice": volume})
    if volume != "comfortable":
        return r
    assert r.location == "/setup/headphones"
    page = p.c.get("/setup/headphones").get_data(as_text=True)
    assert page.count('class="hp-trial') == 6
    right = _correct(app, _pid(p.c))
    answers = {f"t{i + 1}": str(q if i < headphones_right else q % 3 + 1) for i, q in enumerate(right)}
    return p.c.post("/setup/headphones", data={"csrf_token": p.token, **answers})


def test_setup_stages_pass_and_are_recorded(make_study, app_factory, participant):
    from sqlalchemy import select

    from webtest.tables import SetupResult

    app = app_factory(make_study(setup=SETUP))
    p = participant(app.test_client())
    assert _through_setup(p, app, headphones_right=5).location == "/instructions"  # 5 of 6 passes
    with app.extensions["webtest"].db.session() as s:
        rows = {r.stage: r for r in s.execute(select(SetupResult)).scalars()}
    assert rows["device"].passed == 1 and rows["device"].attempts == 2
    assert rows["volume"].passed == 1
    assert rows["headphones"].passed == 1 and rows["headphones"].score == 5
    p.c.post("/instructions", data={"csrf_token": p.token})
    assert p.complete(value=1)  # on to the trials as usual


def test_failed_headphone_check_flags_or_screens_out_by_the_rule(make_study, app_factory, participant):
    from webtest.export import participants_table, ratings_long

    flag = app_factory(make_study(setup=SETUP))
    p = participant(flag.test_client())
    assert _through_setup(p, flag, headphones_right=4).location == "/instructions"  # flag: goes on, excluded
    p.c.post("/instructions", data={"csrf_token": p.token})
    p.complete(value=1)
    df = ratings_long(flag.extensions["webtest"].db)
    assert len(df) and df["flags"].str.contains("excluded").all()
    parts = participants_table(flag.extensions["webtest"].db, "mini")
    assert parts.loc[0, "excluded"] == "headphone check failed (4/6 correct, 5 needed)"
    assert parts.loc[0, "setup_headphones"] == "failed (4/6 correct, 5 needed)"
    assert parts.loc[0, "setup_device"].startswith("passed (1200×700 px), 2 attempts")

    out = app_factory(make_study(setup=SETUP, exclusion={"action": "screen_out"}))
    q = participant(out.test_client())
    assert _through_setup(q, out, headphones_right=4).location == "/stop"
    assert "headphone check was not passed" in q.c.get("/stop").get_data(as_text=True)
    assert q.c.get("/trial").location == "/stop"
    from sqlalchemy import select

    from webtest.tables import Cell

    with out.extensions["webtest"].db.session() as s:
        assert all(c.status == "free" for c in s.execute(select(Cell)).scalars())  # the cell is given back


def test_touch_only_device_and_cannot_hear_fail(make_study, app_factory, participant):
    app = app_factory(make_study(setup=SETUP, exclusion={"action": "screen_out"}))
    p = participant(app.test_client())
    p.start()
    p.consent()
    r = p.c.post("/setup/device", data={"csrf_token": p.token, "width": "1200", "height": "900", "touch_only": "1"})
    assert r.location == "/stop"
    assert "cannot be done on a phone or tablet" in p.c.get("/stop").get_data(as_text=True)
    q = participant(app.test_client())
    r = _through_setup(q, app, 6, volume="cannot_hear")
    assert r.location == "/stop" and "needs sound that you can hear" in q.c.get("/stop").get_data(as_text=True)
    # touch devices allowed: the same measurements pass
    ok = app_factory(make_study(setup=[{"device": {"min_width": 800}}]))
    t = participant(ok.test_client())
    t.start()
    t.consent()
    r = t.c.post("/setup/device", data={"csrf_token": t.token, "width": "1200", "height": "900", "touch_only": "1"})
    assert r.location == "/instructions"
    # no measurements (no JavaScript): asked again, not failed
    u = participant(ok.test_client())
    u.start()
    u.consent()
    r = u.c.post("/setup/device", data={"csrf_token": u.token})
    assert r.status_code == 200 and "needs JavaScript" in r.get_data(as_text=True)


def test_setup_failures_false_records_but_does_not_exclude(make_study, app_factory, participant):
    from webtest.export import participants_table

    app = app_factory(make_study(setup=SETUP, exclusion={"action": "screen_out", "setup_failures": False}))
    p = participant(app.test_client())
    assert _through_setup(p, app, headphones_right=2).location == "/instructions"
    parts = participants_table(app.extensions["webtest"].db, "mini")
    assert parts.loc[0, "excluded"] == "" and parts.loc[0, "setup_headphones"].startswith("failed (2/6")


def test_admin_page_shows_the_setup_results(make_study, app_factory, participant):
    from tests.webtest.helpers import ADMIN_PASSWORD

    app = app_factory(make_study(setup=SETUP))
    p = participant(app.test_client())
    _through_setup(p, app, headphones_right=6)
    admin = app.test_client()
    page = admin.get("/admin/login").get_data(as_text=True)
    from tests.webtest.helpers import csrf

    admin.post("/admin/login", data={"csrf_token": csrf(page), "password": ADMIN_PASSWORD})
    html = admin.get("/admin/").get_data(as_text=True)
    assert "headphones check" in html and "passed (6/6 correct, 5 needed)" in html
    csv = admin.get("/admin/export/participants.csv").get_data(as_text=True)
    assert "setup_headphones" in csv.splitlines()[0] and "passed (6/6 correct" in csv


def test_study_strings_translate_the_setup_pages(make_study, app_factory, participant):
    from webtest.strings import EN

    german = {"setup.device.title": "Bildschirmprüfung", "setup.device.check": "Bildschirm prüfen",
              "setup.volume.comfortable": "Die Lautstärke ist angenehm",
              "setup.headphones.question": "Welcher Ton war der leiseste?", "setup.headphones.tone_1": "Erster",
              "setup.headphones.stop": "Der Kopfhörertest wurde nicht bestanden.",
              "trial.load_failed": "Die Clips konnten nicht geladen werden ({reason})."}
    assert set(german) <= set(EN)
    app = app_factory(make_study(setup=SETUP, strings=german, exclusion={"action": "screen_out"}))
    p = participant(app.test_client())
    p.start()
    p.consent()
    device = p.c.get("/setup/device").get_data(as_text=True)
    assert "Bildschirmprüfung" in device and "Bildschirm prüfen" in device and EN["setup.device.check"] not in device
    p.c.post("/setup/device", data={"csrf_token": p.token, "width": "1200", "height": "800", "touch_only": "0"})
    assert "Die Lautstärke ist angenehm" in p.c.get("/setup/volume").get_data(as_text=True)
    p.c.post("/setup/volume", data={"csrf_token": p.token, "choice": "comfortable"})
    page = p.c.get("/setup/headphones").get_data(as_text=True)
    assert page.count("Welcher Ton war der leiseste?") == 6 and "Erster" in page and "First" not in page
    p.c.post("/setup/headphones", data={"csrf_token": p.token})  # no answers: 0 of 6
    assert "Der Kopfhörertest wurde nicht bestanden." in p.c.get("/stop").get_data(as_text=True)


def test_a_failed_setup_check_stays_when_quality_checks_are_counted_again(make_study, app_factory, participant):
    from webtest.export import participants_table

    app = app_factory(make_study(setup=SETUP, quality={"gold": {"count": 1, "tolerance": 0}},
                                 exclusion={"max_gold_failures": 0}))
    p = participant(app.test_client())
    _through_setup(p, app, headphones_right=3)
    p.c.post("/instructions", data={"csrf_token": p.token})
    p.complete(value=2)  # the identical pair answered +2: a gold failure, the counts are read again
    excluded = participants_table(app.extensions["webtest"].db, "mini").loc[0, "excluded"]
    assert excluded == "headphone check failed (3/6 correct, 5 needed); 1 identical-pair check failed (0 allowed)"
