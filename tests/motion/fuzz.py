"""A seeded mutation fuzzer for motion readers, shared by the tests and ``bench/bench_fuzz_readers.py``.

Any reader can be fuzzed: give :func:`fuzz` a function that loads one file (and may go on to
score it) and seed files of real capture. Each case copies the seed set into a scratch folder,
mutates one of its files with a few text-aware mutations (numbers made hostile, tokens and lines
dropped, duplicated, swapped or replaced by keywords, bytes and non-ASCII text inserted, files
truncated, hierarchies nested thousands deep or thousands wide) and calls the reader. The only
acceptable outcomes are a result or an :class:`~evalkit.errors.EvalkitError`; anything else, and
any case slower than ``slow_s``, is reported with the mutated file kept for replay.

To add a new format: ``fuzz(lambda p: load_motion(p), [FuzzSeed(main=Path("x.npz"))], ...)`` —
the text mutations apply to any text format; binary files get byte-level mutations.
"""

from __future__ import annotations

import random
import shutil
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from evalkit.errors import EvalkitError

HOSTILE_NUMBERS = ("0", "-0", "1", "-1", "1e300", "-1e300", "5e-324", "1e-300", "nan", "inf", "-inf",
                   "1e7", "0.001", "99999999999999999999999", "-2147483649", "1e8", "3.4e38", "", "0x10",
                   "1,5", "١٢")
KEYWORDS = ("ROOT", "JOINT", "End", "Site", "{", "}", "OFFSET", "CHANNELS", "MOTION", "Frames:", "Frame",
            "Time:", "Xrotation", "Zposition", "begin", "end", "name", "direction", "length", "axis",
            "dof", ":root", ":bonedata", ":hierarchy", ":units", ":DEGREES", ":RADIANS", "root", "XXX", "ABC",
            "XY", "rx", "l", "limits", "(-180", "180)", "#", ":FORCE-ALL-JOINTS-BE-3DOF")
NOISE = ("é", "\x00", "\ufeff", "\u2028", "\r", "\t", "\x85", "字", "\ud7ff", "🙂")


@dataclass(frozen=True)
class FuzzSeed:
    """A seed: the file the reader is given (``main``) and files it reads beside it (an ASF)."""

    main: Path
    companions: tuple[Path, ...] = ()


@dataclass
class FuzzFailure:
    case: int
    kind: str  # "exception" or "slow"
    signature: str  # exception type and the place it was raised, or the time
    message: str
    file: Path


@dataclass
class FuzzReport:
    cases: int = 0
    accepted: int = 0
    refused: int = 0  # raised an evalkit error, as they should for bad input
    failures: list[FuzzFailure] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # CPU seconds per case
    wall: list[float] = field(default_factory=list)  # wall seconds per case

    def signatures(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.failures:
            out[f.signature] = out.get(f.signature, 0) + 1
        return out

    def summary(self) -> str:
        worst = max(self.times, default=0.0)
        s = (f"{self.cases} cases: {self.accepted} read, {self.refused} refused with an evalkit error, "
             f"{len(self.failures)} failures; slowest {worst:.2f} s CPU ({max(self.wall, default=0.0):.2f} s wall)")
        for sig, n in sorted(self.signatures().items(), key=lambda kv: -kv[1]):
            s += f"\n  {n} x {sig}"
        return s


# -- mutations (each takes and returns text) ---------------------------------------------------
def _tokens(text: str) -> list[tuple[int, int]]:
    out, i, n = [], 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        j = i
        while j < n and not text[j].isspace():
            j += 1
        if j > i:
            out.append((i, j))
        i = j
    return out


def _pick_token(text: str, rng: random.Random, numeric: bool | None = None) -> tuple[int, int] | None:
    # sample positions rather than tokenising a whole large file
    for _ in range(40):
        k = rng.randrange(max(len(text), 1))
        a = k
        while a > 0 and not text[a - 1].isspace():
            a -= 1
        b = k
        while b < len(text) and not text[b].isspace():
            b += 1
        if b <= a:
            continue
        tok = text[a:b]
        is_num = tok.lstrip("-+").replace(".", "", 1).replace("e-", "", 1).replace("e", "", 1).isdigit()
        if numeric is None or numeric == is_num:
            return a, b
    return None


def _in_head(text: str, rng: random.Random) -> int:
    """A position biased towards the header/hierarchy (where structure lives)."""
    cut = text.find("MOTION")
    if cut < 0:
        cut = text.find(":hierarchy")
    limit = cut if cut > 0 and rng.random() < 0.7 else len(text)
    return rng.randrange(max(limit, 1))


def mut_number(text: str, rng: random.Random) -> str:
    t = _pick_token(text, rng, numeric=True) if rng.random() < 0.5 else None
    if t is None:  # header numbers: Frames, Frame Time, OFFSET, CHANNELS count, length...
        for key in ("Frames:", "Time:", "OFFSET", "CHANNELS", "length", "direction", "axis", "orientation"):
            i = text.find(key, _in_head(text, rng) if rng.random() < 0.5 else 0)
            if i >= 0 and rng.random() < 0.4:
                tb = _tokens(text[i:i + 80])
                if len(tb) > 1:
                    a, b = tb[rng.randrange(1, min(len(tb), 4))]
                    t = (i + a, i + b)
                    break
    if t is None:
        return text
    a, b = t
    return text[:a] + rng.choice(HOSTILE_NUMBERS) + text[b:]


def mut_delete_token(text: str, rng: random.Random) -> str:
    t = _pick_token(text[: max(1, _in_head(text, rng) + 200)], rng)
    return text if t is None else text[:t[0]] + text[t[1]:]


def mut_keyword(text: str, rng: random.Random) -> str:
    t = _pick_token(text, rng, numeric=False) or _pick_token(text, rng)
    return text if t is None else text[:t[0]] + rng.choice(KEYWORDS) + text[t[1]:]


def _line_span(text: str, pos: int) -> tuple[int, int]:
    a = text.rfind("\n", 0, pos) + 1
    b = text.find("\n", pos)
    return a, (len(text) if b < 0 else b + 1)


def mut_line(text: str, rng: random.Random) -> str:
    a, b = _line_span(text, _in_head(text, rng))
    op = rng.randrange(4)
    if op == 0:
        return text[:a] + text[b:]  # delete
    if op == 1:
        return text[:b] + text[a:b] * rng.choice((1, 2, 50)) + text[b:]  # duplicate
    c, d = _line_span(text, rng.randrange(max(len(text), 1)))
    if op == 2 and c > b:  # swap two lines
        return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    return text[:a] + text[a:b].rstrip("\n") + " " + text[a:b]  # values appended


def mut_noise(text: str, rng: random.Random) -> str:
    k = _in_head(text, rng)
    return text[:k] + "".join(rng.choice(NOISE) for _ in range(rng.randint(1, 4))) + text[k:]


def mut_truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randrange(max(len(text), 1))]


def mut_bvh_structure(text: str, rng: random.Random) -> str:
    """Replace a BVH's hierarchy with a chain or a fan of up to 20,000 joints (the frame data
    then disagrees, or is regenerated with one rotation channel per joint)."""
    if "HIERARCHY" not in text:
        return text
    n = rng.choice((50, 300, 1000, 3000, 20000))
    deep = rng.random() < 0.5
    parts = ["HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"]
    for k in range(n):
        parts.append(f"JOINT j{k}\n{{\nOFFSET 0 {rng.choice(('1', '0.5', '-1'))} 0\nCHANNELS 1 Zrotation\n")
        if not deep:
            parts.append("}\n")
    parts.append("}\n" * (n if deep else 0) + "}\n")
    frames = rng.choice((1, 3, 20))
    row = " ".join(["0"] * (6 + n))
    motion = f"MOTION\nFrames: {frames}\nFrame Time: {rng.choice(('0.0083333', '1.0', '5e-324', '1e-7'))}\n"
    return "".join(parts) + motion + (row + "\n") * frames


MUTATIONS: Sequence[Callable[[str, random.Random], str]] = (
    mut_number, mut_number, mut_number, mut_delete_token, mut_keyword, mut_line, mut_line, mut_noise, mut_truncate,
)


def mutate(text: str, rng: random.Random, structural: bool = False) -> str:
    """One to three random mutations of ``text``; ``structural`` also allows rebuilding a BVH
    hierarchy thousands of joints deep or wide."""
    if structural and rng.random() < 0.03:
        return mut_bvh_structure(text, rng)
    for _ in range(rng.choice((1, 1, 2, 3))):
        text = rng.choice(MUTATIONS)(text, rng)
    return text


def fuzz(load: Callable[[Path], Any], seeds: Sequence[FuzzSeed], n: int, seed: int, workdir: Path,
         slow_s: float = 5.0, keep: int = 50, progress: Callable[[int], None] | None = None) -> FuzzReport:
    """Run ``n`` mutated cases through ``load``.

    Args:
        load: reads (and may process) one file; must return or raise an ``EvalkitError``.
        seeds: real files to mutate; one of each case's files (main or companion) is mutated.
        seed: random seed (the same seed gives the same cases).
        workdir: scratch folder; failing cases are kept under ``workdir/failures``.
        slow_s: a case taking more than this many CPU seconds is a failure.
        keep: at most this many failing files are kept.
    """
    rng = random.Random(seed)
    texts = {p: p.read_bytes().decode("utf-8", "surrogateescape") for s in seeds for p in (s.main, *s.companions)}
    report = FuzzReport()
    fails = workdir / "failures"
    case_dir = workdir / "case"
    for i in range(n):
        s = rng.choice(seeds)
        if case_dir.exists():
            shutil.rmtree(case_dir)
        case_dir.mkdir(parents=True)
        files = (s.main, *s.companions)
        target = rng.choice(files)
        for p in files:
            text = texts[p]
            if p == target:
                text = mutate(text, rng, structural=p.suffix.lower() == ".bvh")
            (case_dir / p.name).write_bytes(text.encode("utf-8", "surrogateescape"))
        main = case_dir / s.main.name
        t0, w0 = time.process_time(), time.perf_counter()
        kind = sig = msg = None
        try:
            load(main)
            report.accepted += 1
        except EvalkitError:
            report.refused += 1
        except Exception as exc:  # noqa: BLE001 - the point: anything else is a finding
            tb = traceback.extract_tb(exc.__traceback__)
            where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb) if "evalkit" in f.filename),
                         tb[-1].name if tb else "?")
            kind, sig, msg = "exception", f"{type(exc).__name__} at {where}", str(exc)[:200]
        dt = time.process_time() - t0  # CPU seconds: the machine may be shared
        report.wall.append(time.perf_counter() - w0)
        report.times.append(dt)
        report.cases += 1
        if kind is None and dt > slow_s:
            kind, sig, msg = "slow", f"slower than {slow_s:g} s", f"{dt:.1f} s"
        if kind is not None:
            kept = fails / f"{i:05d}"
            if len(report.failures) < keep:
                shutil.copytree(case_dir, kept, dirs_exist_ok=True)
            report.failures.append(FuzzFailure(i, kind, sig, msg, kept / s.main.name))
        if progress:
            progress(i + 1)
    return report


def shortened_seeds(out: Path, bvh: Sequence[Path] = (), amc: Sequence[tuple[Path, Path]] = (),
                    frames: int = 30) -> list[FuzzSeed]:
    """Copies of real clips cut to their first ``frames`` frames (small seeds keep each case fast)."""
    out.mkdir(parents=True, exist_ok=True)
    seeds = []
    for p in bvh:
        text = p.read_text(errors="replace")
        head, _, data = text.partition("MOTION")
        lines = data.strip().splitlines()
        body = [ln for ln in lines[2:] if ln.strip()][:frames]
        q = out / p.name
        q.write_text(f"{head}MOTION\nFrames: {len(body)}\n{lines[1]}\n" + "\n".join(body) + "\n")
        seeds.append(FuzzSeed(q))
    for asf, amc_path in amc:
        lines = amc_path.read_text(errors="replace").splitlines()
        starts = [i for i, ln in enumerate(lines) if ln.strip().isdigit()]
        cut = starts[frames] if len(starts) > frames else len(lines)
        q = out / amc_path.name
        q.write_text("\n".join(lines[:cut]) + "\n")
        a = out / asf.name
        shutil.copyfile(asf, a)
        seeds.append(FuzzSeed(q, (a,)))
    return seeds
