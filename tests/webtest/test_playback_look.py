"""How motion stimuli look, set in study.yaml (playback.framing, colors, background, play_both),
and the renderer's files: parsed and validated, carried to the trial page, part of a stimulus's
fingerprint, three.js vendored with its licence and nothing loaded from elsewhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from evalkit.errors import ConfigError
from tests.webtest.helpers import BASE_STUDY, deep_update
from webtest.study import load_study

STATIC = Path(__file__).resolve().parents[2] / "webtest" / "static"


def _load(tmp_path, changes):
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(deep_update(BASE_STUDY, changes), sort_keys=False))
    return load_study(tmp_path)


def test_look_options_parse_with_defaults(tmp_path):
    pb = _load(tmp_path, {}).playback
    assert (pb.framing, pb.color_left, pb.color_right, pb.background, pb.play_both) == ("full", None, None, None, False)
    pb = _load(tmp_path, {"playback": {"framing": "upper", "colors": {"left": "#B03A2E", "right": "#abc"},
                                       "background": "#ffffff", "play_both": True}}).playback
    assert (pb.framing, pb.color_left, pb.color_right, pb.background, pb.play_both) == (
        "upper", "#b03a2e", "#aabbcc", "#ffffff", True)


@pytest.mark.parametrize("changes, keypath, fragment", [
    ({"playback": {"framing": "uper"}}, "playback.framing", "did you mean 'upper'"),
    ({"playback": {"colors": {"left": "blue"}}}, "playback.colors.left", "'blue' is not a colour"),
    ({"playback": {"colors": {"centre": "#fff"}}}, "playback.colors.centre", "unknown key 'centre'"),
    ({"playback": {"background": "#12345"}}, "playback.background", "is not a colour"),
    ({"playback": {"play_both": "yes"}}, "playback.play_both", "must be true or false"),
])
def test_bad_look_options_name_key_line_and_fix(tmp_path, changes, keypath, fragment):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, changes)
    msg = str(err.value)
    assert keypath in msg and fragment in msg and "line" in msg and "fix:" in msg, msg


def _trial_html(p) -> str:
    r = p.to_trials()
    assert r.status_code == 302 and "/trial/" in r.location
    page = p.c.get(r.location)
    assert page.status_code == 200
    return page.get_data(as_text=True)


def test_trial_page_carries_the_look_to_the_player(make_study, app_factory, participant):
    d = make_study(playback={"framing": "upper", "colors": {"left": "#b03a2e"}, "background": "#fbf7ea",
                             "play_both": True})
    p = participant(app_factory(d).test_client())
    html = _trial_html(p)
    assert 'data-framing="upper"' in html and 'data-background="#fbf7ea"' in html
    left = re.search(r'<figure[^>]*id="stim-left"[^>]*>', html).group(0)
    right = re.search(r'<figure[^>]*id="stim-right"[^>]*>', html).group(0)
    assert 'data-color="#b03a2e"' in left and "data-color" not in right
    assert 'id="play-both"' in html and 'aria-keyshortcuts="B"' in html
    assert re.search(r'<script type="module" src="[^"]*player\.js"', html)
    # without play_both: no button
    d2 = make_study()
    p2 = participant(app_factory(d2).test_client())
    html2 = _trial_html(p2)
    assert 'id="play-both"' not in html2 and 'data-framing="full"' in html2


def test_look_changed_after_answers_is_refused(make_study, app_factory, db_url, participant):
    """Framing and colours are what participants see: answers given to one look are not pooled
    with answers given to another."""
    d = make_study(playback={"must_end": False, "min_time_s": 0, "framing": "upper"})
    app = app_factory(d, db_url)
    p = participant(app.test_client())
    p.to_trials()
    assert p.complete(value=1)
    data = yaml.safe_load((d / "study.yaml").read_text())
    for change in ({"framing": "full"}, {"colors": {"right": "#b03a2e"}}, {"background": "#000000"}):
        changed = deep_update(data, {"playback": change})
        (d / "study.yaml").write_text(yaml.safe_dump(changed, sort_keys=False))
        with pytest.raises(ConfigError, match=r"changed after \d+ answer.*framing, colors or background"):
            app_factory(d, db_url)
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))  # restored: served again
    app_factory(d, db_url)


def test_payload_names_the_joints_roles_for_the_mannequin():
    from evalkit.data import sample_path
    from evalkit.motion import load_motion
    from webtest.stimuli import motion_payload

    payload = motion_payload(load_motion(sample_path("cmu", "16_15.amc")).slice(0, 10))
    roles = payload["roles"]
    names = load_motion(sample_path("cmu", "16_15.amc")).skeleton.names
    assert names[roles["head"]] == "head" and names[roles["left_knee"]] == "ltibia"
    assert names[roles["right_wrist"]] == "rwrist" and "hips" in roles
    json.dumps(payload)  # plain JSON


def test_three_js_is_vendored_with_its_licence_and_nothing_comes_from_elsewhere():
    vendor = STATIC / "vendor"
    pinned = json.loads((vendor / "package.json").read_text())["dependencies"]["three"]
    lock = json.loads((vendor / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/three"]["version"] == pinned
    assert (vendor / "three" / "VERSION").read_text().startswith(f"three {pinned} ")
    assert "MIT License" in (vendor / "three" / "LICENSE").read_text()
    module = (vendor / "three" / "three.module.min.js").read_text()
    assert "Copyright 2010-" in module[:300] and 'REVISION' not in module[:50]
    for js in list(STATIC.glob("*.js")) + list(STATIC.glob("*.html")):
        text = js.read_text()
        imports = re.findall(r'(?:from|import\()\s*["\']([^"\']+)["\']', text)
        assert all(i.startswith("./") for i in imports), (js.name, imports)
        assert not re.search(r'src="https?:', text), js.name
