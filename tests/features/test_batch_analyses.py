"""Further analyses run on the motion the metrics loaded: ``score --model`` reads each file once
and gives the table and traces that judging the finished table afterwards gives."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd

from evalkit.data import SAMPLES_DIR
from evalkit.features.batch import BatchOptions, score_paths

CLIPS = [SAMPLES_DIR / "cmu" / c for c in ("01_01.bvh", "16_15.amc")]


def test_naturalness_beside_the_metrics_equals_judging_the_table_afterwards(tmp_path):
    from evalkit.models.naturalness import NaturalnessAnalysis, add_model_columns
    from evalkit.models.training import load_model

    before, after = tmp_path / "before", tmp_path / "after"
    table = score_paths(CLIPS, BatchOptions(frames_dir=str(before)), progress=False)
    old = add_model_columns(table, "default", frames_dir=str(before))
    opts = BatchOptions(frames_dir=str(after), analyses=(NaturalnessAnalysis(load_model("default")[0]),))
    new = score_paths(CLIPS, opts, progress=False)
    pd.testing.assert_frame_equal(new, old)
    assert new["naturalness"].between(0, 1).all()
    for f in sorted(before.rglob("*.csv")):
        a, b = pd.read_csv(f), pd.read_csv(after / f.relative_to(before))
        pd.testing.assert_frame_equal(b, a)
        assert np.isfinite(b["naturalness_window"]).any()


_TRACE = """
import json, sys
opens = {}
def hook(event, args):
    if event == "open" and isinstance(args[0], str) and args[0] in TARGETS:
        opens[args[0]] = opens.get(args[0], 0) + 1
TARGETS = set(sys.argv[1:3])
sys.addaudithook(hook)
from evalkit.cli import main
code = main(["score", *sys.argv[1:3], "--model", "default", "--out", sys.argv[3], "-q"])
print(json.dumps({"code": code, "opens": opens}))
"""


def test_score_with_a_model_opens_each_file_once(tmp_path):
    out = tmp_path / "s.csv"
    proc = subprocess.run([sys.executable, "-c", _TRACE, *map(str, CLIPS), str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["code"] == 0
    assert got["opens"] == {str(c): 1 for c in CLIPS}
    assert pd.read_csv(out)["naturalness"].notna().all()


def test_an_analysis_gives_the_same_table_in_worker_processes():
    from evalkit.models.naturalness import NaturalnessAnalysis
    from evalkit.models.training import load_model

    opts = BatchOptions(analyses=(NaturalnessAnalysis(load_model("default")[0]),))
    here = score_paths(CLIPS, opts, progress=False)
    pooled = score_paths(CLIPS, opts, jobs=2, auto_workers=False, progress=False)
    pd.testing.assert_frame_equal(pooled, here)
