"""``evalkit report``: end to end on files, and one-line errors for bad input."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd

from evalkit.cli import main
from reports.simulate import simulate_pairwise
from tests.reports.helpers import DATA, EXCERPT


def test_cli_report_pairwise_with_scores(tmp_path, capsys):
    ratings, _ = simulate_pairwise(240, 3, 12, scale="cmos7", seed=4)
    rpath = tmp_path / "ratings.csv"
    ratings.to_csv(rpath, index=False)
    spath = tmp_path / "scores.csv"
    items = sorted(set(ratings["item"]))[:3]
    pd.DataFrame({"system": ["S1", "S2", "S3"] * 3, "item": np.repeat(items, 3), "clip": range(9),
                  "jerk": [1, 2, 3, 1.1, 2.1, 3.1, 0.9, 2.2, 2.9]}).to_csv(spath, index=False)
    out = tmp_path / "rep"
    code = main(["report", str(rpath), "--scores", str(spath), "--out", str(out), "--seed", "2",
                 "--n-boot", "100", "--bt-boot", "100", "--no-robustness", "--weights", "3,1,1",
                 "--title", "CLI test", "--rules-declared", "--better", "jerk=lower"])
    assert code == 0
    assert "report written" in capsys.readouterr().out
    html = (out / "report.html").read_text()
    assert "<h1>CLI test</h1>" in html and "strong answer 3, weak 1, tie 1" in html
    assert (out / "tables" / "bradley_terry_cmos7.csv").exists()
    agree = pd.read_csv(out / "tables" / "metric_agreement.csv").set_index("metric")
    assert agree.loc["jerk", "better"] == "lower" and agree.loc["jerk", "agreement"] > 0.5
    assert agree.loc["jerk", "pairs"] > 0
    assert "Screening rules were declared in advance" in (out / "methods.md").read_text()  # --rules-declared


def test_cli_report_better_option_is_checked(tmp_path, capsys):
    ratings, _ = simulate_pairwise(60, 3, 6, scale="cmos7", seed=4)
    rpath = tmp_path / "ratings.csv"
    ratings.to_csv(rpath, index=False)
    code = main(["report", str(rpath), "--out", str(tmp_path / "rep"), "--better", "jerk=smaller"])
    err = capsys.readouterr().err
    assert code != 0 and "--better jerk=smaller: expected COLUMN=lower or COLUMN=higher" in err
    assert "Traceback" not in err


def test_cli_mixed_inputs_and_genea(tmp_path):
    out = tmp_path / "rep"
    code = main(["report", str(DATA / "genea_battles_constructed.csv"), str(EXCERPT), "--out", str(out),
                 "--n-boot", "50", "--bt-boot", "50", "--no-robustness", "--no-screening"])
    assert code == 0
    html = (out / "report.html").read_text()
    assert "Pairwise comparisons (genea)" in html and "Ratings per system (mushra)" in html


def test_cli_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("participant,item,system_a,system_b,score,scale\np,i,A,B,5,cmos5\n")
    proc = subprocess.run([sys.executable, "-m", "evalkit", "report", str(bad), "--out",
                           str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert f"{bad}, line 2: column 'score': 5 is not an integer in [-2, 2]" in lines[0]


def test_cli_other_errors_in_process(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("participant,item,system_a,system_b,score,scale\np,i,A,B,1,cmos5\n")
    assert main(["report", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o")]) == 2
    assert "nope.csv" in capsys.readouterr().err
    assert main(["report", str(bad), "--out", str(tmp_path / "o"), "--weights", "4,2"]) == 2
    assert "--weights" in capsys.readouterr().err
    assert main(["report", str(bad), "--out", str(tmp_path / "o"), "--confidence", "2"]) == 2
    assert "confidence" in capsys.readouterr().err


def test_cli_help_explains(capsys):
    import pytest

    with pytest.raises(SystemExit) as exc:
        main(["report", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for word in ("Bradley", "ratings_long", "--seed", "--hidden-reference", "booktabs"):
        assert word in out


def test_cli_duplicated_row_is_an_error_not_counted_twice(tmp_path, capsys):
    ratings, _ = simulate_pairwise(40, 3, 4, scale="cmos7", seed=1)
    path = tmp_path / "dup.csv"
    ratings.to_csv(path, index=False)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + [lines[4]]) + "\n")  # line 5 again, as line 42
    out = tmp_path / "r"
    assert main(["report", str(path), "--out", str(out), "--n-boot", "10", "--bt-boot", "10",
                 "--no-robustness"]) == 2
    err = capsys.readouterr().err
    assert f"{path}, line 42: duplicate rating" in err and "already given at line 5" in err
    assert not (out / "ratings_analysed.csv").exists()


def test_cli_empty_score_cell_says_empty(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("participant,item,system_a,system_b,score,scale\np,i,A,B,1,cmos5\np,j,A,B,,cmos5\n")
    assert main(["report", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert f"{bad}, line 3: column 'score': is empty (expected a number)" in capsys.readouterr().err


def test_cli_missing_input_is_named_before_out(tmp_path, capsys):
    missing = tmp_path / "nonexistent.csv"
    assert main(["report", str(missing)]) == 2
    assert capsys.readouterr().err == f"evalkit: error: {missing}: file not found\n"
    assert main(["report", str(tmp_path)]) == 2
    assert "a folder without study.yaml" in capsys.readouterr().err


def test_cli_system_list_names_the_systems_that_do_not_match(tmp_path, capsys):
    ratings, _ = simulate_pairwise(40, 3, 4, scale="cmos7", seed=1)
    path = tmp_path / "r.csv"
    ratings.to_csv(path, index=False)
    out = tmp_path / "o"
    assert main(["report", str(path), "--out", str(out), "--systems", "S1,nosuch", "--n-boot", "10",
                 "--bt-boot", "10", "--no-robustness"]) == 2
    err = capsys.readouterr().err
    assert "the ratings mention system(s) not in it: S2, S3" in err
    assert "it names system(s) with no ratings: nosuch" in err
    assert not (out / "report.html").exists()


def test_cli_statistics_options_are_checked(tmp_path, capsys):
    ratings, _ = simulate_pairwise(40, 3, 4, scale="cmos7", seed=1)
    path = tmp_path / "r.csv"
    ratings.to_csv(path, index=False)
    for option, message in ((["--straightline", "3"], "(--straightline) must be a share in [0, 1]"),
                            (["--straightline", "-0.5"], "(--straightline) must be a share in [0, 1]"),
                            (["--n-boot", "0"], "(--n-boot) must be at least 1"),
                            (["--bt-boot", "-1"], "(--bt-boot) must be at least 1"),
                            (["--reference-max-fraction", "1.5"], "(--reference-max-fraction) must be a share")):
        assert main(["report", str(path), "--out", str(tmp_path / "o"), *option]) == 2, option
        assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
