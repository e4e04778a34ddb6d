"""Thesis measurements and the ``evalkit synth`` command on the bundled CMU clips."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from evalkit.cli import main
from evalkit.synth import ClipSet, bundled_locomotion
from evalkit.synth.measure import measure_transitions, pair_matrix, skate_summary, write_measurements


@pytest.fixture(scope="module")
def measured():
    cs = ClipSet.from_clips(bundled_locomotion())
    return measure_transitions(
        cs, threshold=0.3, profiles=("sp2", "sp5"), thresholds=(0.1, 0.3), request_step_s=0.2,
        sweep_step_s=0.5, skate_step_s=1.0,
    )


def test_request_table(measured):
    req = measured.requests
    assert set(req["method"]) == {"smg", "bpmg"}
    pairs = req[["from", "to"]].drop_duplicates()
    assert len(pairs) == 6 and not (req["from"] == req["to"]).any()
    ok = req[req["reachable"]]
    assert (ok["response_frames_60fps"] >= 0).all() and (ok["duration_frames_60fps"] >= 20).all()
    assert ok["guard_ok"].all()
    # requests near the end of a clip cannot be served, the rest can
    assert 0.6 < req["reachable"].mean() < 1.0


def test_pair_and_maneuverability_tables(measured):
    p = measured.pairs
    assert len(p) == 12  # 6 ordered pairs x 2 methods
    m = pair_matrix(p, "smg")
    assert list(m.index) == list(m.columns) and len(m) == 3
    cell = m.loc["walk (16_15)", "run (09_06)"]
    dur, resp = (float(x) for x in cell.split(" / "))
    row = p[(p["method"] == "smg") & (p["from"] == "16_15") & (p["to"] == "09_06-run")].iloc[0]
    assert dur == pytest.approx(row["duration_mean"], abs=0.05) and resp == pytest.approx(row["response_mean"], abs=0.05)
    man = measured.maneuverability.set_index("method")
    for method in ("smg", "bpmg"):
        r = man.loc[method]
        lm = (r["response_mean_frames_60fps"] + r["duration_mean_frames_60fps"]) / 60.0
        assert r["local_maneuverability_s"] == pytest.approx(lm, rel=0.05)
        assert r["tbf_frames_60fps"] > 0
    # thesis finding reproduced on these clips: BPMG responds faster
    assert man.loc["bpmg", "response_mean_frames_60fps"] < man.loc["smg", "response_mean_frames_60fps"]


def test_sweep_connectivity(measured):
    sw = measured.sweep
    assert set(sw["threshold"]) == {0.1, 0.3}
    assert set(sw["profile"]) == {"-", "sp2", "sp5"}
    for t, g in sw.groupby("threshold"):
        smg = g[g["method"] == "smg"].iloc[0]
        bp = g[g["method"] == "bpmg"].set_index("profile")
        # more body parts, more transition points; every BPMG more than the SMG
        assert bp.loc["sp5", "transition_points"] >= bp.loc["sp2", "transition_points"] > smg["transition_points"]
    # a higher threshold never removes connectivity
    for (m, prof), g in sw.groupby(["method", "profile"]):
        g = g.sort_values("threshold")
        assert (np.diff(g["candidates"]) >= 0).all()
    # served share per ordered clip pair: the sweep's pair counts and overall share agree with it
    sp = measured.sweep_pairs
    assert set(sp["threshold"]) == {0.1, 0.3} and sp["served_share"].between(0, 1).all()
    for _, r in sw.iterrows():
        g = sp[(sp["method"] == r["method"]) & (sp["profile"] == r["profile"]) & (sp["threshold"] == r["threshold"])]
        assert len(g) == 6
        assert r["clip_pairs_served"] == int((g["served_share"] > 0).sum())
        assert r["min_pair_served_share"] == pytest.approx(g["served_share"].min())
        assert r["served_share"] == pytest.approx((g["served_share"] * g["requests"]).sum() / g["requests"].sum())
    # at 0.3 m every pair, runs included, is served by both methods
    at = sp[sp["threshold"] == 0.3]
    assert (at["served_share"] > 0).all()
    # the run (flight phases) is found from the feet; its columns agree with the pair table
    assert (sw["run_clips"] == 1).all() and (sw["run_pairs"] == 4).all()
    for _, r in sw.iterrows():
        g = sp[(sp["method"] == r["method"]) & (sp["profile"] == r["profile"]) & (sp["threshold"] == r["threshold"])]
        g = g[(g["from"] == "09_06-run") | (g["to"] == "09_06-run")]
        assert r["run_pairs_served"] == int((g["served_share"] > 0).sum())
        assert r["served_share_run_pairs"] == pytest.approx((g["served_share"] * g["requests"]).sum() / g["requests"].sum())
    assert (sw.loc[sw["threshold"] == 0.3, "run_pairs_served"] == 4).all()
    # what a duration is made of: the SMG has no lead, its single hops last exactly one window
    man = measured.maneuverability.set_index("method")
    assert man.loc["smg", "lead_mean_frames_60fps"] == 0 and man.loc["smg", "duration_single_hop_frames_60fps"] == pytest.approx(20)
    assert man.loc["bpmg", "lead_mean_frames_60fps"] > 0


def test_skate_and_output_files(measured, tmp_path):
    sk = skate_summary(measured.skate)
    assert set(sk["kind"]) == {"source", "synthesized"}
    assert (sk["skate_speed_mean"] >= 0).all()
    paths = write_measurements(measured, tmp_path)
    names = {p.name for p in paths}
    assert {"requests.csv", "pairs.csv", "sweep.csv", "maneuverability.csv", "skate_summary.csv",
            "tables.tex", "params.json", "connectivity.png", "cost.png", "response_duration.png"} <= names
    tex = (tmp_path / "tables.tex").read_text()
    assert tex.count(r"\begin{tabular}") >= 5 and "frames at 60 fps" in tex
    back = pd.read_csv(tmp_path / "pairs.csv")
    assert len(back) == len(measured.pairs)
    assert json.loads((tmp_path / "params.json").read_text())["window_frames"] == 20
    assert (tmp_path / "connectivity.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind


def test_cli_graph_and_transition(tmp_path, capsys):
    assert main(["synth", "graph", "smg", "--threshold", "0.3", "--out", str(tmp_path / "g")]) == 0
    info = json.loads((tmp_path / "g" / "graph.json").read_text())
    assert info["stats"]["connected_clip_pairs"] == 6 and info["parameters"]["threshold"] == 0.3
    cand = pd.read_csv(tmp_path / "g" / "candidates.csv")
    assert {"from", "to", "i", "j", "cost", "in_graph"} <= set(cand.columns)
    assert (tmp_path / "g" / "distance_maps.png").exists()
    out = tmp_path / "s.bvh"
    assert main(["synth", "transition", "bpmg", "--from", "16_15", "--to", "run", "--at", "1.0", "--out", str(out)]) == 0
    man = json.loads(out.with_suffix(".json").read_text())
    assert man["method"] == "bpmg" and man["checks"]["ok"] and man["request"]["time_in_clip_s"] == 1.0
    capsys.readouterr()


def test_cli_errors_are_one_line(tmp_path):
    cmd = [sys.executable, "-m", "evalkit", "synth", "transition", "smg", "--from", "16_15", "--to", "dance",
           "--out", str(tmp_path / "x.bvh")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "no clip named 'dance'" in r.stderr and r.stderr.strip().count("\n") <= 1
    r = subprocess.run([sys.executable, "-m", "evalkit", "synth", "graph", "smg", str(tmp_path / "nope.bvh"),
                        "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr


def test_running_clips_are_the_runs():
    from evalkit.synth.measure import running_clips

    cs = ClipSet.from_clips(bundled_locomotion())
    assert [cs.clips[c].name for c in running_clips(cs)] == ["09_06-run"]
    assert running_clips(cs, min_flight_share=1.0) == []


def test_cli_sweep_only(tmp_path, capsys):
    assert main(["synth", "measure", "--sweep-only", "--profiles", "sp4a", "--thresholds", "0.3",
                 "--sweep-step", "1.0", "-q", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "run " in out and "pairs 4/4" in out and "response" not in out.split("threshold sweep")[0]
    sw = pd.read_csv(tmp_path / "sweep.csv")
    assert set(sw["method"]) == {"smg", "bpmg"} and (sw["run_pairs_served"] == 4).all()
    assert json.loads((tmp_path / "params.json").read_text())["sweep_only"] is True
    assert not (tmp_path / "response_duration.png").exists() and (tmp_path / "connectivity.png").exists()
    assert not (tmp_path / "requests.csv").exists() and not (tmp_path / "skate_summary.csv").exists()


def test_cli_leaves_out_clips_too_short_for_a_transition(tmp_path, capsys):
    """A set of real takes with one clip shorter than two windows is measured without it, and
    the clip is named on stderr (before, the whole set was refused)."""
    from evalkit.motion import load_motion
    from evalkit.motion.formats.bvh import write_bvh

    walk = load_motion(bundled_locomotion()[0])
    short = write_bvh(walk.slice(0, 30), tmp_path / "short_dash.bvh")
    clips = [str(p) for p in bundled_locomotion()] + [str(short)]
    assert main(["synth", "graph", "smg", *clips, "--threshold", "0.3", "--out", str(tmp_path / "g")]) == 0
    err = capsys.readouterr().err
    assert "leaving out 1 clip" in err and "short_dash" in err
    info = json.loads((tmp_path / "g" / "graph.json").read_text())
    assert info["stats"]["connected_clip_pairs"] == 6
