"""Study pipelines and `evalkit demo`: both studies of record built from bundled data only."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from evalkit.cli import main
from evalkit.errors import ConfigError, InputError
from evalkit.pipeline import copy_study, load_pipeline

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from evalkit.demo import run_demo

    out = tmp_path_factory.mktemp("demo")
    report = run_demo(out, seed=3, progress=None)  # simulated raters take part by default
    return out, report


def test_demo_builds_both_studies_and_one_report_per_study(demo):
    out, index = demo
    assert index.exists() and index.name == "index.html"
    loco, gest = out / "locomotion-transitions", out / "gesture-speech"
    assert len(list((loco / "stimuli").glob("*.bvh"))) == 12
    assert len(list((gest / "stimuli").glob("*.bvh"))) == 16
    for study in (loco, gest):
        scores = pd.read_csv(study / "results" / "scores.csv")
        assert scores["error"].isna().all()
        assert (study / ".webtest").is_dir()  # browser stimuli precomputed
    reports = {s: s / "results" / "report" / "report.html" for s in (loco, gest)}
    index_html = index.read_text()
    for study, report in reports.items():
        assert report.exists()
        assert report.relative_to(out).as_posix() in index_html
    # one study, one analysis: no report names the other study's systems
    def text(report):  # the page without its embedded images (base64 can spell anything)
        return re.sub(r"data:image/png;base64,[^\"]+", "", report.read_text())

    loco_html, gest_html = text(reports[loco]), text(reports[gest])
    for system in ("SMG", "BPMG", "original capture"):
        assert system in loco_html and system not in gest_html
    # each GMG system is a whole text of the page (a table cell) and a row of the per-system
    # metric table, not a prefix of another name ("GMG sync" of "GMG sync+intensity")
    gest_texts = {t.strip() for t in re.findall(r">([^<>]+)<", gest_html)}
    # the per-system metric tables, one per metric family
    family_tables = sorted((reports[gest].parent / "tables").glob("metrics_*.csv"))
    assert family_tables
    by_system = set().union(*(set(pd.read_csv(f)["system"]) for f in family_tables))
    for system in ("GMG random", "GMG sync", "GMG sync+intensity"):
        assert system in gest_texts and system in by_system and system not in loco_html, system
    assert "<h1>Which gait change looks more natural?</h1>" in loco_html  # title from study.yaml
    for report in reports.values():
        html = report.read_text()
        # the simulated ratings are announced before anything else in the page body
        body = re.sub(r"<[^>]+>", " ", html.split("<body", 1)[1].split(">", 1)[1])
        assert body.split()[:2] == ["SIMULATED", "RATINGS:"], body.split()[:10]
        # ... and every table made from them says so too, also outside the page
        tables = report.parent / "tables"
        for name in ("pairwise_cmos5", "bradley_terry_cmos5", "metric_agreement"):
            assert set(pd.read_csv(tables / f"{name}.csv")["data"]) == {"simulated"}, name
            assert "\\caption{SIMULATED ratings" in (tables / f"{name}.tex").read_text(), name
        for f in tables.glob("metrics_*.csv"):
            assert "data" not in pd.read_csv(f).columns, f.name


def test_demo_ratings_come_from_simulated_raters_through_the_web_test(demo):
    """Every study's ratings were answered in its web test (its design, checks and answer path)
    by simulated raters, and are labelled simulated in the data, the index and the report."""
    import numpy as np
    import yaml

    from evalkit.demo import SIMULATED_ORDER

    out, index = demo
    index_html = index.read_text()
    assert "SIMULATED RATINGS" in index_html and "simulated raters" in index_html
    for name in ("locomotion-transitions", "gesture-speech"):
        study = out / name
        spec = yaml.safe_load((study / "study.yaml").read_text())
        ratings = pd.read_csv(study / "results" / "ratings.simulated.csv")
        assert set(ratings["data"]) == {"simulated"}
        assert f"{name}/results/ratings.simulated.csv" in index_html
        # the study's design: one participant per design cell, every item of the study
        assert ratings["participant"].nunique() == spec["design"]["participants"]
        assert set(ratings["item"]) == {s["item"] for s in spec["stimuli"]}
        # the web test's checks ran: a gold, an attention and a repeat trial for every rater,
        # and the raters answered the attention checks as the page asked
        for kind in ("gold", "attention", "repeat"):
            got = ratings[ratings["flags"].fillna("").str.contains(f"check:{kind}")]
            assert got["participant"].nunique() == spec["design"]["participants"], kind
        assert not ratings["flags"].fillna("").str.contains("attention_fail|gold_fail").any()
        # the stored scores are the web test's sign correction of the on-screen answers
        main = ratings[ratings["flags"].fillna("") == ""]
        sign = main["side_shown"].map({"right": 1, "left": -1})
        assert (main["score"] == sign * main["raw_answer"]).all()
        # the study's own database is untouched: real participants start from nothing
        assert not (study / "ratings.sqlite").exists()
        # the answers lean the assumed way: the system earlier in the assumed order preferred
        # (expected mean about +0.3 to +0.5 on the -2..2 scale, standard error about 0.1)
        rank = {sys: i for i, sys in enumerate(SIMULATED_ORDER[name])}
        towards = np.where(main["system_a"].map(rank) < main["system_b"].map(rank), 1, -1) * main["score"]
        assert towards.mean() > 0, name
        html = (study / "results" / "report" / "report.html").read_text()
        assert "simulated raters who took this study" in html


def test_demo_numbers_are_computed_in_the_run_and_show_the_expected_order(demo):
    out, _ = demo
    res = out / "locomotion-transitions" / "results"
    stats = pd.read_csv(res / "transition_stats.csv").set_index("method")
    # thesis finding: at one threshold BPMGs find more transition points than the SMG
    assert stats.loc["bpmg", "transition_points"] > stats.loc["smg", "transition_points"]
    pairs = pd.read_csv(res / "transition_pairs.csv")
    resp = pairs.groupby("method")["response_mean"].mean()
    assert resp["bpmg"] < resp["smg"]  # ... and answer a request faster
    requested = pd.read_csv(res / "transitions_requested.csv")
    manifests = {p.stem: p for p in (out / "locomotion-transitions" / "stimuli").glob("*.json")}
    import json

    for _, row in requested.iterrows():
        m = json.loads(manifests[f"{row['item']}.{row['method'].lower()}"].read_text())
        assert m["transition"]["response_frames"] == row["response_frames"]
    objective = pd.read_csv(out / "gesture-speech" / "results" / "gmg_objective.csv")
    assert set(objective["reading"]) == {"planned", "realised", "analysed"}  # the blind reading beside the plan's
    obj = objective[objective["reading"] == "realised"].set_index("variant")
    assert obj.loc["sync+intensity", "gsi_psi_in_margin"] > obj.loc["random", "gsi_psi_in_margin"]
    assert obj.loc["sync", "offset_mad_rule_s"] < obj.loc["random", "offset_mad_rule_s"]
    order = pd.read_csv(out / "gesture-speech" / "results" / "gmg_blind_order.csv")
    assert {"win_rate_a", "p_value"} <= set(order.columns) and len(order)
    html = (out / "locomotion-transitions" / "results" / "report" / "report.html").read_text()
    assert f"{int(stats.loc['bpmg', 'transition_points'])}" in html


def test_gesture_outputs_say_what_the_data_is(demo):
    out, _ = demo
    stim = out / "gesture-speech" / "stimuli"
    original = (stim / "lj001-0001.original.json").read_text()
    assert "CONSTRUCTED" in original
    gmg = (stim / "lj001-0001.gmg-sync.json").read_text()
    assert "non-conversational" in gmg


def test_report_of_a_study_folder(demo, capsys):
    out, _ = demo
    study = out / "locomotion-transitions"
    assert main(["report", str(study)]) == 0
    html = (study / "results" / "report" / "report.html").read_text()
    assert "Transition response and duration" in html
    assert "bpmg" in html and "smg" in html  # per-system objective summary of this study
    assert "SIMULATED" not in html  # no ratings collected: objective only, nothing simulated


LOCO = "kind: locomotion-transitions\nclips: {walk: a.bvh}\n"
REQ = "requests:\n  - {item: x, from: walk, to: walk, at_s: 1}\n"


@pytest.mark.parametrize("text,where", [
    ("kind: dance\n", "line 1: kind: unknown 'dance'"),
    ("# a study\nkind: locomotion\n", "line 2: kind: unknown 'locomotion'; use locomotion-transitions"),
    (LOCO + "requests: []\n", "line 3: requests: empty"),
    (LOCO + "requests:\n  - {item: x, from: walk, to: walk, at_s: 1}\n  - {item: y, from: walk, to: run, at_s: 1}\n",
     "line 5: requests[1].to: 'run' is not one of clips"),
    (LOCO + "requests: [{item: x, from: walk, to: walk}]\n", "line 3: requests[0].at_s: missing"),
    (LOCO + REQ + "fps: sixty\n", "line 5: fps: expected int or float, got str 'sixty'"),
    (LOCO + REQ + "threshold: -0.3\n", "line 5: threshold: expected a positive finite number, got -0.3"),
    (LOCO + REQ + "lead_s: .nan\n", "line 5: lead_s: expected a non-negative finite number, got nan"),
    (LOCO + REQ + "profile: sp9\n", "line 5: profile: unknown 'sp9'; use one of sp2"),
    ("kind: locomotion-transitions\nclips:\n  walk: a.bvh\n  run: missing-run.bvh\n" + REQ,
     "line 4: clips.run: "),
    ("kind: gesture-speech\ngestures: g/\nspeech: {a: a.wav}\nvariants: [loud]\n", "line 4: variants: unknown loud"),
    ("kind: gesture-speech\ngestures: g/\nspeech:\n  a: a.wav\n  b: b.wav\n", "line 5: speech.b: "),
    ("kind: gesture-speech\ngestures: g/\nspeech: {a: a.wav}\nthreshold: -0.3\n",
     "line 4: threshold: expected a positive finite number"),
    ("kind: gesture-speech\ngestures: g/\nspeech: {a: a.wav}\nrules: nope.json\n", "line 4: rules: "),
    ("kind: [unclosed\n", "line 2: not valid YAML"),
    (LOCO + REQ + "treshold: 0.5\n", "line 5: treshold: unknown key 'treshold'; did you mean 'threshold'?"),
    (LOCO + "requests:\n  - {item: x, from: walk, to: walk, at_s: 1, at: 2}\n",
     "line 4: requests[0].at: unknown key 'at'; did you mean 'at_s'?"),
    ("kind: gesture-speech\ngestures: g/\nspeech: {a: a.wav}\nvariant: [sync]\n",
     "line 4: variant: unknown key 'variant'; did you mean 'variants'?"),
])
def test_pipeline_errors_name_the_line_and_key(tmp_path, text, where):
    (tmp_path / "a.bvh").write_text("")
    (tmp_path / "a.wav").write_text("")
    (tmp_path / "g").mkdir()
    (tmp_path / "pipeline.yaml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_pipeline(tmp_path)
    assert f"{tmp_path / 'pipeline.yaml'}, {where}" in str(info.value)


def test_pipeline_missing_file_is_named_at_load(tmp_path):
    (tmp_path / "pipeline.yaml").write_text("kind: locomotion-transitions\nclips:\n  walk: walk.bvh\n" + REQ)
    with pytest.raises(ConfigError, match=r"line 3: clips\.walk: .*walk\.bvh not found"):
        load_pipeline(tmp_path)
    (tmp_path / "walk.bvh").write_text("")
    assert load_pipeline(tmp_path).clips == {"walk": "walk.bvh"}


def test_study_build_cli_user_errors_without_traceback(tmp_path):
    copy_study(REPO / "studies" / "locomotion-transitions", tmp_path / "s")
    text = (tmp_path / "s" / "pipeline.yaml").read_text().replace("sample:cmu/09_06-run.amc", "missing-run.amc")
    (tmp_path / "s" / "pipeline.yaml").write_text(text)
    proc = subprocess.run([sys.executable, "-m", "evalkit", "study", "build", str(tmp_path / "s")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "clips.run" in proc.stderr and "not found" in proc.stderr


def test_non_utf8_pipeline_names_file_and_line(tmp_path):
    copy_study(REPO / "studies" / "locomotion-transitions", tmp_path / "s")
    path = tmp_path / "s" / "pipeline.yaml"
    n = path.read_bytes().count(b"\n")
    with path.open("ab") as f:
        f.write(b"\n# caf\xe9\n")
    proc = subprocess.run([sys.executable, "-m", "evalkit", "study", "build", str(tmp_path / "s")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr == f"evalkit: error: {path}, line {n + 2}: byte 0xe9 is not UTF-8; expected UTF-8 text\n"


def _fresh_ratings_database(study: Path) -> None:
    from webtest.db import Database, init_schema

    db = Database(f"sqlite:///{(study / 'ratings.sqlite').resolve()}")
    init_schema(db)
    db.dispose()


def test_report_of_an_unbuilt_study_gives_advice_that_fits(tmp_path, capsys):
    study = tmp_path / "st"
    study.mkdir()
    (study / "study.yaml").write_text("id: st\n")
    _fresh_ratings_database(study)  # what 'evalkit serve' leaves before the first answer
    assert main(["report", str(study)]) == 2
    err = capsys.readouterr().err
    assert "its database has no ratings yet" in err and f"evalkit serve {study}" in err
    assert "run 'evalkit study build" not in err and "it has no pipeline.yaml" in err
    (study / "pipeline.yaml").write_text("kind: gesture-speech\n")
    assert main(["report", str(study)]) == 2
    assert f"run 'evalkit study build {study}'" in capsys.readouterr().err


def test_study_build_jobs_must_be_positive(tmp_path, capsys):
    copy_study(REPO / "studies" / "locomotion-transitions", tmp_path / "s")
    assert main(["study", "build", str(tmp_path / "s"), "--jobs", "0"]) == 2
    assert "jobs (--jobs) must be at least 1 worker process, got 0" in capsys.readouterr().err
    assert not (tmp_path / "s" / "stimuli").exists()


def test_report_of_a_study_with_a_non_utf8_result_table(tmp_path, capsys):
    study = tmp_path / "st"
    (study / "results").mkdir(parents=True)
    (study / "study.yaml").write_text("id: st\n")
    (study / "results" / "scores.csv").write_bytes(b"system,clip,jerk\na,caf\xe9,1\n")
    assert main(["report", str(study)]) == 2
    assert f"{study / 'results' / 'scores.csv'}, line 2: byte 0xe9 is not UTF-8" in capsys.readouterr().err


def test_rebuilding_a_study_with_answers_is_refused(demo, tmp_path, capsys):
    import shutil

    import yaml
    from werkzeug.security import generate_password_hash

    from evalkit.pipeline import build_study
    from tests.webtest.helpers import Participant
    from webtest import create_app

    out, _ = demo
    study = tmp_path / "loco"
    shutil.copytree(out / "locomotion-transitions", study)
    data = yaml.safe_load((study / "study.yaml").read_text())
    data["playback"] = {"must_end": False}  # answer at once (the check under test is the build's)
    (study / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    app = create_app(study, testing=True, admin_password_hash=generate_password_hash("x" * 12))
    p = Participant(app.test_client())
    p.to_trials()
    assert p.complete(value=1)
    app.extensions["webtest"].db.dispose()
    stimuli = {f.name: f.read_bytes() for f in (study / "stimuli").iterdir()}
    with pytest.raises(InputError, match=r"has \d+ answer\(s\) in its database; rebuilding would replace"):
        build_study(study, progress=None)
    assert main(["study", "build", str(study)]) == 2
    assert "copy the study folder and build the copy" in capsys.readouterr().err
    assert {f.name: f.read_bytes() for f in (study / "stimuli").iterdir()} == stimuli  # nothing rewritten


def test_report_refuses_a_broken_or_wrong_ratings_database(tmp_path, capsys, monkeypatch):
    """Only a readable database without answers means "no ratings yet"; a database that cannot
    be read, or a wrong EVALKIT_DATABASE_URL, is an error, never a report without ratings."""
    study = tmp_path / "st"
    (study / "results").mkdir(parents=True)
    (study / "study.yaml").write_text("id: st\n")
    (study / "results" / "scores.csv").write_text("system,clip,jerk\na,c1,1.0\nb,c2,2.0\n")
    monkeypatch.delenv("EVALKIT_DATABASE_URL", raising=False)
    _fresh_ratings_database(study)
    assert main(["report", str(study), "--out", str(tmp_path / "r1")]) == 0  # no answers yet: scores only
    capsys.readouterr()
    (study / "ratings.sqlite").write_bytes(b"this is not a database\n" * 100)  # a broken file
    assert main(["report", str(study), "--out", str(tmp_path / "r2")]) == 2
    err = capsys.readouterr().err
    assert "cannot read database" in err and "Traceback" not in err
    assert not (tmp_path / "r2" / "report.html").exists()
    (study / "ratings.sqlite").unlink()
    monkeypatch.setenv("EVALKIT_DATABASE_URL", f"sqlite:///{tmp_path / 'no-such.sqlite'}")  # a wrong URL
    assert main(["report", str(study), "--out", str(tmp_path / "r3")]) == 2
    assert "database file not found" in capsys.readouterr().err
    monkeypatch.setenv("EVALKIT_DATABASE_URL", "nosuchdriver://x/y")
    assert main(["report", str(study), "--out", str(tmp_path / "r4")]) == 2
    assert "cannot use database URL" in capsys.readouterr().err


def test_demo_options_switch_the_simulated_raters_off():
    from evalkit.cli import build_parser

    parse = build_parser().parse_args
    assert parse(["demo"]).ratings is True
    assert parse(["demo", "--no-ratings"]).ratings is False
    assert parse(["demo", "--simulate-ratings"]).ratings is True  # the old option, now the default
