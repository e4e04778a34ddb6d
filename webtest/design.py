"""The experimental design: which trials each participant (design *cell*) sees.

A *condition* is an (item, pair of systems). A cell is the ordered trial list of one
participant: training trials first, then the main trials with quality checks mixed in, in a
random order seeded by ``design.seed`` and the cell index. Sides are balanced: over the cells,
each condition is shown with ``system_a`` on the left as often as on the right (exactly when the
number of cells is a multiple of the design's period, see :func:`balance_report`).

Pure functions of the :class:`~webtest.study.Study`; the database stores their output.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import asdict, dataclass, replace
from typing import Literal

import numpy as np

from webtest.study import Study

TrialKind = Literal["training", "main", "gold", "attention", "repeat"]


@dataclass(frozen=True)
class TrialSpec:
    """One trial of a cell.

    Attributes:
        kind: ``training`` (practice, not analysed), ``main``, or a check: ``gold`` (identical
            pair), ``attention`` (instructed answer), ``repeat`` (a main trial again, sides
            swapped).
        item, system_a, system_b: what is compared (``system_a == system_b`` for gold trials).
        stim_a, stim_b: stimulus ids of ``system_a`` and ``system_b``.
        side_shown: where ``system_a`` is displayed, ``"left"`` or ``"right"``.
        expected: for checks, the expected raw answer (attention) or score (gold, 0).
        tolerance: allowed deviation for gold and repeat checks (scale points).
        ref: for ``repeat``, the index in the cell of the main trial it repeats.
    """

    kind: TrialKind
    item: str
    system_a: str
    system_b: str
    stim_a: str
    stim_b: str
    side_shown: Literal["left", "right"]
    expected: float | None = None
    tolerance: float | None = None
    ref: int | None = None

    @property
    def stim_left(self) -> str:
        return self.stim_a if self.side_shown == "left" else self.stim_b

    @property
    def stim_right(self) -> str:
        return self.stim_b if self.side_shown == "left" else self.stim_a


def conditions(study: Study) -> list[tuple[str, str, str]]:
    """``(item, system_a, system_b)`` conditions, ordered pair-major so that consecutive
    conditions show different items."""
    return [(item, a, b) for (a, b) in study.pairs for item in study.items]


def trials_per_participant(study: Study) -> int:
    """Main trials per participant (without training and checks)."""
    d = study.design
    if d.method == "full":
        return len(conditions(study))
    if d.method == "latin_square":
        return len(study.items)
    return int(d.trials_per_participant or 0)


def _main_blocks(study: Study) -> list[list[tuple[str, str, str, str]]]:
    """Per cell, the main conditions with the side of ``system_a``: ``(item, a, b, side)``."""
    d = study.design
    conds = conditions(study)
    n_c = len(conds)
    rng = np.random.default_rng(d.seed)
    first_side = {c: int(s) for c, s in zip(conds, rng.integers(0, 2, size=n_c))}
    seen: Counter = Counter()
    blocks = []
    n_pairs = len(study.pairs)
    for k in range(d.participants):
        if d.method == "full":
            chosen = list(conds)
        elif d.method == "latin_square":
            chosen = [(item,) + study.pairs[(i + k) % n_pairs] for i, item in enumerate(study.items)]
        else:  # balanced_incomplete: cyclic blocks of consecutive conditions
            m = trials_per_participant(study)
            chosen = [conds[(k * m + t) % n_c] for t in range(m)]
        block = []
        for c in chosen:
            side = "left" if (first_side[c] + seen[c]) % 2 == 0 else "right"
            seen[c] += 1
            block.append(c + (side,))
        blocks.append(block)
    return blocks


def build_cells(study: Study) -> list[list[TrialSpec]]:
    """The trial list of every cell (``design.participants`` cells).

    Order: training trials, then main trials and checks shuffled together; a repeat always
    comes after the trial it repeats with at least one trial in between when possible.
    """
    cells = []
    scale = study.scale
    q = study.quality
    for k, block in enumerate(_main_blocks(study)):
        rng = np.random.default_rng([study.design.seed, k])
        main = [TrialSpec("main", it, a, b, study.find(it, a).id, study.find(it, b).id, side)
                for it, a, b, side in block]
        rng.shuffle(main)  # type: ignore[arg-type]
        # entries are (spec, the main spec it repeats or None); refs are resolved at the end
        seq: list[tuple[TrialSpec, TrialSpec | None]] = [(t, None) for t in main]
        extra: list[TrialSpec] = []
        for _ in range(q.gold):
            stim = study.stimuli[int(rng.integers(len(study.stimuli)))]
            extra.append(TrialSpec("gold", stim.item, stim.system, stim.system, stim.id, stim.id, "left",
                                   expected=0.0, tolerance=q.gold_tolerance))
        for _ in range(q.attention):
            it, a, b, _side = block[int(rng.integers(len(block)))]
            expected = float(scale.minimum if rng.integers(2) == 0 else scale.maximum)
            side = "left" if rng.integers(2) == 0 else "right"
            extra.append(TrialSpec("attention", it, a, b, study.find(it, a).id, study.find(it, b).id, side,
                                   expected=expected))
        for t in extra:  # gold and attention at random positions, never first
            pos = int(rng.integers(1, len(seq) + 1)) if seq else 0
            seq.insert(pos, (t, None))
        for orig in main[: q.repeat]:
            orig_pos = next(i for i, (s, _) in enumerate(seq) if s is orig)
            pos = int(rng.integers(min(orig_pos + 2, len(seq)), len(seq) + 1))
            swapped = "right" if orig.side_shown == "left" else "left"
            seq.insert(pos, (replace(orig, kind="repeat", side_shown=swapped, tolerance=q.repeat_tolerance), orig))
        training = [(TrialSpec("training", t.item, t.system_a, t.system_b, study.find(t.item, t.system_a).id,
                               study.find(t.item, t.system_b).id, "left" if i % 2 == 0 else "right"), None)
                    for i, t in enumerate(study.training)]
        full = training + seq
        cell = []
        for spec, orig in full:
            if orig is not None:
                spec = replace(spec, ref=next(i for i, (s, _) in enumerate(full) if s is orig))
            cell.append(spec)
        cells.append(cell)
    return cells


def cells_to_json(cells: list[list[TrialSpec]]) -> list[str]:
    """One compact JSON text per cell (stored in the database)."""
    return [json.dumps([asdict(t) for t in cell], separators=(",", ":")) for cell in cells]


def cell_from_json(text: str) -> list[TrialSpec]:
    return [TrialSpec(**d) for d in json.loads(text)]


def design_hash(cells: list[list[TrialSpec]]) -> str:
    """A fingerprint of the design; a changed study file must not reuse old cells."""
    h = hashlib.sha256()
    for text in cells_to_json(cells):
        h.update(text.encode())
    return h.hexdigest()[:16]


def balance_report(study: Study, cells: list[list[TrialSpec]] | None = None) -> dict:
    """How evenly the design spreads conditions and sides over the cells.

    Returns counts per (item, system_a, system_b, side) of main trials: ``min``, ``max`` and
    ``balanced`` (every condition-side shown equally often), plus trials per cell and the pages
    of a cell: ``pages_per_cell`` = ``practice_per_cell`` + ``rated_per_cell``, the rated pages
    being the main trials and ``checks_per_cell`` quality checks (shown to the participant as
    "Comparison i of ``rated_per_cell``").
    """
    cells = cells if cells is not None else build_cells(study)
    counts: Counter = Counter()
    for cell in cells:
        for t in cell:
            if t.kind == "main":
                counts[(t.item, t.system_a, t.system_b, t.side_shown)] += 1
    keys = [(it, a, b, s) for it, a, b in conditions(study) for s in ("left", "right")]
    values = [counts.get(k, 0) for k in keys]
    first = cells[0] if cells else []
    practice = sum(t.kind == "training" for t in first)
    checks = sum(t.kind in ("gold", "attention", "repeat") for t in first)
    return {
        "cells": len(cells),
        # the one count of pages everywhere (serve, the participant's "i of n", the admin page)
        "pages_per_cell": len(first), "practice_per_cell": practice, "checks_per_cell": checks,
        "rated_per_cell": len(first) - practice,
        "trials_per_cell": sorted({len(c) for c in cells}),
        "main_per_cell": trials_per_participant(study),
        "condition_side_min": min(values) if values else 0,
        "condition_side_max": max(values) if values else 0,
        "balanced": bool(values) and min(values) == max(values),
    }
