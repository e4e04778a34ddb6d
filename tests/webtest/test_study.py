"""study.yaml validation: every error names the file, the line, the key path and the fix."""

from __future__ import annotations

import copy

import pytest
import yaml

from evalkit.errors import ConfigError
from tests.webtest.helpers import BASE_STUDY, deep_update
from webtest.study import load_study


def _stim(i: int, **changes) -> dict:
    """BASE_STUDY's stimuli with stimulus i changed (None removes a key)."""
    stimuli = copy.deepcopy(BASE_STUDY["stimuli"])
    for k, v in changes.items():
        if v is None:
            stimuli[i].pop(k, None)
        else:
            stimuli[i][k] = v
    return {"stimuli": stimuli}


CASES = [
    # (id, changes, key path in the message, fragment of the message)
    ("unknown-top-key", {"titel": "x"}, "titel", "did you mean 'title'"),
    ("missing-title", {"title": None}, "title", "is missing"),
    ("empty-title", {"title": "  "}, "title", "is empty"),
    ("title-not-text", {"title": ["a"]}, "title", "must be text"),
    ("bad-id", {"id": "bad id!"}, "id", "is not valid"),
    ("unknown-scale", {"scale": "ccr9"}, "scale", "did you mean 'ccr7'"),
    ("duration-zero", {"duration_minutes": 0}, "duration_minutes", "below the minimum"),
    ("duration-float", {"duration_minutes": 2.5}, "duration_minutes", "must be a whole number"),
    ("number-read-as-text", {"motion": {"fps": "1e2"}}, "motion.fps", "YAML reads '1e2' as text; write it with a dot and a signed exponent, 1.0e+02"),
    ("unknown-string", {"strings": {"trial.nxt": "Go"}}, "strings.trial.nxt", "did you mean 'trial.next'"),
    ("string-not-text", {"strings": {"trial.next": ["Go"]}}, "strings.trial.next", "must be text"),
    ("demographics-not-list", {"demographics": {"age": 1}}, "demographics", "must be a list"),
    ("field-no-label", {"demographics": [{"id": "age"}]}, "demographics[0].label", "is missing"),
    ("field-dup", {"demographics": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]}, "demographics[1].id", "duplicate field id"),
    ("field-type", {"demographics": [{"id": "a", "label": "A", "type": "date"}]}, "demographics[0].type", "is not one of text, number, choice"),
    ("choice-no-options", {"demographics": [{"id": "a", "label": "A", "type": "choice"}]}, "demographics[0].options", "needs options"),
    ("options-on-text", {"demographics": [{"id": "a", "label": "A", "options": ["x"]}]}, "demographics[0].options", "only apply to type 'choice'"),
    ("min-on-text", {"demographics": [{"id": "a", "label": "A", "min": 1}]}, "demographics[0].min", "only apply to type 'number'"),
    ("min-above-max", {"demographics": [{"id": "a", "label": "A", "type": "number", "min": 9, "max": 1}]}, "demographics[0].max", "below min"),
    ("motion-fps", {"motion": {"fps": 0}}, "motion.fps", "below the minimum"),
    ("motion-units", {"motion": {"units": ["m"]}}, "motion.units", "is not a unit"),
    ("one-stimulus", {"stimuli": BASE_STUDY["stimuli"][:1]}, "stimuli", "at least 2"),
    ("stimuli-not-list", {"stimuli": {"a": 1}}, "stimuli", "must be a list"),
    ("stimulus-no-file", _stim(0, file=None), "stimuli[0].file", "is missing"),
    ("stimulus-bad-id", _stim(0, id="a b"), "stimuli[0].id", "is not a valid id"),
    ("stimulus-dup-id", _stim(1, id="walk.orig"), "stimuli[1].id", "duplicate stimulus id"),
    ("stimulus-kind", _stim(0, kind="vidoe"), "stimuli[0].kind", "did you mean 'video'"),
    ("stimulus-kind-unknown-ext", _stim(0, file="clip.xyz", trim=None), "stimuli[0].kind", "cannot tell the kind"),
    ("stimulus-missing-file", _stim(0, file="nope.bvh"), "stimuli[0].file", "file not found"),
    ("motion-not-bvh", _stim(0, file="sample:speech/LJ001-0001.wav", kind="motion"), "stimuli[0].file", "must be .bvh or .amc"),
    ("audio-on-audio", _stim(0, file="sample:speech/LJ001-0001.wav", trim=None, transform=None, audio="sample:speech/LJ001-0003.wav"), "stimuli[0].audio", "only accompany a motion"),
    ("audio-missing", _stim(0, audio="nope.wav"), "stimuli[0].audio", "file not found"),
    ("trim-on-audio", _stim(0, file="sample:speech/LJ001-0001.wav"), "stimuli[0].trim", "motion stimuli only"),
    ("trim-backwards", _stim(0, trim=[3, 1]), "stimuli[0].trim", "not a [start_s, end_s] range"),
    ("transform-on-audio", _stim(1, file="sample:speech/LJ001-0001.wav", trim=None), "stimuli[1].transform", "motion stimuli only"),
    ("transform-shape", _stim(1, transform=[{"jitter": {"deg": 1}, "timewarp": {"amount": 0.5}}]), "stimuli[1].transform[0]", "is not a transform"),
    ("transform-unknown", _stim(1, transform=[{"blur": {"deg": 1}}]), "stimuli[1].transform[0]", "unknown transform 'blur'"),
    ("jitter-no-deg", _stim(1, transform=[{"jitter": {"seed": 1}}]), "stimuli[1].transform[0].jitter.deg", "is missing"),
    ("jitter-too-big", _stim(1, transform=[{"jitter": {"deg": 180}}]), "stimuli[1].transform[0].jitter.deg", "above the maximum"),
    ("timewarp-amount", _stim(1, transform=[{"timewarp": {"amount": 1.5}}]), "stimuli[1].transform[0].timewarp.amount", "above the maximum"),
    ("duration-on-motion", _stim(0, duration_s=2.0), "stimuli[0].duration_s", "comes from its file"),
    ("pair-shape", {"pairs": [["original"]]}, "pairs[0]", "is not a pair of systems"),
    ("pair-self", {"pairs": [["original", "original"]]}, "pairs[0]", "with itself"),
    ("pair-unknown-system", {"pairs": [["original", "jiter"]]}, "pairs[0]", "did you mean 'jitter'"),
    ("pair-dup", {"pairs": [["original", "jitter"], ["jitter", "original"]]}, "pairs[1]", "listed twice"),
    ("pair-incomplete-item", {"stimuli": BASE_STUDY["stimuli"][:3]}, "pairs[0]", "item 'run' has no stimulus of system 'jitter'"),
    ("no-pairs", {"pairs": []}, "pairs", "no pairs"),
    ("design-no-participants", {"design": {"participants": None}}, "design.participants", "is missing"),
    ("design-zero", {"design": {"participants": 0}}, "design.participants", "below the minimum"),
    ("design-method", {"design": {"method": "latin"}}, "design.method", "did you mean 'latin_square'"),
    ("bibd-no-tpp", {"design": {"method": "balanced_incomplete"}}, "design.trials_per_participant", "is required"),
    ("bibd-too-many", {"design": {"method": "balanced_incomplete", "trials_per_participant": 9}}, "design.trials_per_participant", "more than the 2 conditions"),
    ("full-tpp", {"design": {"trials_per_participant": 1}}, "design.trials_per_participant", "gives 2 trials per participant"),
    ("training-systems", {"training": [{"item": "walk", "systems": ["original"]}]}, "training[0].systems", "is not two systems"),
    ("training-unknown", {"training": [{"item": "swim", "systems": ["original", "jitter"]}]}, "training[0].systems", "no stimulus for item 'swim'"),
    ("quality-key", {"quality": {"golden": {"count": 1}}}, "quality.golden", "did you mean 'gold'"),
    ("gold-negative", {"quality": {"gold": {"count": -1}}}, "quality.gold.count", "below the minimum"),
    ("exclusion-without-check", {"exclusion": {"max_gold_failures": 0}}, "exclusion.max_gold_failures", "can never fire"),
    ("exclusion-action", {"exclusion": {"action": "reject"}}, "exclusion.action", "is not one of flag, screen_out"),
    ("playback-bool", {"playback": {"must_end": "yes"}}, "playback.must_end", "must be true or false"),
    ("playback-slack", {"playback": {"slack": 2}}, "playback.slack", "above the maximum"),
    ("playback-camera", {"playback": {"camera": "moving"}}, "playback.camera", "'moving' is not one of follow, fixed"),
    ("playback-camera-typo", {"playback": {"camera": "folow"}}, "playback.camera", "did you mean 'follow'"),
    ("playback-camera-type", {"playback": {"camera": True}}, "playback.camera", "is not one of follow, fixed"),
    ("playback-camera-key", {"playback": {"camra": "fixed"}}, "playback.camra", "did you mean 'camera'"),
    ("platform", {"crowdsourcing": {"platform": "prolifc", "completion_code": "C1"}}, "crowdsourcing.platform", "did you mean 'prolific'"),
    ("completion-code", {"crowdsourcing": {"completion_code": "C 1"}}, "crowdsourcing.completion_code", "letters and digits"),
    ("completion-url", {"crowdsourcing": {"completion_url": "http://x.org"}}, "crowdsourcing.completion_url", "not an https:// URL"),
    ("prolific-no-code", {"crowdsourcing": {"platform": "prolific"}}, "crowdsourcing.completion_code", "need a completion code"),
    ("timeout", {"assignment": {"timeout_minutes": 0}}, "assignment.timeout_minutes", "below the minimum"),
    ("admin-plain-password", {"admin": {"password_hash": "hunter2"}}, "admin.password_hash", "is not a password hash"),
    ("admin-colon-password", {"admin": {"password_hash": "pass:word"}}, "admin.password_hash", "is not a password hash"),
    ("section-not-mapping", {"playback": ["must_end"]}, "playback", "must be a mapping"),
]


@pytest.mark.parametrize("changes, keypath, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_validation_error_names_key_line_and_fix(tmp_path, changes, keypath, fragment):
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(deep_update(BASE_STUDY, changes), sort_keys=False))
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path)
    lines = str(err.value).splitlines()
    match = [ln for ln in lines if f": {keypath}: " in ln and fragment in ln]
    assert match, f"no line with key path {keypath!r} and {fragment!r} in:\n{err.value}"
    line = match[0]
    assert str(path) in line and "fix: " in line
    top_level_missing = fragment == "is missing" and "." not in keypath and "[" not in keypath
    if not top_level_missing:
        assert ", line " in line  # the line of the key (or of its parent when it is missing)


@pytest.mark.parametrize("check, rule", [("gold", "max_gold_failures"), ("attention", "max_attention_failures"),
                                         ("repeat", "max_repeat_inconsistencies")])
@pytest.mark.parametrize("section, fragment", [({"count": 100}, "100 is above the maximum 50"),
                                               ({"count": -1}, "below the minimum"),
                                               ({"count": "many"}, "must be a whole number"),
                                               (3, "must be a mapping")])
def test_invalid_check_count_gives_no_follow_on_exclusion_error(tmp_path, check, rule, section, fragment):
    changes = {"quality": {check: section}, "exclusion": {rule: 1}}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(deep_update(BASE_STUDY, changes), sort_keys=False))
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path)
    msg = str(err.value)
    assert fragment in msg and f"quality.{check}" in msg
    assert "can never fire" not in msg and len(msg.splitlines()) == 1


def test_all_problems_are_reported_together(tmp_path):
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(deep_update(BASE_STUDY, {"scale": "x", "design": {"method": "y"}})))
    with pytest.raises(ConfigError, match=r"^2 problems in the study file"):
        load_study(tmp_path)


def test_missing_study_file(tmp_path):
    with pytest.raises(ConfigError, match="no study file; fix: create study.yaml"):
        load_study(tmp_path)


def test_invalid_yaml_names_the_line(tmp_path):
    (tmp_path / "study.yaml").write_text("title: ok\nstimuli: [\n  - a: b\n")
    with pytest.raises(ConfigError, match=r"study.yaml, line \d+: not valid YAML.*fix: "):
        load_study(tmp_path)


def test_study_file_that_is_not_utf8_names_the_line(tmp_path):
    (tmp_path / "study.yaml").write_bytes(b"id: x\n\xff\xfe bad: 1\n")
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path)
    msg = str(err.value)
    assert msg.startswith(f"{tmp_path / 'study.yaml'}, line 2: not UTF-8 text (byte 0xff at column 1)")
    assert "fix: save the file with UTF-8 encoding" in msg and "\n" not in msg


def test_disallowed_character_names_the_line_in_one_line(tmp_path):
    (tmp_path / "study.yaml").write_text('id: x\ntitle: "a\x01"\n')
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path)
    msg = str(err.value)
    assert ", line 2: not valid YAML (character #x0001 is not allowed)" in msg and "\n" not in msg


def test_study_file_that_cannot_be_read(tmp_path):
    (tmp_path / "study.yaml").mkdir()
    with pytest.raises(ConfigError, match=r"study.yaml: cannot be read .*fix: "):
        load_study(tmp_path)


def test_top_level_must_be_a_mapping(tmp_path):
    (tmp_path / "study.yaml").write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match=r"\(top level\): must be a mapping"):
        load_study(tmp_path)


def test_valid_study_loads_into_typed_model(tmp_path):
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(BASE_STUDY))
    study = load_study(tmp_path)
    assert study.id == "mini" and study.scale.name == "ccr7"
    assert study.items == ("walk", "run") and study.systems == ("original", "jitter")
    assert study.find("run", "jitter").transforms[0].params == {"deg": 3.0, "seed": 2.0}
    assert study.stimulus("walk.orig").file.name == "16_15.amc"
    assert study.assignment_timeout_s == 3600.0


@pytest.mark.parametrize("playback, camera", [(None, "follow"), ({"must_end": True}, "follow"),
                                              ({"camera": "follow"}, "follow"), ({"camera": "fixed"}, "fixed")])
def test_playback_camera_defaults_to_follow(tmp_path, playback, camera):
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(deep_update(BASE_STUDY, {"playback": None})
                                                        | ({"playback": playback} if playback else {})))
    assert load_study(tmp_path).playback.camera == camera


def test_camera_error_names_file_line_and_the_allowed_values(tmp_path):
    text = yaml.safe_dump(deep_update(BASE_STUDY, {"playback": {"camera": "moving"}}), sort_keys=False)
    (tmp_path / "study.yaml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "camera: moving" in ln)
    assert str(err.value) == (f"{tmp_path / 'study.yaml'}, line {line}: playback.camera: 'moving' is not one of "
                              "follow, fixed; fix: use one of follow, fixed")


def test_example_study_is_valid():
    from tests.webtest.helpers import EXAMPLE

    study = load_study(EXAMPLE)
    assert study.id == "example-cmu" and len(study.stimuli) == 15
    assert {s.system for s in study.stimuli} == {"original", "jitter", "timewarp"}
