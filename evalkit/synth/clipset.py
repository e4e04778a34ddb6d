"""A set of prepared clips with cached distance matrices, shared by SMG and BPMG builders.

Building graphs for several thresholds and split profiles reuses the same frame distances, so
:class:`ClipSet` computes each distance matrix once:

* ``"full"`` — whole body, world positions, Kovar alignment (the SMG distance);
* ``"lower"`` — the lower body (root + legs), world positions, Kovar alignment;
* one per upper chain (``trunk``, ``head``, ``upper_left``, ``upper_right``) — the chain's joints
  relative to the joint it hangs from, expressed in that joint's frame, compared without
  alignment (a body-fixed frame already). A body part made of several chains combines their
  matrices exactly from the chains' point weights (:meth:`part_distances`).

Matrices are kept once per key, in float32 (see :meth:`ClipSet._key_distances`).

Distances are RMS metres over a window of ``window`` frames (see :mod:`evalkit.synth.distance`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

from evalkit.errors import InputError
from evalkit.motion.fk import forward_kinematics
from evalkit.motion.model import Motion
from evalkit.motion.roles import find_roles
from evalkit.synth.bodyparts import BodyPart, kinematic_chains
from evalkit.synth.distance import joint_weights, point_cloud_distance

LOCAL_CHAINS = ("trunk", "head", "upper_left", "upper_right")
LOWER_CHAINS = ("root", "lower_left", "lower_right")


@dataclass(eq=False)
class ClipSet:
    """Clips on one skeleton and frame rate, plus cached per-pair distance matrices.

    Attributes:
        clips: the clips (see :func:`evalkit.synth.clips.prepare_clips`).
        window: comparison / blend window ``k`` in frames.
        weights: joint weight scheme (see :func:`evalkit.synth.distance.joint_weights`).
        role_overrides: ``{role: joint name}`` for rigs whose joint names are not recognised
            (see :func:`evalkit.motion.find_roles`).
    """

    clips: tuple[Motion, ...]
    window: int
    weights: str | Mapping[str, float] = "paths"
    role_overrides: Mapping[str, str] | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.clips = tuple(self.clips)
        if not self.clips:
            raise InputError("a clip set needs at least one clip")
        sk = self.clips[0].skeleton
        fps = self.clips[0].fps
        for c in self.clips:
            if c.skeleton.names != sk.names or abs(c.fps - fps) > 1e-9:
                raise InputError(
                    f"clip {c.name!r} does not share the skeleton / frame rate of {self.clips[0].name!r}; "
                    "use evalkit.synth.prepare_clips to retarget and resample"
                )
        if self.window < 2:
            raise InputError(f"window must be at least 2 frames, got {self.window}")
        short = [c.name for c in self.clips if c.n_frames < 2 * self.window + 2]
        if short:
            raise InputError(
                f"clips {', '.join(short)} are shorter than two windows ({2 * self.window + 2} frames at "
                f"{fps:g} fps); use longer clips or a shorter window"
            )

    @classmethod
    def from_clips(
        cls,
        clips: Iterable[str | os.PathLike | Motion] | "ClipSet",
        fps: float = 60.0,
        window_s: float = 1.0 / 3.0,
        weights: str | Mapping[str, float] = "paths",
        prepare: bool = True,
    ) -> "ClipSet":
        """Prepare clips (load, resample to ``fps``, retarget, ground) and wrap them."""
        if isinstance(clips, ClipSet):
            return clips
        from evalkit.synth.clips import prepare_clips

        motions = prepare_clips(clips, fps=fps) if prepare else list(clips)
        k = max(2, int(round(window_s * motions[0].fps)))
        return cls(tuple(motions), k, weights)

    # -- basic facts ---------------------------------------------------------------------
    @property
    def fps(self) -> float:
        return float(self.clips[0].fps)

    @property
    def skeleton(self):
        return self.clips[0].skeleton

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.clips]

    def index(self, clip: str | int) -> int:
        """Index of a clip given by name, file stem before ``-`` (``"07_05"``), unique motion
        label (``"run"``) or index."""
        if isinstance(clip, (int, np.integer)):
            if not 0 <= clip < len(self.clips):
                raise InputError(f"clip index {clip} out of range 0..{len(self.clips) - 1}")
            return int(clip)
        names = self.names
        if clip in names:
            return names.index(clip)
        stems = [n for n in names if n.split("-")[0] == clip]
        if len(stems) == 1:
            return names.index(stems[0])
        from evalkit.synth.clips import clip_label

        labelled = [n for n in names if clip_label(n) == clip]
        if len(labelled) == 1:
            return names.index(labelled[0])
        raise InputError(f"no clip named {clip!r}; clips are {', '.join(names)}")

    @property
    def lengths(self) -> np.ndarray:
        return np.array([c.n_frames for c in self.clips])

    def _memo(self, key, fn):
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    @property
    def roles(self) -> dict[str, int]:
        return self._memo("roles", lambda: find_roles(self.skeleton, overrides=self.role_overrides, strict=False))

    @property
    def chains(self) -> dict[str, np.ndarray]:
        return self._memo("chains", lambda: kinematic_chains(self.skeleton, self.roles))

    @property
    def joint_weights(self) -> np.ndarray:
        return self._memo("weights", lambda: joint_weights(self.skeleton, self.weights, self.roles))

    def _fk(self, c: int):
        return self._memo(("fk", c), lambda: forward_kinematics(self.clips[c]))

    def contacts(self, c: int) -> np.ndarray:
        """``(frames, 2)`` stance of left/right foot of clip ``c`` (see :mod:`evalkit.synth.gait`)."""
        from evalkit.synth.gait import foot_contacts

        roles = self.roles if self.role_overrides else None
        return self._memo(("contacts", c), lambda: foot_contacts(self.clips[c], roles))[0]

    @property
    def contact_source(self) -> str:
        from evalkit.synth.gait import foot_contacts

        roles = self.roles if self.role_overrides else None
        return self._memo(("contacts", 0), lambda: foot_contacts(self.clips[0], roles))[1]

    def rigid_bones(self) -> np.ndarray:
        """``(joints,)`` bool: the joint's local translation (its bone) is constant in every clip.

        Joints with moving position channels (a trajectory carried below the root) are not
        bones and are excluded from bone-length checks.
        """

        def compute():
            rigid = np.ones(self.skeleton.n_joints, dtype=bool)
            for c in self.clips:
                rigid &= np.ptp(c.translations, axis=0).max(axis=1) < 1e-9
            rigid[0] = False
            return rigid

        return self._memo("rigid", compute)

    def max_joint_speed(self, c: int) -> np.ndarray:
        """``(joints,)`` fastest speed of each joint in clip ``c``, m/s."""

        def compute():
            pos = self._fk(c)[0]
            return (np.linalg.norm(np.diff(pos, axis=0), axis=-1) * self.fps).max(axis=0)

        return self._memo(("vmax", c), compute)

    # -- point clouds ----------------------------------------------------------------------
    def lower_joints(self) -> np.ndarray:
        return np.sort(np.concatenate([self.chains[c] for c in LOWER_CHAINS]))

    def _cloud(self, c: int, key: str) -> tuple[np.ndarray, np.ndarray, bool]:
        """``(positions (F, n, 3), weights (n,), align)`` of a distance key for clip ``c``
        (kept: every planned hop reads the lower body's for its alignment)."""
        return self._memo(("cloud", c, key), lambda: self._make_cloud(c, key))

    def _make_cloud(self, c: int, key: str) -> tuple[np.ndarray, np.ndarray, bool]:
        pos, rot = self._fk(c)
        w = self.joint_weights
        if key == "full":
            return pos, w, True
        if key == "lower":
            j = self.lower_joints()
            return pos[:, j], w[j], True
        if key == "lower_track":
            # the legs relative to the root's ground track, frame by frame: poses compared
            # whatever speed the body travels at (one rotation about the vertical still aligns
            # the window); see BPMGConfig.lower_distance
            j = self.lower_joints()
            root = pos[:, self.roles.get("hips", int(j.min()))]
            rel = pos[:, j].copy()
            rel[..., 0] -= root[:, None, 0]
            rel[..., 2] -= root[:, None, 2]
            return rel, w[j], True
        if key in LOCAL_CHAINS:
            j = self.chains[key]
            att = int(self.skeleton.parents[j.min()])  # chains are subtrees: min index is the top
            rel = pos[:, j] - pos[:, att][:, None]
            local = np.einsum("fki,fnk->fni", rot[:, att], rel)  # R^T (p - p_att)
            wj = w[j]
            if not np.any(wj > 0):
                wj = np.ones(len(j))
            return local, wj, False
        raise InputError(f"unknown distance key {key!r}")

    def weight_total(self, key: str) -> float:
        """Total point weight ``W`` of a distance key's window (joint weights x window frames)."""
        return self._memo(("W", key), lambda: float(self._cloud(0, key)[1].sum() * self.window))

    def _key_distances(self, key: str) -> dict[tuple[int, int], np.ndarray]:
        """RMS distance matrices of one key for every ordered pair, stored as float32.

        float32 keeps 7 significant digits (well under a micrometre at these distances) at half
        the memory: the matrices of every pair grow with the square of the frames of the set
        (41 Bandai Namco clips, 13,313 frames at 60 fps: 0.7 GB per key in float32).
        """

        def compute():
            n = len(self.clips)
            clouds = [self._cloud(c, key) for c in range(n)]
            w = clouds[0][1]
            return {(a, b): point_cloud_distance(clouds[a][0], clouds[b][0], w, self.window,
                                                 align=clouds[a][2]).astype(np.float32)
                    for a in range(n) for b in range(n)}

        return self._memo(("kd", key), compute)

    def ssd(self, key: str) -> tuple[dict[tuple[int, int], np.ndarray], float]:
        """Weighted sum-of-squares matrices for every ordered clip pair, and the weight total.

        Returns:
            ``({(a, b): (windows_a, windows_b) array}, W)``; RMS distance is ``sqrt(SSD / W)``.
            Computed from the cached distances on each call (not kept).
        """
        total = self.weight_total(key)
        return {p: d.astype(np.float64) ** 2 * total for p, d in self._key_distances(key).items()}, total

    def distances(self, key: str, norm: str = "rms") -> Mapping[tuple[int, int], np.ndarray]:
        """Distance matrices (metres) of a key for every ordered clip pair.

        Args:
            key: ``"full"``, ``"lower"``, ``"lower_track"`` (the legs relative to the root's
                ground position on each frame) or an upper chain name.
            norm: ``"rms"`` — root-mean-square point distance, ``sqrt(SSD / W)`` (independent
                of how many joints are compared); ``"kovar"`` — the square root of Kovar's
                weighted *sum* of squared distances, ``sqrt(SSD)``, which grows with the number
                of joints compared (a body part is then always "closer" than the whole body).
        """
        return self.combined_distances((key,), norm)

    def combined_distances(self, keys: tuple[str, ...], norm: str = "rms") -> Mapping[tuple[int, int], np.ndarray]:
        """Distances of the union of several keys' point clouds (their SSDs add up).

        One RMS key is the cached mapping itself; other combinations are computed pair by pair
        when read (:class:`CombinedDistances`), so that memory holds one matrix set per key.
        """
        check_norm(norm)
        keys = tuple(keys)
        if len(keys) == 1 and norm == "rms":
            return self._key_distances(keys[0])
        return CombinedDistances(tuple(self._key_distances(k) for k in keys),
                                 tuple(self.weight_total(k) for k in keys), norm)

    def part_keys(self, part: BodyPart) -> tuple[str, ...]:
        """Distance keys of a body part: ``("lower",)`` or its upper chains."""
        if part.is_lower:
            return ("lower",)
        return tuple(c for c in part.chains if c in LOCAL_CHAINS)

    def part_distances(self, part: BodyPart, norm: str = "rms") -> dict[tuple[int, int], np.ndarray]:
        """Distance matrices of a body part (lower body: ``"lower"``; others: their chains)."""
        return self.combined_distances(self.part_keys(part), norm)

    def part_weight(self, part: BodyPart) -> float:
        """Total point weight of a part's cloud (for combining part costs)."""
        return sum(self.weight_total(k) for k in self.part_keys(part))

    def alignment(self, key: str, a: int, i: int, b: int, j: int) -> tuple[float, float, float]:
        """Kovar alignment ``(theta, tx, tz)`` of clip ``b``'s window at ``j`` onto ``a``'s at ``i``."""
        from evalkit.motion.planar import align_2d

        pa, w, _ = self._cloud(a, key)
        pb, _, _ = self._cloud(b, key)
        k = self.window
        sel = w > 0
        p = pa[i:i + k][:, sel].reshape(-1, 3)
        q = pb[j:j + k][:, sel].reshape(-1, 3)
        return align_2d(p, q, np.tile(w[sel], k))


class CombinedDistances(Mapping):
    """``{(a, b): matrix}`` of several keys' point clouds taken together, computed on access:
    ``sqrt(sum W_k d_k^2 / sum W_k)`` (RMS) or ``sqrt(sum W_k d_k^2)`` (Kovar's sum)."""

    def __init__(self, parts: tuple[Mapping, ...], totals: tuple[float, ...], norm: str) -> None:
        self._parts, self._totals, self._norm = parts, totals, norm

    def __getitem__(self, pair: tuple[int, int]) -> np.ndarray:
        acc = sum(t * np.square(m[pair], dtype=np.float32) for m, t in zip(self._parts, self._totals))
        if self._norm == "rms":
            acc /= sum(self._totals)
        return np.sqrt(acc).astype(np.float32)

    def __iter__(self):
        return iter(self._parts[0])

    def __len__(self) -> int:
        return len(self._parts[0])


NORMS = ("rms", "kovar")


def check_norm(norm: str) -> None:
    if norm not in NORMS:
        raise InputError(f"unknown distance normalisation {norm!r}; use one of {', '.join(NORMS)}")


def combine_costs(costs: np.ndarray, weights: np.ndarray, norm: str) -> float:
    """Whole-body-equivalent distance of parts with distances ``costs`` and point weights
    ``weights``: ``sqrt(sum W d^2 / sum W)`` for ``"rms"``, ``sqrt(sum d^2)`` for ``"kovar"``."""
    c = np.asarray(costs, dtype=float)
    w = np.asarray(weights, dtype=float)
    if norm == "rms":
        return float(np.sqrt(np.sum(w * c * c) / w.sum()))
    return float(np.sqrt(np.sum(c * c)))
