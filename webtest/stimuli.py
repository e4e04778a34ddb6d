"""Stimulus preparation: motion files to compact joint-position JSON, media durations.

Motion stimuli are rendered in the participant's browser from precomputed world joint positions
(forward kinematics by :mod:`evalkit.motion`), so every clip is drawn with the same camera,
skeleton style and ground plane whatever system produced it. The JSON holds::

    {"format": "evalkit-positions/1", "fps": 30.0, "frames": F, "joints": J,
     "parents": [-1, 0, ...], "duration_s": F / fps,
     "roles": {"hips": 0, "left_knee": 3, ...},   # joints evalkit recognised (the mannequin's parts)
     "bounds": [[xmin, ymin, zmin], [xmax, ymax, zmax]],
     "positions": [x, y, z, ...]}   # metres, Y-up, rounded to 1 mm, frame-major (F*J*3)

It never contains the stimulus id, system or file name (participants stay blind to the system).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from typing import TYPE_CHECKING

import numpy as np

from evalkit.errors import FileFormatError, InputError
from webtest.study import Stimulus, Study, Transform

if TYPE_CHECKING:  # evalkit.motion (and scipy) load only when a stimulus must be computed,
    from evalkit.motion import Motion  # so server workers start fast from the cache

FORMAT = "evalkit-positions/1"
_CACHE_VERSION = "2"  # 2: "roles" in the payload (the 3-D mannequin)
MIME = {
    ".mp4": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg", ".mov": "video/quicktime",
    ".wav": "audio/wav", ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".oga": "audio/ogg",
    ".flac": "audio/flac", ".m4a": "audio/mp4", ".opus": "audio/ogg",
}


@dataclass(frozen=True)
class PreparedStimulus:
    """A stimulus ready to serve.

    Attributes:
        id: stimulus id from the study file.
        kind: ``motion``, ``video`` or ``audio``.
        path: the file to send: the positions JSON (motion) or the media file.
        duration_s: playing time in seconds (for motion with audio: the longer of the two).
        audio: audio file played with a motion stimulus, if any.
        fallback: ``(left, right)`` MP4 videos of a motion stimulus drawn by the same renderer
            in each side's colour (``playback.video_fallback``; see :mod:`webtest.fallback`),
            played where the browser has no WebGL; ``(None, None)`` without.
    """

    id: str
    kind: str
    path: Path
    duration_s: float
    audio: Path | None = None
    fallback: tuple[Path | None, Path | None] = (None, None)

    @property
    def mimetype(self) -> str:
        if self.kind == "motion":
            return "application/json"
        return MIME.get(self.path.suffix.lower(), "application/octet-stream")


# -- documented corruptions ------------------------------------------------------------------
def jitter(motion: "Motion", deg: float, seed: int = 0) -> "Motion":
    """Add Gaussian rotation noise to every joint on every frame.

    Args:
        motion: the clip.
        deg: standard deviation of the noise per rotation axis, degrees.
        seed: random seed (the same seed gives the same noise).

    Returns a new motion; local rotations ``q`` become ``q * exp(noise)`` with independent noise
    per frame, which shows as a tremor. Root translation is unchanged.
    """
    from scipy.spatial.transform import Rotation

    from evalkit.motion import quat

    rng = np.random.default_rng(int(seed))
    f, j = motion.n_frames, motion.n_joints
    rotvec = rng.normal(0.0, np.deg2rad(deg), size=(f * j, 3))
    dq = Rotation.from_rotvec(rotvec).as_quat().reshape(f, j, 4)
    rot = quat.normalize(quat.multiply(motion.rotations, dq))
    return motion.with_(rotations=rot, meta={**motion.meta, "jitter_deg": deg})


def timewarp(motion: "Motion", amount: float, period_s: float = 1.0) -> "Motion":
    """Periodic time warp with the same duration and frame rate.

    Output frame at time ``t`` (seconds) shows the input at
    ``w(t) = t + amount * period_s / (2 pi) * sin(2 pi t / period_s)``; ``w`` is monotonic for
    ``amount < 1`` (its slope is ``1 + amount * cos(...)``, between ``1 - amount`` and
    ``1 + amount``), so the clip alternately runs fast and slow. Rotations are slerped,
    translations linearly interpolated.
    """
    from evalkit.motion import quat

    if not 0.0 <= amount < 1.0:
        raise InputError(f"timewarp amount must be in [0, 1), got {amount}")
    if period_s <= 0:
        raise InputError(f"timewarp period must be positive, got {period_s} s")
    n = motion.n_frames
    t = np.arange(n) / motion.fps
    w = t + amount * period_s / (2 * np.pi) * np.sin(2 * np.pi * t / period_s)
    src = np.clip(w * motion.fps, 0, n - 1)  # fractional source frame
    i0 = np.floor(src).astype(int)
    i1 = np.minimum(i0 + 1, n - 1)
    a = src - i0
    rot = quat.make_continuous(motion.rotations, axis=0)
    new_rot = quat.slerp(rot[i0], rot[i1], np.broadcast_to(a[:, None], (n, motion.n_joints)))
    tr = motion.translations
    new_tr = tr[i0] * (1 - a[:, None, None]) + tr[i1] * a[:, None, None]
    return motion.with_(rotations=new_rot, translations=new_tr,
                        meta={**motion.meta, "timewarp": (amount, period_s)})


def apply_transforms(motion: "Motion", transforms: Iterable[Transform]) -> "Motion":
    """Apply the study file's ``transform`` list in order."""
    for t in transforms:
        if t.name == "jitter":
            motion = jitter(motion, t.params["deg"], int(t.params.get("seed", 0)))
        elif t.name == "timewarp":
            motion = timewarp(motion, t.params["amount"], t.params.get("period_s", 1.0))
        else:  # validated in webtest.study, so this is a programming error
            raise InputError(f"unknown transform {t.name!r}")
    return motion


def stimulus_motion(stim: Stimulus, study: Study) -> "Motion":
    """The motion a stimulus shows: loaded, trimmed, transformed, at the web frame rate."""
    from evalkit.motion import load_motion, resample

    opts = study.motion
    motion = load_motion(stim.file, units=opts.units, up=opts.up)
    if stim.trim is not None:
        a, b = (int(round(x * motion.fps)) for x in stim.trim)
        if a >= motion.n_frames:
            raise InputError(f"{stim.file}: trim starts at {stim.trim[0]} s but the clip lasts {motion.duration:.2f} s")
        motion = motion.slice(a, min(b, motion.n_frames))
    motion = apply_transforms(motion, stim.transforms)
    return resample(motion, opts.fps)


def motion_payload(motion: "Motion") -> dict:
    """The browser JSON of a clip (see the module docstring); positions in metres."""
    from evalkit.motion import find_roles

    pos = np.asarray(motion.positions, dtype=np.float64)
    roles = find_roles(motion.skeleton, strict=False)  # those found; the renderer falls back without
    return {
        "format": FORMAT,
        "fps": float(motion.fps),
        "frames": int(motion.n_frames),
        "joints": int(motion.n_joints),
        "parents": [int(p) for p in motion.skeleton.parents],
        "roles": {str(k): int(v) for k, v in roles.items()},
        "duration_s": round(motion.duration, 4),
        "bounds": [np.round(pos.min(axis=(0, 1)), 3).tolist(), np.round(pos.max(axis=(0, 1)), 3).tolist()],
        "positions": np.round(pos, 3).reshape(-1).tolist(),
    }


# -- media -----------------------------------------------------------------------------------
def media_duration(path: Path) -> float:
    """Duration of an audio or video file in seconds (WAV read directly, others via ffmpeg)."""
    if path.suffix.lower() == ".wav":
        try:
            with wave.open(str(path), "rb") as w:
                return w.getnframes() / float(w.getframerate())
        except (wave.Error, EOFError) as exc:
            raise FileFormatError(path, None, f"not a readable WAV file ({exc})") from None
    import imageio_ffmpeg

    proc = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-i", str(path)],
                          capture_output=True, text=True, errors="replace")
    m = re.search(r"Duration:\s*(\d+):(\d+):(\d+(?:\.\d+)?)", proc.stderr)
    if not m:
        raise FileFormatError(path, None, "ffmpeg cannot read a duration from this media file; "
                                          "give 'duration_s:' in the study file or convert the file")
    h, mi, s = m.groups()
    return int(h) * 3600 + int(mi) * 60 + float(s)


# -- preparation with a cache ----------------------------------------------------------------
def _cache_key(stim: Stimulus, study: Study) -> str:
    st = stim.file.stat()
    parts = [_CACHE_VERSION, str(stim.file), str(st.st_size), str(st.st_mtime_ns), repr(stim.trim),
             repr([(t.name, sorted(t.params.items())) for t in stim.transforms]),
             repr((study.motion.fps, study.motion.units, study.motion.up))]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def stimulus_digest(stim: Stimulus, study: Study) -> str:
    """Fingerprint of what participants see and hear for ``stim``: the bytes of its file (and
    audio), its trim and transforms, the study's motion options and, for motion drawn in the
    browser, the camera (``playback.camera``; ``fixed``, the only camera before the setting
    existed, adds nothing), the renderer (the shaded 3-D body of ``static/stage.js``, which replaced
    the stick figure: answers given to stick figures are not pooled with answers given to bodies)
    and the look set in the study (``playback.framing``, ``colors``, ``background``) (hex, 32
    characters)."""
    h = hashlib.sha256()
    for path in (stim.file, stim.audio):
        if path is not None:
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        h.update(b"\0")
    h.update(repr((stim.kind, stim.trim, [(t.name, sorted(t.params.items())) for t in stim.transforms],
                   (study.motion.fps, study.motion.units, study.motion.up))).encode())
    if stim.kind == "motion" and study.playback.camera != "fixed":
        h.update(f"camera={study.playback.camera}".encode())
    if stim.kind == "motion":  # drawn by the 3-D renderer (static/stage.js), in the study's look
        pb = study.playback
        look = [("framing", pb.framing if pb.framing != "full" else None), ("color_left", pb.color_left),
                ("color_right", pb.color_right), ("background", pb.background)]
        h.update(("renderer=stage3d/1" + "".join(f";{k}={v}" for k, v in look if v)).encode())
    return h.hexdigest()[:32]


def _write_json_atomic(path: Path, payload: Mapping) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, separators=(",", ":"))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def prepare_stimuli(study: Study, cache_dir: Path, progress: bool = False) -> dict[str, PreparedStimulus]:
    """Precompute every motion stimulus's JSON into ``cache_dir`` (reused while the source file,
    trim, transforms and motion options are unchanged) and measure media durations.

    Returns:
        stimulus id -> :class:`PreparedStimulus`.
    """
    from tqdm import tqdm

    out: dict[str, PreparedStimulus] = {}
    for stim in tqdm(study.stimuli, desc="stimuli", unit="stim", disable=not progress):
        if stim.kind == "motion":
            target = cache_dir / f"{stim.id}-{_cache_key(stim, study)}.json"
            if target.exists():
                with open(target, encoding="utf-8") as fh:
                    duration = float(json.load(fh)["duration_s"])
            else:
                motion = stimulus_motion(stim, study)
                payload = motion_payload(motion)
                _write_json_atomic(target, payload)
                duration = payload["duration_s"]
            if stim.audio is not None:
                duration = max(duration, media_duration(stim.audio))
            out[stim.id] = PreparedStimulus(stim.id, "motion", target, float(duration), stim.audio)
        else:
            duration = stim.duration_s if stim.duration_s is not None else media_duration(stim.file)
            out[stim.id] = PreparedStimulus(stim.id, stim.kind, stim.file, float(duration))
    return out


# -- content-addressed names -----------------------------------------------------------------
def _file_hash(path: Path) -> str:
    """SHA-256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _served_hash(stim: PreparedStimulus, digest: str) -> str:
    """What identifies the bytes served for ``stim``: the positions JSON's own SHA-256 for motion
    (the file is derived, so its bytes are hashed), the stimulus fingerprint for media (it hashes
    the media file's bytes)."""
    if stim.kind != "motion":
        return digest
    return _file_hash(stim.path)


def stimulus_names(stimuli: Mapping[str, PreparedStimulus], digests: Mapping[str, str],
                   secret: str | bytes) -> tuple[dict[str, dict[str, str]], dict[str, tuple[str, str]]]:
    """Content-addressed, unguessable file names for serving stimuli without a database lookup.

    Each name is an HMAC-SHA256 (keyed with the app's secret key) of the served bytes' hash, 32
    hex characters, plus the file's extension: the same bytes always get the same name (so it can
    be cached as immutable), other bytes another name, and nobody without the secret key can
    compute a name from a file (a participant learns only the names of the trial on screen; there
    is no listing).

    Args:
        stimuli: stimulus id -> prepared stimulus.
        digests: stimulus id -> :func:`stimulus_digest`.
        secret: the app's secret key.

    Returns:
        ``(urls, files)``: stimulus id -> ``{"file": name, "audio": name, "video_left": name,
        "video_right": name}`` (``audio`` only for motion with a sound track, ``video_*`` only
        for motion with fallback videos), and name -> ``(path, mimetype)``.
    """
    import hmac

    key = secret.encode() if isinstance(secret, str) else secret
    urls: dict[str, dict[str, str]] = {}
    files: dict[str, tuple[str, str]] = {}

    def name(content: str, path: Path) -> str:
        token = hmac.new(key, b"evalkit-stimulus\0" + content.encode(), hashlib.sha256).hexdigest()[:32]
        return token + path.suffix.lower()

    for sid, stim in stimuli.items():
        entry = {"file": name(_served_hash(stim, digests[sid]), stim.path)}
        files[entry["file"]] = (str(stim.path), stim.mimetype)
        if stim.audio is not None:
            audio = Path(stim.audio)
            entry["audio"] = name(digests[sid] + "\0audio", audio)
            files[entry["audio"]] = (str(audio), MIME.get(audio.suffix.lower(), "application/octet-stream"))
        for side, video in zip(("left", "right"), stim.fallback):
            if video is not None:
                entry[f"video_{side}"] = name(_file_hash(Path(video)), Path(video))
                files[entry[f"video_{side}"]] = (str(video), MIME[".mp4"])
        urls[sid] = entry
    return urls, files


def served_names(paths: Mapping[str, Path], secret: str | bytes) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """Content-addressed names (as :func:`stimulus_names`: HMAC of the bytes' SHA-256, 32 hex
    characters plus the extension) of other files the pages play, e.g. the setup stages' sounds.

    Returns ``(urls, files)``: key -> name, and name -> ``(path, mimetype)``.
    """
    import hmac

    key = secret.encode() if isinstance(secret, str) else secret
    urls: dict[str, str] = {}
    files: dict[str, tuple[str, str]] = {}
    for k, path in paths.items():
        token = hmac.new(key, b"evalkit-file\0" + _file_hash(Path(path)).encode(), hashlib.sha256).hexdigest()[:32]
        urls[k] = token + Path(path).suffix.lower()
        files[urls[k]] = (str(path), MIME.get(Path(path).suffix.lower(), "application/octet-stream"))
    return urls, files
