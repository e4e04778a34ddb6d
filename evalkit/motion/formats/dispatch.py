"""The one dispatcher: any supported motion file read by the reader of its format, chosen by its
extension and (``.npz``/``.npy``) its content; files and folders expanded into motion files."""

from __future__ import annotations

import functools
import io
import os
import re
import tokenize
import zlib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import numpy as np

from evalkit.errors import EvalkitError, FileFormatError, InputError
from evalkit.motion.formats.limits import MAX_FPS  # highest frame rate evalkit accepts anywhere
from evalkit.motion.model import Motion

MOTION_EXTENSIONS = (".bvh", ".amc", ".npz", ".npy", ".csv")
#: extensions picked up when a folder is searched (``.csv`` only when named: a folder of score
#: tables is not motion); ``.npz``/``.npy`` only when they hold motion (see :func:`holds_motion`)
FOLDER_EXTENSIONS = (".bvh", ".amc", ".npz", ".npy")
#: ``results#3.npy`` names clip 3 of the multi-clip file ``results.npy`` (MDM samples)
_CLIP_RE = re.compile(r"^(?P<stem>.+)#(?P<index>\d+)(?P<ext>\.npy)$", re.IGNORECASE)


def check_fps(fps: float, option: str) -> float:
    """``fps`` if it is a plausible frame rate (0 < fps <= :data:`MAX_FPS`), else an
    :class:`InputError` naming ``option``."""
    if not 0 < fps <= MAX_FPS:  # also refuses NaN
        raise InputError(f"{option} must be a frame rate above 0 and at most {MAX_FPS:g} frames per second, got {fps:g}")
    return fps


def load_motion(
    path: str | os.PathLike,
    units: str | float = "auto",
    up: str = "auto",
    fps: float | None = None,
    asf: str | os.PathLike | None = None,
    roles: Mapping[str, str] | None = None,
    skeleton: str | os.PathLike | None = None,
    array_fps: float | None = None,
    body_model: str | os.PathLike | None = None,
    allow_pickle: bool = False,
    bvh_fps: float | None = None,
    digest: bool = False,
) -> Motion:
    """Read a motion file into a :class:`Motion` (metres, Y-up), chosen by extension and content:
    ``.bvh``; ``.amc`` (with its ``.asf``); ``.npz`` SMPL-family parameters (AMASS, BEAT2) or
    joint positions; ``.npy`` HumanML3D joints / 263-dim features, MDM ``results.npy`` (one
    sample: ``results#3.npy``), joint positions; ``.csv`` joint positions. See docs/formats.md.

    Args:
        path: the motion file.
        units, up: see :func:`evalkit.motion.read_bvh`.
        fps: frame rate for AMC files (which carry none; default 120, CMU's rate). For BVH it
            is ignored (the file's ``Frame Time`` is used); resample explicitly instead.
        asf: the ASF skeleton for an AMC file (found next to it by CMU naming otherwise).
        roles: role map (``--roles``) for rigs with unusual joint names: used to detect the up
            axis, and checked against the skeleton (a joint it names must exist).
        skeleton: joint-position arrays: a preset (``smpl22``/``humanml3d``, ``smpl24``,
            ``smplh52``, ``smplx55``) or a skeleton YAML file (``--skeleton``).
        array_fps: frame rate of array files that carry none (``--array-fps``; HumanML3D: 20).
        body_model: SMPL/SMPL-H/SMPL-X model file for parameter files (``--body-model``).
        allow_pickle: trust pickles fully (``--allow-pickle``); otherwise only plain data is read.
        bvh_fps: frame rate of BVH files instead of their ``Frame Time`` (``--bvh-fps``), for
            exports that state a wrong one.
        digest: record the SHA-256 hex digest of the file's bytes in ``meta["sha256"]`` (of
            one clip of a multi-clip file: of its bytes and ``#index``), taken from the one read
            of the file (every reader reads a file once; an MDM ``results.npy`` once per process
            for all its samples).

    Example (a bundled CMU walk, ASF/AMC at 120 frames/s):

    >>> from evalkit.data import SAMPLES_DIR
    >>> walk = load_motion(SAMPLES_DIR / "cmu" / "16_15.amc")
    >>> walk
    Motion('16_15', 471 frames @ 120 fps, 31 joints)
    >>> round(walk.duration, 3)  # seconds
    3.925
    """
    from evalkit.motion.formats.amc import find_asf, read_asf_amc
    from evalkit.motion.formats.bvh import read_bvh

    p = Path(path)
    ext = p.suffix.lower()
    if fps is not None:
        check_fps(fps, "the AMC frame rate (--amc-fps)")
    if array_fps is not None:
        check_fps(array_fps, "--array-fps")
    p, clip = clip_source(p)
    if not p.exists():
        raise FileFormatError(p, None, "file not found")
    if p.is_dir():
        raise FileFormatError(p, None, f"is a folder, expected a motion file ({', '.join(MOTION_EXTENSIONS)})")
    from evalkit.motion.formats.npz import check_not_lfs_pointer

    if ext in (".npz", ".npy", ".csv"):
        return _load_array_file(p, ext, units, up, roles, skeleton, array_fps, body_model, allow_pickle, clip,
                                digest)
    try:  # text formats: a file that does not parse is looked at again only then (one open per good file)
        if ext == ".bvh":
            return read_bvh(p, units=units, up=up, roles=roles, fps=bvh_fps, digest=digest)
        if ext == ".amc":
            asf_path = Path(asf) if asf else find_asf(p)
            return read_asf_amc(asf_path, p, fps=120.0 if fps is None else fps, units=units, up=up,
                                roles=roles, digest=digest)
    except FileFormatError:
        check_not_lfs_pointer(p)
        raise
    raise InputError(f"{p}: unsupported motion format {ext!r}; expected one of {', '.join(MOTION_EXTENSIONS)}")


@dataclass(frozen=True)
class LoadOptions:
    """How motion files are read: the format options of :func:`load_motion` in one value, passed
    from the command line to every layer that reads clips (``--units``, ``--up``, ``--amc-fps``,
    ``--bvh-fps``, ``--skeleton``, ``--array-fps``, ``--body-model``, ``--allow-pickle``; the
    role map where a command reads files with it). Picklable, so worker processes get it whole.

    Attributes:
        units: length unit (``"auto"``, ``"m"``, ``"cm"``, ... or metres per unit).
        up: up axis (``"auto"``, ``"y"``, ``"z"``, ``"-z"``, ...).
        fps: frame rate of AMC files, frames/s (``None``: 120, CMU's).
        asf: the ASF skeleton of AMC files (``None``: found by CMU naming).
        roles: ``{role: joint name}`` map given to the reader (up-axis detection, joint check).
        skeleton: skeleton preset or YAML file of joint-position arrays.
        array_fps: frame rate of array files that carry none, frames/s.
        body_model: SMPL-family model file (or a loaded model) for parameter files.
        allow_pickle: trust pickles fully.
        bvh_fps: frame rate of BVH files instead of their ``Frame Time``, frames/s.
        digest: record each file's SHA-256 in ``meta["sha256"]`` (training data records).
    """

    units: str | float = "auto"
    up: str = "auto"
    fps: float | None = None
    asf: str | os.PathLike | None = None
    roles: Mapping[str, str] | None = None
    skeleton: str | os.PathLike | None = None
    array_fps: float | None = None
    body_model: object = None
    allow_pickle: bool = False
    bvh_fps: float | None = None
    digest: bool = False

    def load(self, path: str | os.PathLike, **override) -> Motion:
        """``load_motion(path, ...)`` with these options (``override``: options replaced for this call)."""
        return load_motion(path, **{**self.kwargs(), **override})

    def kwargs(self) -> dict:
        """The options as keyword arguments of :func:`load_motion`."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def file_digest(path: str | os.PathLike) -> str:
    """SHA-256 hex digest of a motion file's bytes (of one clip of a multi-clip file,
    ``results#3.npy``: of its bytes and ``#3``), read in 1 MiB pieces."""
    import hashlib

    path, clip = clip_source(path)
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    if clip is not None:
        h.update(f"#{clip}".encode())
    return h.hexdigest()


def clip_source(path: str | os.PathLike) -> tuple[Path, int | None]:
    """The file a motion path reads and the clip in it: ``results#3.npy`` -> ``(results.npy, 3)``
    when no file of that name exists; any other path -> ``(path, None)``."""
    p = Path(path)
    if not p.exists():
        m = _CLIP_RE.match(p.name)
        if m and p.with_name(m.group("stem") + m.group("ext")).is_file():
            return p.with_name(m.group("stem") + m.group("ext")), int(m.group("index"))
    return p, None


def _load_array_file(p: Path, ext: str, units, up, roles, skeleton, array_fps, body_model, allow_pickle,
                     clip, digest) -> Motion:
    """An array file read once, as bytes (checked, hashed and parsed in memory); a sample of an
    MDM results file from the process's copy of the file after its first read."""
    import hashlib

    from evalkit.motion.formats import humanml3d as hml
    from evalkit.motion.formats.npz import check_not_lfs_pointer, read_file_bytes

    data = None
    if not (ext == ".npy" and clip is not None and hml.results_kept(p, allow_pickle)):
        data = read_file_bytes(p)
        check_not_lfs_pointer(p, data)
    try:
        if ext == ".npy" and clip is not None:
            if not _is_object_npy(p, data):
                raise InputError(f"{p}: holds one clip; {p.stem}#{clip}{p.suffix} names a sample of a results file")
            return hml.read_results_clip(p, clip, units, up, array_fps, skeleton, roles, allow_pickle, data, digest)
        motion = _read_array_file(p, ext, units, up, roles, skeleton, array_fps, body_model, allow_pickle, data,
                                  digest)
        if digest and "sha256" not in motion.meta:
            motion = motion.with_(meta={**motion.meta, "sha256": hashlib.sha256(data).hexdigest()})
        return motion
    except (ValueError, IndexError, KeyError, TypeError, OverflowError, FloatingPointError, MemoryError,
            RecursionError, zlib.error, SyntaxError, tokenize.TokenError) as exc:
        if isinstance(exc, EvalkitError):
            raise
        # hostile or damaged content the checks above did not foresee: still one line, no traceback
        raise FileFormatError(p, None, f"unreadable content ({type(exc).__name__}: {exc})") from None


def _is_object_npy(p: Path, data: bytes | None) -> bool:
    """Whether an ``.npy`` holds a pickled object (an MDM results dict) by its header; ``data=None``:
    its content is already in memory as a results file."""
    if data is None:
        return True
    try:
        return _npy_header(io.BytesIO(data))[1].hasobject
    except (ValueError, EOFError) as exc:
        raise FileFormatError(p, None, f"not a readable .npy file ({exc})") from None


def _npy_header(fh) -> tuple[tuple, np.dtype]:
    """Shape and dtype from the header at the start of an open ``.npy`` (its first bytes only)."""
    version = np.lib.format.read_magic(fh)
    reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = reader(fh, max_header_size=1 << 20)
    return shape, dtype


def _read_array_file(p: Path, ext: str, units, up, roles, skeleton, array_fps, body_model, allow_pickle,
                     data: bytes, digest: bool) -> Motion:
    from evalkit.motion.formats import arrays, smpl
    from evalkit.motion.formats.npz import npz_keys

    if ext == ".npz":
        keys = npz_keys(p, data)
        if smpl.is_param_file(keys):
            model = _body_model(body_model, allow_pickle) if body_model is not None else None
            return smpl.read_smpl_params(p, units=units, up=up, fps=array_fps, body_model=model, roles=roles,
                                         data=data)
        if "positions" not in keys and "joints" not in keys and "betas" in keys:
            raise FileFormatError(p, None, f"holds a body shape only (keys: {', '.join(keys)}; AMASS's "
                                           "shape.npz), no motion: expected 'poses' or 'positions'")
        return arrays.read_positions_npz(p, units=units, up=up, fps=array_fps, skeleton=skeleton, roles=roles,
                                         data=data)
    if ext == ".npy":
        return _read_npy(p, units, up, array_fps, skeleton, roles, allow_pickle, data, digest)
    return arrays.read_csv_positions(p, units=units, up=up, fps=array_fps, skeleton=skeleton, roles=roles, data=data)


def _read_npy(path: Path, units, up, fps, skeleton, roles, allow_pickle, data: bytes, digest: bool) -> Motion:
    """A ``.npy`` (its bytes ``data``) by its content: a pickled dict is an MDM results file,
    ``(frames, 263)`` HumanML3D features, ``(frames, 22, 3)`` HumanML3D joints (20 fps), anything
    else joint positions."""
    from evalkit.motion.formats import arrays
    from evalkit.motion.formats import humanml3d as hml

    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError:  # object array: a pickled results dict
        return hml.read_results_clip(path, None, units, up, fps, skeleton, roles, allow_pickle, data, digest)
    except (OSError, EOFError) as exc:
        raise FileFormatError(path, None, f"not a readable .npy file ({exc})") from None
    if arr.dtype.kind not in "fiu":
        raise FileFormatError(path, None, f"expected numbers, found {arr.dtype} data")
    if arr.ndim == 2 and arr.shape[1] == hml.N_FEATURES and skeleton is None:
        return hml.read_features(path, arr, units, up, fps, roles)
    if arr.ndim == 3 and arr.shape[1:] == (hml.N_JOINTS, 3) and arr.shape[0] > 0 and skeleton is None:
        return arrays.read_positions_array(path, arr, units, up, fps, skeleton, roles, default_fps=hml.FPS,
                                           format="humanml3d-joints")
    return arrays.read_positions_array(path, arr, units, up, fps, skeleton, roles)


def _body_model(path, allow_pickle: bool):
    from evalkit.motion.formats.smpl import BodyModel

    if isinstance(path, BodyModel):
        return path
    p = Path(path)
    try:
        st = p.stat()
    except OSError:
        raise InputError(f"--body-model {p}: file not found") from None
    return _cached_body_model(str(p.resolve()), st.st_mtime_ns, st.st_size, bool(allow_pickle))


@functools.lru_cache(maxsize=4)
def _cached_body_model(path: str, mtime_ns: int, size: int, allow_pickle: bool):
    """A model file is read once per process (SMPL-X's is ~100 MB); keyed by path, time and size."""
    from evalkit.motion.formats.smpl import load_body_model

    return load_body_model(path, allow_pickle)


def _npy_look(p: Path) -> tuple[tuple, np.dtype] | None:
    """Shape and dtype from an ``.npy``'s header (its first bytes only), ``None`` if unreadable."""
    try:
        with open(p, "rb") as fh:
            return _npy_header(fh)
    except (OSError, EOFError, ValueError, OverflowError, MemoryError, SyntaxError, tokenize.TokenError):
        return None


def _results_clips(p: Path, allow_pickle: bool) -> int:
    """Samples of an MDM results file (read once per process), 1 when it is not plain results."""
    from evalkit.motion.formats.humanml3d import read_results

    try:
        return len(read_results(p, allow_pickle)["clips"])
    except (EvalkitError, OSError, ValueError, IndexError, KeyError, TypeError, OverflowError, MemoryError,
            RecursionError):
        return 1  # not plain data or not a results file: reported, as this file's error, when it is loaded


def clip_count(path: str | os.PathLike, allow_pickle: bool = False) -> int:
    """How many clips a file holds (an MDM ``results.npy``: its samples; others: 1). Looks at an
    ``.npy``'s header; a results file is read whole (once per process, kept for its samples)."""
    p = Path(path)
    if p.suffix.lower() != ".npy":
        return 1
    look = _npy_look(p)
    if look is None or not look[1].hasobject:
        return 1  # numbers (one clip) or unreadable (reported when it is loaded)
    return _results_clips(p, allow_pickle)


def holds_motion(path: str | os.PathLike) -> bool:
    """Whether an ``.npz``/``.npy`` found in a folder is motion (cheap look at its keys or header;
    AMASS's ``shape.npz`` and other arrays are skipped)."""
    return bool(_folder_clips(Path(path)))


def _folder_clips(p: Path) -> list[Path]:
    """The clips of a file found in a folder, from one look at it: a BVH or AMC is itself; an
    ``.npz`` when its keys are motion; an ``.npy`` when its header says motion (``(frames, joints,
    3)`` or ``(frames, 263)``), an MDM results file as its samples; an unreadable file is itself
    (its load reports it); other arrays are skipped."""
    ext = p.suffix.lower()
    if ext in (".bvh", ".amc"):
        return [p]
    if ext == ".npz":
        from evalkit.motion.formats.npz import npz_keys
        from evalkit.motion.formats.smpl import is_param_file

        try:
            keys = npz_keys(p)
        except (OSError, EOFError, EvalkitError, ValueError, OverflowError, MemoryError):
            return [p]
        return [p] if is_param_file(keys) or "positions" in keys or "joints" in keys else []
    look = _npy_look(p)
    if look is None:
        return [p]
    shape, dtype = look
    if dtype.hasobject:
        return _clip_paths(p, _results_clips(p, False))
    return [p] if (len(shape) == 3 and shape[2] == 3) or (len(shape) == 2 and shape[1] == 263) else []


def _clip_paths(p: Path, n: int) -> list[Path]:
    return [p] if n <= 1 else [p.with_name(f"{p.stem}#{i}{p.suffix}") for i in range(n)]


def _expand(p: Path) -> list[Path]:
    """A multi-clip file as its clips (``results#0.npy`` ...), any other file as itself; a file
    whose clips cannot be counted is itself too, so reading it gives that file's error."""
    try:
        n = clip_count(p)
    except (EvalkitError, OSError, ValueError, OverflowError, MemoryError, RecursionError):
        return [p]
    return _clip_paths(p, n)


def iter_motion_files(paths: Iterable[str | os.PathLike]) -> Iterator[Path]:
    """Expand files and folders (recursively) into motion files, sorted, without duplicates.
    A multi-clip file (MDM ``results.npy``) yields one path per clip, ``results#<i>.npy``, which
    :func:`load_motion` reads."""
    seen: set[Path] = set()
    for item in paths:
        p = Path(item)
        if p.is_dir():
            found = [c for q in sorted(q for q in p.rglob("*") if q.suffix.lower() in FOLDER_EXTENSIONS
                                       and q.is_file()) for c in _folder_clips(q)]
        elif p.exists():
            found = _expand(p)
        elif _CLIP_RE.match(p.name):
            found = [p]
        else:
            raise InputError(f"{p}: no such file or folder")
        for q in found:
            if q not in seen:
                seen.add(q)
                yield q
