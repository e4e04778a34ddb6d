"""The cameras of ``webtest.video`` (and ``evalkit render --camera``) on real walking capture.

CMU 16_15 walks 4.3 m in 3.9 s. The ``fixed`` camera keeps the whole path in view, so the figure
is small; the ``follow`` camera keeps it large and centred over a grid fixed to the world. Sizes
are measured on the decoded MP4 frames (pixels of the figure's colour), not taken from the code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evalkit.cli import main
from evalkit.data import sample_path

FPS, W, H = 15, 320, 240
BONE = np.array([0x1F, 0x3B, 0x73])   # the figure's colour (webtest/video.py, player.js)
PATCH = np.array([0xD5, 0xDD, 0xE6])  # the ground patch; grid lines are darker


def _frames(path: Path) -> list[np.ndarray]:
    import imageio_ffmpeg

    gen = imageio_ffmpeg.read_frames(str(path))
    meta = next(gen)
    w, h = meta["size"]
    return [np.frombuffer(f, np.uint8).reshape(h, w, 3).astype(int) for f in gen]


def _figure_box(frame: np.ndarray) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) pixel rows/columns of the figure's colour in one frame."""
    mask = np.abs(frame - BONE).sum(-1) < 60
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    assert len(rows), "no figure drawn"
    return rows[0], rows[-1], cols[0], cols[-1]


@pytest.fixture(scope="module")
def walk():
    from evalkit.motion import load_motion

    return load_motion(sample_path("cmu", "16_15.amc"))


@pytest.fixture(scope="module")
def videos(walk, tmp_path_factory) -> dict[str, list[np.ndarray]]:
    from webtest.video import render_video

    d = tmp_path_factory.mktemp("camera-videos")
    out = {}
    for camera in ("follow", "fixed"):
        render_video(walk, d / f"{camera}.mp4", fps=FPS, size=(W, H), progress=False, camera=camera)
        out[camera] = _frames(d / f"{camera}.mp4")
    return out


def test_the_walk_travels_several_metres(walk):
    root = np.asarray(walk.positions)[:, 0, [0, 2]]
    assert np.linalg.norm(root[-1] - root[0]) > 4.0


def test_follow_keeps_a_long_walk_large_centred_and_uncut_fixed_does_not(videos):
    heights = {}
    for camera, frames in videos.items():
        boxes = np.array([_figure_box(f) for f in frames])
        heights[camera] = (boxes[:, 1] - boxes[:, 0] + 1) / H
        if camera == "follow":
            centre_x = (boxes[:, 2] + boxes[:, 3]) / 2 / W
            assert centre_x.min() > 0.35 and centre_x.max() < 0.65, (centre_x.min(), centre_x.max())
            # head and feet never touch the image edge
            assert boxes[:, 0].min() > 0.04 * H and boxes[:, 1].max() < 0.96 * H
            assert boxes[:, 2].min() > 0 and boxes[:, 3].max() < W - 1
    # measured here: follow 0.62-0.66 of the height on every frame, fixed 0.28-0.39
    assert heights["follow"].min() >= 0.55, heights["follow"].min()
    assert heights["follow"].max() <= 0.75, heights["follow"].max()
    assert heights["fixed"].max() < 0.45 and heights["fixed"].mean() < 0.6 * heights["follow"].mean()


def test_follow_keeps_the_hips_in_the_middle(walk):
    from evalkit.motion import resample
    from webtest.video import Camera, view_centres

    pos = np.asarray(resample(walk, FPS).positions)
    lo, hi = pos.min(axis=(0, 1)), pos.max(axis=(0, 1))
    centres = view_centres(pos, FPS, (lo[1] + hi[1]) / 2)
    cam = Camera.follow(lo, hi, W, H, clips=[(pos, centres)])
    hips = np.array([cam.at(centres[k]).project(pos[k, 0]) for k in range(len(pos))])
    assert (np.abs(hips[:, 0] / W - 0.5) < 0.1).all(), np.abs(hips[:, 0] / W - 0.5).max()
    assert (np.abs(hips[:, 1] / H - 0.5) < 0.2).all()
    fixed = Camera.fit(lo, hi, W, H)
    far = np.abs(fixed.project(pos[:, 0])[:, 0] / W - 0.5).max()
    assert far > 0.15  # the fixed camera lets the hips wander across the picture


def test_follow_grid_is_fixed_to_the_world(walk, videos):
    """World grid lines (multiples of 0.5 m) seen through each frame's moved camera land on
    drawn grid pixels; cell centres mostly do not."""
    from evalkit.motion import resample
    from webtest.video import Camera, view_centres

    pos = np.asarray(resample(walk, FPS).positions)
    lo, hi = pos.min(axis=(0, 1)), pos.max(axis=(0, 1))
    centres = view_centres(pos, FPS, (lo[1] + hi[1]) / 2)
    cam = Camera.follow(lo, hi, W, H, clips=[(pos, centres)])
    on = {"line": [], "cell": []}
    for k in range(0, len(videos["follow"]), 5):
        img, view, c = videos["follow"][k], cam.at(centres[k]), centres[k]
        near_figure = np.abs(img - BONE).sum(-1) < 120
        for gx in np.arange(np.round(c[0] * 2) / 2 - 1.5, c[0] + 1.6, 0.5):
            for gz in np.arange(np.round(c[2] * 2) / 2 - 1.5, c[2] + 1.6, 0.5):
                for kind, p in (("line", (gx, cam.ground, gz + 0.25)), ("cell", (gx + 0.25, cam.ground, gz + 0.25))):
                    u, v = view.project(np.array(p))
                    i, j = int(round(v)), int(round(u))
                    if not (3 <= i < H - 3 and 3 <= j < W - 3) or near_figure[i - 3:i + 4, j - 3:j + 4].any():
                        continue
                    darker = PATCH.sum() - img[i - 1:i + 2, j - 1:j + 2].sum(-1)
                    on[kind].append(darker.max() > 25)
    assert len(on["line"]) > 100 and len(on["cell"]) > 100
    assert np.mean(on["line"]) > 0.95 and np.mean(on["cell"]) < 0.1, (np.mean(on["line"]), np.mean(on["cell"]))
    # and the grid moves in the picture as the camera follows the walk
    grid0 = (PATCH.sum() - videos["follow"][0].sum(-1)) > 25
    grid1 = (PATCH.sum() - videos["follow"][7].sum(-1)) > 25
    assert (grid0 != grid1).mean() > 0.05


def test_smoothed_root_path_removes_sway_and_stays_on_the_root(walk):
    from evalkit.motion import resample
    from webtest.video import smooth_path

    root = np.asarray(resample(walk, 30).positions)[:, 0, [0, 2]]
    s = smooth_path(root, 30)
    assert s.shape == root.shape
    assert np.abs(s - root).max() < 0.15  # metres, first and last frames included
    wobble = lambda p: np.sqrt((np.diff(p, 2, axis=0) ** 2).sum(-1).mean())  # noqa: E731 (second difference)
    assert wobble(s) < 0.2 * wobble(root), (wobble(s), wobble(root))
    # a steady straight walk is reproduced exactly, up to the ends (point-reflected padding)
    line = np.column_stack([np.zeros(50), np.arange(50) * 0.04])
    assert np.allclose(smooth_path(line, 30), line)


def test_render_camera_option(tmp_path, capsys):
    clip = str(sample_path("cmu", "16_15.amc"))
    assert main(["render", clip, "-o", str(tmp_path / "a.mp4"), "--end", "0.5", "--fps", "10", "--quiet",
                 "--camera", "fixed"]) == 0
    assert "fixed camera" in capsys.readouterr().out
    assert main(["render", clip, "-o", str(tmp_path / "b.mp4"), "--end", "0.5", "--fps", "10", "--quiet"]) == 0
    assert "follow camera" in capsys.readouterr().out  # the default
    with pytest.raises(SystemExit) as exc:
        main(["render", clip, "-o", str(tmp_path / "c.mp4"), "--camera", "moving"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--camera" in err and "invalid choice" in err and "follow" in err
    assert not (tmp_path / "c.mp4").exists()
    with pytest.raises(SystemExit):
        main(["render", "--help"])
    assert "--camera {follow,fixed}" in capsys.readouterr().out


def test_render_video_refuses_an_unknown_camera(walk, tmp_path):
    from evalkit.errors import InputError
    from webtest.video import render_video

    with pytest.raises(InputError, match="camera 'moving' is not one of follow, fixed"):
        render_video(walk.slice(0, 10), tmp_path / "x.mp4", progress=False, camera="moving")
    assert not list(tmp_path.iterdir())
