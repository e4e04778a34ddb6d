"""TextGrid writing (ours) against reading (Praat's), both directions."""

from __future__ import annotations

import pytest

from evalkit.errors import InputError
from evalkit.speech import Interval, IntervalTier, Point, PointTier, TextGrid, read_textgrid, write_textgrid


def test_written_textgrid_is_read_back_by_praat(tmp_path):
    tg = TextGrid(0.0, 3.5, (
        IntervalTier("words", (Interval(0.25, 0.8, 'say "hi"'), Interval(1.0, 1.75, "naïve café"))),
        PointTier("PAPT", (Point(0.5, "H*"), Point(1.3, "L+H*"))),
        IntervalTier("empty", ()),
    ))
    back = read_textgrid(write_textgrid(tg, tmp_path / "t.TextGrid"))
    assert back.start == 0.0 and back.end == 3.5
    words = back.tier("words")
    # gaps are filled with empty intervals, as Praat requires
    assert [(i.start, i.end, i.text) for i in words.intervals] == [
        (0.0, 0.25, ""), (0.25, 0.8, 'say "hi"'), (0.8, 1.0, ""), (1.0, 1.75, "naïve café"), (1.75, 3.5, ""),
    ]
    assert words.labelled() == (Interval(0.25, 0.8, 'say "hi"'), Interval(1.0, 1.75, "naïve café"))
    assert back.tier("PAPT").points == (Point(0.5, "H*"), Point(1.3, "L+H*"))
    assert back.tier("empty").intervals == (Interval(0.0, 3.5, ""),)


@pytest.mark.parametrize("command", ["Save as text file", "Save as short text file"])
def test_praat_written_textgrid_is_read(tmp_path, command):
    from parselmouth.praat import call

    tg = call("Create TextGrid", 0, 2.0, "syll tones", "tones")
    call(tg, "Insert boundary", 1, 0.4)
    call(tg, "Set interval text", 1, 2, "ˈstress")  # non-ASCII: Praat writes UTF-16
    call(tg, "Insert point", 2, 0.9, "H*")
    f = tmp_path / "praat.TextGrid"
    call(tg, command, str(f))
    back = read_textgrid(f)
    assert back.tier("syll").intervals[1] == Interval(0.4, 2.0, "ˈstress")
    assert back.tier("tones").points == (Point(0.9, "H*"),)


def test_invalid_tiers_are_refused(tmp_path):
    with pytest.raises(InputError, match="overlaps"):
        write_textgrid(TextGrid(0, 2, (IntervalTier("a", (Interval(0, 1, "x"), Interval(0.5, 1.5, "y"))),)), tmp_path / "a.TextGrid")
    with pytest.raises(InputError, match="outside"):
        write_textgrid(TextGrid(0, 2, (PointTier("p", (Point(3.0, "x"),)),)), tmp_path / "b.TextGrid")
    with pytest.raises(InputError, match="empty or reversed"):
        write_textgrid(TextGrid(0, 2, (IntervalTier("a", (Interval(1, 1, "x"),)),)), tmp_path / "c.TextGrid")
    assert not list(tmp_path.glob("*.TextGrid"))  # nothing half-written
