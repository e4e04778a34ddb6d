"""Render a motion clip to an MP4 video (stick figure, ground grid, optional audio track).

Frames are drawn with matplotlib (Agg) using the same camera as the browser player
(``static/player.js``: azimuth 35°, elevation 14°, fitted to the clip's bounds) and piped to the
ffmpeg binary that ships with imageio-ffmpeg, so nothing needs installing.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalkit.errors import InputError
from evalkit.motion import Motion, resample


@dataclass(frozen=True)
class Camera:
    """A pinhole camera looking at the centre of a clip's bounds from a fixed direction.

    ``project`` maps world points ``(..., 3)`` in metres to pixel coordinates ``(..., 2)``
    (origin top-left) for an image of ``width`` x ``height`` pixels.
    """

    eye: np.ndarray
    right: np.ndarray
    up: np.ndarray
    forward: np.ndarray
    scale: float
    ox: float
    oy: float
    ground: float

    @classmethod
    def fit(cls, lo: np.ndarray, hi: np.ndarray, width: int, height: int,
            azimuth_deg: float | None = None, elevation_deg: float = 14.0) -> "Camera":
        """Camera for bounds ``lo``/``hi`` ``(3,)`` metres. By default it looks 35 degrees off the
        longer horizontal side of the bounds (the direction of travel), so long paths recede
        into depth instead of shrinking the figure."""
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        c = (lo + hi) / 2
        ext = max(float((hi - lo).max()), 1.0)
        if azimuth_deg is None:
            azimuth_deg = 55.0 if (hi[0] - lo[0]) > (hi[2] - lo[2]) else 35.0
        az, el = np.deg2rad(azimuth_deg), np.deg2rad(elevation_deg)
        dist = 2.6 * ext + 2.0
        eye = c + dist * np.array([np.sin(az) * np.cos(el), np.sin(el), np.cos(az) * np.cos(el)])
        f = (c - eye) / np.linalg.norm(c - eye)
        r = np.cross(f, [0.0, 1.0, 0.0])
        r /= np.linalg.norm(r)
        u = np.cross(r, f)
        cam = cls(eye, r, u, f, 1.0, 0.0, 0.0, float(lo[1]))
        corners = np.array([[x, y, z] for x in (lo[0] - 0.3, hi[0] + 0.3) for y in (lo[1], hi[1])
                            for z in (lo[2] - 0.3, hi[2] + 0.3)])
        q = cam._raw(corners)
        (minx, miny), (maxx, maxy) = q.min(axis=0), q.max(axis=0)
        margin = 0.06
        scale = min(width * (1 - 2 * margin) / (maxx - minx), height * (1 - 2 * margin) / (maxy - miny))
        return cls(eye, r, u, f, float(scale), width / 2 - scale * (minx + maxx) / 2,
                   height / 2 + scale * (miny + maxy) / 2, float(lo[1]))

    def _raw(self, p: np.ndarray) -> np.ndarray:
        v = np.asarray(p, float) - self.eye
        z = np.maximum(v @ self.forward, 1e-3)
        return np.stack([(v @ self.right) / z, (v @ self.up) / z], axis=-1)

    def project(self, p: np.ndarray) -> np.ndarray:
        q = self._raw(p)
        return np.stack([self.ox + self.scale * q[..., 0], self.oy - self.scale * q[..., 1]], axis=-1)


def render_video(motion: Motion, out: str | os.PathLike, audio: str | os.PathLike | None = None,
                 fps: float = 30.0, size: tuple[int, int] = (640, 480), progress: bool = True) -> Path:
    """Write ``motion`` as an H.264 MP4 at ``out``.

    Args:
        motion: the clip (positions by forward kinematics, metres, Y-up).
        out: output path (written to a temporary file, then renamed).
        audio: optional audio file muxed as AAC; the last pose is held until the audio ends.
        fps: video frame rate (the clip is resampled to it).
        size: ``(width, height)`` in pixels; both must be multiples of 16.
        progress: show a progress bar.

    Returns the output path.
    """
    import imageio_ffmpeg
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure
    from matplotlib.patches import Polygon
    from tqdm import tqdm

    w, h = (int(v) for v in size)
    if w % 16 or h % 16 or w < 64 or h < 64:
        raise InputError(f"video size {w}x{h} must be at least 64x64 and a multiple of 16 (e.g. 640x480)")
    if fps <= 0:
        raise InputError(f"video frame rate must be positive, got {fps}")
    out = Path(out)
    if out.suffix.lower() != ".mp4":
        raise InputError(f"{out}: the output must be an .mp4 file")
    clip = resample(motion, fps)
    pos = np.asarray(clip.positions)
    parents = clip.skeleton.parents
    bones = [(int(p), j) for j, p in enumerate(parents) if p >= 0]
    n_frames = clip.n_frames
    if audio is not None:
        from webtest.stimuli import media_duration

        audio = Path(audio)
        if not audio.is_file():
            raise InputError(f"{audio}: audio file not found")
        n_frames = max(n_frames, int(np.ceil(media_duration(audio) * fps)))

    cam = Camera.fit(pos.min(axis=(0, 1)), pos.max(axis=(0, 1)), w, h)
    lo, hi = pos.min(axis=(0, 1)), pos.max(axis=(0, 1))
    g = cam.ground
    fig = Figure(figsize=(w / 100, h / 100), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, w)
    ax.set_ylim(h, 0)
    ax.axis("off")
    fig.patch.set_facecolor("#eef2f6")
    x0, x1, z0, z1 = lo[0] - 0.5, hi[0] + 0.5, lo[2] - 0.5, hi[2] + 0.5
    patch = cam.project(np.array([[x0, g, z0], [x1, g, z0], [x1, g, z1], [x0, g, z1]]))
    ax.add_patch(Polygon(patch, closed=True, facecolor="#d5dde6", edgecolor="none"))
    grid = [cam.project(np.array([[v, g, z0], [v, g, z1]])) for v in np.arange(np.ceil(x0 / 0.5) * 0.5, x1, 0.5)]
    grid += [cam.project(np.array([[x0, g, v], [x1, g, v]])) for v in np.arange(np.ceil(z0 / 0.5) * 0.5, z1, 0.5)]
    ax.add_collection(LineCollection(grid, colors="#b4bfcc", linewidths=1))
    shadow = LineCollection([], colors=(0.16, 0.2, 0.24, 0.25), linewidths=4, capstyle="round")
    body = LineCollection([], colors="#1f3b73", linewidths=4, capstyle="round")
    ax.add_collection(shadow)
    ax.add_collection(body)
    dots = ax.scatter([], [], s=10, c="#c0392b", zorder=3)

    fd, tmp = tempfile.mkstemp(dir=out.parent if str(out.parent) else ".", prefix=".tmp-", suffix=".mp4")
    os.close(fd)
    writer = imageio_ffmpeg.write_frames(
        tmp, (w, h), fps=fps, codec="libx264", pix_fmt_in="rgb24", macro_block_size=16,
        audio_path=str(audio) if audio is not None else None, audio_codec="aac" if audio is not None else None,
        output_params=["-movflags", "+faststart"])
    try:
        writer.send(None)
        for f in tqdm(range(n_frames), desc=f"render {out.name}", unit="frame", disable=not progress):
            p = pos[min(f, clip.n_frames - 1)]
            scr = cam.project(p)
            flat = p.copy()
            flat[:, 1] = g
            sh = cam.project(flat)
            body.set_segments([scr[[a, b]] for a, b in bones])
            shadow.set_segments([sh[[a, b]] for a, b in bones])
            dots.set_offsets(scr)
            canvas.draw()
            frame = np.asarray(canvas.buffer_rgba())[..., :3]
            writer.send(np.ascontiguousarray(frame))
        writer.close()
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        writer.close()
        Path(tmp).unlink(missing_ok=True)
        raise
    return out
