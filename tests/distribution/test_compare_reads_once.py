"""``evalkit compare`` reads each motion file once: the FGD embeddings, kinetic and geometric
features, PFC and the per-clip metrics all come from one read (traced with an audit hook on
every file open of the process)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pandas as pd

from evalkit.data import SAMPLES_DIR

CMU = SAMPLES_DIR / "cmu"
REFERENCE = ("01_01.bvh", "131_01.bvh", "07_05-walk.amc", "09_06-run.amc")
SYSTEM = ("131_03.bvh", "16_15.amc")

_TRACE = """
import json, os, sys
opens = {}
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        p = os.path.abspath(os.fsdecode(args[0]))
        if p.endswith((".bvh", ".amc")):
            opens[p] = opens.get(p, 0) + 1
sys.addaudithook(hook)
from evalkit.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "opens": opens}))
"""


def _copy(names, folder):
    folder.mkdir()
    out = []
    for n in names:
        shutil.copyfile(CMU / n, folder / n)
        out.append(str((folder / n).resolve()))
        if n.endswith(".amc"):  # its skeleton, found by CMU naming
            asf = n.split("_")[0] + ("-" + n.split("-", 1)[1].rsplit(".", 1)[0] if "-" in n else "") + ".asf"
            shutil.copyfile(CMU / asf, folder / asf)
    return out


def test_compare_opens_each_motion_file_once(tmp_path):
    ref = _copy(REFERENCE, tmp_path / "ref")
    sys_files = _copy(SYSTEM, tmp_path / "sys")
    out = tmp_path / "report"
    cmd = [sys.executable, "-c", _TRACE, "compare", "--reference", str(tmp_path / "ref"), f"sys={tmp_path / 'sys'}",
           "--bootstrap", "0", "--out", str(out), "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["code"] == 0
    assert got["opens"] == {p: 1 for p in ref + sys_files}
    clips = pd.read_csv(out / "clips.csv")
    assert len(clips) == len(ref) + len(sys_files)
    assert (clips["error"].fillna("") == "").all()
    assert clips["jerk_mean"].notna().all()  # the per-clip metrics came from the same read
