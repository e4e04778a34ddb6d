"""Setup stages before the instructions: device check, volume calibration, headphone screening.

A study lists them under ``setup:`` in ``study.yaml`` (see :class:`webtest.study.SetupStage`);
each participant goes through them in that order after the consent (and demographics), and each
outcome is stored in ``wt_setup_results`` (one row per participant and stage).

**Headphone screening** (Woods, Siegel, Traer & McDermott 2017, "Headphone screening to
facilitate web-based auditory experiments", Attention, Perception & Psychophysics
79:2064-2072): each trial plays three 200 Hz tones of 1000 ms (100 ms raised-cosine ramps) with
500 ms of silence between them. Two are at the reference level, one 6 dB quieter; one of the two
at the reference level is presented in antiphase between the channels (the right channel is the
left one inverted). Over headphones the quieter tone is heard as the quietest; over loudspeakers
the antiphase tone partly cancels in the air and sounds quieter, so a loudspeaker listener tends
to pick it instead. The participant says which tone was the quietest, hearing each trial once.
The six orders of (reference, antiphase, quiet) are the six trials, shuffled per participant
(more trials repeat them); the study asks for ``pass`` correct (5 of 6 in the paper).

The sounds are written as 16-bit stereo WAV files at 44.1 kHz when the study is prepared
(:func:`write_sounds`) and served under content-addressed names like the stimuli.
"""

from __future__ import annotations

import itertools
import json
import random
import wave
from pathlib import Path

import numpy as np

from webtest.study import SetupStage, Study

RATE = 44100  # samples per second of the setup sounds
TONE_HZ = 200.0
TONE_S = 1.0
RAMP_S = 0.1
GAP_S = 0.5
QUIET_DB = -6.0
REFERENCE_PEAK = 0.25  # linear full scale (-12 dBFS): loud enough, far from clipping
CALIBRATION_S = 6.0
#: The tones of a trial: reference (in phase), antiphase (same level, right channel inverted),
#: quiet (in phase, QUIET_DB below the reference).
TONES = ("reference", "antiphase", "quiet")
ORDERS = tuple(itertools.permutations(TONES))  # the six trials of the screening
_VERSION = "1"


def _ramped_tone(level_db: float = 0.0) -> np.ndarray:
    """One tone, mono, ``TONE_S`` s at ``RATE``: ``REFERENCE_PEAK`` * 10^(level_db/20) peak."""
    t = np.arange(int(round(TONE_S * RATE))) / RATE
    tone = np.sin(2 * np.pi * TONE_HZ * t)
    n = int(round(RAMP_S * RATE))
    ramp = 0.5 * (1 - np.cos(np.pi * np.arange(n) / n))
    tone[:n] *= ramp
    tone[-n:] *= ramp[::-1]
    return REFERENCE_PEAK * 10 ** (level_db / 20) * tone


def trial_sound(order: tuple[str, str, str]) -> np.ndarray:
    """The stereo samples ``(n, 2)`` (float, -1..1) of one screening trial: the three tones of
    ``order`` (names of :data:`TONES`) with ``GAP_S`` of silence between them."""
    gap = np.zeros((int(round(GAP_S * RATE)), 2))
    parts = []
    for i, name in enumerate(order):
        mono = _ramped_tone(QUIET_DB if name == "quiet" else 0.0)
        right = -mono if name == "antiphase" else mono
        parts.append(np.stack([mono, right], axis=1))
        if i < len(order) - 1:
            parts.append(gap)
    return np.concatenate(parts)


def calibration_sound(seed: int = 0) -> np.ndarray:
    """Stereo samples ``(n, 2)`` of the volume calibration: ``CALIBRATION_S`` s of noise
    band-limited to 100-4000 Hz, in phase on both channels, at the RMS level of the screening's
    reference tone (so the volume set for it is right for the screening), with 0.2 s ramps."""
    n = int(round(CALIBRATION_S * RATE))
    spectrum = np.fft.rfft(np.random.default_rng(seed).normal(size=n))
    freqs = np.fft.rfftfreq(n, 1 / RATE)
    spectrum[(freqs < 100) | (freqs > 4000)] = 0
    noise = np.fft.irfft(spectrum, n)
    noise *= (REFERENCE_PEAK / np.sqrt(2)) / np.sqrt(np.mean(noise ** 2))
    k = int(0.2 * RATE)
    ramp = 0.5 * (1 - np.cos(np.pi * np.arange(k) / k))
    noise[:k] *= ramp
    noise[-k:] *= ramp[::-1]
    return np.stack([noise, noise], axis=1)


def write_wav(path: Path, samples: np.ndarray) -> Path:
    """Write stereo float samples ``(n, 2)`` in -1..1 as a 16-bit PCM WAV at :data:`RATE`."""
    data = np.clip(np.round(samples * 32767), -32768, 32767).astype("<i2")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with wave.open(str(tmp), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(data.tobytes())
    tmp.replace(path)
    return path


def write_sounds(study: Study, folder: Path) -> dict[str, Path]:
    """Write the sounds the study's setup stages play into ``folder`` (kept while unchanged).

    Returns name -> path: ``calibration`` (volume stage) and ``order-<k>`` for each order
    ``k`` of :data:`ORDERS` (headphones stage); empty when the study has neither stage.
    """
    out: dict[str, Path] = {}
    if study.setup_stage("volume") is not None:
        path = folder / f"calibration-{_VERSION}.wav"
        out["calibration"] = path if path.exists() else write_wav(path, calibration_sound())
    if study.setup_stage("headphones") is not None:
        for k, order in enumerate(ORDERS):
            path = folder / f"antiphase-{_VERSION}-{k}.wav"
            out[f"order-{k}"] = path if path.exists() else write_wav(path, trial_sound(order))
    return out


def headphone_trials(study_id: str, participant_id: str, stage: SetupStage) -> list[int]:
    """The participant's screening trials: indices into :data:`ORDERS`, each of the six orders
    once per six trials in a shuffled order seeded by study and participant (the same on every
    request, so the server can score what the page played)."""
    rng = random.Random(f"{study_id}\0{participant_id}\0headphones")
    out: list[int] = []
    while len(out) < stage.trials:
        block = list(range(len(ORDERS)))
        rng.shuffle(block)
        out.extend(block)
    return out[:stage.trials]


def quiet_position(order_index: int) -> int:
    """1-based position of the quiet tone in the order :data:`ORDERS`\\ [order_index]."""
    return ORDERS[order_index].index("quiet") + 1


def score_headphones(trials: list[int], answers: list[int | None]) -> int:
    """How many answers (1-based tone positions, None for none) found the quiet tone."""
    return sum(1 for k, a in zip(trials, answers) if a == quiet_position(k))


def device_verdict(stage: SetupStage, measured: dict) -> str:
    """``pass``, ``small`` (the window is below ``min_width`` x ``min_height``: enlarge it and
    check again), ``touch_only`` (no mouse or trackpad where the study needs one) or
    ``unmeasured`` (no JavaScript measurements arrived)."""
    if not isinstance(measured.get("width"), int) or not isinstance(measured.get("height"), int):
        return "unmeasured"
    if not stage.allow_touch_only and measured.get("touch_only"):
        return "touch_only"
    if measured["width"] < stage.min_width or measured["height"] < stage.min_height:
        return "small"
    return "pass"


#: Exclusion codes of failed setup checks (stored in ``exclusion_reason``, kept when the
#: quality-check counts are recomputed; :func:`webtest.export.describe_exclusion` words them).
SETUP_CODES = ("device_fail", "volume_fail", "headphones_fail")


def failure_code(stage: str, detail: str = "") -> str:
    """The exclusion code of a failed setup stage, e.g. ``headphones_fail:3/6<5``."""
    return f"{stage}_fail" + (f":{detail}" if detail else "")


def parse_measures(form) -> dict:
    """The device page's measurements (whole CSS pixels, flags) from a submitted form; fields
    missing or not whole numbers are left out."""
    out: dict = {}
    for key in ("width", "height", "screen_width", "screen_height", "touch_points"):
        raw = (form.get(key) or "").strip()
        if raw.isdigit() and len(raw) <= 6:
            out[key] = int(raw)
    for key in ("touch_only", "fine_pointer"):
        if form.get(key) in ("0", "1"):
            out[key] = form.get(key) == "1"
    return out


def detail_json(values: dict) -> str:
    """Compact JSON of what a setup stage measured or was answered."""
    return json.dumps(values, separators=(",", ":"), sort_keys=True)


def record_result(s, study_id: str, participant_id: str, stage: str, passed: bool, now: float,
                  score: int | None = None, detail: dict | None = None) -> None:
    """Store the outcome of ``stage`` for the participant in ``wt_setup_results`` (the row is
    updated on a later attempt, ``attempts`` counting them). ``s``: an ORM session; not
    committed."""
    from sqlalchemy import select

    from webtest.tables import SetupResult

    row = s.execute(select(SetupResult).where(SetupResult.participant_id == participant_id,
                                              SetupResult.stage == stage)).scalar_one_or_none()
    if row is None:
        s.add(SetupResult(study_id=study_id, participant_id=participant_id, stage=stage, passed=int(passed),
                          score=score, attempts=1, detail_json=detail_json(detail or {}), at=now))
    else:
        row.passed, row.score, row.attempts = int(passed), score, row.attempts + 1
        row.detail_json, row.at = detail_json(detail or {}), now


def fail_stage(s, study: Study, participant, stage: str, code_detail: str = "") -> None:
    """A failed setup stage under the study's exclusion rules: with ``exclusion.setup_failures``
    the participant is marked excluded (``flag``: they go on to the next stage) or screened out
    (``screen_out``: the study ends for them and their cell is freed); without, they go on.
    ``participant``: the ORM row (changed, not committed)."""
    from webtest.assignment import release_cell

    rules = study.exclusion
    if rules.setup_failures:
        tokens = [t for t in (participant.exclusion_reason or "").split(";") if t and not t.startswith(f"{stage}_fail")]
        tokens.append(failure_code(stage, code_detail))
        participant.exclusion_reason = ";".join(tokens)[:255]
        if rules.action == "screen_out":
            participant.status, participant.stage = "screened_out", "stopped"
            release_cell(s, participant)
            return
    participant.stage = study.stage_after(stage)
