"""Clips of a chosen length from real capture, natural and corrupted (for the evaluation by length).

Gesture studies score clips of about a minute; the natural capture here is mostly shorter than
30 s. To ask how the discriminator behaves at 5, 20 and 60 s, every natural clip is brought to
each length from its own frames:

* a clip at least as long as asked: its middle ``length_s`` seconds, untouched (an **excerpt**);
* a shorter clip: **looped** -- played from a loop point ``i`` to a loop point ``j`` where pose
  and speed repeat (:func:`loop_points`), copy after copy, each copy turned and moved so that
  the root continues where the previous copy left it, the small pose mismatch between frames
  ``i`` and ``j`` spread linearly over the loop (:func:`repeat_loop`); then cut to the length.
  A loop point is a *seam*; :func:`seam_ratio` measures how visible the seams are without any
  model (the largest joint acceleration at a seam against the clip's own 99th percentile), so
  an evaluation can keep only loops whose construction is seamless (:data:`SEAMLESS`) and report
  how the model reads the seams.

Unnatural clips of a length (:func:`corrupt_at_length`) are the natural clip of that length cut
into pieces of ``piece_s`` seconds, each corrupted with the same type and severity (its own
seed), and joined again so that the root continues across every join (:func:`join_continuous`).
The corrupted share of time is thus the same at every length, which is what makes a ROC AUC at
5 s and one at 60 s comparable; a single short glitch in a long clip is a different question,
answered by the worst stretch (docs/discriminator.md, "Long clips").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.features.body import body_of, yaw_of_lateral
from evalkit.models.corruptions import corrupt
from evalkit.models.examples import Example, seed_for as _seed_for
from evalkit.motion import Motion, quat
from evalkit.motion.model import concatenate
from evalkit.motion.roles import find_roles


#: Largest :func:`seam_ratio` of a loop counted as seamless: no seam accelerates the body more
#: than the clip itself does in 99 % of its frames.
SEAMLESS = 1.0


#: Largest closing correction of a loop counted as seamless, degrees per joint: less than a
#: walking thigh turns in 0.1 s, so spread over a loop of seconds it does not change the movement.
MAX_CORRECTION_DEG = 15.0


@dataclass(frozen=True, eq=False)
class LengthClip:
    """A natural clip brought to a length.

    Attributes:
        motion: the clip, ``length_s`` seconds (to the frame).
        construction: ``"excerpt"`` (real frames, untouched) or ``"loop"``.
        seams_s: times of the loop seams, seconds from the clip's start (empty for an excerpt).
        seam_ratio: the largest joint acceleration at a seam over the 99th percentile of the
            unedited clip's (0 for an excerpt; at most 1: seamless; :func:`seam_ratio`).
        loop_s: length of the looped stretch, seconds (NaN for an excerpt).
        correction_deg: the largest rotation of a role joint that the loop spreads over each
            copy to close it (:func:`loop_correction`; 0 for an excerpt).
    """

    motion: Motion
    construction: str
    seams_s: tuple[float, ...] = ()
    seam_ratio: float = 0.0
    loop_s: float = float("nan")
    correction_deg: float = 0.0

    @property
    def seamless(self) -> bool:
        """An excerpt, or a loop whose seams are no rougher than the clip (:data:`SEAMLESS`)
        and whose closing correction turns no joint more than :data:`MAX_CORRECTION_DEG`."""
        return self.seam_ratio <= SEAMLESS and self.correction_deg <= MAX_CORRECTION_DEG


def loop_points(motion: Motion, min_s: float) -> tuple[int, int]:
    """Frames ``i < j`` at least ``min_s`` seconds apart where the clip repeats best.

    The cost compares joint rotations (over frames ``i-2, i, i+2`` against ``j-2, j, j+2``, as
    ``1 - |<q_i, q_j>|`` per joint), root height (metres, weight 0.5) and root speed (horizontal
    and vertical, m/s, weight 0.05). Raises :class:`InputError` for a clip too short for a loop.
    """
    rot = motion.rotations[:, 1:]
    root = motion.translations[:, 0]
    vel = np.gradient(root, axis=0) * motion.fps
    hs = np.linalg.norm(vel[:, [0, 2]], axis=1)
    n, gap = motion.n_frames, int(round(min_s * motion.fps))
    if n - gap - 2 <= 2:
        raise InputError(f"{motion.name or 'clip'}: {motion.duration:.2f} s is too short for a loop of {min_s:g} s")
    best = (np.inf, 0, n - 1)
    for i in range(2, n - gap - 2):
        j = np.arange(i + gap, n - 2)
        d = sum(1 - np.abs(np.einsum("jk,njk->nj", rot[i + o], rot[j + o])) for o in (-2, 0, 2)) / 3
        cost = d.mean(1) + 0.5 * np.abs(root[j, 1] - root[i, 1]) + 0.05 * np.abs(hs[j] - hs[i]) \
            + 0.05 * np.abs(vel[j, 1] - vel[i, 1])
        k = int(np.argmin(cost))
        if cost[k] < best[0]:
            best = (float(cost[k]), i, int(j[k]))
    return best[1], best[2]


def loop_correction(motion: Motion, i: int, j: int) -> float:
    """Degrees: the largest rotation, over the role joints below the root, between frame
    ``j``'s and frame ``i``'s local rotation -- what :func:`repeat_loop` spreads over each copy."""
    roles = find_roles(motion.skeleton)
    joints = sorted({int(v) for v in roles.values()} - {0})
    d = np.abs(np.sum(motion.rotations[i, joints] * motion.rotations[j, joints], axis=-1))
    return float(np.degrees(2 * np.arccos(np.clip(d, 0.0, 1.0))).max())


def _hips(motion: Motion) -> int:
    return find_roles(motion.skeleton)["hips"]


def _place(motion: Motion, theta: float, shift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotations and translations of ``motion`` turned by ``theta`` (radians) about +Y through
    the world origin and moved by ``shift`` (metres): a rigid move of the whole body."""
    q = quat.about_y(theta)
    rot, tr = motion.rotations.copy(), motion.translations.copy()
    rot[:, 0] = quat.multiply(np.broadcast_to(q, rot[:, 0].shape), rot[:, 0])
    tr[:, 0] = quat.rotate(q, tr[:, 0]) + shift
    return rot, tr


def repeat_loop(motion: Motion, i: int, j: int, copies: int) -> Motion:
    """Frames ``i .. j-1`` played ``copies`` times with a continuous root.

    Each copy is turned about +Y and moved so that its first frame stands where frame ``j``
    stood after the previous copy (the body's place: the hips' world position, as joint 0 may
    be a fixed root above them); the rotation and height mismatch between frames ``j`` and
    ``i`` is spread linearly over the loop (a few degrees for a walk).
    """
    r = quat.multiply(motion.rotations[j, 0], quat.inverse(motion.rotations[i, 0]))
    delta = 2 * np.arctan2(r[1], r[3])  # the turn from frame i to frame j (twist about +Y)
    target = motion.rotations[i].copy()
    target[0] = quat.multiply(quat.about_y(delta), target[0])
    err = quat.multiply(target, quat.inverse(motion.rotations[j]))
    n = j - i
    frac = np.arange(n) / n
    ident = np.zeros_like(err)
    ident[:, 3] = 1.0
    corr = quat.slerp(np.broadcast_to(ident, (n,) + err.shape), np.broadcast_to(err, (n,) + err.shape), frac[:, None])
    rot0 = quat.multiply(corr, motion.rotations[i:j])
    tr0 = motion.translations[i:j].copy()
    hips = _hips(motion)
    pi, pj = motion.positions[i, hips], motion.positions[j, hips]
    tr0[:, 0, 1] += frac * (pi[1] - pj[1])
    base = motion.with_(rotations=rot0, translations=tr0)
    rots, trs, theta, shift = [], [], 0.0, np.zeros(3)
    for _ in range(copies):
        rc, tc = _place(base, theta, shift)
        rots.append(rc)
        trs.append(tc)
        end = quat.rotate(quat.about_y(theta), pj) + shift  # where frame j would stand
        theta += delta
        shift = end - quat.rotate(quat.about_y(theta), pi)
        shift[1] = 0.0
    return motion.with_(rotations=np.concatenate(rots), translations=np.concatenate(trs),
                        name=f"{motion.name}x{copies}")


def _acceleration(motion: Motion) -> np.ndarray:
    """``(frames,)`` largest acceleration of the body's role joints per frame (m/s^2; second
    differences, 0 at the ends). Role joints only: a rig's fixed ground node (Bandai Namco's
    joint 0) is moved with the body by a loop, which is no motion of the body."""

    p = body_of(motion).positions
    a = np.zeros(motion.n_frames)
    if motion.n_frames >= 3:
        a[1:-1] = np.linalg.norm(p[2:] - 2 * p[1:-1] + p[:-2], axis=2).max(axis=1) * motion.fps ** 2
    return a


def seam_ratio(motion: Motion, seam_frames, reference: Motion | None = None) -> float:
    """How visible the seams of a constructed clip are, without any model.

    At a seam at frame ``s`` (frame ``s - 1`` of one part followed by frame ``s`` of the next)
    the largest joint acceleration of frames ``s - 1`` and ``s`` (second differences, m/s^2:
    a jump in position or speed shows here) over the 99th percentile of the same quantity in
    ``reference`` (the unedited clip; default ``motion`` itself). At most 1: every seam is as
    smooth as 99 % of the clip's own frames. 0 with no seams.
    """
    seam_frames = [int(s) for s in seam_frames if 1 < int(s) < motion.n_frames - 1]
    if not seam_frames:
        return 0.0
    acc = _acceleration(motion)
    ref = _acceleration(reference if reference is not None else motion)[1:-1]
    at = np.concatenate([acc[[s - 1, s]] for s in seam_frames])
    return float(at.max() / max(float(np.quantile(ref, 0.99)), 1e-9))


def natural_at_length(motion: Motion, length_s: float, min_loop_s: float = 3.0) -> LengthClip:
    """``motion`` brought to ``length_s`` seconds: its middle excerpt, or looped (module docstring).

    Args:
        motion: a natural clip (any frame rate).
        length_s: the length wanted, seconds.
        min_loop_s: the shortest loop, seconds (a clip shorter than ``min_loop_s / 0.6`` loops
            over 60 % of its length).

    Raises :class:`InputError` for a clip too short to loop.
    """
    n = int(round(length_s * motion.fps))
    if n < 2:
        raise InputError(f"length {length_s:g} s is too short")
    if motion.n_frames >= n:
        a = (motion.n_frames - n) // 2
        return LengthClip(motion[a:a + n].with_(name=f"{motion.name}@{length_s:g}s"), "excerpt")
    i, j = loop_points(motion, min(min_loop_s, 0.6 * motion.duration))
    copies = int(np.ceil(n / (j - i)))
    long = repeat_loop(motion, i, j, copies)[:n].with_(name=f"{motion.name}@{length_s:g}s")
    seams = list(range(j - i, n, j - i))
    return LengthClip(long, "loop", tuple(s / motion.fps for s in seams), seam_ratio(long, seams, motion),
                      (j - i) / motion.fps, loop_correction(motion, i, j))


def _yaw(positions: np.ndarray, left: int, right: int) -> float:
    """Yaw (radians about +Y) of the horizontal left-to-right hip direction of one frame."""
    return float(yaw_of_lateral(positions[right] - positions[left]))


def join_continuous(originals: list[Motion], pieces: list[Motion]) -> Motion:
    """Join edited ``pieces`` of a clip so that the body continues across every join.

    ``originals[k]`` is the unedited piece ``k`` (consecutive pieces of one clip) and
    ``pieces[k]`` its edited version (same frames count). Piece ``k`` is moved rigidly (turned
    about +Y, shifted horizontally) by the move that takes the *unedited* last frame of piece
    ``k-1`` to where the *edited* one ended up (hips position, hip-line heading), so an edit
    that displaced the root (a transition, foot sliding) does not leave a jump at the join,
    and unedited pieces join exactly as they were.
    """
    if len(originals) != len(pieces) or not pieces:
        raise InputError("join_continuous needs as many pieces as originals (and at least one)")
    roles = find_roles(pieces[0].skeleton)
    hips, left, right = roles["hips"], roles["left_hip"], roles["right_hip"]
    out = [pieces[0]]
    for k in range(1, len(pieces)):
        prev_orig = originals[k - 1].positions[-1]
        prev_out = out[-1].positions[-1]
        theta = _yaw(prev_out, left, right) - _yaw(prev_orig, left, right)
        shift = prev_out[hips] - quat.rotate(quat.about_y(theta), prev_orig[hips])
        shift[1] = 0.0
        rot, tr = _place(pieces[k], theta, shift)
        out.append(pieces[k].with_(rotations=rot, translations=tr))
    return concatenate(out).with_(name=pieces[0].name)


def corrupt_at_length(motion: Motion, kind: str, severity: float, seed: int, piece_s: float = 5.0,
                      **options) -> tuple[Motion, tuple[tuple[float, float], ...]]:
    """``motion`` with every ``piece_s``-second piece corrupted by ``kind`` (module docstring).

    Pieces are cut evenly (``round(duration / piece_s)`` of them, at least one); piece ``k``
    gets seed ``seed + k``. A piece the corruption cannot apply to stays natural. Returns the
    joined clip (:func:`join_continuous`) and the corrupted time intervals (seconds).
    """
    k = max(1, int(round(motion.duration / piece_s)))
    bounds = np.linspace(0, motion.n_frames, k + 1).round().astype(int)
    originals, pieces, intervals = [], [], []
    from evalkit.errors import EvalkitError, RolesNotFoundError

    for p in range(k):
        seg = motion[int(bounds[p]):int(bounds[p + 1])]
        originals.append(seg)
        try:
            c = corrupt(seg, kind, severity, seed=seed + p, **options)
        except RolesNotFoundError:
            raise
        except EvalkitError:
            pieces.append(seg)
            continue
        pieces.append(c.motion)
        t0 = bounds[p] / motion.fps
        intervals += [(t0 + a, t0 + b) for a, b in c.provenance.intervals]
    return join_continuous(originals, pieces), tuple(intervals)


def length_examples(clips, lengths=(5.0, 20.0, 60.0), types: tuple[str, ...] | None = None,
                    severity: float = 0.5, seed: int = 0, piece_s: float = 5.0, progress: bool = False):
    """Natural and corrupted examples of every clip at every length, for the evaluation by length.

    A clip is used only if it is seamless at every length (:attr:`LengthClip.seamless`), so the
    same clips are compared at each length. Each clip at each length gives its natural version
    and one corrupted version per type (:func:`corrupt_at_length`, severity ``severity``,
    seeded by clip, length and type; a limb transplant takes its limb from another time of the
    same clip). Segment names are ``<clip>@<length>s``.

    Args:
        clips: :class:`~evalkit.models.dataset.NaturalClip` objects (trimmed, at the working fps).
        lengths: clip lengths, seconds.
        types: corruption types (default: all).

    Returns:
        ``(examples, info)``: a list of ``(length_s, Example)`` and a DataFrame, one row per
        clip and length, with ``clip``, ``group``, ``rig``, ``length_s``, ``duration_s`` (of
        the capture), ``construction``, ``seam_ratio``, ``correction_deg``, ``loop_s``,
        ``seamless`` and ``used``.
    """
    from evalkit.models.corruptions import CORRUPTION_TYPES, Provenance

    types = CORRUPTION_TYPES if types is None else tuple(types)
    info, examples = [], []
    it = clips
    if progress:
        from tqdm import tqdm

        it = tqdm(clips, desc="clips by length", unit="clip")
    for c in it:
        made = {}
        for L in lengths:
            try:
                made[L] = natural_at_length(c.motion, L)
            except InputError:
                made[L] = None
        used = all(lc is not None and lc.seamless for lc in made.values())
        for L, lc in made.items():
            info.append({"clip": c.motion.name, "group": c.group, "rig": c.rig, "length_s": L,
                         "duration_s": round(c.motion.duration, 3),
                         "construction": None if lc is None else lc.construction,
                         "seam_ratio": np.nan if lc is None else lc.seam_ratio,
                         "correction_deg": np.nan if lc is None else lc.correction_deg,
                         "loop_s": np.nan if lc is None else lc.loop_s,
                         "seamless": bool(lc is not None and lc.seamless), "used": used})
            if not used:
                continue
            name = lc.motion.name
            examples.append((L, Example(lc.motion, Provenance(source=name), c.group, name, c.rig)))
            for kind in types:
                s = _seed_for(seed, "length", name, kind)
                try:
                    m, intervals = corrupt_at_length(lc.motion, kind, severity, s, piece_s)
                except InputError:
                    continue
                if not intervals:
                    continue
                prov = Provenance(source=name, corruption=kind, severity=severity, seed=s, intervals=intervals)
                examples.append((L, Example(m, prov, c.group, name, c.rig)))
    return examples, pd.DataFrame(info)
