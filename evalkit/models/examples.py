"""One example of a training or test set, and the stable seeds examples are made with.

Shared by :mod:`evalkit.models.dataset` (segments and their corruptions) and
:mod:`evalkit.models.lengths` (clips brought to a length), which both build examples.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from evalkit.models.corruptions import Provenance
from evalkit.motion import Motion


def rig_signature(motion: Motion) -> str:
    """A short signature of a clip's skeleton: its joint count and root joint name (``"31j:Hips"``).

    What a model's card records as each training clip's ``rig`` and what a verdict's notes
    compare a scored clip against.

    >>> from evalkit.data import cmu_clips
    >>> from evalkit.motion import load_motion
    >>> rig_signature(load_motion(cmu_clips()[0]))
    '31j:Hips'
    """
    return f"{motion.n_joints}j:{motion.skeleton.names[0]}"


@dataclass(frozen=True, eq=False)
class Example:
    """One clip of the data set: natural or corrupted, with where it came from."""

    motion: Motion
    provenance: Provenance
    group: str
    segment: str
    rig: str

    @property
    def natural(self) -> bool:
        return self.provenance.natural


def seed_for(*parts: object) -> int:
    """A stable 32-bit seed from strings/ints (Python's ``hash`` is salted per process)."""
    h = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(h[:4], "little")
