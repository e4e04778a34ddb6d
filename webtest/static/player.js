/* evalkit webtest: the trial page player.
 *
 * Motion stimuli are drawn on <canvas> from precomputed world joint positions (metres, Y-up)
 * over a ground grid, both sides with the same view direction (35 degrees off the longer
 * horizontal side of the union of both clips' bounds, 14 degrees down) and the same zoom. The
 * study's playback.camera (data-camera) chooses the camera, as webtest/video.py does for videos:
 *   follow (default): each side's view centre follows its own clip's root (joint 0, the hips)
 *     horizontally, smoothed by a centred ~1 s moving average (computed once per clip) so the
 *     pelvis sway does not shake the view; the zoom makes a standing body (the union of both
 *     clips' vertical extents) fill 65 % of the canvas height, less if a joint of any frame would
 *     come within 4 % of an edge. The grid is fixed to the world (lines every 0.5 m around the
 *     view centre), so a travelling figure walks over it and a sliding foot slides against it.
 *   fixed: one still camera fitted to the union of both clips' bounds (the whole path in view).
 * Video and audio stimuli use the native elements. "Next" unlocks only when both stimuli have
 * played to the end (and an answer is chosen); the answer is sent with fetch and the page moves
 * on only after the server acknowledged it.
 * Events logged with the answer: play, pause, seek (clicking the bar, allowed after a full play),
 * ended; each with the side, page time (ms) and stimulus time (s).
 * Keys: A = play/pause left, L = play/pause right, 1..n = choose answer, Enter = Next.
 */
(function () {
  "use strict";
  var root = document.getElementById("trial");
  if (!root) { return; }
  var T0 = performance.now();
  var mustEnd = root.dataset.mustEnd === "true";
  var exclusive = root.dataset.exclusive === "true";
  var str = function (k) { return root.dataset["str" + k] || ""; };
  var events = [];
  var statusEl = document.getElementById("status");
  var nextBtn = document.getElementById("next");
  var form = document.getElementById("answer-form");
  var players = {};
  var saving = false;

  function log(side, type, pos) {
    if (events.length < 500) {
      events.push({ side: side, type: type, t: Math.round(performance.now() - T0), pos: Math.round(pos * 1000) / 1000 });
    }
  }

  // ------------------------------------------------------------------ cameras shared by both sides
  var GRID_STEP = 0.5;       // m between ground grid lines
  var FOLLOW_WINDOW_S = 1.0; // s, centred moving average of the followed root path
  var FOLLOW_FILL = 0.65;    // fraction of the canvas height a standing body fills (follow)
  var FOLLOW_MARGIN = 0.04;  // least gap between a joint and the canvas edge, fraction of the side (follow)
  var FOLLOW_GRID_M = 6.0;   // m, half-size of the grid square around the view centre (follow)
  var FOLLOW_FLOOR_M = 18.0; // m, half-size of the ground patch around the view centre (follow)
  var NEAR_M = 0.5;          // m, ground drawn only from this far in front of the eye on (follow)

  // azimuth (radians): 35 degrees off the longer horizontal side of the bounds (the direction of travel)
  function azimuth(lo, hi) { return ((hi[0] - lo[0]) > (hi[2] - lo[2]) ? 55 : 35) * Math.PI / 180; }
  // place cam's eye dist metres from target (azimuth az, 14 degrees down) and set its unit axes f, r, u
  function orient(cam, target, az, dist) {
    var el = 14 * Math.PI / 180;
    cam.target = target;
    cam.eye = [target[0] + dist * Math.sin(az) * Math.cos(el), target[1] + dist * Math.sin(el), target[2] + dist * Math.cos(az) * Math.cos(el)];
    var f = norm([target[0] - cam.eye[0], target[1] - cam.eye[1], target[2] - cam.eye[2]]);
    var r = norm(cross(f, [0, 1, 0]));
    cam.f = f; cam.r = r; cam.u = cross(r, f);
  }

  // fixed: one still camera fitted to the union of both clips' bounds (the whole path in view)
  function Camera(bounds, width, height) {
    var lo = bounds[0], hi = bounds[1];
    var cx = (lo[0] + hi[0]) / 2, cz = (lo[2] + hi[2]) / 2, cy = (lo[1] + hi[1]) / 2;
    var ext = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1.0);
    orient(this, [cx, cy, cz], azimuth(lo, hi), 2.6 * ext + 2.0);
    this.follow = false;
    this.ground = lo[1];
    this.gx = [lo[0] - 0.5, hi[0] + 0.5]; this.gz = [lo[2] - 0.5, hi[2] + 0.5];
    // fit the projected corners of the bounds (and the ground patch) to the canvas
    var pts = [];
    [lo[0] - 0.3, hi[0] + 0.3].forEach(function (x) {
      [lo[1], hi[1]].forEach(function (y) { [lo[2] - 0.3, hi[2] + 0.3].forEach(function (z) { pts.push([x, y, z]); }); });
    });
    var minx = Infinity, maxx = -Infinity, miny = Infinity, maxy = -Infinity, self = this;
    pts.forEach(function (p) {
      var q = self.raw(p);
      minx = Math.min(minx, q[0]); maxx = Math.max(maxx, q[0]); miny = Math.min(miny, q[1]); maxy = Math.max(maxy, q[1]);
    });
    var margin = 0.06;
    this.scale = Math.min(width * (1 - 2 * margin) / (maxx - minx), height * (1 - 2 * margin) / (maxy - miny));
    this.ox = width / 2 - this.scale * (minx + maxx) / 2;
    this.oy = height / 2 + this.scale * (miny + maxy) / 2;
  }
  Camera.prototype.raw = function (p) {
    var v = [p[0] - this.eye[0], p[1] - this.eye[1], p[2] - this.eye[2]];
    var z = Math.max(dot(v, this.f), 1e-3);
    return [dot(v, this.r) / z, dot(v, this.u) / z];
  };
  Camera.prototype.project = function (x, y, z) {
    var q = this.raw([x, y, z]);
    return [this.ox + this.scale * q[0], this.oy - this.scale * q[1]];
  };
  // metres in front of the eye along the view direction
  Camera.prototype.depth = function (p) {
    return dot([p[0] - this.eye[0], p[1] - this.eye[1], p[2] - this.eye[2]], this.f);
  };
  // the same camera (direction, zoom) moved to look at c = [x, y, z] metres
  Camera.prototype.at = function (c) {
    var v = Object.create(this), t = this.target;
    v.eye = [this.eye[0] + c[0] - t[0], this.eye[1] + c[1] - t[1], this.eye[2] + c[2] - t[2]];
    v.target = c;
    return v;
  };

  // follow: looks at (0, middle of the vertical extent, 0) from 2.6 * body + 2 m (body: the union's
  // vertical extent, at least 1 m); draw() moves it onto each frame's view centre with at().
  // clips: [{clip, path}] (path: smoothed root x/z per frame, see smoothPath); every joint of every
  // frame, seen from its own centre, must stay FOLLOW_MARGIN inside the canvas.
  function FollowCamera(bounds, clips, width, height) {
    var lo = bounds[0], hi = bounds[1], mid = (lo[1] + hi[1]) / 2;
    orient(this, [0, mid, 0], azimuth(lo, hi), 2.6 * Math.max(hi[1] - lo[1], 1.0) + 2.0);
    this.follow = true;
    this.ground = lo[1];
    this.mid = mid;
    // the standing body seen at the view centre: centred, FOLLOW_FILL of the height
    var top = this.raw([0, hi[1], 0]), bottom = this.raw([0, lo[1], 0]);
    var a = (top[0] + bottom[0]) / 2, b = (top[1] + bottom[1]) / 2;
    var scale = FOLLOW_FILL * height / Math.max(top[1] - bottom[1], 1e-6), self = this;
    clips.forEach(function (c) {
      var P = c.clip.positions, J = c.clip.joints, dx = 1e-6, dy = 1e-6, f, j, i, q;
      for (f = 0; f < c.clip.frames; f++) {
        for (j = 0; j < J; j++) {
          i = 3 * (f * J + j);
          q = self.raw([P[i] - c.path[2 * f], P[i + 1], P[i + 2] - c.path[2 * f + 1]]);
          dx = Math.max(dx, Math.abs(q[0] - a)); dy = Math.max(dy, Math.abs(q[1] - b));
        }
      }
      scale = Math.min(scale, (0.5 - FOLLOW_MARGIN) * width / dx, (0.5 - FOLLOW_MARGIN) * height / dy);
    });
    this.scale = scale;
    this.ox = width / 2 - scale * a;
    this.oy = height / 2 + scale * b;
  }
  FollowCamera.prototype = Object.create(Camera.prototype);
  // the camera of frame f of a clip whose smoothed root path is path
  FollowCamera.prototype.frame = function (path, f) { return this.at([path[2 * f], this.mid, path[2 * f + 1]]); };

  // root (joint 0) x/z of every frame, smoothed by a centred moving average of 2k + 1 frames
  // (k = round(FOLLOW_WINDOW_S * fps / 2), at most frames - 1); the ends are padded by point
  // reflection (2 x0 - x[k..1]) so a steady walk stays centred up to the first and last frame.
  // Returns [x0, z0, x1, z1, ...] metres, as webtest/video.py smooth_path.
  function smoothPath(clip) {
    var n = clip.frames, J = clip.joints, P = clip.positions, out = new Float64Array(2 * n);
    var k = Math.min(Math.round(FOLLOW_WINDOW_S * clip.fps / 2), n - 1), f, d, s;
    var root = function (i, d) {  // coordinate d (0: x, 1: z) of the root at frame i, reflected past the ends
      if (i < 0) { return 2 * root(0, d) - root(-i, d); }
      if (i > n - 1) { return 2 * root(n - 1, d) - root(2 * (n - 1) - i, d); }
      return P[3 * i * J + 2 * d];
    };
    for (d = 0; d < 2; d++) {
      if (k < 1) { for (f = 0; f < n; f++) { out[2 * f + d] = root(f, d); } continue; }
      for (s = 0, f = -k; f <= k; f++) { s += root(f, d); }
      for (f = 0; f < n; f++) {
        out[2 * f + d] = s / (2 * k + 1);
        s += root(f + k + 1, d) - root(f - k, d);  // slide the window by one frame
      }
    }
    return out;
  }

  // the ground line segments [[p, q], ...] on the plane y over [x0, x1] x [z0, z1], one every
  // GRID_STEP metres at world multiples of GRID_STEP (fixed to the world whatever the rectangle)
  function gridLines(x0, x1, z0, z1, y) {
    var segs = [], v;
    for (v = Math.ceil(x0 / GRID_STEP) * GRID_STEP; v <= x1; v += GRID_STEP) { segs.push([[v, y, z0], [v, y, z1]]); }
    for (v = Math.ceil(z0 / GRID_STEP) * GRID_STEP; v <= z1; v += GRID_STEP) { segs.push([[x0, y, v], [x1, y, v]]); }
    return segs;
  }
  // point a + t (b - a)
  function lerp3(a, b, t) { return [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])]; }
  // a segment cut to the part at least NEAR_M in front of cam's eye; null if wholly behind
  function clipSegment(cam, s) {
    var da = cam.depth(s[0]), db = cam.depth(s[1]);
    if (da < NEAR_M && db < NEAR_M) { return null; }
    if (da < NEAR_M) { return [lerp3(s[0], s[1], (NEAR_M - da) / (db - da)), s[1]]; }
    if (db < NEAR_M) { return [s[0], lerp3(s[1], s[0], (NEAR_M - db) / (da - db))]; }
    return s;
  }
  // a convex polygon cut at NEAR_M in front of cam's eye (Sutherland-Hodgman against one plane)
  function clipPolygon(cam, poly) {
    var out = [], i, j, di, dj;
    for (i = 0; i < poly.length; i++) {
      j = (i + 1) % poly.length; di = cam.depth(poly[i]); dj = cam.depth(poly[j]);
      if (di >= NEAR_M) { out.push(poly[i]); }
      if ((di >= NEAR_M) !== (dj >= NEAR_M)) { out.push(lerp3(poly[i], poly[j], (NEAR_M - di) / (dj - di))); }
    }
    return out;
  }
  function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
  function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
  function norm(a) { var n = Math.sqrt(dot(a, a)) || 1; return [a[0] / n, a[1] / n, a[2] / n]; }

  // ------------------------------------------------------------------ a player per side
  function Player(fig) {
    this.fig = fig;
    this.side = fig.dataset.side;
    this.kind = fig.dataset.kind;
    this.duration = parseFloat(fig.dataset.duration) || 0;
    this.button = fig.querySelector("button.play");
    this.bar = fig.querySelector(".bar");
    this.fill = fig.querySelector(".bar span");
    this.ended = false;     // played to the end at least once
    this.playing = false;
    this.t = 0;             // seconds
    this.media = fig.querySelector(this.kind === "motion" ? "audio" : (this.kind === "video" ? "video" : "audio"));
    var self = this;
    this.button.addEventListener("click", function () { self.toggle(); });
    // seeking (click on the bar) only after the stimulus has been played to the end once
    this.bar.addEventListener("click", function (ev) {
      if (!self.ended || !(self.duration > 0)) { return; }
      var rect = self.bar.getBoundingClientRect();
      self.seek(self.duration * Math.min(1, Math.max(0, (ev.clientX - rect.left) / rect.width)));
    });
    if (this.kind !== "motion") {
      this.media.addEventListener("loadedmetadata", function () {
        if (isFinite(self.media.duration)) { self.duration = self.media.duration; }
      });
      this.media.addEventListener("timeupdate", function () { self.t = self.media.currentTime; self.progress(); });
      this.media.addEventListener("ended", function () { self.finish(); });
      this.media.addEventListener("error", function () { self.button.textContent = "⚠"; });
    }
  }
  Player.prototype.label = function () {
    this.button.textContent = this.playing ? str("Pause") : (this.ended || this.t > 0 && this.t >= this.duration ? str("Replay") : str("Play"));
    this.fig.classList.toggle("playing", this.playing);
  };
  Player.prototype.progress = function () {
    var pct = this.duration > 0 ? Math.min(100, 100 * this.t / this.duration) : 0;
    this.fill.style.width = pct.toFixed(1) + "%";
    this.bar.setAttribute("aria-valuenow", String(Math.round(pct)));
  };
  Player.prototype.toggle = function () { if (this.playing) { this.pause(); } else { this.play(); } };
  Player.prototype.play = function () {
    if (exclusive) {
      Object.keys(players).forEach(function (k) { if (players[k] !== this && players[k].playing) { players[k].pause(); } }, this);
    }
    if (this.t >= this.duration - 1e-3) { this.t = 0; if (this.media) { this.media.currentTime = 0; } }
    this.playing = true;
    log(this.side, "play", this.t);
    if (this.kind === "motion") {
      this.startWall = performance.now() - this.t * 1000;
      if (this.media) { try { this.media.currentTime = this.t; } catch (e) { /* not loaded yet */ } this.media.play().catch(function () {}); }
      var self = this;
      requestAnimationFrame(function step() { if (self.playing) { self.tick(); requestAnimationFrame(step); } });
    } else {
      this.media.play().catch(function () {});
    }
    this.label();
  };
  Player.prototype.seek = function (t) {
    this.t = Math.min(t, this.duration);
    if (this.media) { try { this.media.currentTime = this.t; } catch (e) { /* not loaded */ } }
    if (this.kind === "motion") { this.startWall = performance.now() - this.t * 1000; this.draw(); }
    log(this.side, "seek", this.t);
    this.progress();
    this.label();
  };
  Player.prototype.pause = function () {
    if (!this.playing) { return; }
    this.playing = false;
    if (this.media) { this.media.pause(); }
    log(this.side, "pause", this.t);
    this.label();
  };
  Player.prototype.finish = function () {
    var covered = true;
    if (this.kind !== "motion" && this.media.played && this.duration > 0) {
      var sum = 0;
      for (var i = 0; i < this.media.played.length; i++) { sum += this.media.played.end(i) - this.media.played.start(i); }
      covered = sum >= 0.9 * this.duration;  // seeking to the end does not count as watching
    }
    this.playing = false;
    this.t = this.duration;
    if (covered) { this.ended = true; }
    log(this.side, "ended", this.t);
    this.progress();
    this.label();
    update();
  };
  // motion: advance the clock (audio is the master clock while it plays) and draw
  Player.prototype.tick = function () {
    var t = (performance.now() - this.startWall) / 1000;
    if (this.media && !this.media.paused && !this.media.ended && this.media.currentTime > 0) { t = this.media.currentTime; }
    this.t = Math.min(t, this.duration);
    this.draw();
    this.progress();
    if (t >= this.duration) { this.finish(); }
  };
  Player.prototype.load = function () {
    var self = this;
    if (this.kind !== "motion") {
      this.button.disabled = false;
      this.label();
      return Promise.resolve(null);
    }
    return fetch(this.fig.dataset.src, { credentials: "same-origin" })
      .then(function (r) { if (!r.ok) { throw new Error("HTTP " + r.status); } return r.json(); })
      .then(function (clip) {
        self.clip = clip;
        self.clipDuration = clip.frames / clip.fps;
        self.duration = Math.max(self.duration, self.clipDuration);
        self.canvas = self.fig.querySelector("canvas");
        self.path = smoothPath(clip);  // the follow camera's view centres, once per clip
        return clip;
      });
  };
  Player.prototype.setup = function (camera) {
    var c = this.canvas, ratio = window.devicePixelRatio || 1;
    var w = c.clientWidth || 480, h = Math.round(w * 0.75);
    c.width = Math.round(w * ratio); c.height = Math.round(h * ratio);
    this.ctx = c.getContext("2d");
    this.ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    this.w = w; this.h = h;
    this.camera = camera(w, h);
    this.button.disabled = false;
    this.label();
    this.draw();
  };
  Player.prototype.draw = function () {
    var ctx = this.ctx, clip = this.clip;
    if (!ctx) { return; }
    var f = Math.min(clip.frames - 1, Math.max(0, Math.floor(this.t * clip.fps + 1e-6)));
    // follow: the camera of this frame (looking at the smoothed root); fixed: the one still camera
    var cam = this.camera.follow ? this.camera.frame(this.path, f) : this.camera;
    ctx.fillStyle = "#eef2f6";
    ctx.fillRect(0, 0, this.w, this.h);
    // ground plane at the lowest point of both clips: a filled patch and a 0.5 m grid, fixed to
    // the world; fixed: over both clips' bounds, follow: around the view centre, cut in front of the eye
    var g = cam.ground, patch, lines, p, q;
    if (cam.follow) {
      var c = cam.target, F = FOLLOW_FLOOR_M, G = FOLLOW_GRID_M;
      patch = clipPolygon(cam, [[c[0] - F, g, c[2] - F], [c[0] + F, g, c[2] - F], [c[0] + F, g, c[2] + F], [c[0] - F, g, c[2] + F]]);
      lines = gridLines(c[0] - G, c[0] + G, c[2] - G, c[2] + G, g).map(function (s) { return clipSegment(cam, s); });
    } else {
      var x0 = cam.gx[0], x1 = cam.gx[1], z0 = cam.gz[0], z1 = cam.gz[1];
      patch = [[x0, g, z0], [x1, g, z0], [x1, g, z1], [x0, g, z1]];
      lines = gridLines(x0, x1, z0, z1, g);
    }
    ctx.fillStyle = "#d5dde6";
    ctx.beginPath();
    patch.forEach(function (c, i) {
      p = cam.project(c[0], c[1], c[2]);
      if (i === 0) { ctx.moveTo(p[0], p[1]); } else { ctx.lineTo(p[0], p[1]); }
    });
    ctx.closePath(); ctx.fill();
    ctx.strokeStyle = "#b4bfcc"; ctx.lineWidth = 1;
    ctx.beginPath();
    lines.forEach(function (s) {
      if (!s) { return; }
      p = cam.project(s[0][0], s[0][1], s[0][2]); q = cam.project(s[1][0], s[1][1], s[1][2]);
      ctx.moveTo(p[0], p[1]); ctx.lineTo(q[0], q[1]);
    });
    ctx.stroke();
    var J = clip.joints, P = clip.positions, base = f * J * 3, par = clip.parents, j, i;
    var pts = new Array(J), shadow = new Array(J);
    for (j = 0; j < J; j++) {
      i = base + 3 * j;
      pts[j] = cam.project(P[i], P[i + 1], P[i + 2]);
      shadow[j] = cam.project(P[i], g, P[i + 2]);
    }
    ctx.lineCap = "round";
    ctx.strokeStyle = "rgba(40, 50, 60, 0.25)"; ctx.lineWidth = 4;
    ctx.beginPath();
    for (j = 1; j < J; j++) { if (par[j] >= 0) { ctx.moveTo(shadow[par[j]][0], shadow[par[j]][1]); ctx.lineTo(shadow[j][0], shadow[j][1]); } }
    ctx.stroke();
    ctx.strokeStyle = "#1f3b73"; ctx.lineWidth = 4;
    ctx.beginPath();
    for (j = 1; j < J; j++) { if (par[j] >= 0) { ctx.moveTo(pts[par[j]][0], pts[par[j]][1]); ctx.lineTo(pts[j][0], pts[j][1]); } }
    ctx.stroke();
    ctx.fillStyle = "#c0392b";
    for (j = 0; j < J; j++) { ctx.beginPath(); ctx.arc(pts[j][0], pts[j][1], 2.5, 0, 2 * Math.PI); ctx.fill(); }
  };

  // ------------------------------------------------------------------ answer state
  function answered() {
    if (root.dataset.scaleKind === "absolute") {
      return !!form.querySelector("input[name=answer_left]:checked") && !!form.querySelector("input[name=answer_right]:checked");
    }
    return !!form.querySelector("input[name=answer]:checked");
  }
  function watched() {
    return !mustEnd || (players.left.ended && players.right.ended);
  }
  function update() {
    if (saving) { return; }
    var ready = watched();
    nextBtn.disabled = !(ready && answered());
    statusEl.textContent = !ready ? str("MustEnd") : answered() ? str("Answered") : str("Ready");
  }
  form.addEventListener("change", update);

  function answerValue() {
    if (root.dataset.scaleKind === "absolute") {
      return form.querySelector("input[name=answer_left]:checked").value + "|" + form.querySelector("input[name=answer_right]:checked").value;
    }
    return form.querySelector("input[name=answer]:checked").value;
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    if (nextBtn.disabled || saving) { return; }
    saving = true;
    nextBtn.disabled = true;
    statusEl.textContent = str("Saving");
    var token = document.querySelector("meta[name=csrf-token]").content;
    fetch(form.action, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": token },
      body: JSON.stringify({ answer: answerValue(), client_time_s: (performance.now() - T0) / 1000, events: events })
    }).then(function (r) {
      return r.json().catch(function () { return { ok: false, error: "HTTP " + r.status }; }).then(function (body) {
        if (body.ok || (body.next && r.status === 409)) {
          window.location.assign(body.next);
          return;
        }
        saving = false;
        statusEl.textContent = r.status === 422 ? str("TooFast") : str("SaveFailed").replace("{reason}", body.error || ("HTTP " + r.status));
        nextBtn.disabled = false;
      });
    }).catch(function (err) {
      saving = false;
      statusEl.textContent = str("SaveFailed").replace("{reason}", String(err && err.message || err));
      nextBtn.disabled = false;
    });
  });

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var tag = (ev.target && ev.target.tagName) || "";
    if (tag === "INPUT" && ev.target.type !== "radio" || tag === "TEXTAREA" || tag === "SELECT") { return; }
    var k = ev.key;
    if ((k === "a" || k === "A") && !players.left.button.disabled) { players.left.toggle(); ev.preventDefault(); return; }
    if ((k === "l" || k === "L") && !players.right.button.disabled) { players.right.toggle(); ev.preventDefault(); return; }
    if (k === "Enter" && tag !== "BUTTON") {
      if (!nextBtn.disabled) { form.requestSubmit ? form.requestSubmit(nextBtn) : nextBtn.click(); }
      ev.preventDefault();
      return;
    }
    if (/^[1-9]$/.test(k)) {
      var radios;
      if (root.dataset.scaleKind === "absolute") {
        var grp = form.querySelector("input[name=answer_left]:checked") ? "answer_right" : "answer_left";
        radios = form.querySelectorAll("input[name=" + grp + "]");
      } else {
        radios = form.querySelectorAll("input[name=answer]");
      }
      var idx = parseInt(k, 10) - 1;
      if (idx < radios.length) { radios[idx].checked = true; radios[idx].focus(); update(); ev.preventDefault(); }
    }
  });

  // ------------------------------------------------------------------ start
  ["left", "right"].forEach(function (side) { players[side] = new Player(document.getElementById("stim-" + side)); });
  Promise.all([players.left.load(), players.right.load()]).then(function (clips) {
    var motion = clips.filter(function (c) { return c; });
    if (motion.length) {
      var lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
      motion.forEach(function (c) {
        for (var a = 0; a < 3; a++) { lo[a] = Math.min(lo[a], c.bounds[0][a]); hi[a] = Math.max(hi[a], c.bounds[1][a]); }
      });
      // one direction and zoom for both sides (each canvas gets its own copy for its size)
      var sides = ["left", "right"].filter(function (side) { return players[side].clip; });
      var make = function (w, h) { return new Camera([lo, hi], w, h); };
      if (root.dataset.camera !== "fixed") {
        var followed = sides.map(function (side) { return { clip: players[side].clip, path: players[side].path }; });
        make = function (w, h) { return new FollowCamera([lo, hi], followed, w, h); };
      }
      sides.forEach(function (side) { players[side].setup(make); });
    }
    root.classList.add("ready");
    update();
  }).catch(function (err) {
    statusEl.textContent = str("LoadFailed").replace("{reason}", String(err && err.message || err));
  });
})();
