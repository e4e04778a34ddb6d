"""The matplotlib stick-figure renderer evalkit shipped before the three.js renderer (formerly
``webtest/video.py``), kept unchanged only as the peer of ``bench/bench_render.py``. evalkit itself
renders with ``webtest/static/stage.js`` (``webtest.render``); nothing in the package imports this.

Render a motion clip to an MP4 video (stick figure, ground grid, optional audio track).

Frames are drawn with matplotlib (Agg) with the same cameras as the browser player
(``static/player.js``) and piped to the ffmpeg binary that ships with imageio-ffmpeg, so nothing
needs installing. Two cameras (the study setting ``playback.camera``, ``evalkit render --camera``):

``follow`` (default)
    The view centre follows the clip's root (joint 0, the hips) horizontally, smoothed by a
    centred moving average over :data:`FOLLOW_WINDOW_S` seconds so the pelvis sway does not
    shake the picture; the zoom makes a standing body (the clip's vertical extent) fill
    :data:`FOLLOW_FILL` of the image height, shrunk if any joint of any frame would come closer
    than :data:`FOLLOW_MARGIN` to an edge. The ground grid stays fixed to the world (lines every
    :data:`GRID_STEP` metres around the view centre), so a travelling figure walks over it and
    a sliding foot slides against it.
``fixed``
    One still camera fitted to the clip's whole bounds (the whole path is in view, so a clip
    that travels several metres shows a small figure).

Both look 35 degrees off the longer horizontal side of the bounds (the direction of travel),
14 degrees down.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from evalkit.errors import InputError
from evalkit.motion import Motion, resample
from webtest.study import CAMERAS  # ("follow", "fixed"): follow the root, or fixed on the whole path

#: Length of the centred moving average that smooths the followed root path, seconds.
FOLLOW_WINDOW_S = 1.0
#: Fraction of the image height a standing body fills with the follow camera.
FOLLOW_FILL = 0.65
#: Least distance between any joint and the image edge with the follow camera, fraction of the side.
FOLLOW_MARGIN = 0.04
#: Spacing of the ground grid lines, metres.
GRID_STEP = 0.5
#: Half-size of the grid square drawn around the follow camera's view centre, metres.
FOLLOW_GRID_M = 6.0
#: Half-size of the ground patch drawn around the follow camera's view centre, metres.
FOLLOW_FLOOR_M = 18.0


def _azimuth(lo: np.ndarray, hi: np.ndarray) -> float:
    """Default azimuth in degrees: 35 degrees off the longer horizontal side of the bounds."""
    return 55.0 if (hi[0] - lo[0]) > (hi[2] - lo[2]) else 35.0


def _orient(target: np.ndarray, azimuth_deg: float, elevation_deg: float, dist: float):
    """Eye position and unit right/up/forward vectors of a camera ``dist`` metres from ``target``."""
    az, el = np.deg2rad(azimuth_deg), np.deg2rad(elevation_deg)
    eye = target + dist * np.array([np.sin(az) * np.cos(el), np.sin(el), np.cos(az) * np.cos(el)])
    f = (target - eye) / np.linalg.norm(target - eye)
    r = np.cross(f, [0.0, 1.0, 0.0])
    r /= np.linalg.norm(r)
    return eye, r, np.cross(r, f), f


def smooth_path(xz: np.ndarray, fps: float, window_s: float = FOLLOW_WINDOW_S) -> np.ndarray:
    """Centred moving average of a horizontal path.

    Args:
        xz: ``(frames, 2)`` positions in metres (world x and z of the root).
        fps: frames per second of the path.
        window_s: length of the averaging window in seconds (``2k + 1`` frames, ``k`` =
            window_s * fps / 2 rounded half up, at most ``frames - 1``).

    Returns ``(frames, 2)`` metres. The ends are padded by point reflection (``2 x0 - x[k..1]``),
    so a steady walk stays centred up to its first and last frame instead of lagging behind.
    """
    xz = np.asarray(xz, float)
    n = len(xz)
    k = min(int(np.floor(window_s * fps / 2 + 0.5)), n - 1)  # halves round up, as Math.round in player.js
    if k < 1:
        return xz.copy()
    pad = np.concatenate([2 * xz[0] - xz[k:0:-1], xz, 2 * xz[-1] - xz[-2:-k - 2:-1]])
    c = np.cumsum(np.vstack([np.zeros((1, 2)), pad]), axis=0)
    return (c[2 * k + 1:] - c[:-2 * k - 1]) / (2 * k + 1)


def view_centres(positions: np.ndarray, fps: float, height: float) -> np.ndarray:
    """Per-frame view centres ``(frames, 3)`` metres of the follow camera for one clip: the
    smoothed root (joint 0) x/z of ``positions`` ``(frames, joints, 3)`` at ``fps`` and the
    constant ``height`` (metres, the middle of the standing body)."""
    xz = smooth_path(np.asarray(positions, float)[:, 0, [0, 2]], fps)
    return np.column_stack([xz[:, 0], np.full(len(xz), float(height)), xz[:, 1]])


@dataclass(frozen=True)
class Camera:
    """A pinhole camera looking at ``target`` from a fixed direction.

    ``project`` maps world points ``(..., 3)`` in metres to pixel coordinates ``(..., 2)``
    (origin top-left) for an image of ``width`` x ``height`` pixels; ``ground`` is the height of
    the ground plane (metres). ``at`` moves the camera (same direction and zoom) to look at
    another point, which is how the follow camera tracks a clip.
    """

    eye: np.ndarray
    right: np.ndarray
    up: np.ndarray
    forward: np.ndarray
    scale: float
    ox: float
    oy: float
    ground: float
    target: np.ndarray | None = None

    @classmethod
    def fit(cls, lo: np.ndarray, hi: np.ndarray, width: int, height: int,
            azimuth_deg: float | None = None, elevation_deg: float = 14.0) -> "Camera":
        """The ``fixed`` camera for bounds ``lo``/``hi`` ``(3,)`` metres. By default it looks 35
        degrees off the longer horizontal side of the bounds (the direction of travel), so long
        paths recede into depth instead of shrinking the figure."""
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        c = (lo + hi) / 2
        ext = max(float((hi - lo).max()), 1.0)
        if azimuth_deg is None:
            azimuth_deg = _azimuth(lo, hi)
        eye, r, u, f = _orient(c, azimuth_deg, elevation_deg, 2.6 * ext + 2.0)
        cam = cls(eye, r, u, f, 1.0, 0.0, 0.0, float(lo[1]), c)
        corners = np.array([[x, y, z] for x in (lo[0] - 0.3, hi[0] + 0.3) for y in (lo[1], hi[1])
                            for z in (lo[2] - 0.3, hi[2] + 0.3)])
        q = cam._raw(corners)
        (minx, miny), (maxx, maxy) = q.min(axis=0), q.max(axis=0)
        margin = 0.06
        scale = min(width * (1 - 2 * margin) / (maxx - minx), height * (1 - 2 * margin) / (maxy - miny))
        return cls(eye, r, u, f, float(scale), width / 2 - scale * (minx + maxx) / 2,
                   height / 2 + scale * (miny + maxy) / 2, float(lo[1]), c)

    @classmethod
    def follow(cls, lo: np.ndarray, hi: np.ndarray, width: int, height: int,
               clips: Sequence[tuple[np.ndarray, np.ndarray]] = (),
               azimuth_deg: float | None = None, elevation_deg: float = 14.0) -> "Camera":
        """The ``follow`` camera shared by clips with union bounds ``lo``/``hi`` ``(3,)`` metres.

        Same direction rule as :meth:`fit`. It looks at ``(0, middle of the vertical extent, 0)``
        from ``2.6 * body + 2`` metres (``body``: the vertical extent, at least 1 m); move it onto
        a frame's view centre with :meth:`at`. The zoom makes the vertical extent, seen at the
        view centre, :data:`FOLLOW_FILL` of ``height`` pixels and centres it; ``clips`` holds
        ``(positions (frames, joints, 3), view centres (frames, 3))`` pairs (metres) and the zoom
        shrinks until every joint of every frame, seen from its own centre, stays
        :data:`FOLLOW_MARGIN` inside the image.
        """
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        body = max(float(hi[1] - lo[1]), 1.0)
        if azimuth_deg is None:
            azimuth_deg = _azimuth(lo, hi)
        target = np.array([0.0, (lo[1] + hi[1]) / 2, 0.0])
        eye, r, u, f = _orient(target, azimuth_deg, elevation_deg, 2.6 * body + 2.0)
        cam = cls(eye, r, u, f, 1.0, 0.0, 0.0, float(lo[1]), target)
        top, bottom = cam._raw(np.array([[0.0, hi[1], 0.0], [0.0, lo[1], 0.0]]))
        a, b = (top + bottom) / 2  # raw coordinates put at the image centre
        scale = FOLLOW_FILL * height / max(top[1] - bottom[1], 1e-6)
        for pos, centres in clips:
            q = cam._raw(np.asarray(pos, float) - (np.asarray(centres, float) - target)[:, None, :])
            dx, dy = np.abs(q[..., 0] - a).max(), np.abs(q[..., 1] - b).max()
            scale = min(scale, (0.5 - FOLLOW_MARGIN) * width / max(dx, 1e-6),
                        (0.5 - FOLLOW_MARGIN) * height / max(dy, 1e-6))
        return cls(eye, r, u, f, float(scale), width / 2 - scale * a, height / 2 + scale * b, float(lo[1]), target)

    def at(self, centre: np.ndarray) -> "Camera":
        """The same camera (direction, zoom) moved to look at ``centre`` ``(3,)`` metres."""
        centre = np.asarray(centre, float)
        return dataclasses.replace(self, eye=self.eye + centre - self.target, target=centre)

    def _raw(self, p: np.ndarray) -> np.ndarray:
        v = np.asarray(p, float) - self.eye
        z = np.maximum(v @ self.forward, 1e-3)
        return np.stack([(v @ self.right) / z, (v @ self.up) / z], axis=-1)

    def depth(self, p: np.ndarray) -> np.ndarray:
        """Distance of points ``(..., 3)`` in front of the eye along the view direction, metres."""
        return (np.asarray(p, float) - self.eye) @ self.forward

    def project(self, p: np.ndarray) -> np.ndarray:
        q = self._raw(p)
        return np.stack([self.ox + self.scale * q[..., 0], self.oy - self.scale * q[..., 1]], axis=-1)


#: Nearest depth (metres in front of the eye) at which ground lines and the patch are drawn.
NEAR_M = 0.5


def _clip_segments(cam: Camera, seg: np.ndarray) -> np.ndarray:
    """Ground line segments ``(n, 2, 3)`` metres cut to the part at least :data:`NEAR_M` in front
    of the eye (segments wholly behind it are dropped), so none wraps around the camera."""
    d = cam.depth(seg)  # (n, 2)
    keep = (d >= NEAR_M).any(axis=1)
    seg, d = seg[keep].copy(), d[keep]
    for i, j in ((0, 1), (1, 0)):
        bad = d[:, i] < NEAR_M
        t = (NEAR_M - d[bad, i]) / (d[bad, j] - d[bad, i])
        seg[bad, i] = seg[bad, i] + t[:, None] * (seg[bad, j] - seg[bad, i])
    return seg


def _clip_polygon(cam: Camera, poly: np.ndarray) -> np.ndarray:
    """A convex ground polygon ``(n, 3)`` metres cut at :data:`NEAR_M` in front of the eye
    (Sutherland-Hodgman against one plane); ``(m, 3)``, possibly empty."""
    out = []
    d = cam.depth(poly)
    for i in range(len(poly)):
        j = (i + 1) % len(poly)
        if d[i] >= NEAR_M:
            out.append(poly[i])
        if (d[i] >= NEAR_M) != (d[j] >= NEAR_M):
            out.append(poly[i] + (NEAR_M - d[i]) / (d[j] - d[i]) * (poly[j] - poly[i]))
    return np.array(out).reshape(-1, 3)


def ground_lines(x0: float, x1: float, z0: float, z1: float, y: float, step: float = GRID_STEP) -> np.ndarray:
    """Grid segments ``(n, 2, 3)`` metres on the plane at height ``y`` over ``[x0, x1] x [z0, z1]``,
    one every ``step`` metres at world multiples of ``step`` (so the lines stay fixed to the
    world whatever the rectangle)."""
    xs = np.arange(np.ceil(x0 / step) * step, x1, step)
    zs = np.arange(np.ceil(z0 / step) * step, z1, step)
    seg = [[[v, y, z0], [v, y, z1]] for v in xs] + [[[x0, y, v], [x1, y, v]] for v in zs]
    return np.array(seg, float).reshape(-1, 2, 3)


def _square(c: np.ndarray, half: float, y: float) -> np.ndarray:
    """Corners ``(4, 3)`` of the horizontal square of half-size ``half`` metres around ``c``."""
    x, z = float(c[0]), float(c[2])
    return np.array([[x - half, y, z - half], [x + half, y, z - half], [x + half, y, z + half], [x - half, y, z + half]])


def render_video(motion: Motion, out: str | os.PathLike, audio: str | os.PathLike | None = None,
                 fps: float = 30.0, size: tuple[int, int] = (640, 480), progress: bool = True,
                 camera: str = "follow") -> Path:
    """Write ``motion`` as an H.264 MP4 at ``out``.

    Args:
        motion: the clip (positions by forward kinematics, metres, Y-up).
        out: output path (written to a temporary file, then renamed).
        audio: optional audio file muxed as AAC; the last pose is held until the audio ends.
        fps: video frame rate (the clip is resampled to it).
        size: ``(width, height)`` in pixels; both must be multiples of 16.
        progress: show a progress bar.
        camera: ``follow`` (the view follows the smoothed root, a standing body fills about
            65 % of the height) or ``fixed`` (one view of the whole path); see the module docstring.

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
    if camera not in CAMERAS:
        raise InputError(f"camera {camera!r} is not one of {', '.join(CAMERAS)}")
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

    lo, hi = pos.min(axis=(0, 1)), pos.max(axis=(0, 1))
    if camera == "follow":
        centres = view_centres(pos, fps, (lo[1] + hi[1]) / 2)
        cam = Camera.follow(lo, hi, w, h, clips=[(pos, centres)])
    else:
        centres = None
        cam = Camera.fit(lo, hi, w, h)
    g = cam.ground
    fig = Figure(figsize=(w / 100, h / 100), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, w)
    ax.set_ylim(h, 0)
    ax.axis("off")
    fig.patch.set_facecolor("#eef2f6")
    floor = Polygon(np.zeros((3, 2)), closed=True, facecolor="#d5dde6", edgecolor="none")
    ax.add_patch(floor)
    grid = LineCollection([], colors="#b4bfcc", linewidths=1)
    ax.add_collection(grid)
    if centres is None:  # fixed: the patch and grid over the bounds, drawn once
        x0, x1, z0, z1 = lo[0] - 0.5, hi[0] + 0.5, lo[2] - 0.5, hi[2] + 0.5
        floor.set_xy(cam.project(np.array([[x0, g, z0], [x1, g, z0], [x1, g, z1], [x0, g, z1]])))
        grid.set_segments(list(cam.project(ground_lines(x0, x1, z0, z1, g))))
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
            k = min(f, clip.n_frames - 1)
            p = pos[k]
            view = cam
            if centres is not None:  # follow: move the camera, redraw the world-fixed ground
                view = cam.at(centres[k])
                c = centres[k]
                patch = _clip_polygon(view, _square(c, FOLLOW_FLOOR_M, g))
                floor.set_xy(view.project(patch) if len(patch) >= 3 else np.zeros((3, 2)))
                lines = ground_lines(c[0] - FOLLOW_GRID_M, c[0] + FOLLOW_GRID_M,
                                     c[2] - FOLLOW_GRID_M, c[2] + FOLLOW_GRID_M, g)
                grid.set_segments(list(view.project(_clip_segments(view, lines))))
            scr = view.project(p)
            flat = p.copy()
            flat[:, 1] = g
            sh = view.project(flat)
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
