"""Seeded mutations of array, parameter and pickle files, read in a child process under a memory
cap (``RLIMIT_AS``) and a time limit: every case must end in a motion or an evalkit error — no
crash, hang, memory blow-up or foreign exception. The CI run is short; ``EVALKIT_FUZZ_CASES``
raises the number of cases."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import textwrap
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

resource = pytest.importorskip("resource", reason="RLIMIT_AS needs the resource module (POSIX)")

CASES = int(os.environ.get("EVALKIT_FUZZ_CASES", "60"))
MEMORY_CAP = 2 * 1024 ** 3  # bytes of address space of the child
CHILD = textwrap.dedent("""
    import json, resource, sys, traceback, warnings
    resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
    warnings.simplefilter("ignore")
    from evalkit.errors import EvalkitError
    from evalkit.motion import load_motion
    for line in sys.stdin:
        case = json.loads(line)
        print(json.dumps({{"start": case["path"]}}), flush=True)
        try:
            load_motion(case["path"], array_fps=case.get("fps"))
            kind = "read"
        except EvalkitError:
            kind = "refused"
        except MemoryError:
            kind = "memory"
        except BaseException as exc:
            kind = "foreign " + type(exc).__name__ + ": " + str(exc)[:200]
        print(json.dumps({{"done": case["path"], "kind": kind}}), flush=True)
""")


def _seeds(folder: Path) -> list[tuple[Path, float | None]]:
    from evalkit.motion.formats import humanml3d as hml
    from evalkit.motion.topology import default_rest_joints

    rng = np.random.default_rng(0)
    t = 24
    j22 = default_rest_joints("smpl22") + [0.0, 0.9, 0.0] + rng.normal(0, 0.01, (t, 22, 3))
    j24 = default_rest_joints("smpl24") + [0.0, 0.9, 0.0] + rng.normal(0, 0.01, (t, 24, 3))
    out = []
    np.save(folder / "joints.npy", j22.astype(np.float32)); out.append((folder / "joints.npy", None))
    np.save(folder / "vecs.npy", hml.joints_to_features(j22).astype(np.float32)); out.append((folder / "vecs.npy", None))
    np.save(folder / "pos24.npy", j24); out.append((folder / "pos24.npy", 30.0))
    np.savez(folder / "pos.npz", positions=j24, fps=np.array(30.0)); out.append((folder / "pos.npz", None))
    np.savez_compressed(folder / "params.npz", poses=rng.normal(0, 0.1, (t, 156)).astype(np.float32),
                        trans=np.zeros((t, 3)), betas=np.zeros(16), mocap_framerate=np.array(60.0),
                        gender=np.array("neutral"))
    out.append((folder / "params.npz", None))
    np.save(folder / "results.npy", {"motion": np.moveaxis(np.stack([j22, j22]), 1, 3).astype(np.float32).swapaxes(1, 2),
                                     "text": ["a", "b"], "lengths": np.array([t, t - 4])}, allow_pickle=True)
    out.append((folder / "results.npy", None))
    return out


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """Byte flips, truncation, inserted or duplicated runs, and hostile header numbers."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        if op < 0.3 and b:
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif op < 0.45:
            del b[rng.randrange(max(len(b), 1)):]
        elif op < 0.6 and b:
            i = rng.randrange(len(b)); k = rng.randint(1, 64)
            b[i:i] = b[i:i + k] * rng.randint(1, 50)
        elif op < 0.8:
            s = bytes(b)
            for old in (b"'shape': (", b"'<f4'", b"'<f8'"):
                if old in s:
                    new = rng.choice([b"'shape': (99999999999, ", b"'shape': (-3, ", b"'|O'", b"'<c16'", b"'V8'"])
                    s = s.replace(old, new if old.startswith(b"'shape'") == new.startswith(b"'shape'") else old, 1)
            b = bytearray(s)
        elif b:
            i = rng.randrange(len(b))
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(b)


def _zip_mutation(path: Path, out: Path, rng: random.Random) -> None:
    """An ``.npz`` with a member dropped, duplicated, or replaced by a small bomb."""
    with zipfile.ZipFile(path) as z:
        members = [(i.filename, z.read(i)) for i in z.infolist()]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        op = rng.randrange(3)
        for k, (name, data) in enumerate(members):
            if op == 0 and k == 0:
                continue
            z.writestr(name, data)
        if op == 1:
            z.writestr(members[-1][0], members[0][1])
        if op == 2:
            hdr = io.BytesIO()
            np.lib.format.write_array_header_1_0(hdr, {"descr": "<f8", "fortran_order": False, "shape": (2 ** 27,)})
            z.writestr(rng.choice([n for n, _ in members] + ["unused.npy"]), hdr.getvalue() + b"\0" * 2 ** 30)


def make_cases(folder: Path, n: int, seed: int = 0) -> list[dict]:
    """``n`` seeded mutations of the seed files, written to ``folder``: ``{"path", "fps"}`` each
    (also used by ``bench/bench_fuzz_arrays.py`` at thousands)."""
    rng = random.Random(seed)
    seeds = _seeds(folder)
    cases = []
    for i in range(n):
        src, fps = seeds[i % len(seeds)]
        dst = folder / f"case{i:05d}{src.suffix}"
        if src.suffix == ".npz" and rng.random() < 0.3:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # a duplicated member is the point
                _zip_mutation(src, dst, rng)
        else:
            dst.write_bytes(_mutate(src.read_bytes(), rng))
        cases.append({"path": str(dst), "fps": fps})
    return cases


def test_mutated_array_files_end_in_a_motion_or_an_evalkit_error(tmp_path):
    cases = make_cases(tmp_path, CASES)
    todo = list(cases)
    failures, counts = [], {}
    while todo:
        proc = subprocess.run([sys.executable, "-c", CHILD.format(cap=MEMORY_CAP)], capture_output=True, text=True,
                              input="".join(json.dumps(c) + "\n" for c in todo), timeout=600,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
        done = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        finished = {d["done"]: d["kind"] for d in done if "done" in d}
        for path, kind in finished.items():
            counts[kind.split(":")[0]] = counts.get(kind.split(":")[0], 0) + 1
            if kind not in ("read", "refused"):
                failures.append(f"{path}: {kind}")
        started = [d["start"] for d in done if "start" in d]
        if proc.returncode != 0:  # the case that started and never finished crashed the child
            crashed = next(p for p in reversed(started) if p not in finished)
            failures.append(f"{crashed}: child ended with {proc.returncode} ({proc.stderr.strip()[-300:]})")
            todo = todo[[c["path"] for c in todo].index(crashed) + 1:]
        else:
            todo = []
    assert not failures, f"{len(failures)} of {CASES} cases failed ({counts}):\n  " + "\n  ".join(failures[:20])
    assert counts.get("refused", 0) > 0
