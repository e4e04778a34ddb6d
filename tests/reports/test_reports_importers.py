"""Importers for GENEA battles, webMUSHRA, P.808 per-vote and MUSHRA rating-list files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import FileFormatError
from reports.importers import combine_ratings, detect_format, load_input
from tests.conftest import shared_data
from tests.reports.helpers import DATA, EXCERPT


def test_genea_battles_scores_and_flags():
    kind, df = load_input(DATA / "genea_battles_constructed.csv")
    assert kind == "ratings" and df.attrs["format"] == "genea"
    assert list(df["score"]) == [2, -1, 0, -2, 1, 1, 0, 2, -2]
    assert list(df["flags"])[4] == "strength_missing"  # a win with empty is_strong
    assert set(df["scale"]) == {"genea"}
    assert list(df[df["participant"] == "u2"]["trial"]) == ["1", "2", "3"]
    assert (df["side_shown"] == "").all()


def test_genea_bad_winner_names_row(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text("user,input_code,model_a,model_b,winner,is_strong\nu,c,A,B,model_a,True\n"
                 "u,c,A,B,model_c,\n")
    with pytest.raises(FileFormatError, match=r"line 3: column 'winner': expected model_a, "
                                              r"model_b or tie, got 'model_c'"):
        load_input(p)


def test_webmushra_mushra_and_pc():
    _, m = load_input(DATA / "webmushra_mushra_constructed.csv")
    assert m.attrs["format"] == "webmushra" and set(m["scale"]) == {"mushra"}
    assert set(m["participant"]) == {"a1b2", "c3d4"}
    assert m["response_time_s"].iloc[0] == pytest.approx(35.21)
    assert set(m["system_a"]) == {"reference", "C1", "anchor35"}
    _, pc = load_input(DATA / "webmushra_pc_constructed.csv")
    assert set(pc["scale"]) == {"pref3"}
    assert list(pc["score"]) == [1, -1, 0, 1]  # the 'unknown' row is dropped
    assert pc.attrs["notes"] and "unknown" in pc.attrs["notes"][0]
    # no session_uuid: participants from the form fields between session_test_id and trial_id
    assert pc["participant"].nunique() == 2


def test_p808_ccr_votes():
    _, df = load_input(DATA / "p808_ccr_votes_constructed.csv")
    assert df.attrs["format"] == "p808"
    assert set(df["system_b"]) == {"reference"} and set(df["system_a"]) == {"c01", "c02"}
    assert list(df["item"])[:2] == ["c01_s01.wav", "c02_s01.wav"]
    assert list(df["score"]) == [-2, 0, -3, -1, 1, 0]
    assert set(df["scale"]) == {"ccr7"}


def test_p808_missing_condition_column(tmp_path):
    p = tmp_path / "v.csv"
    p.write_text("workerid,file,vote\nw,f.wav,1\n")
    with pytest.raises(FileFormatError, match="no condition column"):
        load_input(p)


def test_mushra_lists_excerpt_expands_every_rating():
    raw = pd.read_csv(EXCERPT)
    _, df = load_input(EXCERPT)
    expected = sum(len(json.loads(r)) for r in raw["ratings"])
    assert len(df) == expected
    row = raw.iloc[0]
    got = df[(df["item"] == row["signal"]) & (df["system_a"] == row["condition"])]
    assert list(got["score"]) == json.loads(row["ratings"])
    assert list(got["participant"]) == [str(p) for p in json.loads(row["participant_ids"])]


def test_mushra_lists_length_mismatch(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text('signal,condition,ratings,participant_ids\ns,c,"[1, 2]","[1]"\n')
    with pytest.raises(FileFormatError, match="line 2: columns 'ratings' and 'participant_ids'"):
        load_input(p)


def test_shared_mushra_file_counts():
    path = shared_data("ratings", "mushra-speech-codec", "ratings_formated.csv")
    _, df = load_input(path)
    # README: 144 rows, 1,512 ratings, 21 participants, 9 conditions
    assert len(df) == 1512 and df["participant"].nunique() == 21 and df["system_a"].nunique() == 9


def test_detect_format_and_unknown(tmp_path):
    assert detect_format(["system", "skate"]) == "scores"
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(FileFormatError, match="cannot tell the format"):
        load_input(p)
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(FileFormatError, match="empty"):
        load_input(empty)


def test_combine_keeps_notes():
    _, a = load_input(DATA / "webmushra_pc_constructed.csv")
    _, b = load_input(DATA / "genea_battles_constructed.csv")
    both = combine_ratings([a, b])
    assert len(both) == len(a) + len(b) and both.attrs["notes"] == a.attrs["notes"]
    assert np.isfinite(both["score"]).all()
