"""ASF/AMC reader (the CMU database's native format) into :class:`Motion`.

Each ASF bone becomes a joint at the bone's proximal end, so ``lfemur`` sits at the hip,
``ltibia`` at the knee, ``lfoot`` at the ankle. With the ASF rest direction ``d`` and length
``l`` of a bone, its children's offset is ``l * d``; a bone's local rotation is
``C @ M @ C^-1`` with ``C`` its ``axis`` rotation and ``M`` the AMC rotation (both composed as
extrinsic rotations in the listed order, i.e. ``Rz @ Ry @ Rx`` for ``XYZ``).
AMC files carry no frame rate: CMU's is 120 fps, the default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from evalkit.errors import FileFormatError
from evalkit.motion.bvh import MAX_VALUE
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


def read_asf(path: str | os.PathLike) -> AsfSkeleton:
    """Parse an ASF skeleton file (lengths in file units)."""
    path = Path(path)
    lines = _read_text(path)
    section = None
    bones: dict[str, _Bone] = {}
    root_order = ["TX", "TY", "TZ", "RX", "RY", "RZ"]
    root_axis = "XYZ"
    root_orientation = np.zeros(3)
    degrees = True
    hierarchy: list[tuple[int, list[str]]] = []
    have_hierarchy = False
    current: _Bone | None = None
    for i, raw in enumerate(lines, start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        toks = line.split()
        if toks[0].startswith(":"):
            if current is not None:
                raise FileFormatError(path, i, f"section {toks[0]!r} inside the block of bone "
                                               f"{current.name or '?'!r} (line {current.line}); expected 'end' first")
            section = toks[0][1:].lower()
            if section == "hierarchy":
                have_hierarchy = True
            continue
        key = toks[0].lower()
        if section == "units" and key == "angle":
            degrees = not toks[1].lower().startswith("rad") if len(toks) > 1 else True
        elif section == "root":
            if key == "order":
                root_order = [t.upper() for t in toks[1:]]
                bad = [t for t in root_order if t.lower() not in DOF_NAMES[:6]]
                if bad:
                    raise FileFormatError(path, i, f"unknown root order {bad[0]!r}; expected some of "
                                                   f"{', '.join(t.upper() for t in DOF_NAMES[:6])}")
            elif key == "axis":
                root_axis = toks[1].upper() if len(toks) > 1 else "XYZ"
            elif key == "orientation":
                root_orientation = np.array(_floats(toks[1:4], path, i, "root orientation"))
        elif section == "bonedata":
            if key == "begin":
                if current is not None:
                    raise FileFormatError(path, i, f"'begin' inside the block of bone {current.name or '?'!r} "
                                                   f"(line {current.line}); expected 'end' first")
                current = _Bone(name="", line=i)
            elif key == "end":
                if current is None or not current.name:
                    raise FileFormatError(path, i, "bone block without a 'name'")
                if current.name in bones or current.name == "root":
                    raise FileFormatError(path, current.line, f"duplicate bone name {current.name!r}")
                bones[current.name] = current
                current = None
            elif current is None:
                raise FileFormatError(path, i, f"expected 'begin' of a bone block, found {toks[0]!r}")
            elif key == "name":
                current.name = toks[1]
                current.line = i
            elif key == "direction":
                current.direction = np.array(_floats(toks[1:4], path, i, "direction"))
            elif key == "length":
                current.length = _floats(toks[1:2], path, i, "length")[0]
            elif key == "axis":
                current.axis = np.array(_floats(toks[1:4], path, i, "axis"))
                current.axis_order = toks[4].upper() if len(toks) > 4 else "XYZ"
            elif key == "dof":
                current.dof = tuple(t.lower() for t in toks[1:])
                bad = [t for t in current.dof if t not in DOF_NAMES]
                if bad:
                    raise FileFormatError(path, i, f"unknown dof {bad[0]!r}; expected some of {', '.join(DOF_NAMES)}")
                if len(set(current.dof)) != len(current.dof):
                    raise FileFormatError(path, i, "a dof is listed twice")
        elif section == "hierarchy":
            if key in ("begin", "end"):
                continue
            hierarchy.append((i, toks))
    if current is not None:
        raise FileFormatError(path, len(lines), f"file ends inside the block of bone {current.name!r}; expected 'end'")
    if not any(raw.split("#", 1)[0].strip() for raw in lines):
        raise FileFormatError(path, None, "file is empty, expected an ASF skeleton")
    if not have_hierarchy or not hierarchy:
        raise FileFormatError(path, len(lines), "no ':hierarchy' section; expected 'parent child...' lines")

    parent_of: dict[str, str] = {}
    for line_no, toks in hierarchy:
        parent = toks[0]
        if parent != "root" and parent not in bones:
            raise FileFormatError(path, line_no, f"unknown bone {parent!r} in :hierarchy")
        for child in toks[1:]:
            if child not in bones:
                raise FileFormatError(path, line_no, f"unknown bone {child!r} in :hierarchy")
            if child in parent_of:
                raise FileFormatError(path, line_no, f"bone {child!r} has two parents ({parent_of[child]!r} and {parent!r})")
            parent_of[child] = parent
    # Order bones depth-first from the root; detect cycles and orphans.
    children: dict[str, list[str]] = {}
    for c, p in parent_of.items():
        children.setdefault(p, []).append(c)
    order = ["root"]
    stack = list(reversed(children.get("root", [])))
    while stack:
        b = stack.pop()
        order.append(b)
        stack.extend(reversed(children.get(b, [])))
    missing = [b for b in bones if b not in order]
    if missing:
        def in_cycle(b: str) -> bool:
            seen = set()
            while b in parent_of and b not in seen:
                seen.add(b)
                b = parent_of[b]
            return b in seen

        what = "form a cycle" if any(in_cycle(b) for b in missing) else "are not attached to the root"
        raise FileFormatError(
            path, hierarchy[0][0],
            f"bones {', '.join(missing)} {what} in :hierarchy; every bone must descend from 'root'",
        )

    index = {b: k for k, b in enumerate(order)}
    parents = np.array([-1] + [index[parent_of[b]] for b in order[1:]])
    offsets = np.zeros((len(order), 3))
    end_sites: dict[int, np.ndarray] = {}
    for k, b in enumerate(order[1:], start=1):
        p = parent_of[b]
        if p != "root":
            pb = bones[p]
            offsets[k] = pb.length * pb.direction
    for k, b in enumerate(order[1:], start=1):
        if b not in children:
            end_sites[k] = bones[b].length * bones[b].direction
    channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation")] + [
        ("Zrotation", "Yrotation", "Xrotation")
    ] * (len(order) - 1)
    sk = Skeleton(names=tuple(order), parents=parents, offsets=offsets, channels=tuple(channels), end_sites=end_sites)
    axis_rot = {
        b: Rotation.from_euler(bones[b].axis_order.lower(), bones[b].axis, degrees=degrees).as_matrix()
        for b in order[1:]
    }
    axis_rot["root"] = Rotation.from_euler(root_axis.lower(), root_orientation, degrees=degrees).as_matrix()
    dofs = {b: bones[b].dof for b in order[1:]}
    dofs["root"] = tuple(t.lower() for t in root_order)
    return AsfSkeleton(sk, dofs, axis_rot, root_axis, degrees, str(path))


def read_amc(asf: AsfSkeleton, path: str | os.PathLike, fps: float = 120.0,
             units: str | float = "auto", up: str = "auto", roles=None) -> Motion:
    """Read AMC motion for a parsed ASF skeleton into a :class:`Motion` (metres, Y-up)."""
    path = Path(path)
    lines = _read_text(path)
    sk = asf.skeleton
    index = {b: k for k, b in enumerate(sk.names)}
    degrees = asf.degrees
    force3 = False
    frame_starts = []
    for i, raw in enumerate(lines):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith(":"):
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
    if not frame_starts:
        raise FileFormatError(path, max(len(lines), 1), "no frames; expected a frame number line followed by bone lines")
    n_f, n_j = len(frame_starts), sk.n_joints
    dof_values = {b: np.zeros((n_f, 6 if b == "root" else 3)) for b in sk.names}
    # Every bone with degrees of freedom must have one line per frame; frames count up by one.
    needed = [b for b in sk.names if b == "root" or asf.dofs[b]]
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
            raise FileFormatError(path, i + 1, f"unknown bone {name!r}; the ASF ({asf.path}) defines {', '.join(sk.names)}")
        if name in seen:
            raise FileFormatError(path, i + 1, f"second {name!r} line in frame {frame_no} "
                                               f"(first on line {seen[name]})")
        seen[name] = i + 1
        dofs = asf.dofs[name]
        expected = 3 if (force3 and name != "root") else len(dofs)
        if len(toks) - 1 != expected:
            raise FileFormatError(path, i + 1, f"bone {name!r} has {len(toks) - 1} values; the ASF declares {expected} ({' '.join(dofs)})")
        vals = _floats(toks[1:], path, i + 1, f"bone {name!r}")
        if name == "root":
            dof_values["root"][f] = vals
        elif force3:
            dof_values[name][f] = vals
        else:
            row = dof_values[name][f]
            for d, v in zip(dofs, vals):
                if d in ("rx", "ry", "rz"):
                    row["xyz".index(d[1])] = v
    check_complete()
    rotations = np.zeros((n_f, n_j, 4))
    translations = np.broadcast_to(sk.offsets, (n_f, n_j, 3)).copy()
    # root: translation and rotation per ':root order'
    root_dofs = asf.dofs["root"]
    rv = dof_values["root"]
    rot_angles = np.zeros((n_f, 3))
    for k, d in enumerate(root_dofs[:6]):
        if d.startswith("t"):
            translations[:, 0, "xyz".index(d[1])] = rv[:, k]
        else:
            rot_angles[:, "xyz".index(d[1])] = rv[:, k]
    order = asf.root_axis_order.lower()
    ordered = np.stack([rot_angles[:, "xyz".index(a)] for a in order], axis=1)
    for b, k in index.items():
        c = asf.axis_rotations[b]
        if b == "root":
            m = Rotation.from_euler(order, ordered, degrees=degrees).as_matrix()
        else:
            m = Rotation.from_euler("xyz", dof_values[b], degrees=degrees).as_matrix()
        local = c @ m @ c.T
        rotations[:, k] = Rotation.from_matrix(local).as_quat()
    motion = Motion(
        skeleton=sk, fps=fps, rotations=rotations, translations=translations, name=path.stem,
        meta={"source": str(path), "format": "amc", "asf": asf.path, "fps_assumed": fps},
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
                 roles=None) -> Motion:
    """Read an ASF skeleton and an AMC motion into one :class:`Motion`."""
    return read_amc(read_asf(asf_path), amc_path, fps=fps, units=units, up=up, roles=roles)
