/* evalkit: the one motion renderer (three.js, WebGL), used by the trial page (player.js) and by
 * `evalkit render` (render.html driven headless by webtest/render.py), so what a participant sees
 * and what a video shows are the same pixels.
 *
 * Input: a clip as served by webtest (webtest/stimuli.py motion_payload): world joint positions
 * (metres, Y-up, frame-major), parents, fps and, when evalkit found them, joint roles.
 *
 * The body: a mannequin built from the skeleton, sized by its bone lengths (body height H is
 * estimated from leg, trunk and neck lengths): tapered limbs (cylinders with balls at the joints),
 * ellipsoids for chest, waist, pelvis and head (head oriented by the neck and shoulders, a small
 * nose shows where it faces), hands along the forearm (or the wrist's children), feet from ankle
 * to toe. Skeletons whose roles are unknown get limbs on every bone and a ball for a head.
 * The scene: a ground plane at the clip's lowest joint with a grid every GRID_STEP m fixed to the
 * world, soft contact shadows (blurred blobs under every joint, darker the closer it is to the
 * ground), a hemisphere light plus a key light from the camera's upper left (depth by shading),
 * fog that fades the far ground into the background.
 * Cameras (playback.camera), the same for both sides of a trial (fitted to both clips together):
 *   follow (default): the view centre follows the clip's root (joint 0) horizontally, smoothed
 *     by a centred ~1 s moving average so pelvis sway does not shake the picture; the zoom makes a
 *     standing body fill FOLLOW_FILL of the canvas height (less if the body would come within
 *     FOLLOW_MARGIN of an edge on any frame).
 *   fixed: one still camera fitted to the whole path.
 * Framings (playback.framing): full (the whole body, seen 35 degrees off the direction of travel,
 * from the side the body faces, 14 degrees down) and upper (GENEA's upper-body view for gesture
 * studies: from mid-thigh to the top of the head, facing the body, 5 degrees down).
 */
import * as THREE from "./vendor/three/three.module.min.js";

export const GRID_STEP = 0.5;       // m between ground grid lines
export const FOLLOW_WINDOW_S = 1.0; // s, centred moving average of the followed root path
export const FOLLOW_FILL = 0.65;    // fraction of the canvas height a standing body fills (follow, full)
export const UPPER_FILL = 0.85;     // fraction of the canvas height from mid-thigh to head top (upper)
export const FOLLOW_MARGIN = 0.04;  // least gap between the body and the canvas edge, fraction of the side
export const GRID_HALF_M = 6.0;     // m, half-size of the grid square around the view centre
export const DEFAULTS = { color: "#5b7fb5", background: "#eef2f6", ground: "#d5dde6", grid: "#aab6c4" };

// ------------------------------------------------------------------ small vector helpers
function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
function add(a, b) { return [a[0] + b[0], a[1] + b[1], a[2] + b[2]]; }
function mul(a, s) { return [a[0] * s, a[1] * s, a[2] * s]; }
function lerp(a, b, t) { return [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])]; }
function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
function len(a) { return Math.sqrt(dot(a, a)); }
function norm(a, fallback) { var n = len(a); return n > 1e-9 ? [a[0] / n, a[1] / n, a[2] / n] : (fallback || [0, 1, 0]); }
// unit a made orthogonal to unit y (fallback if parallel)
function ortho(a, y, fallback) { return norm(sub(a, mul(y, dot(a, y))), fallback); }

/** True when this browser can draw WebGL (the trial page says so otherwise). */
export function webglAvailable() {
  try {
    var c = document.createElement("canvas");
    return !!(window.WebGLRenderingContext && (c.getContext("webgl2") || c.getContext("webgl")));
  } catch (e) { return false; }
}

/** Joint j of frame f of a clip: [x, y, z] metres. */
export function jointAt(clip, f, j) {
  var i = 3 * (f * clip.joints + j), P = clip.positions;
  return [P[i], P[i + 1], P[i + 2]];
}

/** Root (joint 0) x/z of every frame, smoothed by a centred moving average of 2k + 1 frames
 * (k = round(FOLLOW_WINDOW_S * fps / 2), at most frames - 1); the ends are padded by point
 * reflection (2 x0 - x[k..1]) so a steady walk stays centred up to the first and last frame.
 * Returns [x0, z0, x1, z1, ...] metres. */
export function smoothPath(clip) {
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

// ------------------------------------------------------------------ the mannequin
// Radii and sizes as fractions of the body height H (adult proportions, Drillis & Contini).
var R = {
  hip: 0.05, knee: 0.033, ankle: 0.022, shoulder: 0.032, elbow: 0.024, wrist: 0.017, neck: 0.03,
  stick: 0.014, head: [0.053, 0.07, 0.061], headUp: 0.045, nose: 0.012,
  chest: 0.065, waist: [0.077, 0.058], pelvis: [0.022, 0.062, 0.062],
  hand: [0.055, 0.026, 0.012], foot: [0.04, 0.024, 0.032]
};

function descendants(parents, j) {
  var out = {}, k, changed = true;
  out[j] = true;
  while (changed) {
    changed = false;
    for (k = 0; k < parents.length; k++) { if (!out[k] && out[parents[k]]) { out[k] = true; changed = true; } }
  }
  return out;
}

/** The mannequin of a clip: its body height H (m), its parts and how far the head top rises
 * above the highest joint. Cached on the clip. */
export function bodyOf(clip) {
  if (clip._body) { return clip._body; }
  var roles = clip.roles || {}, par = clip.parents, J = clip.joints;
  var has = function () { for (var i = 0; i < arguments.length; i++) { if (!(arguments[i] in roles)) { return false; } } return true; };
  var p0 = function (name) { return jointAt(clip, 0, roles[name]); };
  var body = { H: 1.7, limbs: [], balls: [], shapes: [], full: false, facing: null, topPad: 0.1 };
  var full = has("hips", "neck", "head", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow",
    "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle");
  var j, lo = Infinity, hi = -Infinity;
  for (j = 0; j < J; j++) { var q = jointAt(clip, 0, j); lo = Math.min(lo, q[1]); hi = Math.max(hi, q[1]); }
  if (full) {
    var leg = (len(sub(p0("left_hip"), p0("left_knee"))) + len(sub(p0("left_knee"), p0("left_ankle"))) +
               len(sub(p0("right_hip"), p0("right_knee"))) + len(sub(p0("right_knee"), p0("right_ankle")))) / 2;
    var pc = lerp(p0("left_hip"), p0("right_hip"), 0.5);
    var trunk = len(sub(p0("hips"), pc)) + len(sub(p0("neck"), p0("hips"))) + len(sub(p0("head"), p0("neck")));
    body.H = 1.17 * (leg + trunk);
  } else {
    body.H = Math.max(1.08 * (hi - lo), 0.3);
  }
  var H = body.H;
  body.full = full;
  var covered = {};  // joints inside a hand, foot or head shape: no limb for their bones
  if (full) {
    ["left_wrist", "right_wrist", "left_ankle", "right_ankle", "head"].forEach(function (r) {
      var d = descendants(par, roles[r]);
      Object.keys(d).forEach(function (k) { if (+k !== roles[r]) { covered[k] = true; } });
    });
    var limb = function (a, b, ra, rb) { body.limbs.push({ a: roles[a], b: roles[b], ra: ra * H, rb: rb * H }); };
    var hipR = Math.min(R.hip, 0.48 * len(sub(p0("left_hip"), p0("right_hip"))) / H);  // thighs do not overlap
    ["left", "right"].forEach(function (s) {
      limb(s + "_hip", s + "_knee", hipR, R.knee);
      limb(s + "_knee", s + "_ankle", R.knee, R.ankle);
      limb(s + "_shoulder", s + "_elbow", R.shoulder, R.elbow);
      limb(s + "_elbow", s + "_wrist", R.elbow, R.wrist);
      limb("neck", s + "_shoulder", R.neck, R.shoulder);
      body.balls.push({ j: roles[s + "_knee"], r: R.knee * H }, { j: roles[s + "_elbow"], r: R.elbow * H },
        { j: roles[s + "_shoulder"], r: R.shoulder * H }, { j: roles[s + "_hip"], r: hipR * H },
        { j: roles[s + "_ankle"], r: R.ankle * H }, { j: roles[s + "_wrist"], r: R.wrist * H });
    });
    limb("neck", "head", R.neck, R.neck);
    body.balls.push({ j: roles.neck, r: R.neck * H });
    body.shapes = ["chest", "waist", "pelvis", "head", "nose", "left_hand", "right_hand", "left_foot", "right_foot"];
    body.topPad = (R.headUp + R.head[1]) * H;
    // the way the body faces on average: lateral (left - right hip and shoulder) x up
    var fx = 0, fz = 0, f;
    for (f = 0; f < clip.frames; f += Math.max(1, Math.floor(clip.frames / 50))) {
      var lat = add(sub(jointAt(clip, f, roles.left_hip), jointAt(clip, f, roles.right_hip)),
                    sub(jointAt(clip, f, roles.left_shoulder), jointAt(clip, f, roles.right_shoulder)));
      var fw = cross(lat, [0, 1, 0]);
      var n = Math.hypot(fw[0], fw[2]);
      if (n > 1e-9) { fx += fw[0] / n; fz += fw[2] / n; }
    }
    if (Math.hypot(fx, fz) > 1e-6) { body.facing = Math.atan2(fx, fz); }
  } else {
    body.topPad = 0.06 * H;
  }
  // every other bone: a thin limb (the whole figure without roles). With roles only bones on the
  // way from the hips to a role joint (spine, clavicles, twist bones: inside the body), not
  // helper bones (a root on the ground, breast, eye or jaw bones)
  var inFull = {}, onPath = null;
  body.limbs.forEach(function (l) { inFull[l.a + ":" + l.b] = true; });
  if (full) {
    onPath = {};
    var below = descendants(par, roles.hips);
    Object.keys(roles).forEach(function (r) {
      for (var k = roles[r]; k >= 0 && below[k]; k = par[k]) { onPath[k] = true; }
    });
  }
  var r0 = full ? R.stick : 0.022;
  for (j = 0; j < J; j++) {
    if (par[j] < 0 || covered[j] || inFull[par[j] + ":" + j]) { continue; }
    if (onPath && !(onPath[j] && onPath[par[j]])) { continue; }
    if (len(sub(jointAt(clip, 0, j), jointAt(clip, 0, par[j]))) < 1e-3) { continue; }
    body.limbs.push({ a: par[j], b: j, ra: r0 * H, rb: r0 * H });
    if (!full) { body.balls.push({ j: j, r: r0 * H }); }
  }
  if (!full) {  // a head: a ball on the highest leaf joint of the first frame
    var top = -1, isParent = {};
    par.forEach(function (p) { isParent[p] = true; });
    for (j = 0; j < J; j++) { if (!isParent[j] && (top < 0 || jointAt(clip, 0, j)[1] > jointAt(clip, 0, top)[1])) { top = j; } }
    if (top >= 0) { body.headJoint = top; body.shapes = ["ballhead"]; }
  }
  clip._body = body;
  return body;
}

// The pose of every shape of the mannequin at frame f: {centre, axes [x, y, z] unit, radii [rx, ry, rz]}.
function shapePoses(clip, body, f) {
  var roles = clip.roles || {}, H = body.H, out = {};
  var J = function (name) { return jointAt(clip, f, roles[name]); };
  if (!body.full) {
    if (body.headJoint !== undefined) {
      var c = jointAt(clip, f, body.headJoint);
      out.ballhead = { centre: c, axes: [[1, 0, 0], [0, 1, 0], [0, 0, 1]], radii: [0.06 * H, 0.06 * H, 0.06 * H] };
    }
    return out;
  }
  var P = J("hips"), N = J("neck"), LS = J("left_shoulder"), RS = J("right_shoulder");
  var LH = J("left_hip"), RH = J("right_hip"), HD = J("head");
  var y = norm(sub(N, P));
  var x = ortho(norm(sub(LS, RS), [1, 0, 0]), y, [1, 0, 0]);
  var z = cross(x, y);
  var trunk = len(sub(N, P)), sw = len(sub(LS, RS));
  // widths follow the skeleton's own shoulder and hip spacing (narrow rigs get narrow bodies)
  var cw = Math.max(0.45 * sw, 0.05 * H);
  out.chest = { centre: lerp(P, N, 0.68), axes: [x, y, z], radii: [cw, 0.5 * trunk, Math.min(R.chest * H, 0.8 * cw)] };
  var xh = ortho(norm(sub(LH, RH), x), y, x), zh = cross(xh, y), ww = Math.min(R.waist[0] * H, 0.85 * cw);
  out.waist = { centre: lerp(P, N, 0.3), axes: [xh, y, zh], radii: [ww, 0.45 * trunk, Math.min(R.waist[1] * H, 0.8 * ww)] };
  var hw = len(sub(LH, RH));
  out.pelvis = { centre: lerp(P, lerp(LH, RH, 0.5), 0.6), axes: [xh, y, zh],
                 radii: [0.5 * hw + R.pelvis[0] * H, R.pelvis[1] * H, R.pelvis[2] * H] };
  var yh = norm(sub(HD, N), y), xx = ortho(x, yh, x), zz = cross(xx, yh);
  var hc = add(HD, add(mul(yh, R.headUp * H), mul(zz, 0.01 * H)));
  out.head = { centre: hc, axes: [xx, yh, zz], radii: [R.head[0] * H, R.head[1] * H, R.head[2] * H] };
  out.nose = { centre: add(hc, add(mul(zz, R.head[2] * H * 0.97), mul(yh, -0.008 * H))), axes: [xx, yh, zz],
               radii: [R.nose * H, 1.3 * R.nose * H, R.nose * H] };
  ["left", "right"].forEach(function (s) {
    var W = J(s + "_wrist"), E = J(s + "_elbow"), kids = [], k;
    for (k = 0; k < clip.joints; k++) { if (clip.parents[k] === roles[s + "_wrist"]) { kids.push(jointAt(clip, f, k)); } }
    var d = norm(sub(W, E));
    if (kids.length) {
      var m = [0, 0, 0];
      kids.forEach(function (q) { m = add(m, mul(q, 1 / kids.length)); });
      d = norm(sub(m, W), d);
    }
    var wax = ortho(z, d, ortho([0, 1, 0], d, [1, 0, 0]));  // palm width across the forward direction
    out[s + "_hand"] = { centre: add(W, mul(d, R.hand[0] * H * 0.95)), axes: [d, wax, cross(d, wax)],
                         radii: [R.hand[0] * H, R.hand[1] * H, R.hand[2] * H] };
    var A = J(s + "_ankle"), T = (s + "_toe") in roles ? J(s + "_toe") : null;
    var fd = T ? sub(T, A) : [0, 0, 0];
    if (len(fd) < 0.02 * H) { fd = mul([z[0], 0, z[2]], 0.08 * H); }
    var fl = len(fd), fx = norm(fd), fy = ortho([0, 1, 0], fx, [0, 1, 0]);
    out[s + "_foot"] = { centre: add(add(A, mul(fd, 0.5)), mul(fy, -0.012 * H)), axes: [fx, fy, cross(fx, fy)],
                         radii: [0.5 * fl + R.foot[0] * H, R.foot[1] * H, R.foot[2] * H] };
  });
  return out;
}

// ------------------------------------------------------------------ cameras
// azimuth (radians) of the eye around the target. full: 35 degrees off the longer horizontal side
// of the bounds (the direction of travel); of the four such directions the one most in front of
// the body's average facing. upper: straight in front of the body.
function azimuth(lo, hi, facing, framing) {
  if (framing === "upper" && facing !== null) { return facing; }
  var a = ((hi[0] - lo[0]) > (hi[2] - lo[2]) ? 55 : 35) * Math.PI / 180;
  if (facing === null || facing === undefined) { return a; }
  var best = a, score = -Infinity;
  [a, -a, Math.PI - a, Math.PI + a].forEach(function (c) {
    var s = Math.cos(c - facing);
    if (s > score + 1e-9) { score = s; best = c; }
  });
  return best;
}

// a pinhole camera: eye, unit forward f, right r, up u; pixel = (ox + scale * (v.r)/(v.f), oy - scale * (v.u)/(v.f))
function View(target, az, elDeg, dist) {
  var el = elDeg * Math.PI / 180;
  this.target = target;
  this.eye = [target[0] + dist * Math.sin(az) * Math.cos(el), target[1] + dist * Math.sin(el), target[2] + dist * Math.cos(az) * Math.cos(el)];
  this.f = norm(sub(target, this.eye));
  this.r = norm(cross(this.f, [0, 1, 0]));
  this.u = cross(this.r, this.f);
  this.dist = dist;
  this.scale = 1; this.ox = 0; this.oy = 0;
}
View.prototype.raw = function (p) {
  var v = sub(p, this.eye), zz = Math.max(dot(v, this.f), 1e-3);
  return [dot(v, this.r) / zz, dot(v, this.u) / zz];
};
/** Pixel coordinates [x, y] (origin top left, CSS pixels) of world point p (metres). */
View.prototype.project = function (p) {
  var q = this.raw(p);
  return [this.ox + this.scale * q[0], this.oy - this.scale * q[1]];
};
/** The same camera (direction, zoom) moved to look at c = [x, y, z] metres. */
View.prototype.at = function (c) {
  var v = Object.create(this), t = this.target;
  v.eye = [this.eye[0] + c[0] - t[0], this.eye[1] + c[1] - t[1], this.eye[2] + c[2] - t[2]];
  v.target = c;
  return v;
};
/** The camera of frame f of a clip (path: its smoothPath): follow moves onto the smoothed root. */
View.prototype.frame = function (path, f) {
  return this.follow ? this.at([path[2 * f], this.mid, path[2 * f + 1]]) : this;
};

/** Union bounds [[x, y, z], [x, y, z]] metres of clips (from their "bounds"). */
export function unionBounds(clips) {
  var lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  clips.forEach(function (c) {
    for (var a = 0; a < 3; a++) { lo[a] = Math.min(lo[a], c.bounds[0][a]); hi[a] = Math.max(hi[a], c.bounds[1][a]); }
  });
  return [lo, hi];
}

/** The camera shared by clips (both sides of a trial) for a canvas of width x height CSS pixels.
 * opts: {camera: "follow"|"fixed", framing: "full"|"upper"}. Each clip needs its path
 * (smoothPath) as clip._path (set here when absent). */
export function makeView(clips, width, height, opts) {
  opts = opts || {};
  var follow = opts.camera !== "fixed", upper = opts.framing === "upper";
  var b = unionBounds(clips), lo = b[0].slice(), hi = b[1].slice();
  var bodies = clips.map(bodyOf), topPad = 0, H = 0, facing = null, fx = 0, fz = 0;
  bodies.forEach(function (bd) {
    topPad = Math.max(topPad, bd.topPad); H = Math.max(H, bd.H);
    if (bd.facing !== null) { fx += Math.sin(bd.facing); fz += Math.cos(bd.facing); }
  });
  if (Math.hypot(fx, fz) > 1e-6) { facing = Math.atan2(fx, fz); }
  var ground = lo[1];
  hi[1] += topPad;  // the head rises above the highest joint
  var bottom = lo[1];
  if (upper) {  // from mid-thigh: the hips' lowest height minus a quarter of the leg
    var hipY = Infinity;
    clips.forEach(function (c) {
      var hj = c.roles && ("hips" in c.roles) ? c.roles.hips : 0;
      for (var f = 0; f < c.frames; f++) { hipY = Math.min(hipY, jointAt(c, f, hj)[1]); }
    });
    bottom = Math.max(lo[1], hipY - 0.14 * H);
  }
  var az = azimuth(lo, hi, facing, opts.framing), el = upper ? 5 : 14;
  var view, extent = Math.max(hi[1] - bottom, 0.5);
  clips.forEach(function (c) { if (!c._path) { c._path = smoothPath(c); } });
  if (follow) {
    var mid = (bottom + hi[1]) / 2;
    view = new View([0, mid, 0], az, el, 2.6 * Math.max(extent, 1.0) + 2.0);
    view.mid = mid;
    // the standing body seen at the view centre: centred, FOLLOW_FILL (UPPER_FILL) of the height
    var top = view.raw([0, hi[1], 0]), bot = view.raw([0, bottom, 0]);
    var a = (top[0] + bot[0]) / 2, bb = (top[1] + bot[1]) / 2;
    var scale = (upper ? UPPER_FILL : FOLLOW_FILL) * height / Math.max(top[1] - bot[1], 1e-6);
    var margin = FOLLOW_MARGIN;
    clips.forEach(function (c, ci) {
      // every joint of every frame (the head top for the head; upper: joints above the cut),
      // seen from its own view centre, must stay inside the canvas with the margin plus the body's thickness
      var pad = 0.05 * bodies[ci].H, path = c._path, dx = 1e-6, dy = 1e-6, f, j, p, q;
      var headJ = c.roles && ("head" in c.roles) ? c.roles.head : -1;
      for (f = 0; f < c.frames; f++) {
        for (j = 0; j < c.joints; j++) {
          p = jointAt(c, f, j);
          if (upper && p[1] < bottom) { continue; }
          if (j === headJ) { p[1] += bodies[ci].topPad - 0.5 * pad; }
          p = [p[0] - path[2 * f], p[1], p[2] - path[2 * f + 1]];
          q = view.raw(p);
          var dd = pad / Math.max(dot(sub(p, view.eye), view.f), 1e-3);
          dx = Math.max(dx, Math.abs(q[0] - a) + dd);
          if (!upper) { dy = Math.max(dy, Math.abs(q[1] - bb) + dd); }
        }
      }
      scale = Math.min(scale, (0.5 - margin) * width / dx);
      if (!upper) { scale = Math.min(scale, (0.5 - margin) * height / dy); }
    });
    view.scale = scale; view.ox = width / 2 - scale * a; view.oy = height / 2 + scale * bb;
    view.follow = true;
  } else {
    var cx = (lo[0] + hi[0]) / 2, cz = (lo[2] + hi[2]) / 2, cy = (bottom + hi[1]) / 2;
    var ext = Math.max(hi[0] - lo[0], hi[1] - bottom, hi[2] - lo[2], 1.0);
    view = new View([cx, cy, cz], az, el, 2.6 * ext + 2.0);
    var pts = [], minx = Infinity, maxx = -Infinity, miny = Infinity, maxy = -Infinity;
    [lo[0] - 0.3, hi[0] + 0.3].forEach(function (x) {
      [bottom, hi[1]].forEach(function (y) { [lo[2] - 0.3, hi[2] + 0.3].forEach(function (z) { pts.push([x, y, z]); }); });
    });
    pts.forEach(function (p) {
      var q = view.raw(p);
      minx = Math.min(minx, q[0]); maxx = Math.max(maxx, q[0]); miny = Math.min(miny, q[1]); maxy = Math.max(maxy, q[1]);
    });
    var m = 0.06;
    view.scale = Math.min(width * (1 - 2 * m) / (maxx - minx), height * (1 - 2 * m) / (maxy - miny));
    view.ox = width / 2 - view.scale * (minx + maxx) / 2;
    view.oy = height / 2 + view.scale * (miny + maxy) / 2;
    view.follow = false;
  }
  view.ground = ground;
  view.width = width; view.height = height;
  view.azimuth = az;
  return view;
}

// ------------------------------------------------------------------ the scene
function blobTexture() {
  var c = document.createElement("canvas");
  c.width = c.height = 64;
  var g = c.getContext("2d"), grad = g.createRadialGradient(32, 32, 0, 32, 32, 32);
  grad.addColorStop(0, "rgba(0,0,0,1)");
  grad.addColorStop(0.45, "rgba(0,0,0,0.55)");
  grad.addColorStop(1, "rgba(0,0,0,0)");
  g.fillStyle = grad;
  g.fillRect(0, 0, 64, 64);
  var t = new THREE.CanvasTexture(c);
  t.colorSpace = THREE.SRGBColorSpace;
  return t;
}

/** Draws one clip on a canvas. opts: {color, background, pixelRatio, antialias}. antialias
 * (multisampling) is off by default on the trial page and in videos alike, so both show the same
 * pixels: in software WebGL it costs three times the rest of a frame (`evalkit render
 * --antialias` turns it on for a video or a still). */
export function Stage(canvas, opts) {
  opts = opts || {};
  this.canvas = canvas;
  this.renderer = new THREE.WebGLRenderer({ canvas: canvas, antialias: !!opts.antialias,
    preserveDrawingBuffer: !!opts.preserveDrawingBuffer, powerPreference: "low-power" });
  this.renderer.setPixelRatio(opts.pixelRatio || 1);
  this.gl = this.renderer.getContext();
  this.colors = {
    color: opts.color || DEFAULTS.color, background: opts.background || DEFAULTS.background,
    ground: opts.ground || DEFAULTS.ground, grid: opts.grid || DEFAULTS.grid
  };
  var scene = this.scene = new THREE.Scene();
  scene.background = null;  // the sky and ground are cleared by paintGround
  this.camera = new THREE.PerspectiveCamera();
  this.camera.matrixAutoUpdate = false;
  scene.add(new THREE.HemisphereLight(0xffffff, 0x5d636e, 1.5));
  this.key = new THREE.DirectionalLight(0xffffff, 2.2);
  scene.add(this.key);
  scene.add(this.key.target);
  this.material = new THREE.MeshStandardMaterial({ color: new THREE.Color(this.colors.color), roughness: 0.62, metalness: 0.0 });
  // The ground plane is not a mesh: seen by a camera without roll, each row of the picture meets
  // the (infinite) plane at one depth, so the fogged ground is one colour per row, drawn by
  // clearing bands of rows (see paintGround) - the same picture as a fogged plane for a fraction
  // of the cost in software WebGL. Vertices of the body below the ground are lifted onto it (a
  // foot through the floor shows flat on it; a clipping plane would cost twice the whole body).
  this.renderer.autoClear = false;
  this.groundColor = new THREE.Color(this.colors.ground);
  this.skyColor = new THREE.Color(this.colors.background);
  var n = Math.round(2 * GRID_HALF_M / GRID_STEP);
  this.grid = new THREE.GridHelper(2 * GRID_HALF_M, n, new THREE.Color(this.colors.grid), new THREE.Color(this.colors.grid));
  this.grid.material.transparent = true;
  this.grid.material.depthWrite = false;
  scene.add(this.grid);
  this.blob = blobTexture();
  this.shadowMaterial = new THREE.MeshBasicMaterial({ map: this.blob, transparent: true, depthWrite: false, vertexColors: true,
    color: 0x1d232b, polygonOffset: true, polygonOffsetFactor: -2, polygonOffsetUnits: -8 });
}

/** Set the clip and the camera (from makeView for this canvas's size). */
Stage.prototype.setClip = function (clip, view) {
  var self = this, scene = this.scene;
  if (this.bodyMesh) { scene.remove(this.bodyMesh); this.bodyMesh.geometry.dispose(); }
  if (this.shadowMesh) { scene.remove(this.shadowMesh); this.shadowMesh.geometry.dispose(); }
  this.clip = clip;
  this.view = view;
  if (!clip._path) { clip._path = smoothPath(clip); }
  this.body = bodyOf(clip);
  this.renderer.setSize(view.width, view.height, false);
  // The whole body is one mesh (one draw call: in software WebGL the cost of a draw call, not of
  // its few hundred triangles, dominates): every part is a template (a tapered open cylinder for
  // a limb, a unit sphere for a ball or an ellipsoid) whose vertices and normals are placed on the
  // CPU each frame (drawParts).
  var sphere = this.unitSphere = this.unitSphere || new THREE.SphereGeometry(1, 20, 14);
  var parts = [];
  this.body.limbs.forEach(function (l) {
    parts.push({ kind: "limb", data: l, geo: new THREE.CylinderGeometry(l.rb, l.ra, 1, 16, 1, true).translate(0, 0.5, 0) });
  });
  this.body.balls.forEach(function (b) { parts.push({ kind: "ball", data: b, geo: sphere }); });
  this.body.shapes.forEach(function (sh) { parts.push({ kind: "shape", data: sh, geo: sphere }); });
  var nv = 0, ni = 0;
  parts.forEach(function (pt) { pt.v0 = nv; nv += pt.geo.attributes.position.count; ni += pt.geo.index.count; });
  var index = new (nv > 65535 ? Uint32Array : Uint16Array)(ni), at = 0;
  parts.forEach(function (pt) {
    var src = pt.geo.index.array;
    for (var i = 0; i < src.length; i++) { index[at++] = src[i] + pt.v0; }
  });
  var geo = new THREE.BufferGeometry();
  geo.setIndex(new THREE.BufferAttribute(index, 1));
  geo.setAttribute("position", new THREE.BufferAttribute(new Float32Array(3 * nv), 3).setUsage(THREE.DynamicDrawUsage));
  geo.setAttribute("normal", new THREE.BufferAttribute(new Float32Array(3 * nv), 3).setUsage(THREE.DynamicDrawUsage));
  this.parts = parts;
  this.bodyMesh = new THREE.Mesh(geo, this.material);
  this.bodyMesh.frustumCulled = false;
  scene.add(this.bodyMesh);
  // contact shadows: one soft blob under every joint and a wide faint one under the root, one mesh
  // of quads whose vertex alpha is the blob's darkness
  var nb = clip.joints + 1, sg = new THREE.BufferGeometry(), sidx = new Uint16Array(6 * nb), uv = new Float32Array(8 * nb);
  for (var k = 0; k < nb; k++) {
    sidx.set([4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 1, 4 * k + 3, 4 * k + 2], 6 * k);  // facing up
    uv.set([0, 1, 1, 1, 0, 0, 1, 0], 8 * k);
  }
  sg.setIndex(new THREE.BufferAttribute(sidx, 1));
  sg.setAttribute("position", new THREE.BufferAttribute(new Float32Array(12 * nb), 3).setUsage(THREE.DynamicDrawUsage));
  sg.setAttribute("uv", new THREE.BufferAttribute(uv, 2));
  sg.setAttribute("color", new THREE.BufferAttribute(new Float32Array(16 * nb).fill(1), 4).setUsage(THREE.DynamicDrawUsage));
  this.shadowMesh = new THREE.Mesh(sg, this.shadowMaterial);
  this.shadowMesh.frustumCulled = false;
  this.shadowMesh.renderOrder = 1;
  scene.add(this.shadowMesh);
  // the view's fixed parts: projection, orientation, lights, fog
  var W = view.width, Hh = view.height, s = view.scale, nr = 0.5, fr = 100;  // m; the ground nearer than 0.5 m is cut
  this.camera.projectionMatrix.set(
    2 * s / W, 0, 1 - 2 * view.ox / W, 0,
    0, 2 * s / Hh, 2 * view.oy / Hh - 1, 0,
    0, 0, -(fr + nr) / (fr - nr), -2 * fr * nr / (fr - nr),
    0, 0, -1, 0);
  this.camera.projectionMatrixInverse.copy(this.camera.projectionMatrix).invert();
  var r = view.r, u = view.u, f = view.f;
  this.rotation = new THREE.Matrix4().makeBasis(new THREE.Vector3(r[0], r[1], r[2]), new THREE.Vector3(u[0], u[1], u[2]),
    new THREE.Vector3(-f[0], -f[1], -f[2]));
  // key light from the camera's upper left (40 degrees round, 50 degrees up)
  var az = view.azimuth + 40 * Math.PI / 180, el = 50 * Math.PI / 180;
  this.keyDir = [Math.sin(az) * Math.cos(el), Math.sin(el), Math.cos(az) * Math.cos(el)];
  scene.fog = new THREE.Fog(new THREE.Color(this.colors.background), view.dist * 1.4, view.dist * 4.5);
  this.bands = null;
  this.grid.position.y = view.ground + 0.002;
  this.f = -1;
};

// the template geo's vertices and normals placed at origin o with axes x, y, z (unit) scaled by
// sx, sy, sz, written into pos/nrm from vertex v0 on (normals by the inverse transpose); none
// below the ground height g
function placePart(geo, v0, pos, nrm, o, x, y, z, sx, sy, sz, g) {
  var tp = geo.attributes.position.array, tn = geo.attributes.normal.array, n = tp.length / 3, i, k, a, b, c, nx, ny, nz, l;
  for (i = 0; i < n; i++) {
    a = tp[3 * i] * sx; b = tp[3 * i + 1] * sy; c = tp[3 * i + 2] * sz; k = 3 * (v0 + i);
    pos[k] = o[0] + x[0] * a + y[0] * b + z[0] * c;
    pos[k + 1] = Math.max(o[1] + x[1] * a + y[1] * b + z[1] * c, g);
    pos[k + 2] = o[2] + x[2] * a + y[2] * b + z[2] * c;
    a = tn[3 * i] / sx; b = tn[3 * i + 1] / sy; c = tn[3 * i + 2] / sz;
    nx = x[0] * a + y[0] * b + z[0] * c; ny = x[1] * a + y[1] * b + z[1] * c; nz = x[2] * a + y[2] * b + z[2] * c;
    l = Math.sqrt(nx * nx + ny * ny + nz * nz) || 1;
    nrm[k] = nx / l; nrm[k + 1] = ny / l; nrm[k + 2] = nz / l;
  }
}

/** Pose the body and the camera for frame f (clamped to the clip) and render. */
Stage.prototype.draw = function (f) {
  var clip = this.clip;
  if (!clip) { return; }
  f = Math.min(clip.frames - 1, Math.max(0, f | 0));
  this.f = f;
  var view = this.view.frame(clip._path, f), self = this, g = view.ground;
  this.current = view;
  var cam = this.camera;
  cam.matrix.copy(this.rotation);
  cam.matrix.setPosition(view.eye[0], view.eye[1], view.eye[2]);
  cam.matrixWorld.copy(cam.matrix);
  cam.matrixWorldInverse.copy(cam.matrix).invert();
  var t = view.target;
  this.key.position.set(t[0] + this.keyDir[0] * 10, t[1] + this.keyDir[1] * 10, t[2] + this.keyDir[2] * 10);
  this.key.target.position.set(t[0], t[1], t[2]);
  this.key.target.updateMatrixWorld();
  // the grid: a square around the view centre, at world multiples of GRID_STEP
  this.grid.position.x = Math.round(t[0] / GRID_STEP) * GRID_STEP;
  this.grid.position.z = Math.round(t[2] / GRID_STEP) * GRID_STEP;
  var shapes = shapePoses(clip, this.body, f), H = this.body.H;
  var pos = function (j) { return jointAt(clip, f, j); };
  var P = this.bodyMesh.geometry.attributes.position, NN = this.bodyMesh.geometry.attributes.normal;
  this.parts.forEach(function (pt) {
    var d = pt.data, o, x, y, z, sx = 1, sy = 1, sz = 1;
    if (pt.kind === "limb") {
      var a = pos(d.a), b = pos(d.b), v = sub(b, a), L = len(v);
      y = L > 1e-9 ? mul(v, 1 / L) : [0, 1, 0];
      x = ortho(Math.abs(y[1]) < 0.9 ? [0, 1, 0] : [1, 0, 0], y);
      z = cross(x, y); sy = Math.max(L, 1e-6); o = a;
    } else if (pt.kind === "ball") {
      x = [1, 0, 0]; y = [0, 1, 0]; z = [0, 0, 1]; sx = sy = sz = d.r; o = pos(d.j);
    } else {
      var sh = shapes[d];
      if (!sh) { sh = { centre: [0, -1e3, 0], axes: [[1, 0, 0], [0, 1, 0], [0, 0, 1]], radii: [1e-6, 1e-6, 1e-6] }; }
      x = sh.axes[0]; y = sh.axes[1]; z = sh.axes[2]; sx = sh.radii[0]; sy = sh.radii[1]; sz = sh.radii[2]; o = sh.centre;
    }
    placePart(pt.geo, pt.v0, P.array, NN.array, o, x, y, z, sx, sy, sz, g);
  });
  P.needsUpdate = true; NN.needsUpdate = true;
  // contact shadows: darker and tighter the closer a joint is to the ground
  var SP = this.shadowMesh.geometry.attributes.position, SC = this.shadowMesh.geometry.attributes.color;
  var hips = clip.roles && ("hips" in clip.roles) ? clip.roles.hips : 0;
  for (var j = 0; j <= clip.joints; j++) {
    var p, r, op;
    if (j < clip.joints) {
      p = pos(j);
      var h = Math.max(p[1] - g, 0);
      r = 0.07 * H + 0.25 * h;
      op = 0.55 * Math.exp(-h / (0.09 * H));
    } else {
      p = pos(hips);
      r = 0.24 * H;
      op = 0.22 * Math.exp(-Math.max(p[1] - g, 0) / (0.9 * H));
    }
    if (op < 0.004) { r = 0; }  // invisible: a collapsed quad draws nothing
    var yg = g + 0.003, corners = [[-r, r], [r, r], [-r, -r], [r, -r]];
    for (var c = 0; c < 4; c++) {
      SP.array.set([p[0] + corners[c][0], yg, p[2] + corners[c][1]], 12 * j + 3 * c);
      SC.array[16 * j + 4 * c + 3] = op;
    }
  }
  SP.needsUpdate = true; SC.needsUpdate = true;
  this.scene.updateMatrixWorld();
  this.paintGround();
  this.renderer.render(this.scene, cam);
};

// Clear the picture to the sky colour and the ground rows to the ground colour mixed with the fog
// as three.js fogs a plane (smoothstep(near, far, depth), in linear colour). The bands depend on
// the camera's direction and zoom only, so they are computed once per view.
Stage.prototype.paintGround = function () {
  var v = this.view, r = this.renderer, H = v.height, W = v.width;
  if (!this.bands) {
    var fog = this.scene.fog, bands = [], y, c, hex, last = null, g = v.ground;
    for (y = 0; y < H; y++) {
      var yc = (v.oy - (y + 0.5)) / v.scale, dy = v.u[1] * yc + v.f[1];
      if (dy >= 0) { c = this.skyColor; } else {
        var t = (g - v.eye[1]) / dy;  // depth along the view direction where this row meets the ground
        var k = Math.min(Math.max((t - fog.near) / (fog.far - fog.near), 0), 1);
        c = this.groundColor.clone().lerp(this.skyColor, k * k * (3 - 2 * k));
      }
      hex = c.getHexString();
      if (hex !== last) { bands.push({ top: y, color: c }); last = hex; }
      bands[bands.length - 1].bottom = y + 1;
    }
    this.bands = bands;
  }
  r.setScissorTest(true);
  this.bands.forEach(function (b) {
    r.setScissor(0, H - b.bottom, W, b.bottom - b.top);
    r.setClearColor(b.color, 1);
    r.clear(true, true, true);
  });
  r.setScissorTest(false);
};

/** Pixel coordinates of world points [[x, y, z], ...] seen by the camera of the last drawn frame. */
Stage.prototype.project = function (points) {
  var v = this.current;
  return points.map(function (p) { return v.project(p); });
};
