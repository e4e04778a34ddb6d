"""`Skeleton` and `Motion`: the data model at the centre of evalkit.

Representation (chosen once, used everywhere):

* ``Skeleton.offsets``: ``(joints, 3)`` rest offsets of each joint from its parent, metres.
* ``Motion.rotations``: ``(frames, joints, 4)`` local joint rotations as unit quaternions,
  scalar-last ``(x, y, z, w)``; a joint's world rotation is ``parent_world @ local``.
* ``Motion.translations``: ``(frames, joints, 3)`` local joint translations in metres, i.e. the
  position of the joint in its parent's frame. For joints without position channels this is the
  rest offset on every frame; for the root it is the root trajectory in world space.
* World space is Y-up, metres. Readers convert units and up axis on load.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from evalkit.errors import InputError

VALID_CHANNELS = (
    "Xposition",
    "Yposition",
    "Zposition",
    "Xrotation",
    "Yrotation",
    "Zrotation",
)


@dataclass(frozen=True, eq=False)
class Skeleton:
    """A joint hierarchy.

    Attributes:
        names: joint names, unique, in depth-first file order (parents before children).
        parents: ``(joints,)`` int array, index of each joint's parent, ``-1`` for the root.
        offsets: ``(joints, 3)`` rest offset of each joint from its parent, metres.
        channels: per joint, the channel names in file order (e.g. ``("Zrotation", ...)``).
        end_sites: joint index -> ``(3,)`` offset of that joint's end site, metres.
        roles: ``{role: joint name}`` given by the user for a rig whose joint names do not say
            (a ``--roles`` file, set by the readers); :func:`evalkit.motion.find_roles` applies
            it before matching names, so every operation on the clip (corruptions, features,
            mirroring) sees the same roles. Empty for rigs whose roles are found by name.
    """

    names: tuple[str, ...]
    parents: np.ndarray
    offsets: np.ndarray
    channels: tuple[tuple[str, ...], ...]
    end_sites: Mapping[int, np.ndarray] = field(default_factory=dict)
    roles: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parents = np.asarray(self.parents, dtype=np.int64)
        offsets = np.asarray(self.offsets, dtype=np.float64)
        object.__setattr__(self, "parents", parents)
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "channels", tuple(tuple(c) for c in self.channels))
        n = len(self.names)
        if parents.shape != (n,) or offsets.shape != (n, 3) or len(self.channels) != n:
            raise InputError(
                f"skeleton arrays disagree: {n} names, parents {parents.shape}, "
                f"offsets {offsets.shape}, {len(self.channels)} channel lists"
            )
        if len(set(self.names)) != n:
            dup = sorted({x for x in self.names if self.names.count(x) > 1})
            raise InputError(f"duplicate joint names: {', '.join(dup)}")
        object.__setattr__(self, "roles", dict(self.roles))
        for role, joint in self.roles.items():
            if joint not in self.names:
                raise InputError(f"roles.{role}: no joint named {joint!r}; joints are: {', '.join(self.names)}")
        for j, p in enumerate(parents):
            if p >= j or (p < 0 and j != 0):
                raise InputError(
                    f"joint {self.names[j]!r} has parent index {p}; parents must come before "
                    "children and only joint 0 may be the root"
                )

    @property
    def n_joints(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """Index of the joint called ``name`` (raises :class:`InputError` if absent)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise InputError(
                f"no joint named {name!r}; joints are: {', '.join(self.names)}"
            ) from None

    def children(self, j: int) -> list[int]:
        return [int(i) for i in np.flatnonzero(self.parents == j)]

    def descendants(self, j: int) -> list[int]:
        out: list[int] = []
        stack = self.children(j)
        while stack:
            k = stack.pop()
            out.append(k)
            stack.extend(self.children(k))
        return sorted(out)

    def bone_lengths(self) -> np.ndarray:
        """``(joints,)`` rest length of the bone from each joint's parent, metres (root: 0)."""
        lengths = np.linalg.norm(self.offsets, axis=1)
        lengths[self.parents < 0] = 0.0
        return lengths

    def has_position_channels(self) -> np.ndarray:
        """``(joints,)`` bool: which joints carry position channels."""
        return np.array([any(c.endswith("position") for c in ch) for ch in self.channels])

    def scaled(self, factor: float) -> "Skeleton":
        return replace(
            self,
            offsets=self.offsets * factor,
            end_sites={k: np.asarray(v) * factor for k, v in self.end_sites.items()},
        )

    def __repr__(self) -> str:
        return f"Skeleton({self.n_joints} joints, root={self.names[0]!r})"


@dataclass(frozen=True, eq=False)
class Motion:
    """A clip: a skeleton animated over frames. Immutable: its arrays are read-only, so the
    cached :attr:`positions` always match them.

    Attributes:
        skeleton: the joint hierarchy.
        fps: frame rate, frames per second (> 0).
        rotations: ``(frames, joints, 4)`` local unit quaternions ``(x, y, z, w)``.
        translations: ``(frames, joints, 3)`` local translations, metres (root: world position).
        name: a label, usually the file stem.
        meta: provenance (source path, unit scale applied, up axis of the file, ...).
    """

    skeleton: Skeleton
    fps: float
    rotations: np.ndarray
    translations: np.ndarray
    name: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        rot = _read_only(self.rotations)
        tr = _read_only(self.translations)
        object.__setattr__(self, "rotations", rot)
        object.__setattr__(self, "translations", tr)
        j = self.skeleton.n_joints
        if rot.ndim != 3 or rot.shape[1:] != (j, 4):
            raise InputError(f"rotations must be (frames, {j}, 4), got {rot.shape}")
        if tr.shape != rot.shape[:2] + (3,):
            raise InputError(f"translations must be {rot.shape[:2] + (3,)}, got {tr.shape}")
        if not (np.isfinite(self.fps) and self.fps > 0):
            raise InputError(f"fps must be a positive number, got {self.fps}")

    # -- basic facts ---------------------------------------------------------------------
    @property
    def n_frames(self) -> int:
        return int(self.rotations.shape[0])

    @property
    def n_joints(self) -> int:
        return self.skeleton.n_joints

    @property
    def frame_time(self) -> float:
        """Seconds per frame."""
        return 1.0 / self.fps

    @property
    def duration(self) -> float:
        """Seconds from the first to past the last frame (``frames / fps``)."""
        return self.n_frames / self.fps

    @property
    def root_translation(self) -> np.ndarray:
        """``(frames, 3)`` root position, metres."""
        return self.translations[:, 0]

    @cached_property
    def positions(self) -> np.ndarray:
        """``(frames, joints, 3)`` world joint positions, metres (cached forward kinematics)."""
        from evalkit.motion.fk import global_positions

        pos = global_positions(self)
        pos.setflags(write=False)
        return pos

    def derived(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """A fact derived from this clip (its body's role positions, heading, ...), computed once.

        The value of ``compute()`` is kept on the clip under ``key`` and returned by every later
        call with the same key: a motion is immutable, so a fact derived from it stays true, and
        every operation returns a new motion that starts with none. The packages above the core
        own what is derived (e.g. :func:`evalkit.features.body.body_of`).

        >>> from evalkit.data import SAMPLES_DIR
        >>> from evalkit.motion import load_motion
        >>> m = load_motion(SAMPLES_DIR / "cmu" / "01_01.bvh")
        >>> m.derived("frames", lambda: m.n_frames) is m.derived("frames", lambda: -1)
        True
        """
        facts = self.__dict__.setdefault("_derived", {})
        if key not in facts:
            facts[key] = compute()
        return facts[key]

    # -- operations returning new motions -----------------------------------------------
    def slice(self, start: int | None = None, stop: int | None = None, step: int | None = None) -> "Motion":
        """Frames ``start:stop:step`` as a new motion (fps divided by ``step``)."""
        sl = slice(start, stop, step)
        step_ = step or 1
        if step_ <= 0:
            raise InputError("slice step must be positive")
        rot = self.rotations[sl]
        if rot.shape[0] == 0:
            raise InputError(f"slice {start}:{stop} of a {self.n_frames}-frame clip is empty")
        out = replace(self, rotations=rot, translations=self.translations[sl], fps=self.fps / step_)
        if "positions" in self.__dict__:  # FK is per frame: slice the cached positions, not re-solve
            out.__dict__["positions"] = self.__dict__["positions"][sl]
        return out

    def __getitem__(self, item: slice) -> "Motion":
        if not isinstance(item, slice):
            raise TypeError("index a Motion with a slice of frames, e.g. motion[10:100]")
        return self.slice(item.start, item.stop, item.step)

    def __len__(self) -> int:
        return self.n_frames

    def with_(self, **changes: Any) -> "Motion":
        """A copy with some fields replaced (``dataclasses.replace``)."""
        return replace(self, **changes)

    def __repr__(self) -> str:
        return (
            f"Motion({self.name!r}, {self.n_frames} frames @ {self.fps:g} fps, "
            f"{self.n_joints} joints)"
        )


def _read_only(a) -> np.ndarray:
    """``a`` as float64 through a read-only view: a motion's arrays cannot be changed behind
    its cached positions (operations return new motions instead)."""
    a = np.asarray(a, dtype=np.float64)
    if a.flags.writeable:
        a = a.view()
        a.setflags(write=False)
    return a


def concatenate(motions: Sequence[Motion]) -> Motion:
    """Frames of several clips on the same skeleton and frame rate, one after another."""
    if not motions:
        raise InputError("nothing to concatenate")
    first = motions[0]
    for m in motions[1:]:
        if m.skeleton.names != first.skeleton.names or abs(m.fps - first.fps) > 1e-9:
            raise InputError("clips to concatenate must share skeleton and frame rate")
    return replace(
        first,
        rotations=np.concatenate([m.rotations for m in motions]),
        translations=np.concatenate([m.translations for m in motions]),
    )
