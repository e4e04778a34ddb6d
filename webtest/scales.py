"""Rating scales: a registry of the answer scales a study can use.

Every comparison scale is answered about the **right-hand (second) stimulus relative to the
left-hand (first) one**, as in ITU-T P.800 CCR ("the quality of the second compared to the
quality of the first"): the *raw answer* is positive when the right-hand stimulus is judged
better. The stored *score* is sign-corrected so that it is positive when ``system_a`` is better,
whatever side ``system_a`` was shown on (see :func:`signed_score`).

``acr5`` is an absolute category rating (P.800 ACR, 1 = Bad … 5 = Excellent) given to each of
the two stimuli; its raw answer is ``"left|right"`` and its score is ``acr(A) - acr(B)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from evalkit.errors import InputError

Side = Literal["left", "right"]


@dataclass(frozen=True)
class Scale:
    """One answer scale.

    Attributes:
        name: registry key (``ccr7``, ``cmos5``, ``ab3``, ``acr5``).
        title: what it is, for the admin pages and documentation.
        points: ``(value, label)`` pairs in display order, left to right.
        kind: ``"comparison"`` (one answer about the pair) or ``"absolute"`` (one per stimulus).
    """

    name: str
    title: str
    points: tuple[tuple[int, str], ...]
    kind: Literal["comparison", "absolute"] = "comparison"

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(v for v, _ in self.points)

    @property
    def minimum(self) -> int:
        return min(self.values)

    @property
    def maximum(self) -> int:
        return max(self.values)

    def label(self, value: int) -> str:
        for v, lab in self.points:
            if v == value:
                return lab
        raise InputError(f"{value} is not a point of the {self.name} scale ({self.values})")

    def parse(self, raw: str | int | list | tuple) -> tuple[str, float]:
        """Validate a submitted answer; returns ``(raw_answer_text, raw_value)``.

        For comparison scales ``raw_value`` is the integer on the scale (positive = right-hand
        stimulus better). For ``acr5`` the raw answer is two ratings ``"left|right"`` and
        ``raw_value`` is ``right - left`` so that it follows the same sign convention.
        """
        if self.kind == "absolute":
            parts = raw if isinstance(raw, (list, tuple)) else str(raw).split("|")
            if len(parts) != 2:
                raise InputError(f"the {self.name} scale needs two ratings 'left|right', got {raw!r}")
            left, right = (self._int(p) for p in parts)
            return f"{left}|{right}", float(right - left)
        value = self._int(raw)
        return str(value), float(value)

    def _int(self, raw) -> int:
        try:
            value = int(str(raw).strip())
        except ValueError:
            raise InputError(f"answer {raw!r} is not a number on the {self.name} scale") from None
        if value not in self.values:
            raise InputError(
                f"answer {value} is not on the {self.name} scale; expected one of {list(self.values)}"
            )
        return value


def signed_score(raw_value: float, side_shown: Side) -> float:
    """Score with positive = ``system_a`` better.

    Args:
        raw_value: the raw answer value, positive = right-hand stimulus better.
        side_shown: the side ``system_a`` was displayed on.
    """
    if side_shown == "right":
        return float(raw_value)
    if side_shown == "left":
        return -float(raw_value)
    raise InputError(f"side_shown must be 'left' or 'right', got {side_shown!r}")


# The registry. Labels are English here; the participant pages take them from webtest.strings
# (key "scale.<name>.<value>") so that a study can translate them.
SCALES: dict[str, Scale] = {
    "ccr7": Scale(
        "ccr7",
        "ITU-T P.800 comparison category rating, 7 points (+3 much better … −3 much worse)",
        (
            (-3, "Much worse"),
            (-2, "Worse"),
            (-1, "Slightly worse"),
            (0, "About the same"),
            (1, "Slightly better"),
            (2, "Better"),
            (3, "Much better"),
        ),
    ),
    "cmos5": Scale(
        "cmos5",
        "5-point comparison mean opinion score (±2), as in the Fernández-Baena thesis",
        (
            (-2, "Much worse"),
            (-1, "Worse"),
            (0, "About the same"),
            (1, "Better"),
            (2, "Much better"),
        ),
    ),
    "ab3": Scale(
        "ab3",
        "Forced preference with a tie: left / no preference / right",
        ((-1, "Left"), (0, "No preference"), (1, "Right")),
    ),
    "acr5": Scale(
        "acr5",
        "ITU-T P.800 absolute category rating of each stimulus (1 bad … 5 excellent)",
        ((1, "Bad"), (2, "Poor"), (3, "Fair"), (4, "Good"), (5, "Excellent")),
        kind="absolute",
    ),
}

DEFAULT_SCALE = "ccr7"


def get_scale(name: str) -> Scale:
    """The scale registered as ``name`` (raises :class:`InputError` naming the choices)."""
    try:
        return SCALES[name]
    except KeyError:
        raise InputError(f"unknown scale {name!r}; choose one of {', '.join(SCALES)}") from None
