"""Importers for GENEA battles, webMUSHRA, P.808 per-vote and MUSHRA rating-list files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import FileFormatError, InputError
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


# ---------------------------------------------------------------- one answer, counted once


def test_long_duplicate_row_names_both_lines(tmp_path):
    p = tmp_path / "dup.csv"
    p.write_text("participant,trial,item,system_a,system_b,score,scale\n"
                 "p1,1,i1,A,B,1,cmos5\np1,2,i2,A,B,-1,cmos5\np1,1,i1,A,B,1,cmos5\n")
    with pytest.raises(FileFormatError, match=r"dup\.csv, line 4: duplicate rating: participant='p1', "
                                              r"trial='1', item='i1', system_a='A', system_b='B'.* "
                                              r"already given at line 2"):
        load_input(p)


def test_long_same_trial_other_stimulus_is_not_a_duplicate(tmp_path):
    # a MUSHRA page: one trial, several systems rated; and two answers without a trial
    p = tmp_path / "m.csv"
    p.write_text("participant,trial,item,system_a,score,scale\n"
                 "p1,1,i1,A,80,mushra\np1,1,i1,B,40,mushra\np1,,i2,A,70,mushra\np1,,i2,A,75,mushra\n")
    _, df = load_input(p)
    assert len(df) == 4
    p.write_text(p.read_text() + "p1,,i2,A,75,mushra\n")
    with pytest.raises(FileFormatError, match=r"line 6: duplicate rating: .*already given at line 5"):
        load_input(p)


def test_genea_duplicate_battle_row(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text("user,input_code,model_a,model_b,winner,is_strong\nu,c,A,B,model_a,True\n"
                 "u,c,A,B,model_b,False\nu,c,A,B,model_a,True\n")
    with pytest.raises(FileFormatError, match=r"b\.csv, line 4: duplicate rating: user='u'.* "
                                              r"already given at line 2"):
        load_input(p)


def test_webmushra_pc_duplicate_lines_count_dropped_rows(tmp_path):
    p = tmp_path / "paired_comparison.csv"
    p.write_text("session_test_id,session_uuid,trial_id,choice_reference,choice_non_reference,choice_answer\n"
                 "t,s1,ab1,reference,C1,unknown\nt,s1,ab2,reference,C2,correct\n"
                 "t,s1,ab2,reference,C2,correct\n")
    with pytest.raises(FileFormatError, match=r"line 4: duplicate rating: .*already given at line 3"):
        load_input(p)


def test_mushra_lists_participant_twice_in_a_row(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text('signal,condition,ratings,participant_ids\ns,c,"[1, 2]","[7, 8]"\n'
                 's,d,"[1, 2, 3]","[7, 8, 7]"\n')
    with pytest.raises(FileFormatError, match=r"line 3: duplicate rating: participant='7'.*"
                                              r"earlier in the same line"):
        load_input(p)


def test_combine_rejects_the_same_file_twice(tmp_path):
    _, a = load_input(DATA / "webmushra_pc_constructed.csv")
    _, b = load_input(DATA / "webmushra_pc_constructed.csv")
    with pytest.raises(InputError, match=r"duplicate rating: .* is in both .*webmushra_pc_constructed"):
        combine_ratings([a, b])


def test_webmushra_error_names_the_files_own_column(tmp_path):
    p = tmp_path / "mushra.csv"
    p.write_text("session_test_id,session_uuid,trial_id,rating_stimulus,rating_score,rating_time\n"
                 "t,s1,tr1,reference,100,1000\nt,s1,tr1,C1,150,1000\n")
    with pytest.raises(FileFormatError, match=r"mushra\.csv, line 3: column 'rating_score': 150 is not"):
        load_input(p)


def test_non_utf8_csv_names_the_line(tmp_path):
    p = tmp_path / "latin1.csv"
    p.write_bytes(b"participant,item,system_a,system_b,score,scale\np,i,A,B,1,cmos5\n"
                  b"p,caf\xe9,A,B,1,cmos5\n")
    with pytest.raises(FileFormatError, match=r"latin1\.csv, line 3: byte 0xe9 is not UTF-8; expected UTF-8 text"):
        load_input(p)
    p.write_text("participant,item,system_a,system_b,score,scale\np,i,A,B,1,cmos5\n", encoding="utf-16")
    with pytest.raises(FileFormatError, match="looks like UTF-16: save it as UTF-8"):
        load_input(p)


def test_detect_format_names_what_the_closest_format_lacks(tmp_path):
    p = tmp_path / "noscore.csv"
    p.write_text("participant,trial,item,system_a,system_b,scale\np,1,i,A,B,cmos5\n")
    with pytest.raises(FileFormatError, match=r"noscore\.csv, line 1: .*closest is long-format ratings "
                                              r"\(format long\), which lacks column\(s\) score; any other layout: name its "
                                              r"columns, --columns participant=…"):
        load_input(p)
    p.write_text("session_uuid,trial_id,rating_stimulus,score\ns,t,A,50\n")
    with pytest.raises(FileFormatError, match=r"closest is webMUSHRA MUSHRA .*lacks column\(s\) rating_score"):
        load_input(p)


def test_semicolon_and_tab_separated_files_are_read_with_a_note(tmp_path):
    p = tmp_path / "semi.csv"
    p.write_text("participant;trial;item;system_a;system_b;score;scale\np;1;i;A;B;1;cmos5\np;2;j;A;B;-2;cmos5\n")
    kind, df = load_input(p)
    assert kind == "ratings" and list(df["score"]) == [1, -2]
    assert "read as values separated by semicolons" in df.attrs["notes"]
    p.write_text("participant\ttrial\titem\tsystem_a\tsystem_b\tscore\tscale\np\t1\ti\tA\tB\t1\tcmos5\n")
    assert "read as values separated by tabs" in load_input(p)[1].attrs["notes"]
    # a quoted ';' inside a comma-separated file does not make it ';'-separated
    p.write_text('participant,trial,item,system_a,system_b,score,scale\np,1,"a;b;c;d;e;f;g;h",A,B,1,cmos5\n')
    df = load_input(p)[1]
    assert list(df["item"]) == ["a;b;c;d;e;f;g;h"] and not df.attrs.get("notes")


def test_scores_cell_that_is_not_a_number_names_line_and_column(tmp_path):
    p = tmp_path / "sc.csv"
    p.write_text("system,clip,jerk,note\na,x,1,fine\nb,y,abc,\n")
    with pytest.raises(FileFormatError, match=r"sc\.csv, line 3: column 'jerk': expected a number, got 'abc'"):
        load_input(p, "scores")
    p.write_text("system,clip,jerk,note\na,x,1,fine\nb,y,,odd\n")  # empty = missing; text columns stay
    kind, df = load_input(p, "scores")
    assert kind == "scores" and len(df) == 2


def test_unrecognised_wide_header_names_the_closest_format_in_one_line(tmp_path):
    p = tmp_path / "wide.csv"
    cols = ["HITId", "WorkerId"] + [f"Input.X{i}" for i in range(150)]
    p.write_text(",".join(cols) + "\n" + ",".join("1" for _ in cols) + "\n")
    with pytest.raises(FileFormatError) as err:
        load_input(p)
    msg = str(err.value)
    assert "closest is MTurk batch results of a P.808 ACR HIT" in msg and "lacks column(s) Answer.Q1" in msg
    assert "next P.808 per-vote (format p808), which lacks column(s) vote, file" in msg
    assert "(152 columns)" in msg and len(msg) < 600 and "\n" not in msg


def test_webmushra_single_stimulus_lss_file():
    kind, df = load_input(DATA / "webmushra_lss_constructed.csv")
    assert kind == "ratings" and df.attrs["format"] == "webmushra-lss"
    # values stored as " 4 " are read as numbers; a 1-5 page is the acr5 scale
    assert set(df["scale"]) == {"acr5"} and list(df["score"])[:4] == [4, 2, 5, 3]
    assert df["participant"].nunique() == 2 and set(df["system_a"]) == {"C1", "C2", "ref"}
    assert df["response_time_s"].iloc[0] == pytest.approx(5.23)


def test_webmushra_mushra_file_with_1_to_5_values_is_not_called_mushra():
    kind, df = load_input(DATA / "webmushra_mushra_1to5_constructed.csv")
    assert set(df["scale"]) == {"acr5"}
    assert any("not as MUSHRA 0–100" in n for n in df.attrs["notes"])
    # a real 0-100 MUSHRA file keeps its scale
    assert set(load_input(DATA / "webmushra_mushra_constructed.csv")[1]["scale"]) == {"mushra"}


def test_mturk_batch_results_of_a_p808_acr_hit(tmp_path):
    src = DATA / "mturk_p808_acr_batch_constructed.csv"
    with pytest.raises(InputError, match="--condition-pattern REGEX"):
        load_input(src)
    kind, df = load_input(src, condition_pattern=r"^(c\d+)_")
    assert df.attrs["format"] == "mturk-p808" and set(df["scale"]) == {"acr5"}
    assert len(df) == 5  # 3 + 2 answered questions (an empty vote is skipped)
    assert list(df["system_a"]) == ["c01", "c02", "c03", "c01", "c02"]
    assert list(df["score"]) == [4, 2, 5, 3, 1] and list(df["item"])[0] == "c01_s01.wav"
    with pytest.raises(FileFormatError, match=r"line 2: column 'Answer.Q1_url': clip 'c01_s01.wav' does "
                                              r"not match"):
        load_input(src, condition_pattern=r"^(x\d+)_")


def _mturk_file(path, vote_col, url_col):
    """A constructed MTurk batch file (two workers, two questions) with the given column spelling."""
    cols = ["HITId", "AssignmentId", "WorkerId"]
    for q in (1, 2):
        cols += [vote_col.format(n=q), url_col.format(n=q)]
    rows = [["h1", "a1", "W1", "4", "https://x.org/c01_s1.wav", "2", "https://x.org/c02_s1.wav"],
            ["h1", "a2", "W2", "5", "https://x.org/c01_s1.wav", "", "https://x.org/c02_s1.wav"]]
    path.write_text("\n".join(",".join(r) for r in [cols] + rows) + "\n")
    return path


@pytest.mark.parametrize("vote_col,url_col", [("Answer.q{n}", "Answer.q{n}_url"),
                                              ("Answer.Q{n}", "Answer.Q{n}_URL"),
                                              ("ANSWER.Q{n}", "answer.q{n}_url"),
                                              ("Q{n}", "Q{n}_url")])  # HIT-app export without Answer.
def test_mturk_batch_detected_whatever_the_case_of_its_columns(tmp_path, vote_col, url_col):
    p = _mturk_file(tmp_path / "batch.csv", vote_col, url_col)
    with pytest.raises(InputError, match="--condition-pattern REGEX"):  # detected as mturk-p808
        load_input(p)
    _, df = load_input(p, condition_pattern=r"^(c\d+)_")
    assert df.attrs["format"] == "mturk-p808"
    assert list(df["participant"]) == ["W1", "W1", "W2"] and list(df["score"]) == [4, 2, 5]
    assert list(df["system_a"]) == ["c01", "c02", "c01"]


def test_mturk_batch_refusal_names_the_columns_it_lacks(tmp_path):
    p = tmp_path / "batch.csv"
    p.write_text("HITId,AssignmentId,Answer.Q1,Answer.Q1_url\nh,a,4,https://x.org/c01.wav\n")
    with pytest.raises(FileFormatError, match=r"lacks column\(s\) WorkerId \(found 4 columns\)"):
        load_input(p, "mturk-p808", condition_pattern=r"(c\d+)")


def test_signature_columns_are_matched_without_regard_to_case(tmp_path):
    p = tmp_path / "battles.csv"
    p.write_text("User,Input_Code,Model_A,Model_B,Winner,Is_Strong\nu1,c1,NA,SA,model_a,True\n"
                 "u2,c1,SA,NA,tie,\n")
    _, df = load_input(p)
    assert df.attrs["format"] == "genea" and list(df["score"]) == [2, 0]


def test_mturk_trapping_and_gold_questions_are_checks_not_ratings(tmp_path):
    # constructed batch in the toolkit's ACR layout: Input.TP / Input.TP_ans name the trapping clip
    # and its answer, Input.gold_clips the gold clip; their names match no condition
    cols = ["HITId", "AssignmentId", "WorkerId", "Input.TP", "Input.TP_ans", "Input.gold_clips"]
    for q in (1, 2, 3, 4):
        cols += [f"Answer.Q{q}", f"Answer.Q{q}_url"]
    tp, gold = "https://x.org/tp/TP_3.wav", "https://x.org/gold/g1.wav"
    qa = lambda votes: sum(([v, u] for v, u in zip(votes, ["https://x.org/c01_s1.wav", tp, gold,
                                                           "https://x.org/c02_s1.wav"])), [])
    w1 = ["h1", "a1", "W1", tp, "3", gold] + qa(["4", "3", "5", "2"])   # both checks right
    w2 = ["h1", "a2", "W2", tp, "3", gold] + qa(["5", "1", "2", "1"])   # both wrong
    p = tmp_path / "batch.csv"
    p.write_text("\n".join(",".join(r) for r in (cols, w1, w2)) + "\n")
    _, df = load_input(p, condition_pattern=r"^(c\d+)_")
    checks = df[df["flags"].str.contains("check")]
    rated = df[~df["flags"].str.contains("check")]
    assert len(rated) == 4 and set(rated["system_a"]) == {"c01", "c02"}  # only real clips are ratings
    assert len(checks) == 4 and set(checks["system_a"]) == {"p808 trapping", "p808 gold"}
    failed = checks[checks["flags"].str.contains("check_failed")]
    assert set(failed["participant"]) == {"W2"} and len(failed) == 2
    assert any("2 trapping and 2 gold question(s) recognised" in n for n in df.attrs["notes"])
    from reports.screening import ScreeningRules, screen

    res = screen(df, ScreeningRules(straightline_share=None, hidden_reference=None))
    assert set(res.kept["participant"]) == {"W1"}  # W2 failed its checks and is excluded
    assert not res.kept["system_a"].str.startswith("p808").any()  # checks never analysed


def _with_training_page(tmp_path):
    """The constructed webMUSHRA file with a training page (trial_id 'training1') in front."""
    lines = (DATA / "webmushra_mushra_constructed.csv").read_text().splitlines()
    rows = [l for l in lines[1:] if ",trial1," in l]
    extra = [l.replace(",trial1,", ",training1,") for l in rows]
    p = tmp_path / "mushra.csv"
    p.write_text("\n".join([lines[0]] + extra + lines[1:]) + "\n")
    return p, len(extra), len(lines) - 1


def test_webmushra_training_page_is_named_and_left_out_with_drop_trials(tmp_path):
    p, n_training, n_rated = _with_training_page(tmp_path)
    _, df = load_input(p)
    assert len(df) == n_training + n_rated  # kept unless asked: only the user knows what a page was
    assert any("training1 look like training pages" in n and "--drop-trials training1" in n
               for n in df.attrs["notes"])
    _, df = load_input(p, drop_trials=("training1",))
    assert len(df) == n_rated and "training1" not in set(df["item"])
    assert any(f"{n_training} row(s) of page(s) training1 left out" in n for n in df.attrs["notes"])
    with pytest.raises(FileFormatError, match=r"--drop-trials: no page 'trainig1' in column 'trial_id' "
                                              r"\(its pages: training1, trial1"):
        load_input(p, drop_trials=("trainig1",))


def test_cli_drop_trials_leaves_the_training_page_out_of_the_report(tmp_path):
    from evalkit.cli import main

    p, _, _ = _with_training_page(tmp_path)
    out = tmp_path / "rep"
    assert main(["report", str(p), "--out", str(out), "-q", "--n-boot", "50", "--bt-boot", "50",
                 "--no-robustness", "--drop-trials", "training1"]) == 0
    analysed = pd.read_csv(out / "ratings_analysed.csv")
    assert "training1" not in set(analysed["item"].astype(str))


def test_refusals_name_what_was_found_and_what_each_candidate_needs(tmp_path):
    # a forced format that does not fit names the format the header does fit
    with pytest.raises(FileFormatError, match=r"line 1: GENEA battles file lacks column\(s\) user, .*; the header "
                                              r"is that of webMUSHRA MUSHRA: use --format webmushra"):
        load_input(DATA / "webmushra_mushra_constructed.csv", "genea")
    # a file that is neither webMUSHRA result names what both result files need
    p = tmp_path / "x.csv"
    p.write_text("trial_id,stimulus,score\nt1,A,50\n")
    with pytest.raises(FileFormatError, match=r"not a webMUSHRA result file: a mushra\.csv needs rating_stimulus, "
                                              r"rating_score, a paired_comparison\.csv choice_reference, "):
        load_input(p, "webmushra")
    # no format's columns at all: every format's needs, and the generic importer
    p.write_text("rater,clip,cond,rating\nr,c,A,3\n")
    with pytest.raises(FileFormatError) as err:
        load_input(p)
    msg = str(err.value)
    for need in ("long: participant, item, system_a, score, scale", "genea: user", "pymushra: wm_id",
                 "mturk-p808: WorkerId", "scores: system", "--columns participant=…"):
        assert need in msg
    assert "\n" not in msg
    # a separator that does not split every line alike is named at the line that breaks the pattern
    p.write_text("participant;item;system_a;score;scale\np;i;A;3;acr5\np;j;A;3\n")
    with pytest.raises(FileFormatError, match=r"x\.csv, line 3: 4 values separated by semicolons but the first "
                                              r"line has 5"):
        load_input(p)


def test_mturk_maths_question_is_a_check_judged_as_the_toolkit_does(tmp_path):
    # constructed batch: Input.math names the maths clip, Answer.math the typed sum; math2.wav's
    # answer is 7 in the toolkit's parser config; a typed "34" counts as its digit sum 7
    cols = ["HITId", "AssignmentId", "WorkerId", "Input.math", "Answer.math", "Answer.Q1", "Answer.Q1_url"]
    m = "https://x.org/math/math2.wav"
    rows = [["h", "a1", "W1", m, "7", "4", "https://x.org/c01_s1.wav"],
            ["h", "a2", "W2", m, "34", "3", "https://x.org/c01_s1.wav"],
            ["h", "a3", "W3", m, "5", "2", "https://x.org/c01_s1.wav"]]
    p = tmp_path / "batch.csv"
    p.write_text("\n".join(",".join(r) for r in [cols] + rows) + "\n")
    _, df = load_input(p, condition_pattern=r"^(c\d+)_")
    maths = df[df["system_a"] == "p808 math"]
    assert len(maths) == 3 and maths["flags"].str.contains("check").all()
    assert set(maths[maths["flags"].str.contains("check_failed")]["participant"]) == {"W3"}
    assert len(df[~df["flags"].str.contains("check")]) == 3  # the ratings, and nothing else
    assert any("3 maths question(s)" in n for n in df.attrs["notes"])
    # Input.math_ans, when given, is the answer
    cols.append("Input.math_ans")
    p.write_text("\n".join(",".join(r) for r in [cols] + [r + ["5"] for r in rows]) + "\n")
    _, df = load_input(p, condition_pattern=r"^(c\d+)_")
    failed = df[df["flags"].str.contains("check_failed")]
    assert set(failed["participant"]) == {"W1", "W2"}


def test_mturk_batches_that_hold_no_ratings_or_need_order_correction_are_refused_saying_so(tmp_path):
    # the header of a P.808 qualification batch (as in the toolkit's repository), made-up values
    cols = ["HITId", "AssignmentId", "WorkerId", "Answer.1_gender", "Answer.2_birth_year", "Answer.4_ld",
            "Answer.audio_n_finish_n1", "Answer.num1", "Answer.num2"]
    p = tmp_path / "Batch_1_batch_results.csv"
    p.write_text(",".join(cols) + "\nh,a,W1,F,1990,in-ear,1,289,246\n")
    with pytest.raises(FileFormatError, match=r"line 1: MTurk batch results of a P\.808 qualification HIT .*"
                                              r"holds no ratings"):
        load_input(p)
    # a CCR batch: the raw votes need the toolkit's order correction
    cols = ["HITId", "AssignmentId", "WorkerId", "Answer.Q1", "Answer.Q1_url", "Answer.audio_n_finish_q_1"]
    p.write_text(",".join(cols) + "\nh,a,W1,-2,https://x.org/c01_s1.wav,1\n")
    with pytest.raises(FileFormatError, match=r"a P\.808 CCR/DCR HIT .*pass the toolkit's \*_votes_per_worker\.csv"):
        load_input(p, condition_pattern=r"^(c\d+)_")
