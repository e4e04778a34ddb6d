"""``evalkit synth gmg`` / ``gmg-stats`` on bundled data only (the fresh-clone path: CMU clips and
LJ Speech samples), and their one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalkit.data import sample_path, speech_files
from evalkit.motion import load_motion


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    """``evalkit synth ARGV`` through the real entry point (``evalkit.cli.main``)."""
    from evalkit.cli import main

    code = main(["synth", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_gmg_on_bundled_data_writes_stimuli(tmp_path, capsys):
    speech = speech_files()[:2]
    code, out, err = _run(["gmg", "--speech", *map(str, speech), "--out", str(tmp_path), "--seed", "3"], capsys)
    assert code == 0, err
    assert "non-conversational" in err and "non-conversational" in out
    table = pd.read_csv(tmp_path / "objective.csv")
    assert len(table) == 6 and set(table.variant) == {"random", "sync", "sync+intensity"}
    assert not table.pops.any() and (table.bone_length_drift < 1e-9).all()
    summary = pd.read_csv(tmp_path / "objective_summary.csv", index_col=0)
    assert list(summary.index) == ["random", "sync", "sync+intensity"]
    db = pd.read_csv(tmp_path / "gesture_database.csv")
    assert {"gp", "recording", "apex_frame", "gsi", "pre_s", "post_s"} <= set(db.columns) and len(db) >= 5
    for s in speech:
        for slug in ("random", "sync", "sync-intensity"):
            man = json.loads((tmp_path / f"{s.stem}_{slug}.json").read_text())
            assert man["seed"] == 3 and man["audio"] == str(s)
            assert any("CMU non-conversational" in n for n in man["notes"])
            m = load_motion(tmp_path / man["motion"])
            assert np.isfinite(m.positions).all() and m.fps == 120.0
    # deterministic: the same command gives the same files
    again = tmp_path / "again"
    code, _, _ = _run(["gmg", "--speech", str(speech[0]), "--variant", "sync+intensity", "--out", str(again), "--seed", "3"], capsys)
    assert code == 0
    a = (again / f"{speech[0].stem}_sync-intensity.bvh").read_text()
    assert a == (tmp_path / f"{speech[0].stem}_sync-intensity.bvh").read_text()


def test_gmg_stats_writes_table(tmp_path, capsys):
    code, out, err = _run(["gmg-stats", "--gestures", str(sample_path("cmu", "131_01.bvh")), str(sample_path("cmu", "131_03.bvh")),
                           "--thresholds", "0.3,0.6,0.9", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    assert "scc_branching_factor" in out and "non-conversational" in out
    t = pd.read_csv(tmp_path / "gmg_stats.csv")
    assert list(t.threshold) == [0.3, 0.6, 0.9] and t.edges.is_monotonic_increasing
    assert "SCC BF" in (tmp_path / "gmg_stats.tex").read_text()
    code, out, _ = _run(["gmg-stats", "--thresholds", "0.5:0.7:0.1", "--json"], capsys)
    assert code == 0 and [r["threshold"] for r in json.loads(out)] == pytest.approx([0.5, 0.6, 0.7])


@pytest.mark.parametrize("argv, message", [
    (["gmg", "--speech", "a.wav", "b.wav", "--textgrid", "x.TextGrid", "--out", "{tmp}"], "--textgrid annotates one recording"),
    (["gmg", "--speech", "missing.wav", "--out", "{tmp}"], "missing.wav: speech file not found"),
    (["gmg", "--weights", "{not json", "--out", "{tmp}"], "--weights"),
    (["gmg-stats", "--thresholds", "0.3:1.0:0"], "--thresholds"),
    (["gmg", "--gestures", "{cmu}/01_01.bvh", "{cmu}/131_01.bvh", "--out", "{tmp}"], "skeleton"),
    (["gmg", "--rules", "{tmp}/nope.json", "--out", "{tmp}"], "nope.json"),
])
def test_errors_are_one_line(argv, message, tmp_path, capsys, cmu_dir):
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{cmu}", str(cmu_dir)) for a in argv]
    code, out, err = _run(argv, capsys)
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("evalkit: error:")]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in err
