"""A memory-bounded cache of the read-only matrices that short clips are filtered and resampled by.

Clips up to a few hundred frames are low-passed (:func:`evalkit.features.signal.lowpass`) and
put on the analysis grid (:func:`evalkit.features.ground.to_grid`) as products with matrices
that depend only on the clip's length and frame rate. Building one costs 10-50 times applying
it, so they are kept -- but a test set of clips of 2-10 s holds a hundred or more distinct
lengths, and an entry-count LRU (``functools.lru_cache(maxsize=32)``) then rebuilt a matrix for
most clips. :func:`bytes_lru_cache` bounds the cache by the bytes it holds instead, so every
length of such a set fits. Written here because ``functools`` bounds only the number of entries.

Which path a clip takes (matrix or direct filter) never depends on the cache: it is decided by
the clip's length, rate and column count alone, so the numbers do not depend on the order in
which clips are scored.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from typing import Any, Callable

import numpy as np


def _nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    return 64


def bytes_lru_cache(max_bytes: int) -> Callable[[Callable], Callable]:
    """Memoise a function of hashable arguments, least recently used results evicted once the
    cached arrays hold more than ``max_bytes`` bytes (a result larger than that is not kept).

    The wrapped function gets ``cache_clear()`` and ``cache_bytes()``; thread-safe.

    >>> @bytes_lru_cache(1000)
    ... def zeros(n):
    ...     return np.zeros(n)          # n * 8 bytes
    >>> _ = zeros(100), zeros(100), zeros(50)   # 800 bytes kept, then 400 more: the oldest goes
    >>> zeros.cache_bytes()
    400
    """
    def decorate(fn: Callable) -> Callable:
        store: OrderedDict = OrderedDict()
        held = [0]
        lock = threading.Lock()

        @functools.wraps(fn)
        def cached(*args):
            with lock:
                if args in store:
                    store.move_to_end(args)
                    return store[args]
            value = fn(*args)
            size = _nbytes(value)
            with lock:
                if args not in store and size <= max_bytes:
                    store[args] = value
                    held[0] += size
                    while held[0] > max_bytes:
                        _, old = store.popitem(last=False)
                        held[0] -= _nbytes(old)
            return value

        def cache_clear() -> None:
            with lock:
                store.clear()
                held[0] = 0

        cached.cache_clear = cache_clear
        cached.cache_bytes = lambda: held[0]
        return cached

    return decorate
