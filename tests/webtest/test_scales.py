"""The scale registry and sign correction."""

import pytest

from evalkit.errors import InputError
from webtest.scales import SCALES, get_scale, signed_score


def test_registry_has_the_four_scales_with_ccr7_as_p800():
    assert set(SCALES) == {"ccr7", "cmos5", "ab3", "acr5"}
    ccr = get_scale("ccr7")
    assert ccr.values == (-3, -2, -1, 0, 1, 2, 3)
    assert ccr.label(3) == "Much better" and ccr.label(0) == "About the same" and ccr.label(-3) == "Much worse"
    assert get_scale("cmos5").values == (-2, -1, 0, 1, 2)
    assert get_scale("ab3").values == (-1, 0, 1)
    assert get_scale("acr5").kind == "absolute"


def test_unknown_scale_names_the_choices():
    with pytest.raises(InputError, match="ccr7, cmos5, ab3, acr5"):
        get_scale("ccr9")


@pytest.mark.parametrize("raw, side, score", [(2, "right", 2.0), (2, "left", -2.0), (-3, "left", 3.0), (0, "left", 0.0)])
def test_signed_score_is_positive_when_system_a_is_better(raw, side, score):
    # raw > 0 means the right-hand stimulus was judged better
    assert signed_score(raw, side) == score


def test_signed_score_rejects_bad_side():
    with pytest.raises(InputError):
        signed_score(1, "middle")


def test_parse_checks_the_scale_points():
    ccr = get_scale("ccr7")
    assert ccr.parse("3") == ("3", 3.0)
    assert ccr.parse(-1) == ("-1", -1.0)
    with pytest.raises(InputError, match="not on the ccr7 scale"):
        ccr.parse(4)
    with pytest.raises(InputError, match="not a number"):
        ccr.parse("much better")
    with pytest.raises(InputError):
        get_scale("cmos5").parse(3)


def test_acr5_takes_two_ratings_and_follows_the_same_sign():
    acr = get_scale("acr5")
    assert acr.parse("2|5") == ("2|5", 3.0)  # right rated higher -> positive raw
    assert acr.parse([4, 1]) == ("4|1", -3.0)
    with pytest.raises(InputError, match="two ratings"):
        acr.parse("3")
    with pytest.raises(InputError):
        acr.parse("0|6")
