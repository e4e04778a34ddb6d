"""Import rules and function size of the project's own code, checked on the source (AST).

Every ``import`` and ``from ... import`` of ``evalkit``, ``webtest`` and ``reports`` counts,
including those inside function bodies (only imports under ``if TYPE_CHECKING:``, which never
run, are left out). The layers come from the table in ``docs/ARCHITECTURE.md`` (between
``<!-- layers:begin`` and ``<!-- layers:end -->``), so the documentation and this test cannot
disagree:

* no import circle between modules;
* a module imports only its own unit (package or module of the table) and units of lower layers —
  never a unit of its own layer (siblings such as ``webtest`` and ``reports`` stay independent)
  nor of a higher one;
* ``evalkit.motion`` imports only the standard library, numpy/scipy and the foundation modules
  :data:`MOTION_MAY_IMPORT` (which themselves import only the standard library);
* no library code switches matplotlib's global backend or draws through pyplot;
* no function is longer than :data:`MAX_FUNCTION_LINES` lines unless a ``# long: <reason>``
  comment stands on its ``def`` line or on the line above.

KNOWN_* below list the exceptions that other work in flight removes, each naming who removes
it; the coordinator empties them after merging. An entry that no longer applies only warns.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("evalkit", "webtest", "reports")
ARCHITECTURE = REPO / "docs" / "ARCHITECTURE.md"
MAX_FUNCTION_LINES = 80

#: Project modules ``evalkit.motion`` may import: tiny foundation modules that import only the
#: standard library (checked below), so the motion core still depends on nothing else.
MOTION_MAY_IMPORT = {"evalkit.errors", "evalkit.textfile", "evalkit.atomic"}
#: Third-party packages ``evalkit.motion`` may import (beside the standard library).
MOTION_THIRD_PARTY = {"numpy", "scipy"}
#: Third-party imports of ``evalkit.motion`` allowed for a written reason: (module, package) -> why.
MOTION_THIRD_PARTY_REASONS = {
    ("evalkit.motion.formats.bvh", "pandas"): "pandas' C tokenizer reads the MOTION block several times "
                                      "faster than splitting lines in Python",
    ("evalkit.motion.roles", "yaml"): "role-map files (--roles) are YAML",
    ("evalkit.motion.formats.arrays", "yaml"): "skeleton files of joint-position arrays (--skeleton) are YAML",
}

# --- known exceptions: work in flight removes them; the coordinator empties the lists ----------
#: (importer, imported) module edges that close an import circle today -> who breaks it.
KNOWN_CIRCLES: dict[tuple[str, str], str] = {
}
#: (importer, imported) module edges that run up or sideways between layers today -> who fixes it.
KNOWN_LAYER_SLIPS: dict[tuple[str, str], str] = {
}
#: Modules that switch matplotlib's global backend (``matplotlib.use``) or draw through pyplot's
#: global figure state -> who moves them to ``matplotlib.figure.Figure``.
KNOWN_GLOBAL_STATE: dict[str, str] = {
}
#: Functions over MAX_FUNCTION_LINES without a "# long:" reason -> who splits them.
KNOWN_LONG_FUNCTIONS: dict[str, str] = {
}


# --- the source, parsed -----------------------------------------------------------------------
@lru_cache(maxsize=None)
def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package's __init__)."""
    out = {}
    for pkg in PACKAGES:
        for f in sorted((REPO / pkg).rglob("*.py")):
            parts = list(f.relative_to(REPO).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_pkg else parts)] = (f, is_pkg)
    return out


@lru_cache(maxsize=None)
def parsed(name: str) -> ast.Module:
    f, _ = modules()[name]
    return ast.parse(f.read_text(encoding="utf-8"), filename=str(f))


def _project_module(dotted: str) -> str | None:
    """The project module ``dotted`` names, or the nearest package above it that exists."""
    mods = modules()
    while dotted and dotted not in mods:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def _is_type_checking_block(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): imports for annotations only, never run."""
    if not isinstance(node, ast.If):
        return False
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def imports_of(name: str) -> list[tuple[str, int, bool]]:
    """Every import in module ``name``, anywhere in its body: (target, line, is_project).

    For project imports the target is the module imported (``from pkg import mod`` names the
    module ``pkg.mod``; ``from pkg import func`` names ``pkg``); for others, the top-level
    package name."""
    _, is_pkg = modules()[name]
    here = name if is_pkg else name.rpartition(".")[0]
    typing_only = {id(n) for block in ast.walk(parsed(name)) if _is_type_checking_block(block)
                   for stmt in block.body for n in ast.walk(stmt)}
    out = []
    for node in ast.walk(parsed(name)):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in PACKAGES:
                    out.append((_project_module(alias.name), node.lineno, True))
                else:
                    out.append((top, node.lineno, False))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            top = source.split(".")[0]
            if top not in PACKAGES:
                out.append((top, node.lineno, False))
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                out.append((full if full in modules() else _project_module(source), node.lineno, True))
    return out


@lru_cache(maxsize=None)
def project_edges() -> dict[str, dict[str, int]]:
    """importer -> {imported project module: first line}."""
    edges: dict[str, dict[str, int]] = {}
    for name in modules():
        e = edges.setdefault(name, {})
        for target, line, is_project in imports_of(name):
            if is_project and target != name:
                e.setdefault(target, line)
    return edges


@lru_cache(maxsize=None)
def layer_table() -> dict[str, int]:
    """Unit (package or module) -> layer number, from the table in docs/ARCHITECTURE.md."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    m = re.search(r"<!-- layers:begin.*?-->(.*?)<!-- layers:end -->", text, re.S)
    assert m, f"{ARCHITECTURE}: no layer table between '<!-- layers:begin' and '<!-- layers:end -->'"
    units = {}
    for row in m.group(1).splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].isdigit():
            continue
        for unit in re.findall(r"`([\w.]+)`", cells[1]):
            assert unit not in units, f"{ARCHITECTURE}: {unit} stands in two layers"
            units[unit] = int(cells[0])
    assert units, f"{ARCHITECTURE}: the layer table has no rows"
    return units


def unit_of(module: str) -> str | None:
    """The longest unit of the layer table that is ``module`` or a package above it."""
    table = layer_table()
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in table:
            return ".".join(parts[:n])
    return None


def _known(slips: list[tuple[str, str, str]], known: dict, what: str) -> list[str]:
    """Messages for slips not in ``known``; warn about entries of ``known`` that no longer apply."""
    found = {(a, b) for a, b, _ in slips}
    for key, who in known.items():
        if key not in found:
            warnings.warn(f"{what}: {key} no longer applies (was: {who}); remove it from the list")
    return [msg for a, b, msg in slips if (a, b) not in known]


# --- the rules ----------------------------------------------------------------------------------
def test_every_module_has_a_layer():
    missing = sorted(m for m in modules() if unit_of(m) is None)
    assert not missing, (f"modules in no layer of {ARCHITECTURE.name}'s table: {', '.join(missing)}; "
                         "add their package (or module) to the row of the layer they belong to")


def test_no_import_circles():
    edges = project_edges()
    # Tarjan's strongly connected components, iteratively (the graph has ~300 nodes).
    index, low, on_stack, stack, sccs, counter = {}, {}, set(), [], [], [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on_stack.add(w)
                    work.append((w, iter(edges.get(w, {}))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop(); on_stack.discard(w); comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        sccs.append(sorted(comp))
    slips = []
    for comp in sccs:
        members = set(comp)
        for a in comp:
            for b, line in edges[a].items():
                if b in members:
                    slips.append((a, b, f"{a} (line {line}) -> {b}"))
    problems = _known(slips, KNOWN_CIRCLES, "import circle")
    assert not problems, ("import circles (break each by moving what both need into a lower module):\n  "
                          + "\n  ".join(problems))


def test_no_import_runs_up_or_sideways():
    table = layer_table()
    slips = []
    for a, targets in project_edges().items():
        ua = unit_of(a)
        for b, line in targets.items():
            ub = unit_of(b)
            if ua is None or ub is None or ua == ub:
                continue
            if table[ub] >= table[ua]:
                how = "up" if table[ub] > table[ua] else "sideways"
                slips.append((a, b, f"{a} (line {line}) -> {b}: runs {how} from layer {table[ua]} "
                                    f"({ua}) to layer {table[ub]} ({ub})"))
    problems = _known(slips, KNOWN_LAYER_SLIPS, "layer slip")
    assert not problems, ("imports that break the layers of docs/ARCHITECTURE.md:\n  "
                          + "\n  ".join(problems))


def test_webtest_and_reports_do_not_import_each_other():
    def between(a: str, b: str) -> bool:
        return {a.split(".")[0], b.split(".")[0]} == {"webtest", "reports"}

    slips = [(a, b, f"{a} (line {line}) -> {b}") for a, t in project_edges().items() for b, line in t.items()
             if between(a, b)]
    known = {k: v for k, v in KNOWN_LAYER_SLIPS.items() if between(*k)}
    problems = _known(slips, known, "webtest/reports")
    assert not problems, "webtest and reports must not import each other:\n  " + "\n  ".join(problems)


def _stdlib(top: str) -> bool:
    return top in sys.stdlib_module_names or top == "__future__"


def test_motion_imports_only_stdlib_numpy_scipy_and_the_foundation():
    bad = []
    for name in modules():
        if not (name == "evalkit.motion" or name.startswith("evalkit.motion.")):
            continue
        for target, line, is_project in imports_of(name):
            if is_project:
                ok = target.startswith("evalkit.motion") or target in MOTION_MAY_IMPORT
            else:
                ok = _stdlib(target) or target in MOTION_THIRD_PARTY or (name, target) in MOTION_THIRD_PARTY_REASONS
            if not ok:
                bad.append(f"{name} (line {line}) imports {target}")
    assert not bad, "evalkit.motion must import only the standard library, numpy/scipy and " \
                    f"{', '.join(sorted(MOTION_MAY_IMPORT))}:\n  " + "\n  ".join(bad)


def test_foundation_modules_motion_uses_import_only_the_standard_library():
    bad = [f"{name} (line {line}) imports {target}"
           for name in MOTION_MAY_IMPORT for target, line, is_project in imports_of(name)
           if not (target in MOTION_MAY_IMPORT if is_project else _stdlib(target))]
    assert not bad, "\n".join(bad)


def test_no_module_touches_matplotlibs_global_state():
    """Library code draws on ``matplotlib.figure.Figure`` objects: ``matplotlib.use`` would switch a
    notebook user's backend, and pyplot keeps figures in global state."""
    slips = []
    for name in modules():
        for target, line, is_project in imports_of(name):
            if not is_project and target == "matplotlib":
                for node in ast.walk(parsed(name)):
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("matplotlib.pyplot") \
                            or isinstance(node, ast.Import) and any(a.name == "matplotlib.pyplot" for a in node.names) \
                            or isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr == "use" and isinstance(node.func.value, ast.Name) \
                            and node.func.value.id == "matplotlib":
                        slips.append((name, name, f"{name} (line {node.lineno})"))
                break
    problems = sorted(set(_known(slips, {(k, k): v for k, v in KNOWN_GLOBAL_STATE.items()}, "matplotlib state")))
    assert not problems, "matplotlib.use or pyplot in library code:\n  " + "\n  ".join(problems)


def long_functions() -> list[tuple[str, int, str]]:
    """(module:qualified name, lines, file:line) of every function over the limit without a reason."""
    out = []
    for name, (f, _) in modules().items():
        lines = f.read_text(encoding="utf-8").splitlines()

        def visit(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    qual = f"{prefix}{child.name}"
                    if not isinstance(child, ast.ClassDef):
                        n = child.end_lineno - child.lineno + 1
                        near = lines[max(child.lineno - 2, 0): child.lineno]
                        if n > MAX_FUNCTION_LINES and not any("# long:" in s for s in near):
                            out.append((f"{name}:{qual}", n, f"{f.relative_to(REPO)}:{child.lineno}"))
                    visit(child, qual + ".")
        visit(parsed(name), "")
    return out


def test_no_function_over_80_lines_without_a_reason():
    slips = [(q, q, f"{where} {q} has {n} lines") for q, n, where in long_functions()]
    problems = _known([(a, b, m) for a, b, m in slips], {(k, k): v for k, v in KNOWN_LONG_FUNCTIONS.items()},
                      "long function")
    assert not problems, (f"functions over {MAX_FUNCTION_LINES} lines: split them into functions whose "
                          "names say what they compute, or write '# long: <reason>' on the line above "
                          "the def:\n  " + "\n  ".join(problems))


def test_the_rules_catch_what_they_forbid(tmp_path):
    """The checks themselves: a module-level circle and an import inside a function are seen."""
    src = ("import os\nfrom evalkit.motion import load_motion\n\n"
           "def f():\n    from webtest.db import Database\n    return Database\n")
    tree = ast.parse(src)
    found = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [getattr(n, "module", None) for n in found] == [None, "evalkit.motion", "webtest.db"]
    assert unit_of("evalkit.motion.formats.bvh") == "evalkit.motion"
    assert layer_table()["evalkit.motion"] < layer_table()["evalkit.features"] < layer_table()["evalkit.cli"]
    assert layer_table()["webtest"] == layer_table()["reports"]


def test_no_private_name_is_imported_from_another_unit():
    """``from X import _name`` only within X's own unit of the layer table: a private name is a
    module's own business; another package uses its public names (docs/ARCHITECTURE.md)."""
    slips = []
    for name in modules():
        for node in ast.walk(parsed(name)):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            source = _project_module(node.module)
            if source is None or unit_of(source) == unit_of(name):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    slips.append(f"{name}:{node.lineno} imports {node.module}.{alias.name}")
    assert not slips, "private names imported across units:\n  " + "\n  ".join(slips)


@lru_cache(maxsize=None)
def public_modules() -> dict[str, set[str]]:
    """Unit -> its modules other units may import, from docs/ARCHITECTURE.md."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    m = re.search(r"<!-- public-modules:begin.*?-->(.*?)<!-- public-modules:end -->", text, re.S)
    assert m, f"{ARCHITECTURE}: no table between '<!-- public-modules:begin' and '<!-- public-modules:end -->'"
    out: dict[str, set[str]] = {}
    for row in m.group(1).splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        units = re.findall(r"`([\w.]+)`", cells[0]) if cells else []
        if len(cells) < 2 or len(units) != 1:
            continue
        out[units[0]] = {f"{units[0]}.{name}" for name in re.findall(r"`([\w.]+)`", cells[1])}
    assert out, f"{ARCHITECTURE}: the public-modules table has no rows"
    return out


def test_other_units_import_only_a_units_face_and_its_public_modules():
    """A module of a unit not listed as public in docs/ARCHITECTURE.md is private to the unit:
    another unit importing it fails here (list it there, or import the face instead)."""
    table = public_modules()
    for unit, names in table.items():
        assert unit in layer_table(), f"public-modules table: {unit} is not a unit of the layer table"
        missing = sorted(n for n in names if n not in modules())
        assert not missing, f"public-modules table names modules that do not exist: {missing}"
    slips = private_module_slips(project_edges())
    assert not slips, "private modules imported by another unit:\n  " + "\n  ".join(slips)
    # the rule catches what it forbids: reports reaching into a private module of features
    assert private_module_slips({"reports.objective": {"evalkit.features.kinematics": 3}}) == [
        "reports.objective:3 imports evalkit.features.kinematics, private to evalkit.features"]
    assert private_module_slips({"reports.objective": {"evalkit.features.score": 3}}) == []


def private_module_slips(edges: dict[str, dict[str, int]]) -> list[str]:
    """Imports in ``edges`` (importer -> {module: line}) of a module another unit keeps private."""
    table = public_modules()
    slips = []
    for name, targets in edges.items():
        for target, line in targets.items():
            unit = unit_of(target)
            if unit is None or unit == unit_of(name) or target == unit:
                continue
            if target not in table.get(unit, set()):
                slips.append(f"{name}:{line} imports {target}, private to {unit}")
    return slips
