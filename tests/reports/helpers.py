"""Shared helpers of the reports tests (data paths, small tables)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from reports.table import validate_ratings

DATA = Path(__file__).resolve().parent / "data"
EXCERPT = DATA / "mushra_codec_excerpt.csv"


def long_table(rows, **defaults) -> pd.DataFrame:
    """A validated long-format table from tuples (participant, item, system_a, system_b, score)."""
    df = pd.DataFrame(rows, columns=["participant", "item", "system_a", "system_b", "score"])
    for k, v in {"scale": "cmos5", **defaults}.items():
        df[k] = v
    return validate_ratings(df)


def pairs_from_mushra(ratings: pd.DataFrame) -> pd.DataFrame:
    """Pairwise answers DERIVED from real MUSHRA ratings: for each participant and item, every
    pair of systems, score = sign of the rating difference (pref3). Constructed from real data."""
    rows = []
    for (p, item), g in ratings.groupby(["participant", "item"]):
        vals = dict(zip(g["system_a"], g["score"]))
        names = sorted(vals)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                d = vals[a] - vals[b]
                rows.append((p, item, a, b, float((d > 0) - (d < 0))))
    return long_table(rows, scale="pref3")
