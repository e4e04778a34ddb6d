"""ASF/AMC reader (the CMU database's native format) into :class:`Motion`.

Each ASF bone becomes a joint at the bone's proximal end, so ``lfemur`` sits at the hip,
``ltibia`` at the knee, ``lfoot`` at the ankle. With the ASF rest direction ``d`` and length
``l`` of a bone, its children's offset is ``l * d``; a bone's local rotation is
``C @ M @ C^-1`` with ``C`` its ``axis`` rotation and ``M`` the AMC rotation (both composed as
extrinsic rotations in the listed order, i.e. ``Rz @ Ry @ Rx`` for ``XYZ``).
AMC files carry no frame rate: CMU's is 120 fps, the default.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evalkit.errors import FileFormatError
from evalkit.motion import quat
from evalkit.motion.formats.bvh import MAX_VALUE
from evalkit.motion.formats.limits import check_file_fps, check_frames, check_joints
from evalkit.motion.model import Motion, Skeleton
from evalkit.motion.normalize import normalize_motion

#: Degrees of freedom an ASF may list (translations, rotations, bone length).
DOF_NAMES = ("tx", "ty", "tz", "rx", "ry", "rz", "l")


@dataclass
class _Bone:
    name: str
    line: int
    direction: np.ndarray = field(default_factory=lambda: np.zeros(3))
    length: float = 0.0
    axis: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis_order: str = "XYZ"
    dof: tuple[str, ...] = ()


@dataclass
class AsfSkeleton:
    """What an ASF file defines, before it becomes a :class:`Skeleton`."""

    skeleton: Skeleton
    dofs: dict[str, tuple[str, ...]]  # bone name -> dof names (root: the ':root order')
    axis_rotations: dict[str, np.ndarray]  # bone name -> (3,3) C
    root_axis_order: str
    degrees: bool
    path: str | None


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise FileFormatError(path, None, "file not found") from None


def _read_text(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8-sig", errors="replace").splitlines()
    except FileNotFoundError:
        raise FileFormatError(path, None, "file not found") from None


def _floats(toks: list[str], path, line: int, what: str) -> list[float]:
    try:
        vals = [float(t) for t in toks]
    except ValueError:
        raise FileFormatError(path, line, f"expected numbers for {what}, found {' '.join(toks)!r}") from None
    if not all(np.isfinite(vals)):
        raise FileFormatError(path, line, f"{what} contains NaN or inf; expected finite numbers")
    if any(abs(v) > MAX_VALUE for v in vals):
        raise FileFormatError(path, line, f"{what} has a value beyond {MAX_VALUE:g} in magnitude; "
                                          "expected angles and lengths of a capture")
    return vals


def _axis_order(tok: str | None, path, line: int) -> str:
    """An ASF rotation order: a permutation of ``XYZ`` (as CMU and Acclaim files write)."""
    if tok is None:
        return "XYZ"
    order = tok.upper()
    if sorted(order) != ["X", "Y", "Z"]:
        raise FileFormatError(path, line, f"axis order {tok!r}; expected a permutation of XYZ such as XYZ or ZYX")
    return order


def _values(toks: list[str], n: int, path, line: int, what: str) -> list[float]:
    """Exactly ``n`` finite numbers after the key of an ASF line."""
    if len(toks) - 1 < n:
        found = f"found {' '.join(toks[1:])!r}" if toks[1:] else "found none"
        raise FileFormatError(path, line, f"{what} needs {n} number{'s' if n > 1 else ''}; {found}")
    return _floats(toks[1:n + 1], path, line, what)


class _AsfParser:
    """Line-by-line state of an ASF file; :meth:`line` dispatches on the current section."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.section: str | None = None
        self.bones: dict[str, _Bone] = {}
        self.root_order = ["TX", "TY", "TZ", "RX", "RY", "RZ"]
        self.root_axis = "XYZ"
        self.root_orientation = np.zeros(3)
        self.degrees = True
        self.hierarchy: list[tuple[int, list[str]]] = []
        self.have_hierarchy = False
        self.current: _Bone | None = None

    def line(self, i: int, toks: list[str]) -> None:
        if toks[0].startswith(":"):
            if self.current is not None:
                raise FileFormatError(self.path, i, f"section {toks[0]!r} inside the block of bone "
                                                    f"{self.current.name or '?'!r} (line {self.current.line}); "
                                                    "expected 'end' first")
            self.section = toks[0][1:].lower()
            self.have_hierarchy |= self.section == "hierarchy"
            return
        key = toks[0].lower()
        if self.section == "units" and key == "angle":
            self.degrees = not toks[1].lower().startswith("rad") if len(toks) > 1 else True
        elif self.section == "root":
            self._root(i, key, toks)
        elif self.section == "bonedata":
            self._bonedata(i, key, toks)
        elif self.section == "hierarchy" and key not in ("begin", "end"):
            self.hierarchy.append((i, toks))

    def _root(self, i: int, key: str, toks: list[str]) -> None:
        if key == "order":
            self.root_order = [t.upper() for t in toks[1:]]
            bad = [t for t in self.root_order if t.lower() not in DOF_NAMES[:6]]
            if bad:
                raise FileFormatError(self.path, i, f"unknown root order {bad[0]!r}; expected some of "
                                                    f"{', '.join(t.upper() for t in DOF_NAMES[:6])}")
            if len(set(self.root_order)) != len(self.root_order):
                raise FileFormatError(self.path, i, "a root order channel is listed twice")
        elif key == "axis":
            self.root_axis = _axis_order(toks[1] if len(toks) > 1 else None, self.path, i)
        elif key == "orientation":
            self.root_orientation = np.array(_values(toks, 3, self.path, i, "root orientation"))

    def _bonedata(self, i: int, key: str, toks: list[str]) -> None:
        path, current = self.path, self.current
        if key == "begin":
            if current is not None:
                raise FileFormatError(path, i, f"'begin' inside the block of bone {current.name or '?'!r} "
                                               f"(line {current.line}); expected 'end' first")
            self.current = _Bone(name="", line=i)
        elif key == "end":
            if current is None or not current.name:
                raise FileFormatError(path, i, "bone block without a 'name'")
            if current.name in self.bones or current.name == "root":
                raise FileFormatError(path, current.line, f"duplicate bone name {current.name!r}")
            check_joints(len(self.bones) + 2, path, i)  # bones + root
            self.bones[current.name] = current
            self.current = None
        elif current is None:
            raise FileFormatError(path, i, f"expected 'begin' of a bone block, found {toks[0]!r}")
        elif key == "name":
            if len(toks) != 2:
                raise FileFormatError(path, i, f"expected one bone name after 'name', found {len(toks) - 1}")
            current.name, current.line = toks[1], i
        elif key == "direction":
            current.direction = np.array(_values(toks, 3, path, i, "direction"))
        elif key == "length":
            current.length = _values(toks, 1, path, i, "length")[0]
        elif key == "axis":
            current.axis = np.array(_values(toks, 3, path, i, "axis"))
            current.axis_order = _axis_order(toks[4] if len(toks) > 4 else None, path, i)
        elif key == "dof":
            current.dof = tuple(t.lower() for t in toks[1:])
            bad = [t for t in current.dof if t not in DOF_NAMES]
            if bad:
                raise FileFormatError(path, i, f"unknown dof {bad[0]!r}; expected some of {', '.join(DOF_NAMES)}")
            if len(set(current.dof)) != len(current.dof):
                raise FileFormatError(path, i, "a dof is listed twice")

    def finish(self, n_lines: int) -> None:
        if self.current is not None:
            raise FileFormatError(self.path, n_lines, f"file ends inside the block of bone "
                                                      f"{self.current.name!r}; expected 'end'")
        if not self.have_hierarchy or not self.hierarchy:
            raise FileFormatError(self.path, n_lines, "no ':hierarchy' section; expected 'parent child...' lines")


def _bone_order(p: _AsfParser) -> tuple[list[str], dict[str, str], dict[str, list[str]]]:
    """Bones depth-first from the root, each bone's parent and children (cycles and orphans
    are errors naming the :hierarchy line)."""
    path, bones = p.path, p.bones
    parent_of: dict[str, str] = {}
    for line_no, toks in p.hierarchy:
        parent = toks[0]
        if parent != "root" and parent not in bones:
            raise FileFormatError(path, line_no, f"unknown bone {parent!r} in :hierarchy")
        for child in toks[1:]:
            if child not in bones:
                raise FileFormatError(path, line_no, f"unknown bone {child!r} in :hierarchy")
            if child in parent_of:
                raise FileFormatError(path, line_no, f"bone {child!r} has two parents ({parent_of[child]!r} and {parent!r})")
            parent_of[child] = parent
    children: dict[str, list[str]] = {}
    for c, par in parent_of.items():
        children.setdefault(par, []).append(c)
    order = ["root"]
    stack = list(reversed(children.get("root", [])))
    while stack:
        b = stack.pop()
        order.append(b)
        stack.extend(reversed(children.get(b, [])))
    placed = set(order)
    missing = [b for b in bones if b not in placed]
    if missing:
        def in_cycle(b: str) -> bool:
            seen = set()
            while b in parent_of and b not in seen:
                seen.add(b)
                b = parent_of[b]
            return b in seen

        what = "form a cycle" if any(in_cycle(b) for b in missing[:20]) else "are not attached to the root"
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise FileFormatError(
            path, p.hierarchy[0][0],
            f"bones {shown} {what} in :hierarchy; every bone must descend from 'root'",
        )
    return order, parent_of, children


def read_asf(path: str | os.PathLike) -> AsfSkeleton:
    """Parse an ASF skeleton file (lengths in file units).

    Raises:
        FileFormatError: naming the line, for a malformed file or one beyond
            :mod:`evalkit.motion.formats.limits`.
    """
    path = Path(path)
    lines = _read_text(path)
    p = _AsfParser(path)
    for i, raw in enumerate(lines, start=1):
        line = raw.split("#", 1)[0].strip()
        if line:
            p.line(i, line.split())
    if not any(raw.split("#", 1)[0].strip() for raw in lines):
        raise FileFormatError(path, None, "file is empty, expected an ASF skeleton")
    p.finish(len(lines))
    order, parent_of, children = _bone_order(p)
    bones = p.bones
    index = {b: k for k, b in enumerate(order)}
    parents = np.array([-1] + [index[parent_of[b]] for b in order[1:]], dtype=np.int64)
    offsets = np.zeros((len(order), 3))
    end_sites: dict[int, np.ndarray] = {}
    for k, b in enumerate(order[1:], start=1):
        par = parent_of[b]
        if par != "root":
            offsets[k] = bones[par].length * bones[par].direction
        if b not in children:
            end_sites[k] = bones[b].length * bones[b].direction
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation")] + [
        ("Zrotation", "Yrotation", "Xrotation")
    ] * (len(order) - 1)
    sk = Skeleton(names=tuple(order), parents=parents, offsets=offsets, channels=tuple(channels), end_sites=end_sites)
    from scipy.spatial.transform import Rotation

    axis_rot = {
        b: Rotation.from_euler(bones[b].axis_order.lower(), bones[b].axis, degrees=p.degrees).as_matrix()
        for b in order[1:]
    }
    axis_rot["root"] = Rotation.from_euler(p.root_axis.lower(), p.root_orientation, degrees=p.degrees).as_matrix()
    dofs = {b: bones[b].dof for b in order[1:]}
    dofs["root"] = tuple(t.lower() for t in p.root_order)
    return AsfSkeleton(sk, dofs, axis_rot, p.root_axis, p.degrees, str(path))


def _amc_header(lines: list[str]) -> tuple[list[int], bool | None, bool]:
    """Line indices (0-based) of the frame-number lines, the ``:DEGREES``/``:RADIANS`` flag
    (``None``: not given) and ``:FORCE-ALL-JOINTS-BE-3DOF``."""
    degrees: bool | None = None
    force3 = False
    frame_starts = []
    for i, raw in enumerate(lines):
        if raw.isdigit():  # the common case, without strip()
            frame_starts.append(i)
            continue
        c = raw[:1]
        if c.isalpha():  # a bone line
            continue
        s = raw.strip()
        if not s or s[0] == "#":
            continue
        if s[0] == ":":
            u = s.upper()
            if u.startswith(":RADIANS"):
                degrees = False
            elif u.startswith(":DEGREES"):
                degrees = True
            elif u.startswith(":FORCE-ALL-JOINTS-BE-3DOF"):
                force3 = True
            continue
        if s.isdigit():
            frame_starts.append(i)
    return frame_starts, degrees, force3


def _bone_values_fast(lines: list[str], first: int, n_f: int, names: list[str], counts: list[int],
                      ) -> dict[str, np.ndarray] | None:
    """``{bone: (frames, values)}`` when every frame lists the same bones in the same order as
    the first one with the expected counts and frames count up by one; ``None`` otherwise (the
    line-by-line reader then names the problem).

    Written by hand because no library reads AMC; this vectorised pass (one split and one
    string-to-float conversion of the whole block) is what makes AMC load at tens of thousands
    of frames per second.
    """
    text = "\n".join(lines[first:])
    if "#" in text or ":" in text:  # comments or keywords between frames: the careful reader
        return None
    per = 1 + sum(1 + c for c in counts)
    toks = text.split()
    if len(toks) != n_f * per:
        return None
    arr = np.array(toks, dtype=object).reshape(n_f, per)
    col = 1
    spans = []
    for name, c in zip(names, counts):
        if not (arr[:, col] == name).all():
            return None
        spans.append((name, col + 1, col + 1 + c))
        col += 1 + c
    try:
        numbers = np.array(arr[:, 0], dtype=np.int64)
        if (np.diff(numbers) != 1).any():
            return None
        idx = np.concatenate([np.arange(a, b) for _, a, b in spans]) if spans else np.zeros(0, int)
        vals = arr[:, idx].astype(np.float64)
    except (ValueError, OverflowError):
        return None
    if not np.isfinite(vals).all() or (np.abs(vals) > MAX_VALUE).any():
        return None
    out, k = {}, 0
    for name, a, b in spans:
        out[name] = vals[:, k:k + b - a]
        k += b - a
    return out


def _bone_values_slow(lines, frame_starts, asf: AsfSkeleton, force3: bool, path) -> dict[str, np.ndarray]:
    """The line-by-line reader: ``{bone: (frames, values)}``, or an error naming the line."""
    sk = asf.skeleton
    index = {b: k for k, b in enumerate(sk.names)}
    n_f = len(frame_starts)
    needed = [b for b in sk.names if b == "root" or asf.dofs[b]]
    values: dict[str, np.ndarray] = {}
    f = -1
    frame_no = frame_line = None
    seen: dict[str, int] = {}

    def check_complete() -> None:
        missing = [b for b in needed if b not in seen]
        if missing:
            raise FileFormatError(path, frame_line, f"frame {frame_no} has no {missing[0]!r} line"
                                                    + (f" (nor {', '.join(missing[1:])})" if missing[1:] else ""))

    for i, raw in enumerate(lines[frame_starts[0]:], start=frame_starts[0]):
        s = raw.strip()
        if not s or s.startswith("#") or s.startswith(":"):
            continue
        toks = s.split()
        if len(toks) == 1 and toks[0].isdigit():
            if f >= 0:
                check_complete()
            number = int(toks[0])
            if frame_no is not None and number != frame_no + 1:
                raise FileFormatError(path, i + 1, f"frame number {number} after frame {frame_no}; "
                                                   f"expected {frame_no + 1} (frames must count up by one: a "
                                                   "frame is missing or repeated; a file kept every n-th "
                                                   "frame needs renumbering 1, 2, 3, ... and --amc-fps)")
            f += 1
            frame_no, frame_line = number, i + 1
            seen = {}
            continue
        name = toks[0]
        if name not in index:
            shown = ", ".join(sk.names[:40]) + (", ..." if sk.n_joints > 40 else "")
            raise FileFormatError(path, i + 1, f"unknown bone {name!r}; the ASF ({asf.path}) defines {shown}")
        if name in seen:
            raise FileFormatError(path, i + 1, f"second {name!r} line in frame {frame_no} "
                                               f"(first on line {seen[name]})")
        if f < 0:
            raise FileFormatError(path, i + 1, "bone line before the first frame number")
        seen[name] = i + 1
        dofs = asf.dofs[name]
        expected = 3 if (force3 and name != "root") else len(dofs)
        if len(toks) - 1 != expected:
            raise FileFormatError(path, i + 1, f"bone {name!r} has {len(toks) - 1} values; the ASF declares {expected} ({' '.join(dofs)})")
        if name not in values:
            values[name] = np.zeros((n_f, expected))
        values[name][f] = _floats(toks[1:], path, i + 1, f"bone {name!r}")
    check_complete()
    return values


def _local_rotations(asf: AsfSkeleton, dof_values: dict[str, np.ndarray], degrees: bool,
                     force3: bool, n_f: int) -> tuple[np.ndarray, np.ndarray]:
    """``(frames, joints, 4)`` local rotations ``C M C^-1`` and ``(frames, joints, 3)``
    translations (root trajectory, rest offsets elsewhere), file units."""
    sk = asf.skeleton
    n_j = sk.n_joints
    translations = np.broadcast_to(sk.offsets, (n_f, n_j, 3)).copy()
    rv = dof_values.get("root", np.zeros((n_f, 6)))
    rot_angles = np.zeros((n_f, 3))
    for k, d in enumerate(asf.dofs["root"][:6]):
        if d.startswith("t"):
            translations[:, 0, "xyz".index(d[1])] = rv[:, k]
        else:
            rot_angles[:, "xyz".index(d[1])] = rv[:, k]
    order = asf.root_axis_order.lower()
    ordered = np.stack([rot_angles[:, "xyz".index(a)] for a in order], axis=1)
    # every bone's xyz angles in one array, so one scipy call converts the whole clip
    angles = np.zeros((n_f, n_j, 3))
    for k, b in enumerate(sk.names[1:], start=1):
        v = dof_values.get(b)
        if v is None:
            continue
        if force3:
            angles[:, k] = v
        else:
            for c, d in enumerate(asf.dofs[b]):
                if d in ("rx", "ry", "rz"):
                    angles[:, k, "xyz".index(d[1])] = v[:, c]
    # extrinsic "xyz" (R = Rz Ry Rx) is the intrinsic sequence "ZYX" with the angles reversed
    scale = 1.0 if degrees else 180.0 / np.pi
    m = np.empty((n_f, n_j, 4))
    m[:, 0] = quat.euler_to_quat(ordered[:, ::-1] * scale, order[::-1].upper())
    m[:, 1:] = quat.euler_to_quat(angles[:, 1:, ::-1] * scale, "ZYX")
    c = quat.from_matrix(np.stack([asf.axis_rotations[b] for b in sk.names]))  # (J, 4)
    rotations = quat.multiply(quat.multiply(c, m), quat.inverse(c))
    return rotations, translations


def read_amc(asf: AsfSkeleton, path: str | os.PathLike, fps: float = 120.0,
             units: str | float = "auto", up: str = "auto", roles=None, digest: bool = False) -> Motion:
    """Read AMC motion for a parsed ASF skeleton into a :class:`Motion` (metres, Y-up).

    ``digest``: record the SHA-256 hex digest of the AMC file's bytes in ``meta["sha256"]``
    (from the one read of the file).

    Raises:
        FileFormatError: naming the line, for a malformed file or one beyond
            :mod:`evalkit.motion.formats.limits`.
    """
    path = Path(path)
    if digest:
        data = _read_bytes(path)
        lines = data.decode("utf-8-sig", errors="replace").splitlines()
    else:
        lines = _read_text(path)
    sk = asf.skeleton
    frame_starts, deg_flag, force3 = _amc_header(lines)
    degrees = asf.degrees if deg_flag is None else deg_flag
    if not frame_starts:
        raise FileFormatError(path, max(len(lines), 1), "no frames; expected a frame number line followed by bone lines")
    n_f = len(frame_starts)
    check_frames(n_f, sk.n_joints, path, frame_starts[-1] + 1)
    check_file_fps(fps, path, None, "the AMC frame rate", override="--amc-fps")
    first = frame_starts[0]
    end = frame_starts[1] if n_f > 1 else len(lines)
    names = [ln.split()[0] for ln in lines[first + 1:end] if ln.strip()]
    counts = [3 if (force3 and b != "root") else len(asf.dofs.get(b, ())) for b in names]
    dof_values = None
    if len(set(names)) == len(names) and all(b in asf.dofs for b in names) and \
            {b for b in sk.names if b == "root" or asf.dofs[b]} <= set(names):
        dof_values = _bone_values_fast(lines, first, n_f, names, counts)
    if dof_values is None:
        dof_values = _bone_values_slow(lines, frame_starts, asf, force3, path)
    rotations, translations = _local_rotations(asf, dof_values, degrees, force3, n_f)
    motion = Motion(
        skeleton=sk, fps=fps, rotations=rotations, translations=translations, name=path.stem,
        meta={"source": str(path), "format": "amc", "asf": asf.path, "fps_assumed": fps,
              **({"sha256": hashlib.sha256(data).hexdigest()} if digest else {})},
    )
    return normalize_motion(motion, units=units, up=up, roles=roles)


def find_asf(amc_path: Path) -> Path:
    """The ASF file for a CMU-style AMC: ``16_15.amc`` -> ``16.asf``, ``07_05-walk.amc`` ->
    ``07-walk.asf``, or the only ASF in the folder."""
    folder = amc_path.parent
    stem = amc_path.stem
    subject = stem.split("_")[0]
    suffix = stem.split("-", 1)[1] if "-" in stem else None
    cands = [folder / f"{stem}.asf", folder / f"{subject}.asf"]
    if suffix:
        cands.append(folder / f"{subject}-{suffix}.asf")
    cands = list(dict.fromkeys(cands))  # '16.amc' would try 16.asf twice
    for c in cands:
        if c.exists():
            return c
    globbed = sorted(folder.glob(f"{subject}*.asf")) or sorted(folder.glob("*.asf"))
    if len(globbed) == 1:
        return globbed[0]
    found = f"; the folder has {', '.join(g.name for g in globbed)}" if globbed else ""
    raise FileFormatError(
        amc_path, None,
        f"cannot tell which ASF skeleton goes with this AMC (tried {', '.join(c.name for c in cands)}{found}); "
        f"put its skeleton beside it as {cands[-1].name}",
    )


def read_asf_amc(asf_path, amc_path, fps: float = 120.0, units: str | float = "auto", up: str = "auto",
                 roles=None, digest: bool = False) -> Motion:
    """Read an ASF skeleton and an AMC motion into one :class:`Motion` (``digest``: see :func:`read_amc`)."""
    return read_amc(read_asf(asf_path), amc_path, fps=fps, units=units, up=up, roles=roles, digest=digest)
