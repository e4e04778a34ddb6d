"""Render motion clips to MP4 videos and PNG stills with the trial page's own renderer.

evalkit has one renderer: ``static/stage.js`` (three.js, WebGL), which draws the shaded
mannequin, the ground, the contact shadows and the ``follow``/``fixed`` cameras on the trial
page. This module drives it headless: it starts chromium through Playwright (software WebGL by
SwiftShader, so no GPU is needed), opens ``static/render.html`` (served from the package's
static folder by request interception, no server and no network), hands it the clip as the
trial page receives it (:func:`webtest.stimuli.motion_payload`) and steps the frames one by one
at the video's frame rate (frame-exact, not real-time playback). Each frame's pixels are read
back from WebGL and piped to the ffmpeg binary that ships with imageio-ffmpeg (H.264, the audio
muxed as AAC). What a participant sees and what a video shows are therefore the same pixels,
drawn by the same code.

Chromium: ``EVALKIT_CHROMIUM`` if set, else Debian's ``/usr/bin/chromium`` (or ``chromium`` /
``chromium-browser`` on the PATH), else the browser Playwright installs
(``python -m playwright install chromium``).
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from evalkit.errors import EvalkitError, InputError
from evalkit.motion import Motion, resample
from webtest.study import CAMERAS, FRAMINGS

STATIC = Path(__file__).resolve().parent / "static"
#: Chromium flags for headless software rendering: WebGL through ANGLE on SwiftShader.
LAUNCH_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
               "--enable-unsafe-swiftshader", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run")
_ORIGIN = "http://evalkit-render.invalid/"
_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".json": "application/json"}


class RendererUnavailable(EvalkitError):
    """Chromium (or Playwright) is missing, or WebGL does not work in it."""


def _unrun(text: str) -> bytes:
    """The page's run-length coded pixels (base64 of little-endian uint32 pairs: run length,
    RGBA pixel) as raw RGBA bytes."""
    pairs = np.frombuffer(base64.b64decode(text), "<u4").reshape(-1, 2)
    return np.repeat(pairs[:, 1], pairs[:, 0]).astype("<u4").tobytes()


def find_chromium() -> str | None:
    """Path of the chromium to drive: ``EVALKIT_CHROMIUM``, Debian's, one on the PATH, or None
    (then Playwright's own browser is tried)."""
    env = os.environ.get("EVALKIT_CHROMIUM")
    if env:
        return env
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass(frozen=True)
class Look:
    """How a clip is filmed: ``camera`` (follow|fixed), ``framing`` (full|upper), the figure's
    ``color`` and the ``background`` (``#rrggbb``; None: the defaults of stage.js);
    ``antialias``: multisampled edges (off on the trial page, so off by default: the same pixels)."""

    camera: str = "follow"
    framing: str = "full"
    color: str | None = None
    background: str | None = None
    antialias: bool = False

    def __post_init__(self):
        if self.camera not in CAMERAS:
            raise InputError(f"camera {self.camera!r} is not one of {', '.join(CAMERAS)}")
        if self.framing not in FRAMINGS:
            raise InputError(f"framing {self.framing!r} is not one of {', '.join(FRAMINGS)}")
        from webtest.study import check_color

        for name in ("color", "background"):
            v = getattr(self, name)
            if v is not None and check_color(v) is None:
                raise InputError(f"{name} {v!r} is not a colour; give #rgb or #rrggbb")


def clip_payload(motion: Motion) -> dict:
    """The clip as the trial page receives it (joint positions, parents, roles, fps)."""
    from webtest.stimuli import motion_payload

    return motion_payload(motion)


class Renderer(AbstractContextManager):
    """Headless chromium with the renderer page loaded; a context manager (closes the browser).

    ``load`` sets a clip, ``frame(f)`` returns frame ``f`` as ``(height, width, 3)`` uint8 RGB
    (top row first) and ``project(f, points)`` the pixel coordinates of world points (metres)
    through frame ``f``'s camera.
    """

    def __init__(self):
        # Playwright's sync API runs on one thread that has no asyncio loop of its own (a caller
        # may have one, e.g. another Playwright session): every call goes to a worker thread.
        from concurrent.futures import ThreadPoolExecutor

        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalkit-render")
        try:
            self._run(self._start)
        except BaseException:
            self._pool.shutdown()
            raise
        self._page = None
        self.size = (0, 0)

    def _run(self, fn, *args):
        return self._pool.submit(fn, *args).result()

    def _start(self):
        try:
            from playwright.sync_api import Error as PlaywrightError
            from playwright.sync_api import sync_playwright
        except ImportError:  # pragma: no cover - playwright is a dependency
            raise RendererUnavailable("rendering needs the Python package playwright: pip install playwright") from None
        self._pw = sync_playwright().start()
        exe = find_chromium()
        try:
            self._browser = self._pw.chromium.launch(executable_path=exe, args=list(LAUNCH_ARGS))
        except PlaywrightError as exc:
            self._pw.stop()
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RendererUnavailable(
                f"cannot start chromium ({exe or 'Playwright browser'}: {first}); install Debian's chromium "
                "(apt-get install chromium), or run 'python -m playwright install chromium', or set "
                "EVALKIT_CHROMIUM to a chromium binary") from None

    def _open(self, width: int, height: int):
        if self._page is not None and self.size == (width, height):
            return
        if self._page is not None:
            self._page.close()
        page = self._browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))

        def serve(route):
            rel = route.request.url[len(_ORIGIN):].split("?")[0]
            path = (STATIC / rel).resolve()
            if STATIC not in path.parents or not path.is_file():
                route.fulfill(status=404, body="not found")
                return
            route.fulfill(status=200, body=path.read_bytes(),
                          headers={"Content-Type": _TYPES.get(path.suffix, "application/octet-stream")})

        page.route(_ORIGIN + "**", serve)
        page.goto(_ORIGIN + "render.html")
        page.wait_for_function("window.evalkitReady === true", timeout=30_000)
        if errors:
            raise RendererUnavailable(f"the renderer page failed in chromium: {errors[0]}")
        if not page.evaluate("evalkitRender.webgl()"):
            raise RendererUnavailable("WebGL does not work in this chromium (the renderer needs it; "
                                      "headless chromium provides it by SwiftShader)")
        self._page = page
        self.size = (width, height)

    def load(self, clip: dict, size: tuple[int, int], look: Look = Look(), fit: Sequence[dict] = ()) -> dict:
        """Set the clip to draw (a :func:`clip_payload`) on a ``size`` = (width, height) pixel
        canvas; ``fit``: other clips the camera is fitted to together with it (as the two sides
        of a trial). Returns ``{"frames": F, "H": body height in metres, "full": mannequin with
        roles}``."""
        w, h = (int(v) for v in size)
        self._run(self._open, w, h)
        opts = {"width": w, "height": h, "camera": look.camera, "framing": look.framing,
                "color": look.color, "background": look.background, "antialias": look.antialias,
                "fit": list(fit)}
        info = self.evaluate("([c, o]) => evalkitRender.setup(c, o)", [clip, opts])
        self.frames = int(info["frames"])
        return info

    def frame(self, f: int) -> np.ndarray:
        """Frame ``f`` of the loaded clip: ``(height, width, 3)`` uint8 RGB, top row first."""
        w, h = self.size
        return np.frombuffer(self.frame_rgba_bottom_up(f), np.uint8).reshape(h, w, 4)[::-1, :, :3]

    def frame_rgba_bottom_up(self, f: int) -> bytes:
        """Frame ``f`` as raw RGBA bytes, bottom row first (as WebGL reads them; for ffmpeg)."""
        return _unrun(self.evaluate("f => evalkitRender.frame(f)", int(f)))

    def frames_rgba_bottom_up(self, frames):
        """Raw RGBA bytes (bottom row first) of each frame index in ``frames``, in order; the
        page draws the next frame while the caller handles this one."""
        pending = None
        for f in frames:
            nxt = self._pool.submit(self._page.evaluate, "f => evalkitRender.frame(f)", int(f))
            if pending is not None:
                yield _unrun(pending.result())
            pending = nxt
        if pending is not None:
            yield _unrun(pending.result())

    def project(self, f: int, points) -> np.ndarray:
        """Pixel coordinates ``(n, 2)`` (x right, y down) of world points ``(n, 3)`` metres
        through the camera of frame ``f``."""
        pts = np.asarray(points, float).reshape(-1, 3).tolist()
        return np.asarray(self.evaluate("([f, p]) => evalkitRender.project(f, p)", [int(f), pts]), float)

    def evaluate(self, expression: str, arg=None):
        """Evaluate a JavaScript expression in the renderer page (``window.evalkitRender`` is its API)."""
        return self._run(self._page.evaluate, expression, arg)

    def _stop(self):
        try:
            self._browser.close()
        finally:
            self._pw.stop()

    def close(self) -> None:
        try:
            self._run(self._stop)
        finally:
            self._pool.shutdown()

    def __exit__(self, *exc):
        self.close()
        return False


def _check_size(size: tuple[int, int], multiple: int = 16) -> tuple[int, int]:
    w, h = (int(v) for v in size)
    if w % multiple or h % multiple or w < 64 or h < 64:
        raise InputError(f"video size {w}x{h} must be at least 64x64 and a multiple of {multiple} (e.g. 640x480)")
    return w, h


def render_video(motion: Motion, out: str | os.PathLike, audio: str | os.PathLike | None = None,
                 fps: float = 30.0, size: tuple[int, int] = (640, 480), progress: bool = True,
                 camera: str = "follow", framing: str = "full", color: str | None = None,
                 background: str | None = None, renderer: Renderer | None = None,
                 antialias: bool = False) -> Path:
    """Write ``motion`` as an H.264 MP4 at ``out``, drawn by the trial page's renderer.

    Args:
        motion: the clip (positions by forward kinematics, metres, Y-up).
        out: output path (written to a temporary file, then renamed).
        audio: optional audio file muxed as AAC; the last pose is held until the audio ends.
        fps: video frame rate; the clip is resampled to it and frame ``k`` shows time ``k / fps`` s.
        size: ``(width, height)`` in pixels; both must be multiples of 16.
        progress: show a progress bar.
        camera, framing, color, background, antialias: see :class:`Look`.
        renderer: a running :class:`Renderer` to reuse (one is started and closed otherwise).

    Returns the output path.
    """
    w, h = _check_size(size)
    if not fps > 0:
        raise InputError(f"video frame rate must be positive, got {fps}")
    look = Look(camera, framing, color, background, antialias)
    out = Path(out)
    if out.suffix.lower() != ".mp4":
        raise InputError(f"{out}: the output must be an .mp4 file")
    clip = resample(motion, fps)
    n_frames = clip.n_frames
    if audio is not None:
        from webtest.stimuli import media_duration

        audio = Path(audio)
        if not audio.is_file():
            raise InputError(f"{audio}: audio file not found")
        n_frames = max(n_frames, int(np.ceil(media_duration(audio) * fps)))
    own = renderer is None
    r = Renderer() if own else renderer
    try:
        r.load(clip_payload(clip), (w, h), look)
        write_video(r, out, n_frames, fps, audio=audio, progress=progress)
    finally:
        if own:
            r.close()
    return out


def write_video(renderer: Renderer, out: str | os.PathLike, n_frames: int, fps: float,
                audio: str | os.PathLike | None = None, progress: bool = False) -> Path:
    """Encode ``n_frames`` frames of the clip loaded in ``renderer`` (frames past its end hold its
    last pose) as an H.264 MP4 at ``fps`` with the ffmpeg of imageio-ffmpeg, the audio muxed as
    AAC; written to a temporary file beside ``out``, then renamed. Returns ``out``."""
    import imageio_ffmpeg
    from tqdm import tqdm

    out = Path(out)
    w, h = renderer.size
    if w % 2 or h % 2:
        raise InputError(f"video size {w}x{h}: H.264 needs even sides")
    last = renderer.frames - 1
    fd, tmp = tempfile.mkstemp(dir=out.parent if str(out.parent) else ".", prefix=".tmp-", suffix=".mp4")
    os.close(fd)
    writer = imageio_ffmpeg.write_frames(
        tmp, (w, h), fps=fps, codec="libx264", pix_fmt_in="rgba", macro_block_size=2,
        audio_path=str(audio) if audio is not None else None, audio_codec="aac" if audio is not None else None,
        output_params=["-vf", "vflip", "-movflags", "+faststart"])
    try:
        writer.send(None)
        shown = (min(f, last) for f in range(n_frames))
        for data in tqdm(renderer.frames_rgba_bottom_up(shown), total=n_frames, desc=f"render {out.name}",
                         unit="frame", disable=not progress):
            writer.send(data)
        writer.close()
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, out)
    except BaseException:
        writer.close()
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def render_frames(motion: Motion, times: Sequence[float], size: tuple[int, int] = (640, 480),
                  camera: str = "follow", framing: str = "full", color: str | None = None,
                  background: str | None = None, renderer: Renderer | None = None,
                  fps: float = 30.0, antialias: bool = False) -> list[np.ndarray]:
    """The poses of ``motion`` at ``times`` (seconds from its start) as ``(height, width, 3)``
    uint8 RGB images, with the camera of a ``fps`` video of the clip (frame ``floor(t * fps)``)."""
    w, h = (int(v) for v in size)
    if not (16 <= w <= 7680 and 16 <= h <= 7680):
        raise InputError(f"image size {w}x{h}: each side must be 16 to 7680 pixels")
    look = Look(camera, framing, color, background, antialias)
    clip = resample(motion, fps)
    for t in times:
        if not (0 <= t <= motion.duration + 1e-9):
            raise InputError(f"time {t:g} s is outside the clip (0 to {motion.duration:.3f} s)")
    own = renderer is None
    r = Renderer() if own else renderer
    try:
        r.load(clip_payload(clip), (w, h), look)
        return [r.frame(min(int(np.floor(t * fps + 1e-6)), clip.n_frames - 1)).copy() for t in times]
    finally:
        if own:
            r.close()


def strip_image(frames: Sequence[np.ndarray], times: Sequence[float], gap: int = 6) -> np.ndarray:
    """Frames side by side, ``gap`` white pixels apart, each labelled with its time (seconds)
    under it: ``(height + label, n * width + (n - 1) * gap, 3)`` uint8."""
    from PIL import Image, ImageDraw, ImageFont

    h, w = frames[0].shape[:2]
    label = max(14, h // 16)
    img = Image.new("RGB", (len(frames) * w + (len(frames) - 1) * gap, h + label + 4), "white")
    draw = ImageDraw.Draw(img)
    try:
        font = ImageFont.load_default(size=int(label * 0.8))
    except TypeError:  # Pillow < 10.1
        font = ImageFont.load_default()
    for i, (fr, t) in enumerate(zip(frames, times)):
        x = i * (w + gap)
        img.paste(Image.fromarray(fr), (x, 0))
        text = f"{t:.2f} s"
        tw = draw.textlength(text, font=font)
        draw.text((x + (w - tw) / 2, h + 2), text, fill=(40, 40, 40), font=font)
    return np.asarray(img)
