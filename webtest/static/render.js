/* evalkit render: the headless side of the one renderer. webtest/render.py loads render.html in
 * headless chromium and calls window.evalkitRender: setup() once with the clip (and the clips
 * the camera is fitted to, as on a trial page), then frame(f) for each video frame, which draws
 * frame f with stage.js (the trial page's code) and returns its pixels. */
import { Stage, makeView, smoothPath, webglAvailable } from "./stage.js";

var stage = null, width = 0, height = 0, pixels = null, runs = null;

function base64(bytes) {
  var s = "", step = 0x8000;
  for (var i = 0; i < bytes.length; i += step) { s += String.fromCharCode.apply(null, bytes.subarray(i, i + step)); }
  return btoa(s);
}

window.evalkitRender = {
  webgl: webglAvailable,
  /* clip: the motion payload to draw; opts: {width, height, camera, framing, color, background, antialias,
   * fit: [other payloads the camera is fitted to together with clip]} */
  setup: function (clip, opts) {
    width = opts.width; height = opts.height;
    var canvas = document.getElementById("stage");
    canvas.style.width = width + "px"; canvas.style.height = height + "px";
    if (stage) { stage.renderer.dispose(); stage.renderer.forceContextLoss(); canvas = canvas.cloneNode(false); document.getElementById("stage").replaceWith(canvas); }
    stage = new Stage(canvas, { color: opts.color, background: opts.background, pixelRatio: 1, antialias: !!opts.antialias });
    var clips = [clip].concat(opts.fit || []);
    clips.forEach(function (c) { c._path = smoothPath(c); });
    stage.setClip(clip, makeView(clips, width, height, { camera: opts.camera, framing: opts.framing }));
    pixels = new Uint8Array(width * height * 4);
    window.evalkitRender.stage = stage;  // for inspection from tests
    return { frames: clip.frames, H: stage.body.H, full: stage.body.full };
  },
  /* draw frame f; its RGBA pixels, bottom row first, run-length coded as little-endian uint32
   * pairs (run length, pixel) - most of a frame is flat sky and ground bands, so a twentieth of
   * the bytes cross to Python, for a millisecond of work here - and base64 */
  frame: function (f) {
    stage.draw(f);
    var gl = stage.gl;
    gl.readPixels(0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    var src = new Uint32Array(pixels.buffer), n = src.length, k = 0, i = 0, j, v;
    if (!runs || runs.length < 2 * n) { runs = new Uint32Array(2 * n); }
    while (i < n) {
      v = src[i];
      for (j = i + 1; j < n && src[j] === v; j++) { /* extend the run */ }
      runs[k++] = j - i; runs[k++] = v;
      i = j;
    }
    return base64(new Uint8Array(runs.buffer, 0, 4 * k));
  },
  /* the follow camera's smoothed root path of a clip: [x0, z0, x1, z1, ...] metres */
  path: function (clip) { return Array.from(smoothPath(clip)); },
  /* pixel coordinates of world points (metres) with frame f's camera */
  project: function (f, points) { stage.draw(f); return stage.project(points); }
};
window.evalkitReady = true;
