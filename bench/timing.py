"""How the benchmarks time a function: the same way for evalkit and for its peer."""

from __future__ import annotations

import time
from typing import Any, Callable


def best_cpu(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best CPU time (seconds, this process) of ``repeat`` runs of ``fn`` after one untimed
    warm-up run, and ``fn``'s result; used for both sides of a comparison alike."""
    out = fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out
