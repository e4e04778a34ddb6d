"""Design cells: balance of conditions and sides, quality checks, determinism."""

from __future__ import annotations

from collections import Counter

import yaml

from tests.webtest.helpers import BASE_STUDY, deep_update
from webtest.design import balance_report, build_cells, cell_from_json, cells_to_json, design_hash
from webtest.study import load_study

THREE_SYSTEMS = {
    "stimuli": BASE_STUDY["stimuli"] + [
        {"id": "walk.tw", "item": "walk", "system": "timewarp", "file": "sample:cmu/16_15.amc", "trim": [0.0, 0.2],
         "transform": [{"timewarp": {"amount": 0.5, "period_s": 0.5}}]},
        {"id": "run.tw", "item": "run", "system": "timewarp", "file": "sample:cmu/09_06-run.amc", "trim": [0.0, 0.2],
         "transform": [{"timewarp": {"amount": 0.5, "period_s": 0.5}}]},
    ],
    "pairs": [["original", "jitter"], ["original", "timewarp"], ["jitter", "timewarp"]],
}


def _study(tmp_path, **changes):
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(deep_update(BASE_STUDY, changes)))
    return load_study(tmp_path)


def _main(cell):
    return [t for t in cell if t.kind == "main"]


def test_full_design_shows_every_condition_to_everyone_with_sides_balanced(tmp_path):
    study = _study(tmp_path, **THREE_SYSTEMS, design={"method": "full", "participants": 4})
    cells = build_cells(study)
    assert len(cells) == 4
    for cell in cells:
        conds = {(t.item, t.system_a, t.system_b) for t in _main(cell)}
        assert len(conds) == 6 == len(_main(cell))
    rep = balance_report(study, cells)
    assert rep["balanced"] and rep["condition_side_min"] == rep["condition_side_max"] == 2


def test_latin_square_each_item_once_pairs_rotate(tmp_path):
    study = _study(tmp_path, **THREE_SYSTEMS, design={"method": "latin_square", "participants": 6})
    cells = build_cells(study)
    for cell in cells:
        main = _main(cell)
        assert sorted(t.item for t in main) == ["run", "walk"]
    # over 3 cells every (item, pair) appears once; over 6 once per side
    counts = Counter((t.item, t.system_a, t.system_b, t.side_shown) for c in cells for t in _main(c))
    assert len(counts) == 2 * 3 * 2 and set(counts.values()) == {1}
    assert balance_report(study, cells)["balanced"]


def test_balanced_incomplete_blocks_cover_conditions_evenly(tmp_path):
    study = _study(tmp_path, **THREE_SYSTEMS,
                   design={"method": "balanced_incomplete", "participants": 6, "trials_per_participant": 4})
    cells = build_cells(study)
    assert all(len(_main(c)) == 4 for c in cells)
    for c in cells:  # no condition twice within a participant
        assert len({(t.item, t.system_a, t.system_b) for t in _main(c)}) == 4
    rep = balance_report(study, cells)  # 6 cells x 4 = 24 = 6 conditions x 2 sides x 2
    assert rep["balanced"] and rep["condition_side_min"] == 2


def test_unbalanced_design_is_reported(tmp_path):
    study = _study(tmp_path, **THREE_SYSTEMS, design={"method": "full", "participants": 3})
    assert not balance_report(study)["balanced"]


def test_quality_checks_are_added_and_well_formed(tmp_path):
    study = _study(tmp_path, quality={"gold": {"count": 2, "tolerance": 1}, "attention": {"count": 1},
                                      "repeat": {"count": 1, "tolerance": 2}},
                   training=[{"item": "run", "systems": ["original", "jitter"]}],
                   design={"participants": 8})
    for cell in build_cells(study):
        kinds = Counter(t.kind for t in cell)
        assert kinds == {"training": 1, "main": 2, "gold": 2, "attention": 1, "repeat": 1}
        assert cell[0].kind == "training"
        assert cell[1].kind not in ("gold", "attention", "repeat")  # checks never come first
        for i, t in enumerate(cell):
            if t.kind == "gold":
                assert t.stim_a == t.stim_b and t.system_a == t.system_b and t.expected == 0.0 and t.tolerance == 1
            if t.kind == "attention":
                assert t.expected in (-3.0, 3.0)
            if t.kind == "repeat":
                ref = cell[t.ref]
                assert ref.kind == "main" and t.ref < i
                assert (ref.item, ref.system_a, ref.system_b) == (t.item, t.system_a, t.system_b)
                assert ref.side_shown != t.side_shown and t.tolerance == 2


def test_design_is_deterministic_and_seeded(tmp_path):
    a = build_cells(_study(tmp_path, design={"participants": 6, "seed": 1}))
    b = build_cells(_study(tmp_path, design={"participants": 6, "seed": 1}))
    c = build_cells(_study(tmp_path, design={"participants": 6, "seed": 2}))
    assert design_hash(a) == design_hash(b)
    assert design_hash(a) != design_hash(c)
    assert [cell_from_json(t) for t in cells_to_json(a)] == a


def test_left_right_stimuli_follow_side_shown(tmp_path):
    for cell in build_cells(_study(tmp_path)):
        for t in cell:
            assert (t.stim_left, t.stim_right) == ((t.stim_a, t.stim_b) if t.side_shown == "left" else (t.stim_b, t.stim_a))


def test_example_study_design_is_balanced():
    from tests.webtest.helpers import EXAMPLE

    rep = balance_report(load_study(EXAMPLE))
    assert rep["balanced"] and rep["cells"] == 12 and rep["main_per_cell"] == 10
    assert (rep["pages_per_cell"], rep["practice_per_cell"], rep["rated_per_cell"], rep["checks_per_cell"]) == (14, 1, 13, 3)
