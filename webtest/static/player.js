/* evalkit webtest: the trial page player (an ES module).
 *
 * Motion stimuli are drawn by the one renderer, stage.js (three.js, WebGL): a shaded mannequin
 * built from the clip's skeleton over a ground grid with contact shadows, both sides with the same
 * camera (playback.camera follow|fixed, fitted to both clips together) and framing
 * (playback.framing full|upper), each side in its colour (playback.colors) on the study's
 * background; `evalkit render` drives the same code headless, so videos show the same pixels.
 * Where WebGL is unavailable the motion sides play the study's fallback videos (the same
 * renderer's MP4s, playback.video_fallback) instead; without them the page says so and the clips
 * cannot be played.
 * Both stimuli are loaded before the trial can be answered (the scale stays disabled until then):
 * motion JSON, and audio/video until the browser can play them through, each tried again once
 * after a failure; a stimulus that still cannot be loaded is said so on the page and reported to
 * the server (POST /trial/<n>/event, kept in wt_events and the server log). Video and audio stimuli use the native elements. With
 * playback.play_both a "Play both" button starts both sides together on one clock (audio, when
 * a side has it, is that clock), so they stay in step.
 * "Next" unlocks only when both stimuli have played to the end (and an answer is chosen); the
 * answer is sent with fetch and the page moves on only after the server acknowledged it.
 * Events logged with the answer: play, pause, seek (clicking the bar, allowed after a full play),
 * ended, load_retry, fallback_video; each with the side, page time (ms) and stimulus time (s).
 * Keys: A = play/pause left, L = play/pause right, B = play both (when offered), 1..n = choose
 * answer, arrow keys = the next/previous point of the scale, Enter = Next.
 * window.evalkitTrial.frames holds the last 600 animation frames' intervals and draw times (ms)
 * of motion playback, for measuring smoothness.
 */
import { Stage, makeView, smoothPath, webglAvailable } from "./stage.js";

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
    if (this.kind !== "motion") { this.bindMedia(); }
  }
  // a video or audio element drives this side: its duration, progress and end
  Player.prototype.bindMedia = function () {
    var self = this, m = this.media;
    m.addEventListener("loadedmetadata", function () {
      if (isFinite(m.duration)) { self.duration = m.duration; }
    });
    m.addEventListener("timeupdate", function () { self.t = m.currentTime; self.progress(); });
    m.addEventListener("ended", function () { self.finish(); });
  };
  // no WebGL: this motion side plays its fallback video (the same renderer's MP4, with the
  // stimulus's sound muxed in) instead of drawing the clip
  Player.prototype.useVideo = function (src) {
    var screen = this.fig.querySelector(".screen"), video = document.createElement("video");
    video.preload = "auto";
    video.playsInline = true;
    video.src = src;
    video.setAttribute("aria-labelledby", "cap-" + this.side);
    screen.textContent = "";
    screen.appendChild(video);
    this.kind = "video";
    this.fig.dataset.kind = "video";
    this.fig.dataset.fallback = "video";
    this.media = video;
    this.bindMedia();
    log(this.side, "fallback_video", 0);
  };
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
  Player.prototype.play = function (group) {
    if (exclusive && !group) {
      Object.keys(players).forEach(function (k) { if (players[k] !== this && players[k].playing) { players[k].pause(); } }, this);
    }
    if (group || this.t >= this.duration - 1e-3) { this.t = 0; if (this.media) { try { this.media.currentTime = 0; } catch (e) { /* not loaded */ } } }
    this.group = group || null;
    this.playing = true;
    log(this.side, "play", this.t);
    if (this.kind === "motion") {
      this.startWall = performance.now() - this.t * 1000;
      if (this.media) { try { this.media.currentTime = this.t; } catch (e) { /* not loaded yet */ } this.media.play().catch(function () {}); }
      var self = this, last = null;
      requestAnimationFrame(function step(now) {
        if (!self.playing) { return; }
        var t0 = performance.now();
        self.tick();
        frameLog(last === null ? 0 : now - last, performance.now() - t0);
        last = now;
        requestAnimationFrame(step);
      });
    } else {
      this.media.play().catch(function () {});
    }
    this.label();
  };
  Player.prototype.seek = function (t) {
    this.t = Math.min(t, this.duration);
    this.group = null;
    if (this.media) { try { this.media.currentTime = this.t; } catch (e) { /* not loaded */ } }
    if (this.kind === "motion") { this.startWall = performance.now() - this.t * 1000; this.draw(); }
    log(this.side, "seek", this.t);
    this.progress();
    this.label();
  };
  Player.prototype.pause = function () {
    if (!this.playing) { return; }
    this.playing = false;
    this.group = null;
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
    this.group = null;
    this.t = this.duration;
    if (covered) { this.ended = true; }
    log(this.side, "ended", this.t);
    this.progress();
    this.label();
    update();
  };
  // seconds since the start: the group's clock when playing both, else this side's (audio is the
  // master clock while it plays)
  Player.prototype.clock = function () {
    var g = this.group, m;
    if (g) {
      m = g.media;
      if (m && !m.paused && !m.ended && m.currentTime > 0) { return m.currentTime; }
      return (performance.now() - g.start) / 1000;
    }
    m = this.media;
    if (m && !m.paused && !m.ended && m.currentTime > 0) { return m.currentTime; }
    return (performance.now() - this.startWall) / 1000;
  };
  // motion: advance the clock and draw
  Player.prototype.tick = function () {
    var t = this.clock();
    this.t = Math.min(t, this.duration);
    this.draw();
    this.progress();
    if (t >= this.duration) { this.finish(); }
  };
  // resolves when a media element can play through (or after 15 s: browsers that load media only
  // on a tap, e.g. iOS, still get a playable trial); rejects when it cannot be loaded
  function mediaReady(el, again) {
    return new Promise(function (resolve, reject) {
      if (el.readyState >= 4 && !again) { resolve(); return; }
      var timer = setTimeout(resolve, 15000);
      var ok = function () { clearTimeout(timer); el.removeEventListener("error", bad); resolve(); };
      var bad = function () {
        clearTimeout(timer); el.removeEventListener("canplaythrough", ok);
        reject(new Error("media " + (el.error ? "error " + el.error.code : "error")));
      };
      el.addEventListener("canplaythrough", ok, { once: true });
      el.addEventListener("error", bad, { once: true });
      try { if (again || el.networkState === 0 || el.preload !== "auto") { el.preload = "auto"; el.load(); } } catch (e) { /* keep waiting */ }
    });
  }
  // run load() (a function returning a promise); after a failure wait RETRY_MS and run it once
  // more (again = true), logging the retry; the second failure is the stimulus's failure
  var RETRY_MS = 800;
  function withRetry(side, load) {
    return load(false).catch(function (err) {
      log(side, "load_retry", 0);
      return new Promise(function (resolve) { setTimeout(resolve, RETRY_MS); }).then(function () { return load(true); });
    });
  }
  Player.prototype.load = function () {
    var self = this;
    var media = this.media ? withRetry(this.side, function (again) { return mediaReady(self.media, again); }) : Promise.resolve();
    if (this.kind !== "motion") {
      return media.then(function () { return null; });
    }
    var clip = withRetry(this.side, function () {
      return fetch(self.fig.dataset.src, { credentials: "same-origin" })
        .then(function (r) { if (!r.ok) { throw new Error("HTTP " + r.status); } return r.json(); });
    })
      .then(function (clip) {
        self.clip = clip;
        self.clipDuration = clip.frames / clip.fps;
        self.duration = Math.max(self.duration, self.clipDuration);
        self.canvas = self.fig.querySelector("canvas");
        clip._path = smoothPath(clip);  // the follow camera's view centres, once per clip
        return clip;
      });
    return Promise.all([clip, media]).then(function (r) { return r[0]; });
  };
  // make(w, h): the camera shared by both sides for a canvas of w x h CSS pixels
  // (the canvas gets a whole number of CSS pixels, about 4:3 with an even height, so its pixels
  // are the renderer's own and a video of the same size can be encoded; set again on resize)
  Player.prototype.setup = function (make) {
    var c = this.canvas;
    c.style.width = ""; c.style.height = "";
    var w = Math.max(Math.floor(c.getBoundingClientRect().width) || 480, 64), h = 2 * Math.round(w * 0.375);
    c.style.width = w + "px"; c.style.height = h + "px";
    if (!this.stage) {
      this.stage = new Stage(c, { pixelRatio: window.devicePixelRatio || 1, color: this.fig.dataset.color || undefined,
                                  background: root.dataset.background || undefined });
    }
    this.stage.setClip(this.clip, make(w, h));
    this.draw(true);
  };
  Player.prototype.enable = function () {
    this.button.disabled = false;
    this.label();
  };
  Player.prototype.draw = function (force) {
    var clip = this.clip;
    if (!this.stage) { return; }
    var f = Math.min(clip.frames - 1, Math.max(0, Math.floor(this.t * clip.fps + 1e-6)));
    if (force || f !== this.stage.f) { this.stage.draw(f); }
    this.fig.dataset.frame = String(f);
  };

  // frame intervals and draw times (ms) of motion playback, the last 600
  window.evalkitTrial = { frames: [] };
  function frameLog(interval, draw) {
    var a = window.evalkitTrial.frames;
    a.push([Math.round(interval * 100) / 100, Math.round(draw * 100) / 100]);
    if (a.length > 600) { a.shift(); }
  }

  // play both sides together on one clock (the first audio track among them, else the wall clock)
  function playBoth() {
    var sides = ["left", "right"].map(function (k) { return players[k]; });
    var media = null;
    sides.forEach(function (p) { if (!media && p.media) { media = p.media; } });
    var group = { start: performance.now(), media: media };
    sides.forEach(function (p) { if (p.playing) { p.pause(); } });
    sides.forEach(function (p) { p.play(group); });
    // media stimuli: the second follows the first if they drift apart by more than 0.1 s
    var a = sides[0], b = sides[1];
    if (a.kind !== "motion" && b.kind !== "motion") {
      requestAnimationFrame(function keep() {
        if (a.group !== group || b.group !== group) { return; }
        if (Math.abs(a.media.currentTime - b.media.currentTime) > 0.1 && !a.media.paused) { b.media.currentTime = a.media.currentTime; }
        requestAnimationFrame(keep);
      });
    }
  }

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
    if ((k === "b" || k === "B") && bothBtn && !bothBtn.disabled) { playBoth(); ev.preventDefault(); return; }
    if (k === "Enter" && tag !== "BUTTON") {
      if (!nextBtn.disabled) { form.requestSubmit ? form.requestSubmit(nextBtn) : nextBtn.click(); }
      ev.preventDefault();
      return;
    }
    if (!root.classList.contains("ready")) { return; }  // no answer before both stimuli are loaded
    var arrow = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[k];
    if (/^[1-9]$/.test(k) || arrow) {
      var radios, grp = "answer";
      if (root.dataset.scaleKind === "absolute") {  // the focused side's scale, else the first unanswered
        grp = tag === "INPUT" && ev.target.type === "radio" ? ev.target.name
          : (form.querySelector("input[name=answer_left]:checked") ? "answer_right" : "answer_left");
      }
      radios = Array.prototype.slice.call(form.querySelectorAll("input[name=" + grp + "]"));
      var idx;
      if (arrow) {  // from the chosen point (or from outside the scale) one step along it
        var at = radios.findIndex(function (r) { return r.checked; });
        idx = at < 0 ? (arrow > 0 ? 0 : radios.length - 1) : Math.min(radios.length - 1, Math.max(0, at + arrow));
      } else {
        idx = parseInt(k, 10) - 1;
      }
      if (idx < radios.length) { radios[idx].checked = true; radios[idx].focus(); update(); ev.preventDefault(); }
    }
  });

  // ------------------------------------------------------------------ start
  ["left", "right"].forEach(function (side) { players[side] = new Player(document.getElementById("stim-" + side)); });
  var bothBtn = document.getElementById("play-both");
  var scales = form.querySelectorAll("fieldset.scale");
  // a problem that keeps the trial from being answered, sent to the server's event log
  // (POST /trial/<n>/event); the page does not wait for it
  function report(type, side, detail) {
    log(side, type, 0);
    var token = document.querySelector("meta[name=csrf-token]").content;
    try {
      fetch(form.action + "/event", {
        method: "POST", credentials: "same-origin", keepalive: true,
        headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": token },
        body: JSON.stringify({ type: type, side: side, detail: String(detail || "").slice(0, 200) })
      }).catch(function () { /* the message on the page is what matters */ });
    } catch (e) { /* idem */ }
  }
  var noWebgl = function () {
    statusEl.textContent = str("NoWebgl");
    root.classList.add("no-webgl");
    report("no_webgl", "", navigator.userAgent);
  };
  var sideLoad = function (side) {
    return players[side].load().catch(function (err) {
      var reason = String(err && err.message || err);
      report("load_failed", side, reason);
      throw new Error(reason);
    });
  };
  var hasMotion = players.left.kind === "motion" || players.right.kind === "motion";
  var canFallBack = ["left", "right"].every(function (k) { return players[k].kind !== "motion" || !!players[k].fig.dataset.video; });
  // the same renderer's videos instead of the canvases (playback.video_fallback)
  var fallBack = function () {
    ["left", "right"].forEach(function (k) { if (players[k].kind === "motion") { players[k].useVideo(players[k].fig.dataset.video); } });
    root.classList.add("video-fallback");
  };
  var loaded = function (clips) {
    var motion = clips.filter(function (c) { return c; });
    if (motion.length) {
      // one camera for both sides, fitted to both clips (each canvas gets its own for its size)
      var opts = { camera: root.dataset.camera, framing: root.dataset.framing };
      var make = function (w, h) { return makeView(motion, w, h, opts); };
      var setupAll = function () {
        ["left", "right"].forEach(function (side) { if (players[side].clip) { players[side].setup(make); } });
      };
      try {
        setupAll();
      } catch (err) {  // the browser refused a WebGL context after all
        if (canFallBack) { fallBack(); start(); } else { noWebgl(); }
        return;
      }
      var resizing = null, lastWidth = window.innerWidth;
      window.addEventListener("resize", function () {
        if (window.innerWidth === lastWidth) { return; }  // phones: the address bar hiding changes the height only
        lastWidth = window.innerWidth;
        clearTimeout(resizing);
        resizing = setTimeout(setupAll, 200);
      });
    }
    players.left.enable(); players.right.enable();
    if (bothBtn) {
      bothBtn.disabled = false;
      bothBtn.addEventListener("click", playBoth);
    }
    scales.forEach(function (f) { f.disabled = false; });  // the answer can be given now
    root.classList.add("ready");
    update();
  };
  var start = function () {
    Promise.all([sideLoad("left"), sideLoad("right")]).then(loaded).catch(function (err) {
      root.classList.add("load-failed");
      statusEl.textContent = str("LoadFailed").replace("{reason}", String(err && err.message || err));
    });
  };
  if (hasMotion && !webglAvailable()) {
    if (canFallBack) { fallBack(); start(); } else { noWebgl(); }
  } else {
    start();
  }
})();
