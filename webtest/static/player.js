/* evalkit webtest: the trial page player.
 *
 * Motion stimuli are drawn on <canvas> from precomputed world joint positions (metres, Y-up),
 * both sides with the same camera (fitted to the union of both clips' bounds) and a ground grid.
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

  // ------------------------------------------------------------------ camera shared by both sides
  function Camera(bounds, width, height) {
    var lo = bounds[0], hi = bounds[1];
    var cx = (lo[0] + hi[0]) / 2, cz = (lo[2] + hi[2]) / 2, cy = (lo[1] + hi[1]) / 2;
    var ext = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1.0);
    // look 35 degrees off the longer horizontal side (the direction of travel), as webtest/video.py
    var az = ((hi[0] - lo[0]) > (hi[2] - lo[2]) ? 55 : 35) * Math.PI / 180;
    var el = 14 * Math.PI / 180, dist = 2.6 * ext + 2.0;
    this.ground = lo[1];
    this.eye = [cx + dist * Math.sin(az) * Math.cos(el), cy + dist * Math.sin(el), cz + dist * Math.cos(az) * Math.cos(el)];
    var f = norm([cx - this.eye[0], cy - this.eye[1], cz - this.eye[2]]);
    var r = norm(cross(f, [0, 1, 0]));
    this.f = f; this.r = r; this.u = cross(r, f);
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
    var ctx = this.ctx, cam = this.camera, clip = this.clip;
    if (!ctx) { return; }
    ctx.fillStyle = "#eef2f6";
    ctx.fillRect(0, 0, this.w, this.h);
    // ground plane: a filled patch and a 0.5 m grid at the lowest point of both clips
    var g = cam.ground, x0 = cam.gx[0], x1 = cam.gx[1], z0 = cam.gz[0], z1 = cam.gz[1], p, q;
    ctx.fillStyle = "#d5dde6";
    ctx.beginPath();
    [[x0, z0], [x1, z0], [x1, z1], [x0, z1]].forEach(function (c, i) {
      p = cam.project(c[0], g, c[1]);
      if (i === 0) { ctx.moveTo(p[0], p[1]); } else { ctx.lineTo(p[0], p[1]); }
    });
    ctx.closePath(); ctx.fill();
    ctx.strokeStyle = "#b4bfcc"; ctx.lineWidth = 1;
    var step = 0.5, v;
    ctx.beginPath();
    for (v = Math.ceil(x0 / step) * step; v <= x1; v += step) {
      p = cam.project(v, g, z0); q = cam.project(v, g, z1); ctx.moveTo(p[0], p[1]); ctx.lineTo(q[0], q[1]);
    }
    for (v = Math.ceil(z0 / step) * step; v <= z1; v += step) {
      p = cam.project(x0, g, v); q = cam.project(x1, g, v); ctx.moveTo(p[0], p[1]); ctx.lineTo(q[0], q[1]);
    }
    ctx.stroke();
    var f = Math.min(clip.frames - 1, Math.max(0, Math.floor(this.t * clip.fps + 1e-6)));
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
      var make = function (w, h) { return new Camera([lo, hi], w, h); };
      ["left", "right"].forEach(function (side) { if (players[side].clip) { players[side].setup(make); } });
    }
    root.classList.add("ready");
    update();
  }).catch(function (err) {
    statusEl.textContent = str("LoadFailed").replace("{reason}", String(err && err.message || err));
  });
})();
