"""Hostile and broken files give one-line evalkit errors, within documented limits.

The specific cases are the ones a 10,500-file mutation run of real capture found; the fuzz test
at the end runs the seeded mutator of ``fuzz.py`` over the BVH and ASF/AMC readers (and scoring)
on cuts of the bundled CMU capture. ``bench/bench_fuzz_readers.py`` runs the same on 10,000+
files.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from evalkit.errors import FileFormatError
from evalkit.motion import load_motion, read_asf
from evalkit.motion.formats.bvh import parse_bvh
from evalkit.motion.formats.limits import MAX_FPS, MAX_FRAME_JOINTS, MAX_JOINTS, MIN_FPS

from fuzz import fuzz, shortened_seeds


def chain_bvh(n: int, deep: bool, frames: int = 2, frame_time: str = "0.0083333", length: float = 0.05) -> str:
    """A BVH with ``n`` joints below the root, in a chain (``deep``) or all siblings."""
    parts = ["HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"]
    for k in range(n):
        parts.append(f"JOINT j{k}\n{{\nOFFSET 0 {length} 0\nCHANNELS 1 Zrotation\n")
        if not deep:
            parts.append("}\n")
    parts.append("}\n" * (n if deep else 0) + "}\n")
    row = " ".join(["0"] * (6 + n))
    return "".join(parts) + f"MOTION\nFrames: {frames}\nFrame Time: {frame_time}\n" + (row + "\n") * frames


def test_deep_nesting_is_read_without_recursion():
    """1,500 nested joints (Python's default recursion limit is 1,000) are read iteratively."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a 1,500-joint stick is no plausible body
        m = parse_bvh(chain_bvh(1500, deep=True, length=0.001), units="m", up="y")
    assert m.n_joints == 1501
    assert m.skeleton.parents[-1] == 1499
    assert np.isclose(m.positions[0, -1, 1], 1.5)


def test_too_many_joints_is_one_line_error_naming_the_limit():
    with pytest.raises(FileFormatError) as e:
        parse_bvh(chain_bvh(MAX_JOINTS + 5, deep=False), path="wide.bvh")
    msg = str(e.value)
    assert "\n" not in msg and f"{MAX_JOINTS:,}" in msg and "wide.bvh, line" in msg


def test_too_many_frames_times_joints_is_refused_before_parsing():
    text = chain_bvh(30, deep=False, frames=1).replace("Frames: 1", f"Frames: {MAX_FRAME_JOINTS // 31 + 1}")
    with pytest.raises(FileFormatError, match="frames × 31 joints is more than"):
        parse_bvh(text, path="long.bvh")


@pytest.mark.parametrize("frame_time", ["5e-324", "1e-300", "1e-7", "1000", "1e7"])
def test_frame_rates_outside_the_limits_are_one_line_errors(frame_time):
    with pytest.raises(FileFormatError) as e:
        parse_bvh(chain_bvh(3, deep=False, frame_time=frame_time), path="x.bvh", units="m")
    msg = str(e.value)
    assert "\n" not in msg and f"{MIN_FPS:g} to {MAX_FPS:g}" in msg and "--bvh-fps" in msg
    assert e.value.line is not None and "Frame Time" in msg


def test_frame_time_of_one_second_warns_and_bvh_fps_overrides(tmp_path, cmu_dir):
    text = (cmu_dir / "131_01.bvh").read_text()
    head, _, rest = text.partition("Frame Time:")
    p = tmp_path / "slow.bvh"
    p.write_text(head + "Frame Time: 1.0\n" + rest.split("\n", 1)[1])
    with pytest.warns(UserWarning, match=r"1 frames per second, implausible.*--bvh-fps"):
        m = load_motion(p)
    assert m.fps == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_motion(p, bvh_fps=120)
    assert m.fps == 120.0


def test_analysis_grid_is_sized_by_frames_not_by_duration(tmp_path, cmu_dir):
    """A 30-frame clip that claims 1 fps (30 s) is scored on a grid of at most 16 samples a
    frame, not 120 a second."""
    from evalkit.features.ground import MAX_UPSAMPLE, foot_track

    text = (cmu_dir / "131_01.bvh").read_text()
    head, _, rest = text.partition("MOTION")
    lines = rest.strip().splitlines()
    p = tmp_path / "slow.bvh"
    p.write_text(head + "MOTION\nFrames: 30\nFrame Time: 1\n" + "\n".join(lines[2:32]) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = load_motion(p)
    track = foot_track(m)
    assert track.smooth.shape[0] <= MAX_UPSAMPLE * m.n_frames


ASF_HEAD = """:version 1.10
:name t
:units
  mass 1.0
  length 1.0
  angle deg
:root
   order TX TY TZ RX RY RZ
   axis {root_axis}
   position 0 0 0
   orientation 0 0 0
:bonedata
  begin
     id 1
     {name_line}
     direction {direction}
     {length_line}
     axis 0 0 0 {axis}
    dof rx ry rz
  end
:hierarchy
  begin
    root lfemur
  end
"""


@pytest.mark.parametrize("fields, expected", [
    (dict(axis="XXX"), "axis order 'XXX'"),
    (dict(axis="ABC"), "axis order 'ABC'"),
    (dict(axis="XY"), "axis order 'XY'"),
    (dict(axis="XYé"), "axis order"),
    (dict(root_axis="ZZY"), "axis order 'ZZY'"),
    (dict(name_line="name"), "one bone name after 'name'"),
    (dict(length_line="length"), "length needs 1 number"),
    (dict(direction="0 1"), "direction needs 3 numbers"),
])
def test_malformed_asf_lines_are_errors_naming_the_line(tmp_path, fields, expected):
    values = dict(root_axis="XYZ", name_line="name lfemur", direction="0 -1 0", length_line="length 10",
                  axis="XYZ") | fields
    p = tmp_path / "t.asf"
    p.write_text(ASF_HEAD.format(**values), encoding="utf-8")
    with pytest.raises(FileFormatError, match=expected) as e:
        read_asf(p)
    assert e.value.line is not None and "\n" not in str(e.value)


def test_fuzzed_bvh_and_asf_amc_never_raise_outside_the_evalkit_family(tmp_path, cmu_dir):
    """400 seeded mutations of real capture, loaded and scored: every outcome is a motion or
    an evalkit error, none slower than 5 s."""
    from evalkit.features.score import score_motion

    seeds = shortened_seeds(tmp_path / "seeds", bvh=[cmu_dir / "131_01.bvh", cmu_dir / "01_01.bvh"],
                            amc=[(cmu_dir / "16.asf", cmu_dir / "16_15.amc"),
                                 (cmu_dir / "09-run.asf", cmu_dir / "09_06-run.amc")], frames=30)

    def load_and_score(p: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            score_motion(load_motion(p))

    report = fuzz(load_and_score, seeds, n=400, seed=29, workdir=tmp_path / "fuzz", slow_s=5.0)
    assert report.cases == 400
    assert report.accepted > 20 and report.refused > 100  # the mutations do reach both outcomes
    assert not report.failures, report.summary() + "".join(
        f"\n  {f.signature}: {f.message} ({f.file})" for f in report.failures[:10])


def test_unit_detection_ignores_a_root_joint_left_at_the_origin(cmu_dir, tmp_path):
    """Rigs whose root joint stays at the origin while the hips carry the body (Bandai Namco's
    joint_Root) must not have the walk's length taken for the body's size: a clip written in
    centimetres under such a root walks 10 m and is still read as centimetres."""
    from evalkit.motion import write_bvh
    from evalkit.motion.model import Skeleton

    m = load_motion(cmu_dir / "131_01.bvh")
    sk = m.skeleton
    # a new root joint at the origin above the hips
    names = ("joint_Root",) + sk.names
    parents = np.concatenate([[-1], sk.parents + 1])
    parents[1] = 0
    offsets = np.vstack([np.zeros(3), sk.offsets])
    channels = (("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"),) + sk.channels
    root = Skeleton(names=names, parents=parents, offsets=offsets, channels=channels,
                    end_sites={k + 1: v for k, v in sk.end_sites.items()})
    n = m.n_frames
    rot = np.concatenate([np.tile([0.0, 0.0, 0.0, 1.0], (n, 1, 1)), m.rotations], axis=1)
    tr = np.concatenate([np.zeros((n, 1, 3)), m.translations], axis=1)
    tr[:, 1, 0] += np.linspace(0, 10.0, n)  # the hips walk 10 m along x
    walk = m.with_(skeleton=root, rotations=rot, translations=tr)
    p = write_bvh(walk, tmp_path / "rooted.bvh", scale=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = load_motion(p)
    assert back.meta["units"] == "cm"
