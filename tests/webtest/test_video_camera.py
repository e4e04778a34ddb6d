"""The one renderer (static/stage.js) driven headless by ``webtest.render`` (``evalkit render``),
on real walking capture, in real chromium.

CMU 16_15 walks 4.3 m in 3.9 s. The ``fixed`` camera keeps the whole path in view, so the figure
is small; the ``follow`` camera keeps it large and centred over a grid fixed to the world. Sizes
are measured on the decoded MP4 frames (pixels of the figure's colour), not taken from the code;
where a test needs where a world point lands, it asks the page's own camera (``project``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evalkit.cli import main
from evalkit.data import sample_path
from tests.conftest import require_system
from tests.webtest.helpers import figure_mask

FPS, W, H = 15, 320, 240


def figure_box(img: np.ndarray) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) pixel rows/columns of the figure in one frame."""
    mask = figure_mask(img)
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    assert len(rows), "no figure drawn"
    return rows[0], rows[-1], cols[0], cols[-1]


def need_chromium():
    from webtest.render import find_chromium

    require_system("chromium", find_chromium() is not None, "install Debian's chromium (apt-get install chromium)")


def _frames(path: Path) -> list[np.ndarray]:
    import imageio_ffmpeg

    gen = imageio_ffmpeg.read_frames(str(path))
    meta = next(gen)
    w, h = meta["size"]
    return [np.frombuffer(f, np.uint8).reshape(h, w, 3).astype(int) for f in gen]


@pytest.fixture(scope="module")
def renderer():
    need_chromium()
    from webtest.render import Renderer

    with Renderer() as r:
        yield r


@pytest.fixture(scope="module")
def walk():
    from evalkit.motion import load_motion

    return load_motion(sample_path("cmu", "16_15.amc"))


@pytest.fixture(scope="module")
def videos(walk, renderer, tmp_path_factory) -> dict[str, list[np.ndarray]]:
    from webtest.render import render_video

    d = tmp_path_factory.mktemp("camera-videos")
    out = {}
    for camera in ("follow", "fixed"):
        render_video(walk, d / f"{camera}.mp4", fps=FPS, size=(W, H), progress=False, camera=camera, renderer=renderer)
        out[camera] = _frames(d / f"{camera}.mp4")
    return out


def test_the_walk_travels_several_metres(walk):
    root = np.asarray(walk.positions)[:, 0, [0, 2]]
    assert np.linalg.norm(root[-1] - root[0]) > 4.0


def test_follow_keeps_a_long_walk_large_centred_and_uncut_fixed_does_not(walk, videos):
    assert len(videos["follow"]) == len(videos["fixed"]) == int(round(walk.duration * FPS))
    heights = {}
    for camera, frames in videos.items():
        boxes = np.array([figure_box(f) for f in frames])
        heights[camera] = (boxes[:, 1] - boxes[:, 0] + 1) / H
        if camera == "follow":
            centre_x = (boxes[:, 2] + boxes[:, 3]) / 2 / W
            assert centre_x.min() > 0.3 and centre_x.max() < 0.7, (centre_x.min(), centre_x.max())
            # head and feet never touch the image edge
            assert boxes[:, 0].min() > 0.03 * H and boxes[:, 1].max() < 0.97 * H
            assert boxes[:, 2].min() > 0 and boxes[:, 3].max() < W - 1
    # "a standing body fills about 65 % of the height"; measured here: follow 0.65-0.70 of the
    # height on every frame, fixed 0.40-0.50 (the walk comes towards the camera)
    assert 0.55 <= heights["follow"].min() and heights["follow"].max() <= 0.75, heights["follow"]
    assert heights["fixed"].min() < 0.45 and heights["fixed"].mean() < 0.75 * heights["follow"].mean()


def test_the_figure_is_a_body_not_lines(walk, renderer):
    """The silhouette's area is several times that of the stick figure of the same joints at the
    same scale (bones 4 px wide and joint dots 5 px across, as the former renderer drew them,
    rasterised), and its height matches the joints' projected height plus the head above the
    head joint."""
    from PIL import Image, ImageDraw

    from evalkit.motion import resample
    from webtest.render import clip_payload

    clip = resample(walk, FPS)
    pos = np.asarray(clip.positions)
    W, H = 480, 360  # the trial page's canvas
    renderer.load(clip_payload(clip), (W, H))
    bones = [(int(p), j) for j, p in enumerate(clip.skeleton.parents) if p >= 0]
    ratios = []
    for f in range(0, clip.n_frames, 12):
        img = renderer.frame(f)
        q = renderer.project(f, pos[f])
        im = Image.new("1", (W, H), 0)
        draw = ImageDraw.Draw(im)
        for a, b in bones:
            draw.line([tuple(q[a]), tuple(q[b])], fill=1, width=4)
        for x, y in q:
            draw.ellipse([x - 2.5, y - 2.5, x + 2.5, y + 2.5], fill=1)
        stick = np.asarray(im).sum()
        area = figure_mask(img).sum()
        ratios.append(area / stick)
        top, bottom, _, _ = figure_box(img)
        joints_h = q[:, 1].max() - q[:, 1].min()
        assert joints_h < bottom - top + 1 < 1.35 * joints_h, (f, bottom - top + 1, joints_h)
    # measured here: 3.6-4.1 times the stick figure's area
    assert min(ratios) > 3.0, ratios


def test_follow_keeps_the_hips_in_the_middle(walk, renderer):
    from evalkit.motion import resample
    from webtest.render import Look, clip_payload

    pos = np.asarray(resample(walk, FPS).positions)
    payload = clip_payload(resample(walk, FPS))
    renderer.load(payload, (W, H), Look(camera="follow"))
    hips = np.array([renderer.project(k, pos[k, :1])[0] for k in range(len(pos))])
    assert (np.abs(hips[:, 0] / W - 0.5) < 0.1).all(), np.abs(hips[:, 0] / W - 0.5).max()
    assert (np.abs(hips[:, 1] / H - 0.5) < 0.2).all()
    renderer.load(payload, (W, H), Look(camera="fixed"))
    fixed = np.array([renderer.project(k, pos[k, :1])[0] for k in range(len(pos))])
    assert np.abs(fixed[:, 0] / W - 0.5).max() > 0.15  # the fixed camera lets the hips wander across


def test_follow_grid_is_fixed_to_the_world(walk, videos, renderer):
    """World grid lines (multiples of 0.5 m) seen through each frame's moved camera land on
    drawn grid pixels (darker than the ground around them); cell centres mostly do not."""
    from evalkit.motion import resample
    from webtest.render import clip_payload

    clip = resample(walk, FPS)
    renderer.load(clip_payload(clip), (W, H))
    ground = float(np.asarray(clip.positions)[..., 1].min())
    path = np.asarray(renderer.evaluate("c => evalkitRender.path(c)", clip_payload(clip))).reshape(-1, 2)
    on = {"line": [], "cell": []}
    for k in range(0, len(videos["follow"]), 5):
        img = videos["follow"][k]
        near_figure = np.abs(img[..., 2] - img[..., 0]) > 30
        cx, cz = path[k]
        pts, kinds = [], []
        for gx in np.arange(np.round(cx * 2) / 2 - 1.5, cx + 1.6, 0.5):
            for gz in np.arange(np.round(cz * 2) / 2 - 1.5, cz + 1.6, 0.5):
                pts += [(gx, ground, gz + 0.25), (gx + 0.25, ground, gz + 0.25)]
                kinds += ["line", "cell"]
        uv = renderer.project(k, pts)
        for kind, (u, v) in zip(kinds, uv):
            i, j = int(round(v)), int(round(u))
            if not (4 <= i < H - 4 and 4 <= j < W - 4) or near_figure[i - 8:i + 9, j - 8:j + 9].any():
                continue
            here = img[i - 1:i + 2, j - 1:j + 2].sum(-1).min()
            around = np.median(img[i - 4:i + 5, j - 4:j + 5].sum(-1))
            on[kind].append(around - here > 12)
    assert len(on["line"]) > 100 and len(on["cell"]) > 100
    assert np.mean(on["line"]) > 0.9 and np.mean(on["cell"]) < 0.15, (np.mean(on["line"]), np.mean(on["cell"]))
    # and the grid moves in the picture as the camera follows the walk
    a, b = videos["follow"][0], videos["follow"][7]
    free = ~(figure_mask(a) | figure_mask(b))
    assert (np.abs(a - b).sum(-1) > 12)[free].mean() > 0.03


def test_smoothed_root_path_removes_sway_and_stays_on_the_root(walk, renderer):
    from evalkit.motion import resample
    from webtest.render import clip_payload

    clip = resample(walk, 30)
    root = np.asarray(clip.positions)[:, 0, [0, 2]]
    path = lambda payload: np.asarray(renderer.evaluate("c => evalkitRender.path(c)", payload)).reshape(-1, 2)  # noqa: E731
    s = path(clip_payload(clip))
    assert s.shape == root.shape
    assert np.abs(s - root).max() < 0.15  # metres, first and last frames included
    wobble = lambda p: np.sqrt((np.diff(p, 2, axis=0) ** 2).sum(-1).mean())  # noqa: E731 (second difference)
    assert wobble(s) < 0.2 * wobble(root), (wobble(s), wobble(root))
    # a steady straight walk is reproduced exactly, up to the ends (point-reflected padding)
    line = np.zeros((50, 1, 3))
    line[:, 0, 2] = np.arange(50) * 0.04
    steady = {"fps": 30.0, "frames": 50, "joints": 1, "positions": line.reshape(-1).tolist()}
    assert np.allclose(path(steady), line[:, 0, [0, 2]])


def test_upper_framing_shows_the_upper_body_larger(walk, renderer):
    from evalkit.motion import resample
    from webtest.render import Look, clip_payload

    clip = resample(walk, FPS)
    pos = np.asarray(clip.positions)
    payload = clip_payload(clip)
    roles = payload["roles"]
    sizes = {}
    for framing in ("full", "upper"):
        renderer.load(payload, (W, H), Look(framing=framing))
        f = 20
        q = renderer.project(f, pos[f, [roles["head"], roles["hips"], roles["left_ankle"]]])
        sizes[framing] = q[1, 1] - q[0, 1]  # hips below head, pixels
        if framing == "upper":
            assert q[2, 1] > H, "the ankles are below the picture"
            assert 0 < q[0, 1] < 0.35 * H and 0.5 * H < q[1, 1] < H
    assert sizes["upper"] > 1.6 * sizes["full"]


def test_render_camera_option(tmp_path, capsys):
    need_chromium()
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
    out = capsys.readouterr().out
    assert "--camera {follow,fixed}" in out and "--framing {full,upper}" in out


def test_render_video_refuses_an_unknown_camera_or_framing(walk, tmp_path):
    from evalkit.errors import InputError
    from webtest.render import render_video

    with pytest.raises(InputError, match="camera 'moving' is not one of follow, fixed"):
        render_video(walk.slice(0, 10), tmp_path / "x.mp4", progress=False, camera="moving")
    with pytest.raises(InputError, match="framing 'head' is not one of full, upper"):
        render_video(walk.slice(0, 10), tmp_path / "x.mp4", progress=False, framing="head")
    assert not list(tmp_path.iterdir())
