"""Fallback videos of motion stimuli for browsers without WebGL (``playback.video_fallback``).

When a study asks for them, every motion stimulus is rendered once, when the study is prepared
(``evalkit study build``, ``evalkit serve --check`` or the server's start), to an H.264 MP4 by
the trial page's own renderer driven headless (:mod:`webtest.render`): the same mannequin, ground,
camera (``playback.camera``), framing and background, in the colour of the side it is shown on
(one video when both sides share a colour), with the stimulus's audio muxed in. The trial page
plays these videos in place of the 3-D canvases when the browser cannot draw WebGL. The camera of
a video is fitted to its own clip (on the page it is fitted to both clips of the pair), so the
zoom may differ slightly between the two presentations.

Videos live beside the motion JSON in ``<study>/.webtest/stimuli/`` under names keyed by
everything that changes their pixels (the clip's JSON, the look, the size, the renderer's files),
so they are rendered again only when one of those changes.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Mapping

from webtest.stimuli import PreparedStimulus, media_duration
from webtest.study import Study

#: Size of the fallback videos in pixels (4:3 like the trial page's canvases; multiples of 16).
VIDEO_SIZE = (640, 480)
_RENDERER_FILES = ("stage.js", "render.js", "render.html")


def _renderer_hash() -> str:
    """Hash of the renderer's own files: a changed renderer makes new videos."""
    from webtest.render import STATIC

    h = hashlib.sha256()
    for name in _RENDERER_FILES:
        h.update((STATIC / name).read_bytes())
    return h.hexdigest()


def video_key(stim: PreparedStimulus, study: Study, color: str | None, renderer: str) -> str:
    """16 hex characters naming a fallback video of ``stim`` in ``color`` (None: the default):
    the clip's JSON and audio files, the study's look, the video size and the renderer."""
    pb = study.playback
    h = hashlib.sha256()
    h.update(stim.path.read_bytes())
    if stim.audio is not None:
        h.update(Path(stim.audio).read_bytes())
    h.update(repr((pb.camera, pb.framing, color, pb.background, VIDEO_SIZE, renderer)).encode())
    return h.hexdigest()[:16]


def prepare_fallback_videos(study: Study, stimuli: Mapping[str, PreparedStimulus], cache_dir: Path,
                            progress: bool = False) -> dict[str, PreparedStimulus]:
    """The prepared stimuli with their fallback videos (``PreparedStimulus.fallback``), rendering
    those not in ``cache_dir`` yet (one headless chromium for all of them).

    Returns ``stimuli`` unchanged when the study does not set ``playback.video_fallback``.

    Raises:
        webtest.render.RendererUnavailable: a video must be rendered and chromium cannot be
            started or has no WebGL (the message says how to install it).
    """
    if not study.playback.video_fallback:
        return dict(stimuli)
    renderer_id = _renderer_hash()
    colors = (study.playback.color_left, study.playback.color_right)
    planned: dict[str, tuple[Path, Path]] = {}
    todo: dict[Path, tuple[PreparedStimulus, str | None]] = {}
    for sid, stim in stimuli.items():
        if stim.kind != "motion":
            continue
        paths = []
        for color in colors:
            path = cache_dir / f"{sid}-{video_key(stim, study, color, renderer_id)}.mp4"
            paths.append(path)
            if not path.exists():
                todo[path] = (stim, color)
        planned[sid] = (paths[0], paths[1])
    if todo:
        _render_all(study, todo, progress)
    return {sid: replace(stim, fallback=planned[sid]) if sid in planned else stim for sid, stim in stimuli.items()}


def _render_all(study: Study, todo: Mapping[Path, tuple[PreparedStimulus, str | None]], progress: bool) -> None:
    """Render each ``path -> (stimulus, colour)`` of ``todo`` with one headless chromium."""
    from tqdm import tqdm

    from webtest.render import Look, Renderer, write_video

    pb = study.playback
    with Renderer() as r:
        for path, (stim, color) in tqdm(todo.items(), desc="fallback videos", unit="video", disable=not progress):
            with open(stim.path, encoding="utf-8") as fh:
                clip = json.load(fh)
            r.load(clip, VIDEO_SIZE, Look(pb.camera, pb.framing, color, pb.background))
            fps = float(clip["fps"])
            n_frames = int(clip["frames"])
            if stim.audio is not None:  # the last pose is held until the audio ends
                n_frames = max(n_frames, int(math.ceil(media_duration(Path(stim.audio)) * fps)))
            path.parent.mkdir(parents=True, exist_ok=True)
            write_video(r, path, n_frames, fps, audio=stim.audio)
