"""Training and evaluation data for the discriminator: natural clips, segments, examples.

Natural examples are segments of real capture; unnatural ones are the same segments after a
corruption (:mod:`evalkit.models.corruptions`). Every example keeps its provenance and its
*group*, the unit that cross-validation keeps on one side of a split: the capture subject when
the file name says it (CMU ``SS_TT`` names, including retargets such as ``007_05``), the folder
for collections whose performer per file is unknown (e.g. Bandai Namco: three actors, not
identified per file), otherwise the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from evalkit.errors import EvalkitError, InputError, RolesNotFoundError
from evalkit.models.corruptions import CORRUPTION_TYPES, Provenance, corrupt
from evalkit.models.examples import Example, rig_signature, seed_for as _seed_for
from evalkit.models.window_features import WindowConfig, window_features, window_labels
from evalkit.motion import LoadOptions, Motion, mirror, resample
from evalkit.motion.formats import iter_motion_files
from evalkit.runner import run_clips

_CMU = re.compile(r"^0*(\d+)_(\d+)")


@dataclass(frozen=True, eq=False)
class NaturalClip:
    """A natural source clip, trimmed and resampled.

    Attributes:
        motion: the clip at the working frame rate.
        path: the file it was read from.
        group: cross-validation group (subject, folder or file; see module docstring).
        take: a take identifier (the same take in two formats shares it).
        sha256: hash of the file's bytes.
        rig: a short signature of the skeleton (joint count and root name).
        decimated: the clip brought to the working rate without a low-pass (every k-th frame
            of a take whose rate k times the working rate, as datasets such as HumanML3D make
            theirs), ``None`` when the file is at the working rate already. Its mirror image is
            the mirrored training copy, so that natural capture decimated without a filter is
            learnt as natural as the band-limited clip.
    """

    motion: Motion
    path: str
    group: str
    take: str
    sha256: str
    rig: str
    decimated: Motion | None = None


def file_sha256(path: str | Path) -> str:
    """SHA-256 hex digest of a file's bytes (of one clip of a multi-clip file: its bytes and index;
    :func:`evalkit.motion.formats.file_digest`)."""
    from evalkit.motion.formats import file_digest

    return file_digest(path)


def group_of(path: str | Path, by: str = "subject") -> tuple[str, str]:
    """``(group, take)`` of a motion file.

    ``by="subject"``: CMU-style names ``SS_TT...`` give ``cmu:SS`` (take ``cmu:SS_TT``);
    other files are grouped by their folder. ``by="file"``: every file is its own group.
    ``by="folder"``: every folder is a group.
    """
    p = Path(path)
    m = _CMU.match(p.stem)
    take = f"cmu:{int(m.group(1))}_{int(m.group(2))}" if m else f"{p.parent.name}/{p.stem}"
    if by == "file":
        return str(p), take
    if by == "folder":
        return p.parent.name, take
    if by != "subject":
        raise InputError(f"group_by must be 'subject', 'file' or 'folder', got {by!r}")
    if m:
        return f"cmu:{int(m.group(1))}", take
    return p.parent.name, take


def trim_glitches(motion: Motion, max_s: float = 0.25, ratio: float = 6.0) -> Motion:
    """Drop leading frames that jump to the rest of the clip (an added T-pose or bind pose).

    Several real files start with such frames (cgspeed BVH conversions: a T-pose at frame 0;
    Reallusion retargets: a bind pose; one CMU AMC: two offset frames). A jump in the first
    ``max_s`` seconds whose mean joint displacement exceeds ``ratio`` times the clip's median
    frame-to-frame displacement is cut along with everything before it.
    """
    from evalkit.features.body import body_of

    n = motion.n_frames
    if n < 4:
        return motion
    p = body_of(motion).positions
    d = np.linalg.norm(np.diff(p, axis=0), axis=2).mean(1)
    med = float(np.median(d)) or 1e-9
    head = d[: max(1, int(round(max_s * motion.fps)))]
    jumps = np.flatnonzero(head > ratio * med)
    if len(jumps) == 0:
        return motion
    cut = int(jumps[-1]) + 1
    meta = dict(motion.meta)
    meta["trimmed_leading_frames"] = cut
    return replace(motion.slice(cut), meta=meta)


def load_natural(paths: Iterable[str | Path], fps: float = 30.0, group_by: str = "subject",
                 load: LoadOptions | None = None, dedupe_takes: bool = True,
                 progress: bool = False, jobs: int = 1, scheduler: Any = None) -> list[NaturalClip]:
    """Read natural clips from files/folders (with ``load``), trim start glitches, resample to ``fps``.

    Identical files (same bytes) are read once; with ``dedupe_takes`` the same CMU take in a
    second format (``01_01.amc`` next to ``01_01.bvh``) is skipped too, but not a retarget of
    it to another rig in another folder. Each file is read once, by :func:`evalkit.runner.run_clips`
    (its hash taken from that read, :attr:`LoadOptions.digest`); which files count is then decided
    from the hash and the rig family (for BVH, its joint count). A file that cannot be read raises
    its error. ``jobs``, ``scheduler``: read in local processes or on a Dask cluster
    (:func:`~evalkit.runner.run_clips`), same clips in the same order.
    """
    files = list(iter_motion_files(paths))
    if not files:
        raise InputError(f"no motion files (.bvh, .amc) found in {', '.join(map(str, paths))}")
    runs = run_clips(files, (_NaturalMotion(fps),), replace(load or LoadOptions(), digest=True), progress=progress,
                     desc="reading clips", record_warnings=False, errors="raise", jobs=jobs, scheduler=scheduler)
    seen_hash: set[str] = set()
    seen_take: set[tuple[str, str]] = set()
    out: list[NaturalClip] = []
    for f, run in zip(files, runs):
        m, plain, digest, family = run.results["natural"]
        group, take = group_of(f, group_by)
        if digest in seen_hash or (dedupe_takes and (take, family) in seen_take):
            continue
        seen_hash.add(digest)
        seen_take.add((take, family))
        out.append(NaturalClip(motion=m, path=str(f), group=group, take=take, sha256=digest, rig=rig_signature(m),
                               decimated=plain))
    return out


@dataclass(frozen=True)
class _NaturalMotion:
    """Runner analysis: a natural clip trimmed of start glitches, at ``fps``, named after its file,
    the same clip decimated without a filter (:attr:`NaturalClip.decimated`; ``None`` at the
    working rate already), the file's SHA-256 and its rig family (:func:`_family`)."""

    fps: float
    name: str = "natural"

    def __call__(self, motion: Motion, clip) -> tuple[Motion, Motion | None, str, str]:
        digest, family = motion.meta["sha256"], _family(clip.path, motion)
        try:
            m = trim_glitches(motion)
        except RolesNotFoundError as exc:  # say which file needs the role map
            raise RolesNotFoundError(f"{clip.path}: {exc}") from None
        plain = None
        if abs(m.fps - self.fps) > 1e-6:
            plain = replace(resample(m, self.fps), name=clip.path.stem)
            m = resample(m, self.fps, band_limited=True)
            if plain.n_frames != m.n_frames:
                plain = None
        return replace(m, name=clip.path.stem), plain, digest, family


def _family(path: Path, motion: Motion) -> str:
    """The rig family of a file: files of one capture in different formats (a CMU AMC and its
    31-joint cgspeed BVH) share one; retargets to another rig (another joint count) do not."""
    ext = path.suffix.lower()
    if ext == ".bvh":
        return "cmu31" if motion.n_joints == 31 else f"bvh{motion.n_joints}"
    return "cmu31" if ext == ".amc" else "array" + ext


def segments(clip: NaturalClip, length_s: float = 4.0, min_s: float = 1.0) -> list[Motion]:
    """Cut a clip into about ``length_s``-second pieces of equal length (no overlap).

    A clip shorter than ``1.5 * length_s`` stays whole; clips shorter than ``min_s`` give none.
    """
    m = clip.motion
    if m.duration < min_s:
        return []
    k = max(1, int(round(m.duration / length_s)))
    bounds = np.linspace(0, m.n_frames, k + 1).round().astype(int)
    out = []
    for i in range(k):
        seg = m.slice(int(bounds[i]), int(bounds[i + 1]))
        out.append(replace(seg, name=f"{m.name}#{i}"))
    return out


#: The length schedule of the long training examples, seconds; 0 = the whole clip.
#: Each natural clip gives, beside its segments, one long example (two with mirroring: the clip
#: and its mirror image) at lengths taken in turn from this schedule (:func:`long_examples`).
LONG_LENGTHS: tuple[float, ...] = (0.0, 8.0, 15.0, 30.0, 60.0)


@dataclass(frozen=True)
class ExampleSpec:
    """Which examples to make from each natural segment.

    Attributes:
        types: corruption types to apply.
        per_type: corrupted versions per type and segment.
        severity: a fixed severity, or ``None`` to draw each from ``severity_range``.
        severity_range: ``(low, high)`` of the uniform severity draw.
        mirror: add the left/right mirror image of every natural segment (and corrupt it too).
        augment: vary the mirrored copies like real capture varies (:func:`augment_natural`:
            limb lengths by up to +-3 %, and half of them low-passed at 5-10 Hz as capture
            pipelines smooth differently); only with ``mirror``.
        seed: base seed; each example's seed is derived from it, the segment and the type.
        transplant_donor: where ``transplant`` takes the limb's motion from: ``"other_clip"``
            (another clip of the same group on the same skeleton, drawn with the example's
            seed -- limb transplants *between* clips, what body-part synthesis does; a clip with
            no such partner falls back to its own other times) or ``"same_clip"`` (another time
            of the same clip: the subtler variant, reported separately in
            docs/discriminator.md).
        long_lengths: the length schedule of the *long examples* (:func:`long_examples`),
            seconds, ``0`` meaning the whole clip; empty (the default): segments only.
            :data:`LONG_LENGTHS` is what ``evalkit train`` uses.
        long_piece_s: a corrupted long example has every piece of this many seconds corrupted
            (:func:`~evalkit.models.lengths.corrupt_at_length`).
    """

    types: tuple[str, ...] = CORRUPTION_TYPES
    per_type: int = 1
    severity: float | None = None
    severity_range: tuple[float, float] = (0.3, 1.0)
    mirror: bool = False
    augment: bool = False
    seed: int = 0
    tag: str = field(default="train")
    transplant_donor: str = "other_clip"
    long_lengths: tuple[float, ...] = ()
    long_piece_s: float = 5.0


def iter_examples(clips: Sequence[NaturalClip], spec: ExampleSpec = ExampleSpec(),
                  segment_s: float = 4.0, progress: bool = False, subset: range | None = None):
    """Natural segments and their corrupted versions, one :class:`Example` at a time (see
    :func:`make_examples`); lets callers process large sets without holding every clip.
    ``subset``: the examples of ``clips[subset]`` only (donors and the long examples' lengths
    still drawn over all ``clips``), in the same order as in the full sequence."""
    for t in spec.types:
        if t not in CORRUPTION_TYPES:
            raise InputError(f"unknown corruption {t!r}; expected one of {', '.join(CORRUPTION_TYPES)}")
    if spec.transplant_donor not in ("other_clip", "same_clip"):
        raise InputError(f"transplant_donor must be 'other_clip' or 'same_clip', got {spec.transplant_donor!r}")
    partners = donor_partners(clips) if spec.transplant_donor == "other_clip" else {}
    lengths = long_lengths_of(len(clips), spec.long_lengths, spec.seed) if spec.long_lengths else None
    order = range(len(clips)) if subset is None else subset
    if progress:
        from tqdm import tqdm

        order = tqdm(order, desc=f"making {spec.tag} examples", unit="clip")
    for i in order:
        clip = clips[i]
        yield from clip_examples(clip, spec, segment_s, partners.get(id(clip), []),
                                 lengths[i] if lengths is not None else None)


def clip_examples(clip: NaturalClip, spec: ExampleSpec, segment_s: float, donors: Sequence[NaturalClip],
                  long_length: tuple[float, float] | None):
    """One natural clip's examples in :func:`iter_examples`' order: its segments (and their
    mirror images), each followed by its corrupted versions, then its long examples.

    Everything a clip's examples need from the other clips is given: ``donors`` (the other takes
    of its group and rig that limb transplants draw from, :func:`donor_partners`) and
    ``long_length`` (its entry of :func:`long_lengths_of` over all clips, ``None`` without long
    examples). So the clips of a large set can be turned into examples apart, in any process
    (``evalkit train --jobs/--scheduler``), with the same examples as in one pass."""
    segs = segments(clip, segment_s)
    if spec.mirror:  # the mirror image of the clip as datasets decimate it, where it was resampled
        source = segs if clip.decimated is None else segments(replace(clip, motion=clip.decimated), segment_s)
        mirrored = [replace(mirror(s), name=s.name + "~mirror") for s in source]
        if spec.augment:
            mirrored = [augment_natural(s, np.random.default_rng(_seed_for(spec.seed, "augment", s.name)))
                        for s in mirrored]
        segs = segs + mirrored
    for seg in segs:
        yield Example(seg, Provenance(source=seg.name), clip.group, seg.name, clip.rig)
        yield from _corrupted(seg, clip, spec, donors)
    if spec.long_lengths and long_length is not None:  # right after its segments
        yield from _clip_long_examples(clip, spec, donors, long_length)


def _corrupted(seg: Motion, clip: NaturalClip, spec: ExampleSpec, donors: Sequence[NaturalClip]):
    """The corrupted versions of one segment (``spec.per_type`` per type)."""
    for kind in spec.types:
        for r in range(spec.per_type):
            seed = _seed_for(spec.seed, spec.tag, seg.name, kind, r)
            rng = np.random.default_rng(seed)
            sev = spec.severity if spec.severity is not None else float(rng.uniform(*spec.severity_range))
            donor = _donor(donors, seg.name, kind, rng)
            try:
                c = corrupt(seg, kind, sev, seed=seed, donor=donor)
            except RolesNotFoundError:
                raise  # a rig that needs --roles: not a segment to skip quietly
            except EvalkitError:
                continue  # not applicable to this segment (too short, nothing dissimilar)
            yield Example(c.motion, c.provenance, clip.group, seg.name, clip.rig)


def _donor(donors: Sequence[NaturalClip], name: str, kind: str, rng: np.random.Generator) -> Motion | None:
    """The donor clip of a limb transplant between clips (``None``: the clip's own other times)."""
    if kind != "transplant" or not donors:
        return None
    donor = donors[int(rng.integers(len(donors)))].motion
    return mirror(donor) if "~mirror" in name else donor  # a mirrored segment takes a mirrored limb


def long_lengths_of(n_clips: int, schedule: Sequence[float], seed: int = 0) -> list[tuple[float, float]]:
    """The lengths (seconds, 0 = whole clip) of clip ``i``'s long example and of its mirror
    image's: the schedule taken in turn, from an offset drawn from ``seed``, so that every
    length of the schedule is used as soon as there are as many clips (or half as many with
    mirroring) as lengths."""
    k = len(schedule)
    off = _seed_for(seed, "long-lengths") % k
    return [(float(schedule[(2 * i + off) % k]), float(schedule[(2 * i + off + 1) % k])) for i in range(n_clips)]


def _at_length(motion: Motion, length_s: float) -> tuple[Motion, str]:
    """``motion`` brought to ``length_s`` (:func:`~evalkit.models.lengths.natural_at_length`:
    its middle excerpt, or a seamless loop); the whole clip when ``length_s`` is 0 or the clip
    has no seamless loop. Returns the clip and how it was made (``excerpt``, ``loop``, ``whole``)."""
    from evalkit.models.lengths import natural_at_length

    if length_s <= 0 or abs(motion.duration - length_s) < 1.0 / motion.fps:
        return replace(motion, name=f"{motion.name}@whole"), "whole"
    try:
        lc = natural_at_length(motion, length_s)
    except EvalkitError:
        lc = None
    if lc is None or not lc.seamless:
        return replace(motion, name=f"{motion.name}@whole"), "whole"
    if lc.construction == "loop":  # windows after the first copy repeat it: context, not new examples
        return replace(lc.motion, meta={**lc.motion.meta, "distinct_s": float(lc.loop_s)}), "loop"
    return lc.motion, lc.construction


def long_examples(clips: Sequence[NaturalClip], spec: ExampleSpec, partners: dict | None = None,
                  only: NaturalClip | None = None):
    """The long training examples (training draws windows from clips of all lengths).

    Segments (:func:`segments`) are a few seconds long, but the features that summarise a clip
    (medians over its windows, the floor and stance height fitted over it) read differently in a
    minute of motion. So each natural clip also gives one natural example at a length from
    ``spec.long_lengths`` (:func:`long_lengths_of`: in turn over the clips; 0 = the whole clip),
    made from its own frames with :func:`~evalkit.models.lengths.natural_at_length` (the middle
    excerpt of a longer clip; a seamless loop of a shorter one; the whole clip where no loop is
    seamless), and with ``spec.mirror`` a second one from its mirror image at the next length
    of the schedule. Each corruption type then gives one corrupted version, of the clip or its
    mirror image in turn, with every ``spec.long_piece_s``-second piece corrupted and the root
    continuous across pieces (:func:`~evalkit.models.lengths.corrupt_at_length`), so the
    corrupted share of time does not depend on the length; severity drawn as for segments.
    The windows of a natural loop after its first copy repeat it: they are context only (label
    -1 in :func:`example_windows`), so a looped clip is not learnt many times over, while its
    clip-context features are those of the long clip.
    Deterministic given ``spec.seed`` and the clips' order. ``only``: this clip's examples only.
    """
    partners = partners if partners is not None else (
        donor_partners(clips) if spec.transplant_donor == "other_clip" else {})
    lengths = long_lengths_of(len(clips), spec.long_lengths, spec.seed)
    for i, clip in enumerate(clips):
        if only is not None and clip is not only:
            continue
        yield from _clip_long_examples(clip, spec, partners.get(id(clip), []), lengths[i])


def _clip_long_examples(clip: NaturalClip, spec: ExampleSpec, donors: Sequence[NaturalClip],
                        length: tuple[float, float]):
    """One clip's long examples (:func:`long_examples`) at its ``length`` (of it, of its mirror image)."""
    from evalkit.models.lengths import corrupt_at_length

    if clip.motion.duration < 1.0:
        return
    sources = [_at_length(clip.motion, length[0])]
    if spec.mirror:
        m = replace(mirror(clip.motion), name=clip.motion.name + "~mirror")
        if spec.augment:
            m = augment_natural(m, np.random.default_rng(_seed_for(spec.seed, "augment", m.name)))
        sources.append(_at_length(m, length[1]))
    for motion, how in sources:
        meta = dict(motion.meta)
        meta["long_example"] = how
        motion = replace(motion, meta=meta)
        yield Example(motion, Provenance(source=motion.name), clip.group, motion.name, clip.rig)
    for t, kind in enumerate(spec.types):
        motion = sources[t % len(sources)][0]
        seed = _seed_for(spec.seed, spec.tag, "long", motion.name, kind)
        rng = np.random.default_rng(seed)
        sev = spec.severity if spec.severity is not None else float(rng.uniform(*spec.severity_range))
        donor = _donor(donors, motion.name, kind, rng)
        try:
            m, intervals = corrupt_at_length(motion, kind, sev, seed, spec.long_piece_s, donor=donor)
        except RolesNotFoundError:
            raise
        except EvalkitError:
            continue
        if not intervals:
            continue
        prov = Provenance(source=motion.name, corruption=kind, severity=sev, seed=seed, intervals=intervals)
        yield Example(m, prov, clip.group, motion.name, clip.rig)


def donor_partners(clips: Sequence[NaturalClip]) -> dict[int, list[NaturalClip]]:
    """For each clip (by ``id``), the other clips of its group on the same skeleton (same joint
    names and rig) and of another take: the donors of limb transplants between clips."""
    out: dict[int, list[NaturalClip]] = {}
    for c in clips:
        names = c.motion.skeleton.names
        out[id(c)] = [d for d in clips if d is not c and d.group == c.group and d.rig == c.rig
                      and d.take != c.take and d.motion.skeleton.names == names]
    return out


def make_examples(clips: Sequence[NaturalClip], spec: ExampleSpec = ExampleSpec(),
                  segment_s: float = 4.0, progress: bool = False) -> list[Example]:
    """Natural segments and their corrupted versions, with provenance and group.

    Corruptions that cannot apply to a segment (too short for a transition, nothing dissimilar
    enough to transplant) are skipped.
    """
    return list(iter_examples(clips, spec, segment_s, progress))


def augment_natural(motion: Motion, rng: np.random.Generator, limb_scale: float = 0.03,
                    smooth_p: float = 0.5, cutoff_hz: tuple[float, float] = (5.0, 10.0)) -> Motion:
    """A natural clip varied the way real capture varies, still natural.

    Each limb's bones are scaled by a factor drawn from ``1 +- limb_scale`` (real CMU skeletons
    differ left to right by up to 5 % per arm bone), and with probability ``smooth_p`` the
    joint rotations and root path are low-passed (zero-phase Butterworth, order 2, cut-off
    drawn from ``cutoff_hz``), as capture pipelines filter differently (Bandai Namco's data is
    visibly smoother than CMU's). Used for training examples only, never for test examples.
    """
    from scipy.signal import butter, filtfilt

    from evalkit.features.body import LIMB_ROOTS, limb_joints
    from evalkit.motion import find_roles, quat

    roles = find_roles(motion.skeleton, strict=True)
    tr = motion.translations.copy()
    offsets = motion.skeleton.offsets.copy()
    params: dict = {}
    for limb in ("left_arm", "right_arm", "left_leg", "right_leg"):
        f = float(rng.uniform(1 - limb_scale, 1 + limb_scale))
        joints = [j for j in limb_joints(motion, limb, roles) if j != roles[LIMB_ROOTS[limb]]]
        tr[:, joints] *= f
        offsets[joints] *= f
        params[limb] = round(f, 4)
    rot = motion.rotations
    if rng.random() < smooth_p and motion.n_frames > 12:
        fc = float(rng.uniform(*cutoff_hz))
        if fc < 0.45 * motion.fps:
            b, a = butter(2, fc / (0.5 * motion.fps))
            q = quat.make_continuous(rot, axis=0)
            rot = quat.normalize(filtfilt(b, a, q, axis=0))
            moving = motion.skeleton.has_position_channels()
            moving[0] = True  # the root carries the path (Bandai rigs: the hips below it)
            tr[:, moving] = filtfilt(b, a, tr[:, moving], axis=0)
            params["lowpass_hz"] = round(fc, 2)
    meta = dict(motion.meta)
    meta["augmentation"] = params
    return replace(motion, skeleton=replace(motion.skeleton, offsets=offsets), rotations=rot, translations=tr,
                   meta=meta, name=motion.name + "~aug")


def examples_from_files(paths: Iterable[str | Path], natural: bool, fps: float = 30.0,
                        group_by: str = "file", load: LoadOptions | None = None) -> list[Example]:
    """Whole files as examples (e.g. a user's own unnatural clips for ``evalkit train``), read with ``load``."""
    clips = load_natural(paths, fps=fps, group_by=group_by, load=load, dedupe_takes=False)
    out = []
    for c in clips:
        prov = Provenance(source=c.motion.name) if natural else Provenance(
            source=c.motion.name, corruption="user", severity=1.0,
            intervals=((0.0, c.motion.duration),))
        out.append(Example(c.motion, prov, c.group, c.motion.name, c.rig))
    return out


def example_windows(i: int, ex: Example, config: WindowConfig = WindowConfig()) -> pd.DataFrame | None:
    """Window features of one example with the label and provenance columns of
    :func:`window_table` (``None`` if the clip is too short to have windows; a rig whose joint
    roles cannot be found raises :class:`RolesNotFoundError` naming the clip)."""
    try:
        # the examples are made at the working rate here (band-limited, or decimated without a
        # filter on purpose so that such capture is learnt as natural) and keep their own band;
        # the working band is for clips as users give them
        f = window_features(ex.motion, replace(config, working_band=False))
    except RolesNotFoundError as exc:  # a rig that needs --roles: say which clip, do not skip it
        raise RolesNotFoundError(f"{ex.segment}: {exc}") from None
    except EvalkitError:
        return None
    if ex.natural:
        label = np.ones(len(f), dtype=int)
        distinct = ex.motion.meta.get("distinct_s")
        if distinct is not None:  # a loop: its later copies are context only (the first is learnt once)
            label[f["end_s"].to_numpy() > float(distinct) + 1e-6] = -1
    else:
        touched = window_labels(f["start_s"].to_numpy(), f["end_s"].to_numpy(), ex.provenance.intervals)
        label = np.where(touched == 1, 0, -1)
    meta = pd.DataFrame({
        "example": i,
        "group": ex.group,
        "segment": ex.segment,
        "rig": ex.rig,
        "corruption": ex.provenance.corruption,
        "severity": ex.provenance.severity,
        "clip_natural": int(ex.natural),
        "label": label,
    }, index=f.index)
    return pd.concat([meta, f], axis=1)


def window_table(examples: Sequence[Example], config: WindowConfig = WindowConfig(),
                 progress: bool = False) -> pd.DataFrame:
    """Window features of every example, with labels and provenance columns.

    Columns added to :func:`~evalkit.models.window_features.window_features`' output: ``example``
    (index into ``examples``), ``group``, ``segment``, ``rig``, ``corruption``, ``severity``,
    ``clip_natural`` (1 natural example, 0 corrupted) and ``label``: 1 for windows of natural
    examples, 0 for windows a corruption touched, -1 for windows of corrupted examples that it
    did not touch or touched only partly (left out of training).
    """
    it = enumerate(examples)
    if progress:
        from tqdm import tqdm

        it = tqdm(it, total=len(examples), desc="window features", unit="clip")
    frames = [f for f in (example_windows(i, ex, config) for i, ex in it) if f is not None]
    if not frames:
        raise InputError("no clip could be turned into windows (all too short?)")
    return pd.concat(frames, ignore_index=True)
