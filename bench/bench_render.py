"""Speed of ``evalkit render``: a 10-s clip to a 30 fps 640x480 MP4, against the renderer it
replaced, in the same run; and the trial page's frame times while playing.

* ``webtest.render.render_video`` (the one renderer: three.js in headless chromium, software WebGL
  by SwiftShader; frames stepped one by one, read back and piped to imageio-ffmpeg's ffmpeg).
  Timed end to end as a user meets it: chromium started and closed inside the timing.
* the peer: the matplotlib stick-figure renderer evalkit shipped before (``bench/
  baseline_mpl_render.py``, its former ``webtest/video.py``, kept only for this comparison), used as
  it was: Agg canvas per frame, the same ffmpeg pipe. Our own former code, not a third-party
  library: no maintained library renders BVH/AMC joint positions to video in Python.

Both encode the same 300 frames of CMU 01_01 (bundled, 120 fps, resampled to 30) with libx264.
Then the trial page's smoothness: two 500x376 canvases (a trial page's pair) drawing a clip at
the display's rate for 3 s in the same chromium; printed: median and 95th-percentile interval
between animation frames and the JavaScript time per draw (ms). Headless chromium renders WebGL
in software here (no GPU), so the intervals are an upper bound for a laptop with a GPU.

    nice python bench/bench_render.py            # 2 runs of each, best and all times printed
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FRAME_TIMES_JS = """async ([clip, seconds]) => {
  const m = await import('./stage.js');
  const stages = [0, 1].map(() => {
    const c = document.createElement('canvas');
    c.style.width = '500px'; c.style.height = '376px'; c.style.display = 'inline-block';
    document.body.appendChild(c);
    const s = new m.Stage(c, { pixelRatio: 1 });
    clip._path = m.smoothPath(clip);
    s.setClip(clip, m.makeView([clip], 500, 376, {}));
    return s;
  });
  document.getElementById('stage').style.display = 'none';
  const out = [];
  return await new Promise((resolve) => {
    let start = null, last = null;
    function step(now) {
      if (start === null) { start = now; }
      const t = (now - start) / 1000, f = Math.floor(t * clip.fps);
      const t0 = performance.now();
      stages.forEach((s) => { if (f !== s.f) { s.draw(f); } });
      const gl = stages[1].gl; gl.finish();
      if (last !== null) { out.push([now - last, performance.now() - t0]); }
      last = now;
      if (t < seconds) { requestAnimationFrame(step); } else { resolve(out); }
    }
    requestAnimationFrame(step);
  });
}"""


def _cpu() -> float:
    """CPU seconds used so far by this process and its finished children (chromium, its driver,
    ffmpeg): on an idle machine a run takes at least this divided by the cores."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def main() -> None:
    from evalkit.data import SAMPLES_DIR
    from evalkit.motion import load_motion, resample

    import baseline_mpl_render
    from webtest.render import Renderer, clip_payload, render_video

    motion = load_motion(SAMPLES_DIR / "cmu" / "01_01.bvh")
    motion = motion.slice(0, int(round(10.0 * motion.fps)))
    print(f"clip: CMU 01_01, {motion.duration:.2f} s -> 30 fps 640x480 MP4 (300 frames); "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    times: dict[str, list[float]] = {"evalkit render (three.js, headless chromium)": [],
                                     "former matplotlib stick figure (peer)": []}
    cpu: dict[str, list[float]] = {name: [] for name in times}
    with tempfile.TemporaryDirectory() as d:
        for run in range(2):
            for name in times:
                out = Path(d) / f"{run}-{len(times[name])}.mp4"
                t0, c0 = time.perf_counter(), _cpu()
                if name.startswith("evalkit"):
                    render_video(motion, out, fps=30, size=(640, 480), progress=False)
                else:
                    baseline_mpl_render.render_video(motion, out, fps=30, size=(640, 480), progress=False)
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(_cpu() - c0)
                assert out.stat().st_size > 10_000
    for name, ts in times.items():
        print(f"{name:48s} best {min(ts):6.1f} s   runs: {', '.join(f'{t:.1f}' for t in ts)}   "
              f"CPU time (all processes): {', '.join(f'{c:.1f}' for c in cpu[name])} s")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")

    clip = clip_payload(resample(load_motion(SAMPLES_DIR / "cmu" / "16_15.amc"), 30))
    with Renderer() as r:
        r.load(clip, (1008, 384))  # a window the two canvases are visible in
        stats = np.asarray(r.evaluate(FRAME_TIMES_JS, [clip, 3.0]))
    iv, dt = stats[:, 0], stats[:, 1]
    print(f"trial page, two 500x376 canvases, 3 s in headless chromium (software WebGL): "
          f"{len(iv)} animation frames, interval median {np.median(iv):.1f} ms, 95th percentile "
          f"{np.percentile(iv, 95):.1f} ms; draw + finish median {np.median(dt):.1f} ms, 95th percentile "
          f"{np.percentile(dt, 95):.1f} ms")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
