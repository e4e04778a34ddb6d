"""Audio I/O: read WAV/FLAC (and anything else Praat reads) into a small mono :class:`Audio`.

Decoding is done by Praat (through praat-parselmouth), which reads WAV, FLAC, AIFF, NeXT/Sun
and MP3; multichannel recordings are averaged to mono.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from evalkit.errors import FileFormatError, InputError

AUDIO_EXTENSIONS = (".wav", ".flac", ".aiff", ".aif", ".mp3")


@dataclass(frozen=True, eq=False)
class Audio:
    """A mono recording.

    Attributes:
        samples: ``(n,)`` float64 samples (Praat's scale: full scale = 1).
        sample_rate: samples per second (Hz).
        name: a label, usually the file stem.
        meta: provenance (source path, channels in the file, ...).
    """

    samples: np.ndarray
    sample_rate: float
    name: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        x = np.asarray(self.samples, dtype=np.float64)
        if x.ndim != 1:
            raise InputError(f"audio samples must be one-dimensional (mono), got shape {x.shape}")
        if not (np.isfinite(self.sample_rate) and self.sample_rate > 0):
            raise InputError(f"sample rate must be positive, got {self.sample_rate}")
        object.__setattr__(self, "samples", x)

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return len(self.samples) / self.sample_rate

    def to_sound(self):
        """This recording as a ``parselmouth.Sound`` (for Praat's analyses)."""
        import parselmouth

        return parselmouth.Sound(self.samples, sampling_frequency=self.sample_rate)

    def __repr__(self) -> str:
        return f"Audio({self.name!r}, {self.duration:.2f} s @ {self.sample_rate:g} Hz)"


def load_audio(path: str | os.PathLike) -> Audio:
    """Read an audio file (WAV, FLAC, AIFF, MP3) as mono :class:`Audio`.

    Raises:
        FileFormatError: the file is not a readable audio file (names the file and Praat's reason).
    """
    import parselmouth

    p = Path(path)
    if not p.exists():
        raise FileFormatError(p, None, "file not found")
    if p.is_dir():
        raise FileFormatError(p, None, "is a folder; expected an audio file (WAV or FLAC)")
    try:
        sound = parselmouth.Sound(str(p))
    except parselmouth.PraatError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "unreadable"
        raise FileFormatError(p, None, f"not a readable audio file (expected WAV or FLAC): {reason}") from None
    channels = int(sound.n_channels)
    values = sound.values.mean(axis=0) if channels > 1 else sound.values[0]
    if len(values) == 0:
        raise FileFormatError(p, None, "audio file has no samples")
    return Audio(
        samples=np.array(values, dtype=np.float64),
        sample_rate=float(sound.sampling_frequency),
        name=p.stem,
        meta={"source": str(p), "channels": channels},
    )


def write_wav(audio: Audio, path: str | os.PathLike) -> Path:
    """Write ``audio`` as 16-bit PCM WAV (via a temporary file, then rename). Returns the path."""
    from scipy.io import wavfile

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    pcm = np.clip(np.round(audio.samples * 32767.0), -32768, 32767).astype(np.int16)
    from evalkit.atomic import atomic_path

    with atomic_path(p, suffix=".wav") as tmp:
        wavfile.write(tmp, int(round(audio.sample_rate)), pcm)
    return p
