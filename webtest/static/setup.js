/* evalkit webtest: the setup stages' pages (templates/setup_*.html).
 *
 * device: on submit, the window's and the screen's size (CSS pixels), the touch points and
 *   whether a fine pointer (mouse, trackpad) is present go to the server, which decides.
 * volume: the calibration noise plays in a loop; the two answers unlock once it has played.
 * headphones: one sound per screening trial, each played once; the tone buttons unlock when
 *   it has ended, Next shows the following trial, the last one sends all answers.
 *   Keys: 1-3 choose a tone, Enter goes on.
 * A sound that cannot be loaded is tried again once, then said so.
 */
(function () {
  "use strict";
  var root = document.getElementById("setup");
  if (!root) { return; }
  var str = function (k) { return root.dataset["str" + k] || ""; };
  var statusEl = document.getElementById("status");

  function device() {
    var form = document.getElementById("device-form");
    form.addEventListener("submit", function () {
      var fine = window.matchMedia && window.matchMedia("(any-pointer: fine)").matches;
      var touch = navigator.maxTouchPoints || 0;
      var set = function (name, value) { form.elements[name].value = String(value); };
      set("width", Math.floor(window.innerWidth));
      set("height", Math.floor(window.innerHeight));
      set("screen_width", Math.floor(screen.width || 0));
      set("screen_height", Math.floor(screen.height || 0));
      set("touch_points", touch);
      set("fine_pointer", fine ? 1 : 0);
      set("touch_only", !fine && touch > 0 ? 1 : 0);
    });
  }

  function volume() {
    var audio = document.getElementById("calibration"), btn = document.getElementById("play");
    var answers = [document.getElementById("comfortable"), document.getElementById("cannot-hear")];
    btn.addEventListener("click", function () {
      if (audio.paused) {
        audio.play().catch(function () { /* shown by the error handler */ });
      } else {
        audio.pause();
      }
    });
    audio.addEventListener("play", function () {
      btn.textContent = str("Pause"); btn.setAttribute("aria-pressed", "true");
      answers.forEach(function (b) { b.disabled = false; });
      statusEl.textContent = "";
    });
    audio.addEventListener("pause", function () { btn.textContent = str("Play"); btn.setAttribute("aria-pressed", "false"); });
    var retried = false;
    audio.addEventListener("error", function () {
      if (!retried) { retried = true; setTimeout(function () { audio.load(); }, 800); return; }
      answers[1].disabled = false;  // who cannot get the sound can still say so
    });
  }

  function headphones() {
    var form = document.getElementById("headphones-form");
    var trials = Array.prototype.slice.call(form.querySelectorAll("fieldset.hp-trial"));
    var current = 0;
    trials.forEach(function (fs, i) {
      var audio = new Audio(), play = fs.querySelector(".hp-play"), next = fs.querySelector(".hp-next");
      var radios = fs.querySelectorAll("input[type=radio]"), retried = false, label = play.textContent;
      audio.preload = "auto";
      audio.src = fs.dataset.src;
      audio.addEventListener("canplaythrough", function () { if (!fs.dataset.played) { play.disabled = false; } }, { once: true });
      audio.addEventListener("error", function () {
        if (!retried) { retried = true; setTimeout(function () { audio.load(); }, 800); return; }
        statusEl.textContent = str("LoadFailed").replace("{reason}", "error " + (audio.error ? audio.error.code : ""));
      });
      play.addEventListener("click", function () {  // each sound once
        fs.dataset.played = "1";
        play.disabled = true;
        play.textContent = str("Playing");
        audio.play().catch(function () { play.disabled = false; delete fs.dataset.played; });
      });
      audio.addEventListener("ended", function () {
        radios.forEach(function (r) { r.disabled = false; });
        radios[0].focus();
        play.textContent = label;
      });
      fs.addEventListener("change", function () { next.disabled = !fs.querySelector("input:checked"); });
      next.addEventListener("click", function () {
        if (!fs.querySelector("input:checked")) { return; }
        if (i === trials.length - 1) { form.submit(); return; }
        fs.hidden = true;
        trials[i + 1].hidden = false;
        current = i + 1;
        var p = trials[i + 1].querySelector(".hp-play");
        p.focus();
      });
    });
    document.addEventListener("keydown", function (ev) {
      if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
      var fs = trials[current], k = ev.key;
      if (/^[1-3]$/.test(k)) {
        var r = fs.querySelectorAll("input[type=radio]")[parseInt(k, 10) - 1];
        if (r && !r.disabled) { r.checked = true; r.focus(); fs.querySelector(".hp-next").disabled = false; ev.preventDefault(); }
      } else if (k === "Enter" && (ev.target.tagName || "") !== "BUTTON") {
        var next = fs.querySelector(".hp-next");
        if (!next.disabled) { next.click(); }
        ev.preventDefault();
      }
    });
  }

  ({ device: device, volume: volume, headphones: headphones }[root.dataset.stage] || function () {})();
})();
