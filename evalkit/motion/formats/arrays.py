"""Joint-position arrays: ``.npy`` / ``.npz`` / ``.csv`` files of ``(frames, joints, 3)`` positions,
with a skeleton preset or a skeleton YAML, read into a :class:`Motion` (rotations fitted from the
positions, :mod:`evalkit.motion.fit`).

What a file is read as:

* ``.npy`` of shape ``(T, 22, 3)``: HumanML3D joints (20 fps unless ``--array-fps``);
  ``(T, 263)``: HumanML3D features; any other ``(T, J, 3)`` or ``(T, 3·J)``: joint positions on
  ``--skeleton`` (SMPL-family presets are taken from the joint count 22, 24, 52, 55); a pickled
  dict: an MDM ``results.npy`` (:mod:`evalkit.motion.formats.humanml3d`). Which of these a file
  is, the dispatcher (:mod:`evalkit.motion.formats.dispatch`) decides; this module reads positions.
* ``.npz`` with ``positions`` (or ``joints``) ``(T, J, 3)`` and optional ``names``, ``parents``,
  ``fps`` (what ``evalkit convert IN OUT.npz`` writes); with ``poses``: an SMPL-family parameter
  file (:mod:`evalkit.motion.formats.smpl`).
* ``.csv``: one row per frame, ``3·J`` numbers (x, y, z of each joint), an optional header row.

A skeleton YAML names the joints and their parents, optionally rest offsets and roles::

    joints:                 # parents before children; the root has parent null
      - {name: pelvis, parent: null}
      - {name: left_hip, parent: pelvis, offset: [0.09, -0.1, 0.0]}
      ...
    roles: {left_ankle: l_ankle, ...}   # optional, as for --roles

Without offsets, the first frame is the rest pose the rotations are relative to.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import numpy as np

from evalkit.errors import ConfigError, FileFormatError, InputError
from evalkit.motion import topology as topo
from evalkit.motion.model import Motion


@dataclass(frozen=True)
class SkeletonSpec:
    """A joint hierarchy for position arrays: names, parents, optional rest offsets and roles."""

    names: tuple[str, ...]
    parents: tuple[int, ...]
    offsets: np.ndarray | None = None
    roles: Mapping[str, str] = field(default_factory=dict)
    source: str = ""

    @property
    def n_joints(self) -> int:
        return len(self.names)


def preset(name: str) -> SkeletonSpec:
    """A preset skeleton (``smpl22`` = ``humanml3d``, ``smpl24``, ``smplh52``, ``smplx55``) with
    the default T-pose directions and roles by index."""
    try:
        key = topo.resolve(name)
    except KeyError:
        raise InputError(f"--skeleton {name}: unknown preset; use one of "
                         f"{', '.join(list(topo.TOPOLOGIES) + list(topo.ALIASES))} or a skeleton YAML file") from None
    names, parents = topo.TOPOLOGIES[key]
    return SkeletonSpec(names, parents, topo.default_offsets(key),
                        {r: names[i] for r, i in topo.ROLE_INDEX[key].items()}, source=key)


def load_skeleton_spec(spec: str | os.PathLike | SkeletonSpec) -> SkeletonSpec:
    """A preset name or a skeleton YAML file (see the module docstring)."""
    if isinstance(spec, SkeletonSpec):
        return spec
    p = Path(spec)
    if p.suffix.lower() not in (".yaml", ".yml"):
        return preset(str(spec))
    import yaml

    from evalkit.textfile import read_utf8_text

    try:
        data = yaml.safe_load(read_utf8_text(p))
    except FileNotFoundError:
        raise ConfigError(f"--skeleton {p}: file not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(f"{p}{', line %d' % (mark.line + 1) if mark else ''}: not valid YAML") from None
    if not isinstance(data, dict) or not isinstance(data.get("joints"), list) or not data["joints"]:
        raise ConfigError(f"{p}: expected 'joints:' with a list of {{name, parent}} entries")
    names: list[str] = []
    parents: list[int] = []
    offsets = []
    for i, item in enumerate(data["joints"]):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ConfigError(f"{p}: joints[{i}]: expected {{name: ..., parent: ...}}")
        par = item.get("parent")
        if par is None:
            if i != 0:
                raise ConfigError(f"{p}: joints[{i}] ({item['name']}): only the first joint may have no parent")
            parents.append(-1)
        elif par not in names:
            raise ConfigError(f"{p}: joints[{i}] ({item['name']}): parent {par!r} is not an earlier joint")
        else:
            parents.append(names.index(par))
        names.append(item["name"])
        off = item.get("offset")
        if off is not None:
            try:
                off = [float(x) for x in off]
            except (TypeError, ValueError):
                off = None
            if off is None or len(off) != 3:
                raise ConfigError(f"{p}: joints[{i}].offset: expected [x, y, z]")
        offsets.append(off)
    if len(set(names)) != len(names):
        raise ConfigError(f"{p}: duplicate joint names")
    if any(o is not None for o in offsets) and any(o is None for o in offsets[1:]):
        raise ConfigError(f"{p}: give an offset for every joint after the root, or none")
    off_arr = None
    if all(o is not None for o in offsets[1:]) and len(offsets) > 1 and offsets[1] is not None:
        off_arr = np.array([o if o is not None else [0.0, 0.0, 0.0] for o in offsets])
    roles = data.get("roles") or {}
    if not isinstance(roles, dict):
        raise ConfigError(f"{p}: roles: expected a mapping role: joint name")
    return SkeletonSpec(tuple(names), tuple(parents), off_arr, dict(roles), source=str(p))


def frame_rate(path, file_fps, fps, default) -> float:
    """The frame rate of an array file: ``fps`` (``--array-fps``), else the file's own ``file_fps``,
    else ``default``; a one-line error for an implausible value or none at all."""
    for value, where in ((fps, "--array-fps"), (file_fps, "fps"), (default, None)):
        if value is None:
            continue
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise FileFormatError(path, None, f"{where}: expected a frame rate, found {value!r}") from None
        if not (np.isfinite(v) and 0 < v <= 2000):
            raise FileFormatError(path, None, f"{where or 'fps'}: expected a frame rate above 0 and at most 2000, found {v:g}")
        return v
    raise FileFormatError(path, None, "no frame rate in the file: pass --array-fps (frames per second)")


def positions_to_motion(path, positions: np.ndarray, spec: SkeletonSpec, fps: float, units="auto", up="auto",
                        roles: Mapping[str, str] | None = None, name: str | None = None, meta: Mapping | None = None) -> Motion:
    """Fit rotations to ``positions (frames, joints, 3)`` on ``spec`` and normalise to metres,
    Y-up (``units``/``up`` as for BVH)."""
    from evalkit.motion.fit import motion_from_positions
    from evalkit.motion.normalize import normalize_motion

    check_positions(path, positions)
    if positions.shape[1] != spec.n_joints:
        raise FileFormatError(path, None, f"{positions.shape[1]} joints per frame, but the skeleton "
                                          f"{spec.source} has {spec.n_joints}")
    m = motion_from_positions(positions, spec.names, spec.parents, fps, rest_directions=spec.offsets,
                              name=name if name is not None else Path(path).stem,
                              meta={"source": str(path), "format": "positions", "skeleton": spec.source,
                                    **dict(meta or {})})
    from evalkit.motion.fit import with_positions

    merged = {**dict(spec.roles), **dict(roles or {})}
    return with_positions(normalize_motion(m, units=units, up=up, roles=merged or None))


def skeleton_for(path, n_joints: int, skeleton) -> SkeletonSpec:
    """The skeleton of ``n_joints`` positions per frame: ``--skeleton`` (a preset or YAML, checked
    against the joint count) or the SMPL-family preset of that joint count."""
    if skeleton is not None:
        spec = load_skeleton_spec(skeleton)
        if spec.n_joints != n_joints:
            raise FileFormatError(path, None, f"{n_joints} joints per frame, but --skeleton {spec.source} has "
                                              f"{spec.n_joints}")
        return spec
    if n_joints in topo.BY_JOINT_COUNT:
        return preset(topo.BY_JOINT_COUNT[n_joints])
    raise FileFormatError(path, None, f"{n_joints} joints per frame and no skeleton: pass --skeleton with a "
                                      "preset (smpl22, smpl24, smplh52, smplx55) or a skeleton YAML file")


def read_positions_array(path: str | os.PathLike, arr: np.ndarray, units="auto", up="auto",
                         fps: float | None = None, skeleton=None, roles=None, default_fps: float | None = None,
                         format: str = "positions") -> Motion:
    """Joint positions ``arr`` of shape ``(frames, joints, 3)`` (or ``(frames, 3·joints)`` with
    ``skeleton``) read from ``path`` (a ``.npy``) into a :class:`Motion`; ``default_fps`` is the
    rate when neither ``fps`` nor the file gives one, ``format`` is recorded in ``meta``."""
    from evalkit.motion.formats.limits import check_frames

    path = Path(path)
    shape = arr.shape
    if arr.ndim in (2, 3) and shape[0] > 0:
        check_frames(int(shape[0]), int(np.prod(shape[1:])) // 3, path)
    if arr.ndim == 3 and shape[2] == 3 and shape[0] > 0 and shape[1] > 0:
        pos = np.asarray(arr, dtype=np.float64)
    elif arr.ndim == 2 and skeleton is not None and shape[1] % 3 == 0 and shape[0] > 0:
        pos = np.asarray(arr, dtype=np.float64).reshape(shape[0], -1, 3)
    else:
        raise FileFormatError(path, None, f"expected shape (frames, 22, 3) HumanML3D joints, (frames, 263) "
                                          f"HumanML3D features or (frames, joints, 3) with --skeleton; found {shape}")
    spec = skeleton_for(path, pos.shape[1], skeleton)
    return positions_to_motion(path, pos, spec, frame_rate(path, None, fps, default_fps), units, up, roles,
                               meta={"format": format})


def read_positions_npz(path: str | os.PathLike, units="auto", up="auto", fps: float | None = None,
                       skeleton=None, roles=None, data: bytes | None = None) -> Motion:
    """An ``.npz`` of ``positions (frames, joints, 3)`` with optional ``names``, ``parents``,
    ``fps`` (evalkit's own convert output, or any tool's); ``data``: the file's bytes, when
    already read."""
    from evalkit.motion.formats.npz import npz_arrays

    path = Path(path)
    data = npz_arrays(path, ("positions", "joints", "names", "parents", "fps"), data)
    key = "positions" if "positions" in data else ("joints" if "joints" in data else None)
    if key is None:
        raise FileFormatError(path, None, f"missing key 'positions' (frames, joints, 3) or 'poses' (SMPL-family "
                                          f"parameters); found keys: {', '.join(data['__keys__']) or 'none'}")
    pos = np.asarray(data[key])
    if pos.dtype.kind not in "fiu" or pos.ndim != 3 or pos.shape[2] != 3 or 0 in pos.shape:
        raise FileFormatError(path, None, f"{key}: expected (frames, joints, 3) numbers, found {pos.shape} {pos.dtype}")
    pos = pos.astype(np.float64)
    if skeleton is None and "names" in data and "parents" in data:
        names = tuple(str(x) for x in np.asarray(data["names"]).ravel())
        try:
            parents = tuple(int(x) for x in np.asarray(data["parents"]).ravel())
        except (TypeError, ValueError):
            raise FileFormatError(path, None, "parents: expected joint indices") from None
        if len(names) != pos.shape[1] or len(parents) != pos.shape[1]:
            raise FileFormatError(path, None, f"names/parents: expected {pos.shape[1]} entries, found "
                                              f"{len(names)}/{len(parents)}")
        if any(p >= j or (p < 0 and j) for j, p in enumerate(parents)) or parents[0] != -1:
            raise FileFormatError(path, None, "parents: expected parents before children and -1 for the first joint only")
        spec = _matching_preset(names, parents) or SkeletonSpec(names, parents, None, {}, source=str(path))
    else:
        spec = skeleton_for(path, pos.shape[1], skeleton)
    file_fps = np.asarray(data["fps"]).ravel()[0] if "fps" in data and np.size(data["fps"]) else None
    return positions_to_motion(path, pos, spec, frame_rate(path, file_fps, fps, None), units, up, roles,
                               meta={"format": "positions-npz"})


def _matching_preset(names: tuple[str, ...], parents: tuple[int, ...]) -> SkeletonSpec | None:
    """The preset with these joints and hierarchy, in the file's joint order (evalkit's own
    ``.npz`` keeps joints depth-first), so the preset's T-pose is the rest pose."""
    key = topo.topology_of(names)
    if key is None:
        return None
    p = preset(key)
    idx = [p.names.index(n) for n in names]
    for j, par in enumerate(parents):
        want = p.parents[idx[j]]
        if (par < 0) != (want < 0) or (par >= 0 and names[par] != p.names[want]):
            return None
    return SkeletonSpec(names, parents, p.offsets[idx], p.roles, source=key)


def read_csv_positions(path: str | os.PathLike, units="auto", up="auto", fps: float | None = None,
                       skeleton=None, roles=None, data: bytes | None = None) -> Motion:
    """A ``.csv`` with one row per frame of ``3·J`` numbers and an optional header row (read with
    the standard library's csv module: the files are small and pandas is not a motion-core
    dependency); ``data``: the file's bytes, when already read."""
    import csv
    import io

    path = Path(path)
    try:
        with (io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline="") if data is not None
              else path.open(encoding="utf-8", errors="replace", newline="")) as fh:
            rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    except OSError as exc:
        raise FileFormatError(path, None, f"cannot read ({exc.strerror})") from None
    except csv.Error as exc:
        raise FileFormatError(path, None, f"not a readable CSV table ({exc})") from None
    if not rows:
        raise FileFormatError(path, None, "no rows; expected one row per frame of x, y, z per joint")
    header = None
    if any(c.strip() and not _is_number(c) for c in rows[0]):
        header, rows = [c.strip() for c in rows[0]], rows[1:]
    width = len(header) if header else len(rows[0]) if rows else 0
    arr = np.empty((len(rows), width))
    for i, r in enumerate(rows):
        line = i + 1 + (header is not None)
        if len(r) != width:
            raise FileFormatError(path, line, f"{len(r)} values; expected {width} (x, y, z per joint)")
        for k, c in enumerate(r):
            try:
                arr[i, k] = float(c)
            except ValueError:
                col = header[k] if header else str(k + 1)
                raise FileFormatError(path, line, f"column {col!r}: expected numbers, found {c!r}") from None
    if arr.shape[0] == 0 or arr.shape[1] % 3:
        raise FileFormatError(path, None, f"expected 3·joints columns (x, y, z per joint) and at least one frame, "
                              f"found {arr.shape[1]} columns, {arr.shape[0]} rows")
    pos = arr.reshape(len(arr), -1, 3)
    spec = skeleton_for(path, pos.shape[1], skeleton)
    return positions_to_motion(path, pos, spec, frame_rate(path, None, fps, None), units, up, roles,
                               meta={"format": "positions-csv"})


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def check_positions(path, positions: np.ndarray, what: str = "positions") -> None:
    """One-line error for NaN / infinite joint positions (frame and joint named)."""
    bad = ~np.isfinite(positions)
    if bad.any():
        f, j = np.argwhere(bad)[0][:2]
        raise FileFormatError(path, None, f"{what}: NaN or infinite value at frame {f}, joint {j}")
    if math.prod(positions.shape[:2]) and float(np.abs(positions).max()) > 1e6:
        raise FileFormatError(path, None, f"{what}: values up to {float(np.abs(positions).max()):.3g}; expected "
                                          "joint positions of a body")
