"""Run chunks of work in this process, in local worker processes (joblib) or on a Dask cluster.

One way for every batch job (``evalkit score``, ``evalkit compare``): the work is a module-level
function ``work(chunk, opts) -> list`` (picklable), the chunks are lists of inputs, and the
results come back in chunk order whichever way they ran, so the tables are identical.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from evalkit.errors import InputError


def run_chunks(work: Callable[[list, Any], list], chunks: Sequence[list], opts: Any, workers: int = 1,
               scheduler: Any = None, bar: Any = None) -> list[list]:
    """``[work(chunk, opts) for chunk in chunks]``, run in this process (``workers == 1``), in
    ``workers`` joblib processes, or on the Dask cluster ``scheduler`` (an address such as
    ``"tcp://127.0.0.1:8786"`` or a ``distributed.Client``).

    Args:
        work: module-level function of one chunk and ``opts``, returning a list (one item per input).
        chunks: the inputs, split into tasks.
        opts: options passed to every task (scattered once to a Dask cluster).
        workers: local processes when no scheduler is given.
        bar: a tqdm-like progress bar, advanced by the length of each finished chunk's result.

    Returns:
        the results, one list per chunk, in chunk order.
    """
    results: list[list | None] = [None] * len(chunks)

    def done(i: int, rows: list) -> None:
        results[i] = rows
        if bar is not None:
            bar.update(len(rows))

    if scheduler is not None:
        _run_dask(work, chunks, opts, scheduler, done)
    elif workers == 1:
        for i, c in enumerate(chunks):
            done(i, work(c, opts))
    else:
        from joblib import Parallel, delayed

        par = Parallel(n_jobs=workers, return_as="generator")  # joblib >= 1.3
        for i, rows in par(delayed(_tagged)(work, i, c, opts) for i, c in enumerate(chunks)):
            done(i, rows)
    return [r if r is not None else [] for r in results]


def _tagged(work: Callable[[list, Any], list], i: int, chunk: list, opts: Any) -> tuple[int, list]:
    return i, work(chunk, opts)


def _run_dask(work, chunks, opts, scheduler, done) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:  # pragma: no cover - dask is an optional extra
        raise InputError("--scheduler needs Dask: pip install 'evalkit[dask]'") from None
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler, timeout="10s") if own else scheduler
    except OSError as exc:
        raise InputError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}") from None
    try:
        opts_future = client.scatter(opts, broadcast=True)
        futures = [client.submit(_tagged, work, i, c, opts_future, pure=False) for i, c in enumerate(chunks)]
        for fut in as_completed(futures):
            done(*fut.result())
    finally:
        if own:
            client.close()
