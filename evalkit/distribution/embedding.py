"""The FGD feature extractor: an autoencoder over fixed-length windows of normalised joint positions.

FGD (Yoon et al. 2020; GENEA 2022/2023; BEAT/EMAGE) embeds windows of motion with the encoder of
an autoencoder trained on real motion and takes the Fréchet distance between the embeddings of
generated and real windows. The field trains these in PyTorch and the numbers depend on the
checkpoint, the window length and stride, the joint set and the normalisation -- usually
unrecorded. Here every one of them is part of the extractor's **protocol**, recorded in its card
(``card.json``) next to the weights (``extractor.npz``, plain numpy arrays, so the default install
runs it without PyTorch):

* comparison settings: window length and stride (frames), frame rate (fps), the canonical joint
  set (joint roles), the normalisation;
* training settings: architecture, seed, epochs, batch size, learning rate, training stride,
  augmentation (left/right mirroring);
* the training data: file names, SHA-256 of their bytes and frame counts;
* versions: evalkit, numpy, Python.

``protocol_hash`` is the SHA-256 of the protocol (canonical JSON): any change gives another hash.
``extractor_hash`` identifies protocol and weights together and is written in every output.

The network is a small multilayer perceptron, ``x → σ(W₁x+b₁) → z = W₂h+b₂ → σ(W₃z+b₃) →
W₄h+b₄``, trained in numpy with Adam on the mean squared reconstruction error, in float64 on one
thread (so one machine gives the same bytes every time), and stored as float32. The activation σ
is part of the protocol (``TrainingSettings.activation``): ``leaky_relu`` (slope 0.1 below zero)
by default, because a bounded activation bounds the embedding -- with ``tanh`` (the extractors of
card format 1, whose cards name no activation) FGD saturates once a degradation drives the hidden
units to ±1, and a grosser degradation no longer scores worse. We wrote the
training loop ourselves because scikit-learn's MLPRegressor cannot give a linear bottleneck
between non-linear layers and PyTorch is not a default dependency.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import zipfile
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from evalkit.errors import EvalkitError, InputError
from evalkit.distribution.canonical import CANONICAL_ROLES
from evalkit.motion import LoadOptions

#: Folder of the extractor shipped with evalkit (trained on the bundled CMU capture).
DEFAULT_EXTRACTOR = Path(__file__).with_name("default_extractor")
FORMAT = "evalkit-fgd-extractor/1"
WEIGHTS_FILE = "extractor.npz"
CARD_FILE = "card.json"
NORMALISATION = ("window: minus the hips of the window's first frame, turned about the vertical so "
                 "that frame's hip line points along +X, divided by the body height")


class ProtocolMismatchError(InputError):
    """An extractor or a recorded protocol does not match the protocol a comparison asks for."""


@dataclass(frozen=True)
class WindowProtocol:
    """What a comparison needs to agree on with its extractor.

    Attributes:
        window: window length, frames.
        stride: step between window starts, frames.
        fps: frame rate every clip is resampled to, frames per second.
        joint_set: the canonical joint roles, in order.
        normalisation: how windows are normalised (see :mod:`evalkit.distribution.canonical`).
    """

    window: int = 30
    stride: int = 10
    fps: float = 30.0
    joint_set: tuple[str, ...] = CANONICAL_ROLES
    normalisation: str = NORMALISATION

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["joint_set"] = list(self.joint_set)
        return d


@dataclass(frozen=True)
class TrainingSettings:
    """How the autoencoder is trained (all part of the protocol)."""

    hidden: int = 64
    latent: int = 32
    epochs: int = 150
    batch: int = 64
    learning_rate: float = 1e-3
    seed: int = 0
    train_stride: int = 2
    augment: str = "mirror"
    inputs: str = "positions+velocities+accelerations"
    activation: str = "leaky_relu"


#: Hidden-layer activations (``TrainingSettings.activation``); ``leaky_relu`` has slope
#: ``LEAKY_SLOPE`` below zero. Cards that name no activation (before it was a setting) used tanh.
ACTIVATIONS = ("leaky_relu", "elu", "tanh")
LEAKY_SLOPE = 0.1
LEGACY_ACTIVATION = "tanh"


def activate(h: np.ndarray, name: str) -> np.ndarray:
    """The hidden-layer activation ``name`` applied to pre-activations ``h``."""
    if name == "tanh":
        return np.tanh(h)
    if name == "leaky_relu":
        return np.where(h > 0, h, LEAKY_SLOPE * h)
    if name == "elu":
        return np.where(h > 0, h, np.expm1(np.minimum(h, 0.0)))
    raise InputError(f"unknown extractor activation {name!r}; expected one of {', '.join(ACTIVATIONS)}")


def activation_slope(a: np.ndarray, name: str) -> np.ndarray:
    """Derivative of the activation ``name`` at the pre-activation that gave the output ``a``
    (each of the three is monotone, so the output determines it)."""
    if name == "tanh":
        return 1.0 - a ** 2
    if name == "leaky_relu":
        return np.where(a > 0, 1.0, LEAKY_SLOPE)
    if name == "elu":
        return np.where(a > 0, 1.0, a + 1.0)
    raise InputError(f"unknown extractor activation {name!r}; expected one of {', '.join(ACTIVATIONS)}")


#: Input representations of a window (``TrainingSettings.inputs``).
INPUTS = ("positions", "positions+velocities", "positions+velocities+accelerations")


def input_features(windows: np.ndarray, inputs: str) -> np.ndarray:
    """Network input ``(n, D)`` of normalised windows ``(n, window, joints, 3)``: the flattened
    positions, and for ``positions+velocities`` also the frame-to-frame displacements (so that
    high-frequency errors such as jitter, which barely move positions, weigh in the embedding)."""
    w = np.asarray(windows, float)
    x = w.reshape(len(w), -1)
    if inputs == "positions":
        return x
    if inputs == "positions+velocities":
        return np.concatenate([x, np.diff(w, axis=1).reshape(len(w), -1)], axis=1)
    if inputs == "positions+velocities+accelerations":
        return np.concatenate([x, np.diff(w, axis=1).reshape(len(w), -1),
                               np.diff(w, n=2, axis=1).reshape(len(w), -1)], axis=1)
    raise InputError(f"unknown extractor inputs {inputs!r}; expected one of {', '.join(INPUTS)}")


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def sha256_bytes(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def protocol_hash(protocol: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of a protocol's canonical JSON."""
    return sha256_bytes(_canon(protocol).encode())


def versions() -> dict[str, str]:
    """The versions the protocol records."""
    from evalkit import __version__

    return {"evalkit": __version__, "numpy": np.__version__, "python": platform.python_version()}


def _write_npz(arrays: Mapping[str, np.ndarray]) -> bytes:
    """A ``.npz`` with fixed zip timestamps, so equal arrays give equal bytes (numpy's own
    ``savez`` stamps the current time)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            a = io.BytesIO()
            np.lib.format.write_array(a, np.ascontiguousarray(arrays[name]), version=(1, 0), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, a.getvalue())
    return buf.getvalue()


@dataclass(frozen=True, eq=False)
class Extractor:
    """A trained FGD extractor: weights plus card.

    Attributes:
        weights: ``mu`` and ``scale`` (per-input standardisation), ``W1, b1, W2, b2`` (encoder),
            ``W3, b3, W4, b4`` (decoder), float32.
        card: the card (``format``, ``protocol``, ``protocol_hash``, ``weights_sha256``,
            ``extractor_hash``, ``training``).
        source: where it was loaded from.
    """

    weights: Mapping[str, np.ndarray]
    card: Mapping[str, Any]
    source: str = ""

    @property
    def window_protocol(self) -> WindowProtocol:
        p = self.card["protocol"]["comparison"]
        return WindowProtocol(window=int(p["window"]), stride=int(p["stride"]), fps=float(p["fps"]),
                              joint_set=tuple(p["joint_set"]), normalisation=p["normalisation"])

    @property
    def extractor_hash(self) -> str:
        return str(self.card["extractor_hash"])

    @property
    def latent(self) -> int:
        return int(self.weights["W2"].shape[1])

    @cached_property
    def _params64(self) -> dict[str, np.ndarray]:
        """The weights in float64, converted once per extractor (every clip's windows use them)."""
        return {k: np.asarray(v, np.float64) for k, v in self.weights.items()}

    def _params(self) -> dict[str, np.ndarray]:
        return self._params64

    @property
    def inputs(self) -> str:
        return str(self.card["protocol"]["training"].get("inputs", "positions"))

    @property
    def activation(self) -> str:
        """Hidden-layer activation; cards written before it was a setting used tanh."""
        return str(self.card["protocol"]["training"].get("activation", LEGACY_ACTIVATION))

    def _standardised(self, windows: np.ndarray, w: Mapping[str, np.ndarray]) -> np.ndarray:
        x = input_features(windows, self.inputs)
        if x.shape[1] != w["W1"].shape[0]:
            raise InputError(f"windows give {x.shape[1]} inputs, the extractor expects {w['W1'].shape[0]}")
        return (x - w["mu"]) / w["scale"]

    def encode(self, windows: np.ndarray) -> np.ndarray:
        """Embeddings ``(n, latent)`` of normalised windows ``(n, window, joints, 3)``."""
        w = self._params()
        x = self._standardised(windows, w)
        return activate(x @ w["W1"] + w["b1"], self.activation) @ w["W2"] + w["b2"]

    def reconstruction_error(self, windows: np.ndarray) -> float:
        """Mean squared reconstruction error (standardised units) of ``windows``."""
        w = self._params()
        x = self._standardised(windows, w)
        z = activate(x @ w["W1"] + w["b1"], self.activation) @ w["W2"] + w["b2"]
        y = activate(z @ w["W3"] + w["b3"], self.activation) @ w["W4"] + w["b4"]
        return float(((y - x) ** 2).mean())

    def save(self, folder: str | os.PathLike) -> Path:
        """Write ``extractor.npz`` and ``card.json`` into ``folder`` (created)."""
        from evalkit.atomic import write_bytes, write_text

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        write_bytes(out / WEIGHTS_FILE, _write_npz({k: np.asarray(v, np.float32) for k, v in self.weights.items()}))
        write_text(out / CARD_FILE, json.dumps(self.card, indent=1, sort_keys=True) + "\n")
        return out


def load_extractor(path: str | os.PathLike | None = None) -> Extractor:
    """Load an extractor folder (``None`` or ``"default"``: the shipped one), checking its hashes.

    Raises:
        ProtocolMismatchError: the card's protocol does not hash to its ``protocol_hash`` (the
            card was edited) or the weights are not the ones the card was written for.
        InputError: the folder or its files are missing or malformed.
    """
    folder = DEFAULT_EXTRACTOR if path in (None, "default") else Path(path)
    if folder.is_file() and folder.name in (WEIGHTS_FILE, CARD_FILE):
        folder = folder.parent
    wpath, cpath = folder / WEIGHTS_FILE, folder / CARD_FILE
    if not wpath.is_file() or not cpath.is_file():
        raise InputError(f"{folder}: not an extractor folder (expected {WEIGHTS_FILE} and {CARD_FILE}; "
                         "train one with 'evalkit embed train REF_DIR --out FOLDER')")
    raw = wpath.read_bytes()
    try:
        card = json.loads(cpath.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{cpath}: not a valid JSON card ({exc})") from None
    if not isinstance(card, dict) or card.get("format") != FORMAT:
        raise InputError(f"{cpath}: not an evalkit extractor card (format {FORMAT!r} expected)")
    for key in ("protocol", "protocol_hash", "weights_sha256", "extractor_hash"):
        if key not in card:
            raise InputError(f"{cpath}: key {key!r} missing")
    if protocol_hash(card["protocol"]) != card["protocol_hash"]:
        raise ProtocolMismatchError(
            f"{cpath}: its protocol does not hash to its protocol_hash {card['protocol_hash'][:16]}: the card was "
            "edited after training, so the weights cannot be trusted to follow it; retrain with 'evalkit embed train'")
    if sha256_bytes(raw) != card["weights_sha256"]:
        raise ProtocolMismatchError(
            f"{wpath}: these weights are not the ones {cpath} was written for (SHA-256 differs); "
            "keep an extractor's two files together or retrain")
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            weights = {k: z[k] for k in z.files}
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise InputError(f"{wpath}: not a valid weights file ({exc})") from None
    return Extractor(weights=weights, card=card, source=str(folder))


def check_protocol(extractor: Extractor, requested: Mapping[str, Any] | None = None,
                   recorded: Mapping[str, Any] | None = None) -> None:
    """Refuse a comparison whose protocol differs from the one the extractor was trained under.

    Args:
        requested: settings asked for on the command line (``window``, ``stride``, ``fps``; None
            values are not checked).
        recorded: a protocol record (``protocol.json`` of an earlier comparison, or a card) whose
            numbers the user wants to reproduce; its extractor protocol must be this one's.

    Raises:
        ProtocolMismatchError: naming every differing setting and what to do.
    """
    have = extractor.window_protocol.to_dict()
    name = extractor.source or "the extractor"
    diffs = []
    for k, v in (requested or {}).items():
        if v is None:
            continue
        if (float(v) if k == "fps" else v) != have[k]:
            diffs.append(f"{k}={v} (the extractor was trained with {k}={have[k]})")
    if diffs:
        raise ProtocolMismatchError(
            f"{name} (protocol {extractor.card['protocol_hash'][:16]}) was trained under another protocol than "
            f"this comparison asks for: {'; '.join(diffs)}. Embeddings from windows the extractor was not trained "
            "on are not comparable. Train an extractor with these settings ('evalkit embed train REF_DIR --out "
            "FOLDER' with the same options) and pass it with --extractor, or drop the options.")
    if recorded is not None:
        rec = recorded.get("extractor", recorded)
        want = rec.get("protocol_hash")
        if want is not None and want != extractor.card["protocol_hash"]:
            theirs = rec.get("protocol", {})
            ours = extractor.card["protocol"]
            fields = _diff_fields(theirs, ours) if theirs else []
            why = "; ".join(fields[:8]) if fields else "the protocol record does not list its fields"
            raise ProtocolMismatchError(
                f"the recorded protocol uses extractor protocol {want[:16]}, {name} has "
                f"{extractor.card['protocol_hash'][:16]}: {why}. Use the extractor the record was made with.")


def _diff_fields(a: Any, b: Any, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += _diff_fields(a.get(k), b.get(k), f"{prefix}{k}.")
        return out
    if a != b:
        show = (lambda x: json.dumps(x)[:60])
        return [f"{prefix[:-1]}: {show(a)} vs {show(b)}"]
    return []


# ---------------------------------------------------------------------------------------------
# training


def _file_hash(path: Path) -> str:
    h = hashlib.sha256(path.read_bytes())
    if path.suffix.lower() == ".amc":
        from evalkit.motion.formats.amc import find_asf

        try:
            h.update(Path(find_asf(path)).read_bytes())
        except (EvalkitError, OSError):
            pass
    return h.hexdigest()


def training_windows(files: Sequence[str | os.PathLike], protocol: WindowProtocol, settings: TrainingSettings,
                     load: LoadOptions | None = None, roles: Mapping[str, str] | None = None,
                     ) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Normalised training windows of ``files`` (and their mirror images) and the data record.

    Returns:
        ``(n, window, 18, 3)`` windows and, per file, ``{name, sha256, frames}`` (frames at the
        protocol's frame rate).
    """
    from evalkit.distribution.canonical import canonical_positions, windows
    from evalkit.motion import mirror
    from evalkit.runner import load_clips

    out, data = [], []
    paths = sorted(Path(p) for p in files)
    for f, m in zip(paths, load_clips(paths, load)):
        versions_ = [m]
        if settings.augment == "mirror":
            versions_.append(mirror(m))
        n = 0
        for mm in versions_:
            pos, height, _ = canonical_positions(mm, protocol.fps, roles)
            n = pos.shape[0]
            out.append(windows(pos, height, protocol.window, settings.train_stride))
        data.append({"name": f.name, "sha256": _file_hash(f), "frames": int(n)})
    x = np.concatenate(out) if out else np.zeros((0, protocol.window, len(protocol.joint_set), 3))
    return x, data


def _adam_train(x: np.ndarray, settings: TrainingSettings, progress: bool = False) -> tuple[dict, list[float]]:
    rng = np.random.default_rng(settings.seed)
    n, d = x.shape
    h, l = settings.hidden, settings.latent
    act = settings.activation

    def init(a, b):
        return rng.normal(0.0, 1.0 / np.sqrt(a), size=(a, b))

    p = {"W1": init(d, h), "b1": np.zeros(h), "W2": init(h, l), "b2": np.zeros(l),
         "W3": init(l, h), "b3": np.zeros(h), "W4": init(h, d), "b4": np.zeros(d)}
    m1 = {k: np.zeros_like(v) for k, v in p.items()}
    m2 = {k: np.zeros_like(v) for k, v in p.items()}
    b1_, b2_, eps = 0.9, 0.999, 1e-8
    step = 0
    losses = []
    from tqdm.auto import tqdm

    for _ in tqdm(range(settings.epochs), disable=not progress, desc="training", unit="epoch"):
        order = rng.permutation(n)
        total = 0.0
        for s in range(0, n, settings.batch):
            xb = x[order[s:s + settings.batch]]
            a1 = activate(xb @ p["W1"] + p["b1"], act)
            z = a1 @ p["W2"] + p["b2"]
            a2 = activate(z @ p["W3"] + p["b3"], act)
            y = a2 @ p["W4"] + p["b4"]
            err = y - xb
            total += float((err ** 2).sum())
            g_y = 2.0 * err / err.size
            g = {"W4": a2.T @ g_y, "b4": g_y.sum(0)}
            g_a2 = (g_y @ p["W4"].T) * activation_slope(a2, act)
            g["W3"], g["b3"] = z.T @ g_a2, g_a2.sum(0)
            g_z = g_a2 @ p["W3"].T
            g["W2"], g["b2"] = a1.T @ g_z, g_z.sum(0)
            g_a1 = (g_z @ p["W2"].T) * activation_slope(a1, act)
            g["W1"], g["b1"] = xb.T @ g_a1, g_a1.sum(0)
            step += 1
            for k in p:
                m1[k] = b1_ * m1[k] + (1 - b1_) * g[k]
                m2[k] = b2_ * m2[k] + (1 - b2_) * g[k] ** 2
                mh = m1[k] / (1 - b1_ ** step)
                vh = m2[k] / (1 - b2_ ** step)
                p[k] = p[k] - settings.learning_rate * mh / (np.sqrt(vh) + eps)
        losses.append(total / x.size)
    return p, losses


def train_extractor(files: Iterable[str | os.PathLike], protocol: WindowProtocol | None = None,
                    settings: TrainingSettings | None = None, load: LoadOptions | None = None,
                    roles: Mapping[str, str] | None = None, progress: bool = False) -> Extractor:
    """Train an FGD extractor on natural clips under a pinned protocol.

    Deterministic for a fixed seed on one machine: float64 arithmetic on one BLAS thread, data in
    sorted file order, weights rounded to float32.

    Args:
        files: motion files of real motion.
        protocol: comparison settings (window, stride, fps, joint set, normalisation).
        settings: training settings.
        load: how the files are read (:class:`~evalkit.motion.LoadOptions`).
        roles: ``{role: joint name}`` overrides.

    Raises:
        InputError: no training window (every clip shorter than the window).
    """
    from threadpoolctl import threadpool_limits

    protocol = protocol or WindowProtocol()
    settings = settings or TrainingSettings()
    files = list(files)
    if not files:
        raise InputError("no motion files to train the extractor on")
    win, data = training_windows(files, protocol, settings, load, roles)
    if len(win) < 2:
        raise InputError(f"fewer than 2 training windows of {protocol.window} frames at {protocol.fps:g} fps in "
                         f"{len(files)} file(s); use longer clips or a shorter --window")
    if settings.inputs not in INPUTS:
        raise InputError(f"unknown extractor inputs {settings.inputs!r}; expected one of {', '.join(INPUTS)}")
    if settings.activation not in ACTIVATIONS:
        raise InputError(f"unknown extractor activation {settings.activation!r}; expected one of "
                         f"{', '.join(ACTIVATIONS)}")
    x = input_features(win, settings.inputs)
    mu = x.mean(axis=0)
    sd = x.std(axis=0)
    scale = np.maximum(sd, 1e-3 * float(sd.max()) + 1e-12)  # a constant input (the origin) is not amplified
    xs = (x - mu) / scale
    with threadpool_limits(1):
        params, losses = _adam_train(xs, settings, progress)
    weights = {k: v.astype(np.float32) for k, v in params.items()}
    weights["mu"] = mu.astype(np.float32)
    weights["scale"] = scale.astype(np.float32)
    proto = {
        "comparison": protocol.to_dict(),
        "training": asdict(settings),
        "data": data,
        "n_training_windows": int(len(win)),
        "versions": versions(),
    }
    ph = protocol_hash(proto)
    wsha = sha256_bytes(_write_npz(weights))
    card = {
        "format": FORMAT,
        "protocol": proto,
        "protocol_hash": ph,
        "weights_sha256": wsha,
        "extractor_hash": sha256_bytes((ph + wsha).encode())[:16],
        "final_loss": round(float(losses[-1]), 8),
        "loss_every_10_epochs": [round(float(v), 8) for v in losses[::10]],
    }
    ext = Extractor(weights=weights, card=card)
    return ext
