"""What the default install needs: pyarrow (Parquet output only) is an extra; Pillow is a default
dependency because `evalkit render` composes PNG stills and strips with it."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

from evalkit.cli import main

REPO = Path(__file__).resolve().parents[1]


def _imports(top: str) -> list[str]:
    """``file:line`` of every import of package ``top`` in the shipped code."""
    hits = []
    for pkg in ("evalkit", "webtest", "reports"):
        for f in (REPO / pkg).rglob("*.py"):
            for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                names = ([a.name for a in n.names] if isinstance(n, ast.Import)
                         else [n.module or ""] if isinstance(n, ast.ImportFrom) and not n.level else [])
                if any(x.split(".")[0] == top for x in names):
                    hits.append(f"{f.relative_to(REPO)}:{n.lineno}")
    return hits


def test_pyarrow_is_an_extra_and_pillow_a_dependency_of_the_renderer():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    default = " ".join(project["dependencies"]).lower()
    assert "pyarrow" not in default
    assert any(d.startswith("pyarrow") for d in project["optional-dependencies"]["parquet"])
    test = " ".join(project["optional-dependencies"]["test"]).lower()
    assert "pyarrow" in test
    # Pillow only where the default install uses it: the renderer's stills and strips
    assert "pillow" in default
    assert {h.split(":")[0] for h in _imports("PIL")} <= {"evalkit/cli/render.py", "webtest/render.py"}


def test_shipped_code_imports_pyarrow_only_to_check_for_it():
    assert [h.split(":")[0] for h in _imports("pyarrow")] == ["evalkit/features/batch.py"]


def test_parquet_output_without_pyarrow_names_the_extra_before_any_work(monkeypatch, tmp_path, capsys, cmu_dir):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as on a default install: import fails
    out = tmp_path / "scores.parquet"
    assert main(["score", str(cmu_dir / "16_15.amc"), "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert "evalkit[parquet]" in err and "Traceback" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == []
