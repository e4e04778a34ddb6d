"""The two C tokenizers of the BVH frame block (numpy's when pandas is not loaded, pandas'
otherwise) give the same floats, bit for bit, and the same errors."""

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


def _parse(block, first, n, c, numpy_path, monkeypatch):
    monkeypatch.setattr(bvh, "_numpy_tokenizer_pays", lambda n_values: numpy_path)
    return bvh._parse_frames(block, first, n, c, "clip.bvh", first - 2)


def test_numpy_tokenizer_only_while_pandas_is_not_loaded_and_the_block_is_small(monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "pandas", raising=False)
    assert bvh._numpy_tokenizer_pays(bvh.NUMPY_PARSE_MAX_VALUES)
    assert not bvh._numpy_tokenizer_pays(bvh.NUMPY_PARSE_MAX_VALUES + 1)
    monkeypatch.setitem(sys.modules, "pandas", object())
    assert not bvh._numpy_tokenizer_pays(10)


@pytest.mark.parametrize("name", ["01_01.bvh", "131_01.bvh", "131_03.bvh"])
def test_numpy_and_pandas_tokenizers_agree_bit_for_bit(name, monkeypatch):
    block, first, n, c = _block(sample_path("cmu", name))
    a = _parse(block, first, n, c, True, monkeypatch)
    b = _parse(block, first, n, c, False, monkeypatch)
    assert a.shape == (n, c) and a.dtype == b.dtype == np.float64
    assert np.array_equal(a.view(np.uint64), b.view(np.uint64))


@pytest.mark.parametrize("numpy_path", [True, False])
@pytest.mark.parametrize("mutate, message", [
    (lambda rows: rows[:1] + [rows[1].rsplit(" ", 1)[0]] + rows[2:], "values; the hierarchy declares"),
    (lambda rows: rows[:2] + [rows[2].replace(rows[2].split()[3], "abc", 1)] + rows[3:], "non-numeric value"),
    (lambda rows: rows[:2] + [rows[2].replace(rows[2].split()[3], "nan", 1)] + rows[3:], "NaN/inf"),
    (lambda rows: rows[:-1], "truncated"),
])
def test_bad_frames_are_named_alike_on_both_paths(numpy_path, mutate, message, monkeypatch):
    block, first, n, c = _block(sample_path("cmu", "131_03.bvh"))
    rows = [ln for ln in block.splitlines() if ln.strip()]
    bad = "\n".join(mutate(rows)) + "\n"
    with pytest.raises(FileFormatError, match=message):
        _parse(bad, first, n, c, numpy_path, monkeypatch)
