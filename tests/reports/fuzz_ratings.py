"""A seeded mutation fuzzer for the rating-file importers, shared by the tests and
``bench/bench_fuzz_ratings.py``.

Each case takes one seed file (the files of ``tests/reports/data``, one per importable format and
per layout of the generic importer),
applies one to three CSV-aware mutations (a cell made hostile: NaN, inf, huge, negative, empty,
quotes, NUL, very long text; rows dropped, duplicated or cut; columns dropped, duplicated, renamed
or reordered; the header removed; the separator changed; quotes unbalanced; bytes flipped; the file
truncated) and reads it with :func:`reports.importers.load_input`, with the format detected and
with the seed's format forced. The only acceptable outcomes are a table or an
:class:`~evalkit.errors.EvalkitError` whose message is one line naming the file; anything else, and
any case over ``slow_s`` seconds (interrupted by an alarm, so a hang cannot stall the run), is a
failure kept for replay.
"""

from __future__ import annotations

import random
import shutil
import signal
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import EvalkitError
from reports.importers_generic import make_spec

DATA = Path(__file__).resolve().parent / "data"
#: Seed file -> the format its importer is named by, and the options it needs.
SEEDS = {
    "genea_battles_constructed.csv": ("genea", {}),
    "mturk_p808_acr_batch_constructed.csv": ("mturk-p808", {"condition_pattern": r"^(c\d+)_"}),
    "mushra_codec_excerpt.csv": ("mushra-lists", {}),
    "p808_ccr_votes_constructed.csv": ("p808", {}),
    "webmushra_lss_constructed.csv": ("webmushra-lss", {}),
    "webmushra_mushra_1to5_constructed.csv": ("webmushra", {}),
    "webmushra_mushra_constructed.csv": ("webmushra", {}),
    "webmushra_pc_constructed.csv": ("webmushra", {}),
    "pymushra_export_constructed.csv": ("pymushra", {}),
    "hemvip_export_constructed.json": ("hemvip", {}),
    # the generic importer, with the specs these layouts need
    "generic_matrix_stimulus_by_rater_constructed.csv": ("columns", {"spec": make_spec(
        {"layout": "stimulus-by-rater", "columns": {"item": "video", "system": "distortion"}, "missing": [-1],
         "ignore": ["MOS"]}, "fuzz")}),
    "generic_matrix_rater_by_stimulus_constructed.csv": ("columns", {"spec": make_spec(
        {"layout": "rater-by-stimulus", "columns": {"participant": "ResponseId"}, "ignore": ["Duration"],
         "stimulus_pattern": r"(?P<item>[^_]+)_(?P<system>.+)", "scale": "mushra"}, "fuzz")}),
    "generic_log_noheader_constructed.tsv": ("columns", {"spec": make_spec(
        {"columns": {"participant": "1", "trial": "2", "item": "3", "system": "4", "score": "5", "time": "6"},
         "header": False}, "fuzz")}),
}
HOSTILE_CELLS = ("", "nan", "NaN", "inf", "-inf", "1e309", "-1e309", "99999999999999999999", "-5", "0",
                 "101", "2.5", "abc", '"', '""', "\x00", "\ufeff", "é字🙂", "x" * 10000, "[1,2", "{}",
                 "[]", "null", '["a"]', "[1e400]", "true", "model_c", " 4 ", "=cmd|' /C calc'!A0", "1;2")


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise _Timeout()


def _rows(text: str) -> list[str]:
    return text.split("\n")


def mut_cell(text: str, rng: random.Random) -> str:
    lines = _rows(text)
    i = rng.randrange(len(lines))
    cells = lines[i].split(",")
    cells[rng.randrange(len(cells))] = rng.choice(HOSTILE_CELLS)
    lines[i] = ",".join(cells)
    return "\n".join(lines)


def mut_row(text: str, rng: random.Random) -> str:
    lines = _rows(text)
    i = rng.randrange(len(lines))
    op = rng.choice(("drop", "dup", "cut", "swap", "dup_many"))
    if op == "drop":
        del lines[i]
    elif op == "dup":
        lines.insert(i, lines[i])
    elif op == "dup_many":
        lines[i + 1:i + 1] = [lines[i]] * rng.choice((2, 50, 2000))
    elif op == "cut":
        lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
    else:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def mut_column(text: str, rng: random.Random) -> str:
    rows = [line.split(",") for line in _rows(text)]
    width = len(rows[0])
    k = rng.randrange(width)
    op = rng.choice(("drop", "dup", "rename", "shuffle", "header_only"))
    if op == "drop":
        rows = [r[:k] + r[k + 1:] for r in rows]
    elif op == "dup":
        rows = [r[:k + 1] + r[k:k + 1] + r[k + 1:] for r in rows]
    elif op == "rename":
        rows[0][k] = rng.choice(("", "x", rows[0][k].upper(), rows[0][rng.randrange(width)], "Unnamed: 0"))
    elif op == "shuffle":
        order = list(range(width))
        rng.shuffle(order)
        rows = [[r[j] if j < len(r) else "" for j in order] for r in rows]
    else:
        rows = rows[:1]
    return "\n".join(",".join(r) for r in rows)


def mut_layout(text: str, rng: random.Random) -> str:
    op = rng.choice(("no_header", "semicolon", "tab", "quote", "crlf", "bom", "blank_lines", "empty"))
    if op == "no_header":
        return "\n".join(_rows(text)[1:])
    if op == "semicolon":
        return text.replace(",", ";")
    if op == "tab":
        return text.replace(",", "\t")
    if op == "quote":
        pos = rng.randrange(len(text) + 1)
        return text[:pos] + '"' + text[pos:]
    if op == "crlf":
        return text.replace("\n", "\r\n")
    if op == "bom":
        return "\ufeff" + text
    if op == "blank_lines":
        lines = _rows(text)
        lines.insert(rng.randrange(len(lines) + 1), "")
        return "\n".join(lines)
    return ""


def mut_bytes(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    op = rng.choice(("flip", "truncate", "insert"))
    if op == "truncate" or not b:
        return bytes(b[: rng.randrange(len(b) + 1)])
    pos = rng.randrange(len(b))
    if op == "flip":
        b[pos] ^= 1 << rng.randrange(8)
    else:
        b[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
    return bytes(b)


TEXT_MUTATIONS = (mut_cell, mut_cell, mut_row, mut_column, mut_layout)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three mutations of a CSV file's bytes (text-aware mostly, byte-level sometimes)."""
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.2:
            data = mut_bytes(data, rng)
        else:
            text = data.decode("utf-8", "surrogateescape")
            if text:
                text = rng.choice(TEXT_MUTATIONS)(text, rng)
            data = text.encode("utf-8", "surrogateescape")
    return data


@dataclass
class Failure:
    case: int
    kind: str  # "exception", "slow" or "message"
    signature: str
    message: str
    file: Path


@dataclass
class Report:
    cases: int = 0
    accepted: int = 0
    refused: int = 0
    failures: list[Failure] = field(default_factory=list)
    times: list[float] = field(default_factory=list)

    def summary(self) -> str:
        kinds = {}
        for f in self.failures:
            kinds[f.signature] = kinds.get(f.signature, 0) + 1
        head = (f"{self.cases} cases: {self.accepted} read, {self.refused} refused with an evalkit error, "
                f"{len(self.failures)} failures")
        return "\n".join([head] + [f"  {n} x {sig}" for sig, n in sorted(kinds.items(), key=lambda kv: -kv[1])])


def fuzz(n: int, seed: int, workdir: Path, slow_s: float = 10.0, keep: int = 50) -> Report:
    """Run ``n`` mutated rating files through :func:`reports.importers.load_input`.

    Args:
        n: number of cases; seed: random seed (the same seed gives the same cases);
        workdir: scratch folder (failing files kept under ``workdir/failures``);
        slow_s: wall seconds after which a case is interrupted and counted as a hang.
    """
    from reports.importers import load_input

    rng = random.Random(seed)
    seeds = {name: (DATA / name).read_bytes() for name in SEEDS}
    report = Report()
    workdir.mkdir(parents=True, exist_ok=True)
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for i in range(n):
            name = rng.choice(sorted(seeds))
            fmt, opts = SEEDS[name]
            forced = rng.random() < 0.5
            path = workdir / f"case_{name}"
            path.write_bytes(mutate(seeds[name], rng))
            kind = sig = msg = None
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, slow_s)
            try:
                load_input(path, fmt if forced else "auto", **opts)
                report.accepted += 1
            except EvalkitError as exc:
                report.refused += 1
                text = str(exc)
                if "\n" in text or path.name not in text:
                    kind, sig, msg = "message", "refusal not one line naming the file", text[:300]
            except _Timeout:
                kind, sig, msg = "slow", f"slower than {slow_s:g} s", ""
            except Exception as exc:  # noqa: BLE001 - the point: anything else is a finding
                tb = traceback.extract_tb(exc.__traceback__)
                where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb)
                              if "/reports/" in f.filename or "/evalkit/" in f.filename), tb[-1].name if tb else "?")
                kind, sig, msg = "exception", f"{type(exc).__name__} at {where}", str(exc)[:200]
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            report.times.append(time.perf_counter() - t0)
            report.cases += 1
            if kind is not None:
                kept = workdir / "failures" / f"{i:05d}_{'forced' if forced else 'auto'}_{name}"
                if len(report.failures) < keep:
                    kept.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(path, kept)
                report.failures.append(Failure(i, kind, sig, msg, kept))
    finally:
        signal.signal(signal.SIGALRM, old)
    return report
