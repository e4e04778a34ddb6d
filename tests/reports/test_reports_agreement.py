"""Krippendorff's alpha against the worked example of Krippendorff (2011)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reports.agreement import alpha_table, krippendorff_alpha
from tests.reports.helpers import long_table

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers,
# 12 units, values 1-5 with missing data. Published: nominal 0.743, ordinal 0.815,
# interval 0.849, ratio 0.797.
EXAMPLE = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
])


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815),
                                               ("interval", 0.849), ("ratio", 0.797)])
def test_published_example(level, published):
    units = np.tile(np.arange(12), 4)
    r = krippendorff_alpha(units, EXAMPLE.ravel(), level)
    assert r["alpha"] == pytest.approx(published, abs=5e-4)
    assert r["units"] == 11 and r["pairable_values"] == 40  # unit 12 has one value only


def test_hand_worked_two_coders_nominal():
    # units: (a,a), (a,b), (b,b). Coincidences: o_aa=2, o_ab=o_ba=1, o_bb=2; n_a=n_b=3, n=6.
    # D_o = 2/6; D_e = 2*3*3/(6*5) = 0.6 -> alpha = 1 - (1/3)/0.6 = 4/9
    r = krippendorff_alpha([1, 1, 2, 2, 3, 3], [0, 0, 0, 1, 1, 1], "nominal")
    assert r["alpha"] == pytest.approx(4 / 9)


def test_perfect_agreement_and_no_variation():
    assert krippendorff_alpha([1, 1, 2, 2, 3, 3], [1, 1, 2, 2, 3, 3])["alpha"] == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha([1, 1, 2, 2], [3, 3, 3, 3])["alpha"])


def test_bootstrap_ci_brackets_estimate():
    units = np.tile(np.arange(12), 4)
    r = krippendorff_alpha(units, EXAMPLE.ravel(), "ordinal", n_boot=2000, seed=1)
    assert r["ci_low"] < r["alpha"] <= r["ci_high"] <= 1.0
    again = krippendorff_alpha(units, EXAMPLE.ravel(), "ordinal", n_boot=2000, seed=1)
    assert again == r


def test_alpha_table_per_scale():
    df = long_table([(p, i, "A", "B", s) for p, row in (("p1", [2, 1, 0]), ("p2", [2, 1, -1]))
                     for i, s in zip("xyz", row)])
    df["comparison"] = "A vs B"
    t = alpha_table(df, n_boot=0)
    assert list(t["scale"]) == ["cmos5"] and t["units"].iloc[0] == 3
