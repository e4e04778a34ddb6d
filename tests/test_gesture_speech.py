"""Synchrony and intensity rules: matching, fitting, rules files, constructed-take acceptance, CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.stats import linregress

from tests.conftest import shared_data
from evalkit.cli import main
from evalkit.constructed.takes import ConstructionConfig, construct_take, prepare_pool, single_stroke_sources
from evalkit.errors import ConfigError, FileFormatError, InputError
from evalkit.gesture import analyze_gestures
from evalkit.speech import load_audio, speech_accents
from evalkit.gesture_speech import (
    DEFAULT_RULES,
    fit_intensity,
    fit_rules,
    fit_synchrony,
    load_rules,
    match_apexes,
    pair_take,
    plot_offsets,
    plot_psi_gsi,
    save_rules,
)


# ---------------------------------------------------------------------------------- matching
def test_match_is_one_to_one_and_bounded():
    apex = [1.0, 1.05, 3.0, 9.0]
    papt = [1.1, 3.2, 5.0]
    pairs = match_apexes(apex, papt, max_distance_s=0.5)
    # 1.0 and 1.05 compete for 1.1: only one wins; 9.0 is too far from anything
    assert len(pairs) == 2
    assert {j for _, j in pairs} == {0, 1}
    assert (2, 1) in pairs
    assert len({i for i, _ in pairs}) == len(pairs)
    # centring the search on the expected offset changes who is nearest
    assert match_apexes([1.0], [0.95, 1.2], expected_offset_s=0.2) == [(0, 1)]
    assert match_apexes([1.0], [0.95, 1.2]) == [(0, 0)]
    assert match_apexes([], [1.0]) == []


def test_fits_agree_with_scipy_and_numpy():
    rng = np.random.default_rng(1)
    psi = rng.uniform(0, 1, 40)
    gsi = 0.2 + 0.5 * psi + rng.normal(0, 0.05, 40)
    rule = fit_intensity(psi, gsi, coverage=0.9)
    ref = linregress(psi, gsi)
    assert rule.slope == pytest.approx(ref.slope) and rule.intercept == pytest.approx(ref.intercept)
    assert rule.r == pytest.approx(ref.rvalue) and rule.n == 40
    inside = rule.accepts(psi, gsi)
    assert inside.mean() == pytest.approx(0.9, abs=0.03) and rule.coverage == pytest.approx(inside.mean())
    off = rng.normal(0.1, 0.2, 50)
    s = fit_synchrony(off)
    assert s.mean_s == pytest.approx(off.mean()) and s.sd_s == pytest.approx(off.std(ddof=1))
    with pytest.raises(InputError):
        fit_intensity([0.5, 0.5, 0.5], [0.1, 0.2, 0.3])
    with pytest.raises(InputError):
        fit_synchrony([0.1])


# ---------------------------------------------------------------------------------- rules files
def test_default_rules_are_the_thesis_numbers():
    r = load_rules(None)
    assert r is DEFAULT_RULES
    assert r.synchrony.mean_s == 0.1 and r.synchrony.sd_s == 0.2
    assert "thesis" in r.synchrony.source
    assert "assumed" in r.intensity.source  # the regression numbers are not published in our sources
    assert r.synchrony.anchor(2.0) == pytest.approx(1.9)


def test_rules_json_round_trip_and_errors(tmp_path):
    pairs = pd.DataFrame({"offset_s": [0.1, 0.2, 0.0, 0.15], "psi": [0.1, 0.5, 0.9, 0.3], "gsi": [0.2, 0.4, 0.7, 0.3],
                          "take": ["a", "a", "b", "b"], "constructed": [True, True, False, False]})
    rules = fit_rules(pairs, note="x")
    assert rules.constructed and rules.sources == ("a", "b")
    f = save_rules(rules, tmp_path / "rules.json")
    d = json.loads(f.read_text())
    assert d["constructed"] is True and d["format"] == "evalkit-rules"
    assert "positive = the stroke apex comes before" in d["synchrony"]["offset_definition"]
    back = load_rules(f)
    assert back.synchrony == rules.synchrony and back.intensity == rules.intensity
    del d["intensity"]["slope"]
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(ConfigError, match="intensity: missing key 'slope'"):
        load_rules(tmp_path / "bad.json")
    (tmp_path / "broken.json").write_text('{\n  "synchrony": {\n    "mean_s": 0.1,,\n  }\n}\n')
    with pytest.raises(FileFormatError, match="line 3"):
        load_rules(tmp_path / "broken.json")


def test_figures_are_written(tmp_path):
    pairs = pd.DataFrame({"offset_s": [0.1, 0.2, 0.0, 0.15], "psi": [0.1, 0.5, 0.9, 0.3], "gsi": [0.2, 0.4, 0.7, 0.3], "constructed": True})
    for f in (plot_offsets(pairs, tmp_path / "o.png"), plot_psi_gsi(pairs, tmp_path / "s.png")):
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------ acceptance: constructed takes
@pytest.fixture(scope="module")
def bandai_pool():
    """Single-stroke phrases of the real Bandai Namco gesture clips, measured at 13 speeds."""
    sources = single_stroke_sources([shared_data("gesture", "bandai-namco")])
    assert len(sources) >= 8
    return prepare_pool(sources)


def _recover(pool, cfg: ConstructionConfig, files):
    truth, found, unplaced = [], [], 0
    for k, path in enumerate(files):
        audio = load_audio(path)
        try:
            take = construct_take(audio, pool, ConstructionConfig(**{**cfg.__dict__, "seed": cfg.seed + k}))
        except InputError:  # a short recording whose accents no pooled phrase fits: said so, skipped
            unplaced += 1
            assert unplaced <= max(1, len(files) // 10)
            continue
        assert take.manifest["constructed"] is True
        g = analyze_gestures(take.motion)
        s = speech_accents(audio)
        found.append(pair_take(g, s, take=audio.name, constructed=True))
        truth.append(take.truth.assign(take=audio.name))
    return pd.concat(truth, ignore_index=True), pd.concat(found, ignore_index=True)


@pytest.mark.parametrize("mean, sd, n_files, slope", [(0.1, 0.05, 12, 0.7), (0.25, 0.08, 20, 0.5)])
def test_constructed_takes_recover_offset_and_slope(bandai_pool, mean, sd, n_files, slope):
    """Real LJ speech + real Bandai gestures placed with known offsets and an imposed PSI-GSI line:
    the analysis recovers the mean offset within 30 ms and the slope within 10 %. (Larger
    offsets leave fewer accents that pair unambiguously, hence more recordings.)"""
    files = sorted(shared_data("speech", "ljspeech").glob("*.wav"))[:n_files]
    cfg = ConstructionConfig(offset_mean_s=mean, offset_sd_s=sd, intercept=0.2, slope=slope, seed=3)
    truth, found = _recover(bandai_pool, cfg, files)
    assert len(truth) >= 15
    assert found["constructed"].all()
    # every placed phrase is found and paired with its own accent
    m = found.merge(truth, on=["take", "papt"], suffixes=("", "_true"))
    assert len(m) >= 0.9 * len(truth)
    assert abs(found["offset_s"].mean() - truth["offset_s"].mean()) < 0.030
    true_slope = linregress(truth["psi"], truth["gsi"]).slope
    assert true_slope == pytest.approx(slope, rel=0.1)
    rules = fit_rules(found)
    assert rules.constructed
    assert rules.intensity.slope == pytest.approx(true_slope, rel=0.10)
    assert rules.synchrony.mean_s == pytest.approx(truth["offset_s"].mean(), abs=0.030)


# ------------------------------------------------------------------------------------------- CLI
@pytest.fixture(scope="module")
def cmu_takes(tmp_path_factory):
    """Constructed takes from bundled material only (fresh clone): LJ Speech + CMU arm swings."""
    out = tmp_path_factory.mktemp("takes")
    assert main(["rules", "construct", "--out", str(out)]) == 0
    return out


def test_cli_sync_on_a_constructed_take(cmu_takes, tmp_path, capsys):
    bvh = cmu_takes / "LJ001-0001-constructed.bvh"
    wav = cmu_takes / "LJ001-0001-constructed.wav"
    assert json.loads((cmu_takes / "LJ001-0001-constructed.take.json").read_text())["constructed"] is True
    capsys.readouterr()
    assert main(["sync", str(bvh), str(wav), "--out", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CONSTRUCTED:")
    assert "offset PAPT - apex: mean" in out and "constructed truth" in out
    for name in ("apexes.csv", "phrases.csv", "accents.csv", "pairs.csv", "sync.json", "offsets.png", "psi_gsi.png", "LJ001-0001-constructed.TextGrid"):
        assert (tmp_path / "s" / name).exists(), name
    summary = json.loads((tmp_path / "s" / "sync.json").read_text())
    assert summary["constructed"] is True and summary["pairs"] >= 1
    pairs = pd.read_csv(tmp_path / "s" / "pairs.csv")
    assert pairs["constructed"].all()
    from evalkit.speech import read_textgrid

    tg = read_textgrid(tmp_path / "s" / "LJ001-0001-constructed.TextGrid")
    assert tg.tier_names == ["PAPT", "syllables", "gesture phases", "apex"]
    # the written accents can be fed back as manual annotations
    assert main(["sync", str(bvh), str(wav), "--textgrid", str(tmp_path / "s" / "LJ001-0001-constructed.TextGrid"),
                 "--out", str(tmp_path / "t"), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["accents"] == summary["accents"] and again["pairs"] == summary["pairs"]


def test_cli_rules_fit_and_show(cmu_takes, tmp_path, capsys):
    out = tmp_path / "rules.json"
    capsys.readouterr()
    assert main(["rules", "fit", str(cmu_takes), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("CONSTRUCTED:") and "synchrony: PAPT - apex mean" in text
    rules = load_rules(out)
    assert rules.constructed and rules.synchrony.n >= 5
    assert (tmp_path / "rules_offsets.png").exists() and (tmp_path / "rules_psi_gsi.png").exists()
    assert main(["rules", "show"]) == 0
    assert "+0.100 s, SD 0.200 s" in capsys.readouterr().out


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    capsys.readouterr()
    assert main(["rules", "show", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json, line 1" in err
    assert main(["sync", str(tmp_path / "none.bvh"), str(tmp_path / "none.wav")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none.bvh" in err
    assert main(["rules", "fit", str(tmp_path)]) == 2
    assert "no takes found" in capsys.readouterr().err
    # the installed entry point prints no traceback either
    r = subprocess.run([sys.executable, "-m", "evalkit", "rules", "show", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_cli_accent_rates_strokes_and_mcc_table(tmp_path, capsys):
    from evalkit.data import sample_path, speech_files

    wavs = [str(p) for p in speech_files()]
    capsys.readouterr()
    assert main(["rules", "accents", *wavs, "--out", str(tmp_path / "acc.csv")]) == 0
    out = capsys.readouterr().out
    assert "accents/s" in out and out.splitlines()[-2].startswith("all")
    acc = pd.read_csv(tmp_path / "acc.csv")
    assert set(acc["recording"]) == {p.stem for p in speech_files()} and acc["accented"].any()
    assert main(["rules", "accents", *wavs, "--emphasize", "0.3", "--out", str(tmp_path / "emph.csv")]) == 0
    assert capsys.readouterr().out.startswith("CONSTRUCTED:")
    emph = pd.read_csv(tmp_path / "emph.csv")
    assert emph["constructed"].all() and 0.1 < emph["emphasized"].mean() < 0.5
    assert main(["rules", "table", str(tmp_path / "emph.csv"), "--label", "emphasized", "--group", "recording",
                 "--features", "excursion_st,rise_st", "--classifiers", "logistic", "--folds", "4",
                 "--out", str(tmp_path / "t.csv")]) == 0
    text = capsys.readouterr().out
    assert "grouped by 'recording' (4 groups)" in text and "excursion_st + rise_st" in text
    t = pd.read_csv(tmp_path / "t.csv")
    assert len(t) == 3 and t["mcc"].between(-1, 1).all()
    # strokes from the bundled CMU clip, with fields parsed from the file name
    assert main(["rules", "strokes", str(sample_path("cmu", "131_01.bvh")), "--out", str(tmp_path / "s.csv"),
                 "--name-fields", r"(?P<subject>\d+)_(?P<take>\d+)"]) == 0
    s = pd.read_csv(tmp_path / "s.csv", dtype={"subject": str})
    assert (s["subject"] == "131").all() and {"fm_distance", "velocity_range", "max_velocity", "gsi"} <= set(s.columns)
    # bad input: a non-numeric feature names its row; an unknown --positive value is refused
    bad = tmp_path / "bad.csv"
    bad.write_text("a,label,g\n1.0,x,1\noops,y,2\n")
    capsys.readouterr()
    assert main(["rules", "table", str(bad), "--label", "label", "--group", "g", "--features", "a"]) == 2
    err = capsys.readouterr().err
    assert "bad.csv, line 3" in err and "numeric" in err
    bad.write_text("a,label,g\n1.0,x,1\n2.0,y,2\n")
    assert main(["rules", "table", str(bad), "--label", "label", "--group", "g", "--features", "a", "--positive", "z"]) == 2
    assert "--positive value(s) z not in column 'label'" in capsys.readouterr().err


def _pairs_folder(root, name="take1", rows=None):
    d = root / name
    d.mkdir(parents=True)
    rows = rows or ["0.10,0.2,0.3,False", "0.05,0.5,0.6,False", "0.12,0.8,0.7,False", "0.02,0.4,0.5,False"]
    (d / "pairs.csv").write_text("offset_s,psi,gsi,constructed\n" + "\n".join(rows) + "\n")
    return d / "pairs.csv"


def test_cli_rules_fit_checks_every_pairs_cell(tmp_path, capsys):
    pf = _pairs_folder(tmp_path / "ok")
    assert main(["rules", "fit", str(tmp_path / "ok"), "--out", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["synchrony"]["n"] == 4
    capsys.readouterr()
    pf.write_text(pf.read_text().replace("0.05,0.5", "xyz,0.5"))  # offset_s of line 3
    assert main(["rules", "fit", str(tmp_path / "ok")]) == 2
    assert capsys.readouterr().err == f"evalkit: error: {pf}, line 3: column 'offset_s': expected a number, got 'xyz'\n"
    pf.write_text(pf.read_text().replace("xyz,0.5", "0.05,0.5").replace("0.8,0.7,False", "0.8,0.7,abc"))
    assert main(["rules", "fit", str(tmp_path / "ok")]) == 2
    assert f"{pf}, line 4: column 'constructed': expected True or False, got 'abc'" in capsys.readouterr().err
    pf.write_text(pf.read_text().replace("0.8,0.7,abc", "0.8,,False"))
    assert main(["rules", "fit", str(tmp_path / "ok")]) == 2
    assert f"{pf}, line 4: column 'gsi': expected a number, got an empty cell" in capsys.readouterr().err


def test_non_utf8_rules_and_pairs_name_file_and_line(tmp_path, capsys):
    rl = tmp_path / "rl1.json"
    rl.write_bytes(b'{"synchrony": "\xff"}')
    with pytest.raises(FileFormatError, match=r"rl1\.json, line 1: byte 0xff is not UTF-8; expected UTF-8 text"):
        load_rules(rl)
    capsys.readouterr()
    assert main(["rules", "show", str(rl)]) == 2
    assert capsys.readouterr().err == f"evalkit: error: {rl}, line 1: byte 0xff is not UTF-8; expected UTF-8 text\n"
    assert main(["sync", "take.bvh", "take.wav", "--rules", str(rl)]) == 2
    assert "rl1.json, line 1: byte 0xff is not UTF-8" in capsys.readouterr().err
    pf = _pairs_folder(tmp_path / "takes")
    pf.write_bytes(pf.read_bytes().replace(b"0.12,0.8", b"0.12\xff,0.8"))
    assert main(["rules", "fit", str(tmp_path / "takes")]) == 2
    assert f"{pf}, line 4: byte 0xff is not UTF-8" in capsys.readouterr().err
    pf.write_text("offset_s,psi,gsi\n0.1,0.2,0.3\n", encoding="utf-16")
    assert main(["rules", "fit", str(tmp_path / "takes")]) == 2
    assert "the file looks like UTF-16: save it as UTF-8" in capsys.readouterr().err


def test_cli_pairing_options_are_checked_before_work(tmp_path, capsys):
    assert main(["sync", str(tmp_path / "take.bvh"), str(tmp_path / "take.wav"), "--max-distance", "-1"]) == 2
    assert capsys.readouterr().err == "evalkit: error: --max-distance must be a positive number of seconds, got -1\n"
    _pairs_folder(tmp_path / "takes")
    assert main(["rules", "fit", str(tmp_path / "takes"), "--coverage", "2"]) == 2
    assert "--coverage must be a fraction in (0, 1], got 2" in capsys.readouterr().err
    assert not (tmp_path / "takes" / "rules.json").exists()


@pytest.mark.parametrize("action", ["strokes", "accents"])
def test_cli_export_out_option_is_explained(action, capsys):
    with pytest.raises(SystemExit):
        main(["rules", action, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--out CSV CSV file to write (required): one row per" in text


@pytest.mark.parametrize("key,value,message", [
    ("version", "x", "'version' must be an integer, got 'x'"),
    ("sources", 5, "'sources' must be a list of take names, got 5"),
    ("constructed", "no", "'constructed' must be true or false, got 'no'"),
    ("psi_scale", [1], "'psi_scale' must be an object or null"),
])
def test_rules_file_top_level_keys_are_checked(tmp_path, key, value, message):
    d = DEFAULT_RULES.to_dict()
    d[key] = value
    (tmp_path / "r.json").write_text(json.dumps(d))
    with pytest.raises(ConfigError, match=re.escape(f"{tmp_path / 'r.json'}: {message}")):
        load_rules(tmp_path / "r.json")
    d[key] = DEFAULT_RULES.to_dict()[key]
    (tmp_path / "r.json").write_text(json.dumps(d))
    assert load_rules(tmp_path / "r.json").synchrony.mean_s == DEFAULT_RULES.synchrony.mean_s


def test_cli_rules_fit_ignores_a_sync_json_without_a_motion_path(tmp_path, capsys):
    pf = _pairs_folder(tmp_path / "takes")
    (pf.parent / "sync.json").write_text('{"motion": 5}')
    assert main(["rules", "fit", str(tmp_path / "takes")]) == 0
    assert "from 4 pairs in 1 take(s)" in capsys.readouterr().out


def test_one_synchrony_margin_for_sync_and_the_gmg_report():
    """`evalkit sync` and the GMG objective report count an offset "within the rule" alike."""
    from evalkit.gesture_speech import SYNC_MARGIN_SD, SynchronyRule
    from evalkit.synth.gmg.report import timing_metrics

    rule = DEFAULT_RULES.synchrony
    inside = rule.mean_s + 0.9 * SYNC_MARGIN_SD * rule.sd_s
    outside = rule.mean_s + 1.1 * SYNC_MARGIN_SD * rule.sd_s
    assert rule.accepts(inside) and not rule.accepts(outside)
    assert SynchronyRule(0.0, 0.1).accepts(-SYNC_MARGIN_SD * 0.1)  # the edge is inside
    papts = np.array([1.0, 3.0])
    apexes = papts - np.array([inside, outside])  # offset = PAPT - apex
    m = timing_metrics(apexes, np.full(2, 0.5), papts, np.full(2, 0.5), DEFAULT_RULES)
    assert m["offset_within_rule"] == pytest.approx(np.mean(rule.accepts(np.array([inside, outside])))) == 0.5
    assert m["accents_covered"] == 0.5
