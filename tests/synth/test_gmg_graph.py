"""GMG gesture database and graph: GPs from real gesture capture, posture distance, E1/E2 edges,
largest SCC and the per-threshold statistics (thesis Table 4.2)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from evalkit.errors import InputError
from evalkit.gesture import analyze_gestures, gesture_database
from evalkit.motion import load_motion
from evalkit.synth.gmg import (
    CMU_NOTE,
    DatabaseConfig,
    build_gesture_database,
    build_gmg,
    cmu_gesture_database,
    gmg_joint_weights,
    gmg_statistics,
    posture_distance,
    statistics_latex,
    write_statistics,
)
from evalkit.synth.gmg.graph import boundary_postures, e1_pairs
from tests.conftest import shared_data


@pytest.fixture(scope="module")
def bandai_dir():
    return shared_data("gesture", "bandai-namco")


@pytest.fixture(scope="module")
def bandai_db(bandai_dir):
    return build_gesture_database([bandai_dir])


@pytest.fixture(scope="module")
def cmu_db():
    return cmu_gesture_database()


# -- database ------------------------------------------------------------------------------
def test_database_gps_have_one_apex_and_gsi_inside(bandai_db):
    db = bandai_db
    assert len(db) > 50 and len(db.recordings) == 26
    assert len(set(db.recording_index)) == 24  # two clips (bow angry/sad) have no gesture phrase
    for p, st in zip(db.phrases, db.strokes):
        assert p.start_frame < p.apex_frame < p.end_frame and p.stroke_start < p.apex_frame
        assert st.start == p.stroke_start and abs(st.apex_frame - p.apex_frame) < 1e-9
        assert 0.0 <= p.gsi <= 1.0 and p.n_strokes == 1
    # trimming bounds how far a GP reaches from its apex
    assert db.pre_s.max() <= db.config.max_pre_s + 1e-9
    assert db.post_s.max() <= db.config.max_post_s + 1.0 / db.fps + 1e-9


def test_database_stroke_gsi_equals_gesture_analysis(bandai_db, bandai_dir):
    """Each GP's GSI is the gesture package's GSI of that stroke in its recording."""
    path = bandai_dir / "dataset-2_wave-left-hand_normal_001.bvh"
    g = analyze_gestures(load_motion(path))
    mine = [p for p in bandai_db.phrases if p.clip == str(path)]
    assert len(mine) == len(g.strokes) >= 10
    assert np.allclose(sorted(p.gsi for p in mine), sorted(s.gsi for s in g.strokes))
    # consecutive GPs cut from one phrase follow each other without a gap
    mine = sorted(mine, key=lambda p: p.start_frame)
    assert all(a.end_frame == b.start_frame for a, b in zip(mine[:-1], mine[1:]))


def test_gsi_at_speed_matches_analysis_of_the_time_scaled_clip(bandai_db, bandai_dir):
    """gsi_at(k) predicts what the gesture analysis measures on the clip played k times faster."""
    path = bandai_dir / "dataset-1_byebye_tired_001.bvh"
    m = load_motion(path)
    ids = [i for i, p in enumerate(bandai_db.phrases) if p.clip == str(path)]
    assert np.allclose(bandai_db.gsi_at(1.0)[ids], [bandai_db.phrases[i].gsi for i in ids])
    for k in (0.7, 1.4):
        fast = analyze_gestures(m.with_(fps=m.fps * k))  # the same frames, k times as fast
        measured = {s.start_frame: s.gsi for s in fast.strokes}
        predicted = bandai_db.gsi_at(k)
        common = [i for i in ids if bandai_db.phrases[i].stroke_start in measured]
        assert len(common) >= len(ids) // 2
        err = [abs(predicted[i] - measured[bandai_db.phrases[i].stroke_start]) for i in common]
        assert np.median(err) < 0.05, err
    g = bandai_db.gsi_at([0.67, 1.0, 1.5])
    assert g.shape == (len(bandai_db), 3)
    assert np.all(np.diff(g, axis=1) >= -1e-9)  # faster strokes are never weaker
    assert (g[:, 2] - g[:, 0]).mean() > 0.1


def test_phrase_split_matches_gesture_database(bandai_db, bandai_dir):
    db = build_gesture_database([bandai_dir], DatabaseConfig(split="phrases", max_pre_s=100, max_post_s=100,
                                                             max_other_speed=None))
    ref = gesture_database([bandai_dir])
    assert len(db) == len(ref) < len(bandai_db)
    assert [(p.start_frame, p.end_frame, p.apex_frame, p.gsi) for p in db.phrases] == \
        [(p.start_frame, p.end_frame, p.apex_frame, p.gsi) for p in ref]


def test_one_handed_gps_hold_no_faster_stroke_of_the_other_hand(cmu_db, bandai_db):
    """A one-handed GP ends before the other hand moves faster than its stroke (it would be
    found as the stroke wherever the GP is played: on the CMU capture the right hand starts a
    fast stroke while the left one's weak stroke retracts); the Bandai Namco graph keeps its 91
    connected GPs."""
    for db in (cmu_db, bandai_db):
        limit = db.config.max_other_speed
        for p, s in zip(db.phrases, db.strokes):
            if s.hand not in ("left", "right"):
                continue
            tr = db.trajectories[p.clip]
            other = tr.right_speed if s.hand == "left" else tr.left_speed
            a1 = int(np.ceil(p.apex_frame + db.config.min_post_s * tr.fps))
            assert a1 >= p.end_frame or other[a1:p.end_frame].max() <= limit * tr.speed[s.peak_frame] + 1e-9
    assert build_gmg(bandai_db).core.n_nodes == 91


def test_gps_where_a_hand_touches_the_head_are_left_out(cmu_db, bandai_db):
    """A hand brought to the face and held there (CMU 131_03, 4.7-5.5 s) is a self-adaptor,
    not a co-speech gesture: with the default ``self_touch_m`` no GP has a wrist within 0.25 m
    of the head (1.70 m body) at its apex or for most of its frames; without the rule the CMU
    capture has such GPs. No Bandai Namco GP is touched by it (100 GPs)."""
    from evalkit.synth.gmg.db import touches_head

    loose = cmu_gesture_database(DatabaseConfig(self_touch_m=None))
    touching = [p for p in loose.phrases if touches_head(loose.recordings[p.clip], loose.roles, p)]
    assert len(touching) >= 1 and len(cmu_db) == len(loose) - len(touching)
    for db in (cmu_db, bandai_db):
        assert not any(touches_head(db.recordings[p.clip], db.roles, p) for p in db.phrases)
    assert len(bandai_db) == 100
    # the rule measures what it says: the wrist-head distance on a 1.70 m body at the apex
    p = touching[0]
    m = loose.recordings[p.clip]
    from evalkit.motion import skeleton_height

    pos = m.positions[int(round(p.apex_frame))]
    d = min(np.linalg.norm(pos[loose.roles[w]] - pos[loose.roles["head"]]) for w in ("left_wrist", "right_wrist"))
    frames = m.positions[p.start_frame:p.end_frame]
    near = np.min([np.linalg.norm(frames[:, loose.roles[w]] - frames[:, loose.roles["head"]], axis=1) for w in ("left_wrist", "right_wrist")], axis=0)
    scale = 1.70 / skeleton_height(m)
    assert d * scale < 0.25 or np.mean(near * scale < 0.25) > 0.5
    with pytest.raises(InputError, match="self_touch_m"):
        DatabaseConfig(self_touch_m=-1)


def test_cmu_fallback_database_says_what_it_is(cmu_db):
    assert cmu_db.note == CMU_NOTE and "non-conversational" in cmu_db.summary()["note"]
    assert len(cmu_db) >= 5 and cmu_db.fps == 120.0
    assert build_gmg(cmu_db).core.n_nodes >= 5


def test_database_errors(cmu_dir):
    with pytest.raises(InputError, match="131_01.bvh.*skeleton"):
        build_gesture_database([cmu_dir / "01_01.bvh", cmu_dir / "131_01.bvh"])
    still = load_motion(cmu_dir / "131_01.bvh")
    still = still.with_(rotations=np.repeat(still.rotations[:1], 200, 0), translations=np.repeat(still.translations[:1], 200, 0))
    with pytest.raises(InputError, match="no gesture phrase"):
        build_gesture_database([still])
    with pytest.raises(InputError, match="split"):
        DatabaseConfig(split="words")


# -- graph ---------------------------------------------------------------------------------
def test_thesis_weights_pick_spine_neck_arms_forearms(bandai_db, cmu_db):
    w = gmg_joint_weights(bandai_db.skeleton)
    names = {bandai_db.skeleton.names[j] for j in np.flatnonzero(w)}
    assert names == {"Spine", "Chest", "Neck", "UpperArm_L", "UpperArm_R", "LowerArm_L", "LowerArm_R"}
    w = gmg_joint_weights(cmu_db.skeleton)
    names = {cmu_db.skeleton.names[j] for j in np.flatnonzero(w)}
    assert names == {"lowerback", "Chest", "Chest2", "lowerneck", "Neck", "LeftShoulder", "RightShoulder", "LeftElbow", "RightElbow"}
    w = gmg_joint_weights(bandai_db.skeleton, {"Neck": 2.0, "Head": 1.0})
    assert w.sum() == 3.0
    with pytest.raises(InputError):
        gmg_joint_weights(bandai_db.skeleton, {"Nose": 1.0})


def test_posture_distance_is_weighted_rms_angle():
    rng = np.random.default_rng(0)
    a = Rotation.random(5, random_state=1).as_quat()[None]  # (1, 5 joints, 4)
    turn = np.array([0.3, 0.0, 0.0, 0.5, 0.0])  # radians per joint
    axes = rng.normal(size=(5, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    b = (Rotation.from_rotvec(axes * turn[:, None]) * Rotation.from_quat(a[0])).as_quat()[None]
    w = np.array([1.0, 1.0, 0.0, 2.0, 0.0])
    expect = np.sqrt((1 * 0.3**2 + 2 * 0.5**2) / 4.0)
    assert posture_distance(a, b, w)[0, 0] == pytest.approx(expect, abs=1e-9)
    assert posture_distance(a, -a, w)[0, 0] == pytest.approx(0.0, abs=1e-6)  # q and -q: same rotation


def test_edges_are_e1_chains_plus_e2_under_threshold(bandai_db):
    db = bandai_db
    gmg = build_gmg(db, threshold=0.5)
    e = gmg.graph.edges
    w = gmg_joint_weights(db.skeleton)
    first, last = boundary_postures(db)
    # brute force E2 with scipy rotations
    keep = np.flatnonzero(w)
    ang = np.zeros((len(db), len(db)))
    for j in keep:
        ra = Rotation.from_quat(last[:, j])
        rb = Rotation.from_quat(first[:, j])
        for a in range(len(db)):
            ang[a] += (rb * ra[a].inv()).magnitude() ** 2
    dist = np.sqrt(ang / len(keep))
    assert np.allclose(gmg.distance, dist, atol=1e-6)
    e1 = {(a, b) for a, b, _ in e1_pairs(db)}
    assert set(zip(e.src[e.kind == "E1"], e.dst[e.kind == "E1"])) == e1
    want_e2 = {(a, b) for a, b in zip(*np.nonzero(dist < 0.5)) if a != b} - e1
    assert set(zip(e.src[e.kind == "E2"], e.dst[e.kind == "E2"])) == want_e2
    contiguous = e[e.contiguous]
    assert (contiguous.kind == "E1").all() and (contiguous.distance == 0).all() and len(contiguous) > 20
    # the core is strongly connected: every node reaches every other
    core = gmg.core
    assert core.n_nodes >= len(db) // 4
    assert len(set(core.strongly_connected())) == 1
    assert build_gmg(db).core.n_nodes >= 0.8 * len(db)  # at the default threshold


def test_statistics_table_like_thesis_table_4_2(bandai_db, tmp_path):
    table = gmg_statistics(bandai_db)
    assert list(table.threshold) == pytest.approx([0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    assert (table.nodes == len(bandai_db)).all()
    assert table.branching_factor.to_numpy() == pytest.approx(table.edges / table.nodes)
    assert table.scc_branching_factor.to_numpy() == pytest.approx(table.scc_edges / table.scc_nodes.clip(lower=1))
    # more edges at a higher threshold; the largest SCC never shrinks (it contains the old one's
    # component), though it may be another component of equal size with fewer edges
    for col in ("edges", "e2_edges", "scc_nodes"):
        assert table[col].is_monotonic_increasing, col
    assert (table.e1_edges == table.e1_edges.iloc[0]).all()
    assert table.scc_nodes.iloc[0] < table.scc_nodes.iloc[-1] == len(bandai_db)
    row = table[np.isclose(table.threshold, 0.6)].iloc[0]
    st = build_gmg(bandai_db, 0.6).stats()
    assert st["edges"] == row.edges and st["scc_nodes"] == row.scc_nodes
    tex = statistics_latex(table)
    assert "Original BF" in tex and "SCC size" in tex and tex.count("\\\\") >= 9
    paths = write_statistics(table, tmp_path)
    assert paths["csv"].read_text().startswith("threshold,nodes,edges")
    assert "\\begin{table}" in paths["tex"].read_text()


def test_graph_without_cycle_is_an_error(cmu_db):
    with pytest.raises(InputError, match="no cycle"):
        build_gmg(cmu_db, threshold=1e-6)  # E1 chains only: no cycle
