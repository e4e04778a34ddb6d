"""The BVH frame block's tokenizer: the same floats as Python's ``float()`` of every token, bit
for bit, and bad frames named by line."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.data import sample_path
from evalkit.errors import FileFormatError
from evalkit.motion.formats import bvh


def _block(path):
    text = open(path).read()
    i = text.index("Frame Time")
    first = text.count("\n", 0, i) + 2
    block = text[text.index("\n", i) + 1:]
    rows = [ln for ln in block.splitlines() if ln.strip()]
    return block, first, len(rows), len(rows[0].split())


def _parse(block, first, n, c):
    return bvh._parse_frames(block, first, n, c, "clip.bvh", first - 2)


@pytest.mark.parametrize("name", ["01_01.bvh", "131_01.bvh", "131_03.bvh"])
def test_frames_are_pythons_floats_bit_for_bit(name):
    block, first, n, c = _block(sample_path("cmu", name))
    a = _parse(block, first, n, c)
    want = np.array([[float(t) for t in ln.split()] for ln in block.splitlines() if ln.strip()])
    assert a.shape == (n, c) and a.dtype == np.float64
    assert np.array_equal(a.view(np.uint64), want.view(np.uint64))


def test_blank_lines_between_frames_are_skipped():
    block, first, n, c = _block(sample_path("cmu", "131_03.bvh"))
    rows = [ln for ln in block.splitlines() if ln.strip()]
    spaced = "\n\n".join(rows) + "\n   \n"
    np.testing.assert_array_equal(_parse(spaced, first, n, c), _parse(block, first, n, c))


@pytest.mark.parametrize("mutate, message", [
    (lambda rows: rows[:1] + [rows[1].rsplit(" ", 1)[0]] + rows[2:], "values; the hierarchy declares"),
    (lambda rows: rows[:2] + [rows[2].replace(rows[2].split()[3], "abc", 1)] + rows[3:], "non-numeric value"),
    (lambda rows: rows[:2] + [rows[2].replace(rows[2].split()[3], "nan", 1)] + rows[3:], "NaN/inf"),
    (lambda rows: rows[:2] + [rows[2].replace(rows[2].split()[3], "1e300", 1)] + rows[3:], "magnitude below"),
    (lambda rows: rows[:-1], "truncated"),
    (lambda rows: rows + rows[-1:], "more frame lines"),
])
def test_bad_frames_are_named(mutate, message):
    block, first, n, c = _block(sample_path("cmu", "131_03.bvh"))
    rows = [ln for ln in block.splitlines() if ln.strip()]
    bad = "\n".join(mutate(rows)) + "\n"
    with pytest.raises(FileFormatError, match=message):
        _parse(bad, first, n, c)
