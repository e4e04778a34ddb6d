"""SMG and BPMG on real CMU locomotion: construction, plans, rendered clips and their quality."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.motion import load_motion
from evalkit.synth import ClipSet, build_bpmg, build_smg, bundled_locomotion, synthesize_transition, write_stimulus
from evalkit.motion.planar import transform_root
from evalkit.synth.transition import check_clip, plan_clips, realise_transition_plan
from tests.conftest import shared_data

THRESHOLD = 0.3  # RMS metres: connects walking and running in the bundled clips


@pytest.fixture(scope="module")
def cs():
    return ClipSet.from_clips(bundled_locomotion())


@pytest.fixture(scope="module")
def smg(cs):
    return build_smg(cs, threshold=THRESHOLD)


@pytest.fixture(scope="module")
def bpmg(cs):
    return build_bpmg(cs, threshold=THRESHOLD, profile="sp4a")


def test_graphs_build_and_are_strongly_connected(cs, smg, bpmg):
    for g in (smg, bpmg):
        s = g.stats()
        assert 0 < s["scc_nodes"] <= s["nodes"] and s["scc_edges"] <= s["edges"]
        assert s["scc_branching_factor"] > 1.0  # every node has its clip edge plus transitions
        assert s["connected_clip_pairs"] == 6  # all ordered pairs of walk, slow walk, run
        assert s["kept_transitions"] <= s["candidates"]
    # every node of the pruned graph reaches every other: one SCC
    core = smg.tg.graph
    assert core.largest_scc_mask().all()
    # a transition candidate is a local minimum below the threshold of its distance matrix
    d = cs.distances("full")
    for row in smg.candidates.itertuples():
        m = d[(row.src, row.dst)].copy()
        if row.src == row.dst:  # a clip against itself: the band around the diagonal is ignored
            i, j = np.indices(m.shape)
            m[np.abs(i - j) < cs.window] = np.inf
        assert row.cost < THRESHOLD and m[row.i, row.j] == pytest.approx(row.cost)
        win = m[max(0, row.i - 2):row.i + 3, max(0, row.j - 2):row.j + 3]
        assert row.cost <= win.min() + 1e-12
    # BPMG lower-body transitions start on the same supporting leg in both clips
    from evalkit.synth.bpmg import stance_side

    sides = [stance_side(cs.contacts(c)) for c in range(3)]
    for row in bpmg.graphs[0].candidates.itertuples():
        assert sides[row.src][row.i] == sides[row.dst][row.j]


def test_bpmg_finds_more_transition_points_and_answers_faster(cs, smg, bpmg):
    """The thesis' qualitative findings on the bundled clips, at the same threshold."""
    assert bpmg.stats()["transition_points"] > smg.stats()["transition_points"]
    responses = {"smg": [], "bpmg": []}
    for g in (smg, bpmg):
        for a in range(3):
            for b in range(3):
                if a != b:
                    for r in range(0, cs.clips[a].n_frames, 9):
                        p = g.plan(a, b, r)
                        if p is not None and p.info.get("guard_ok", True):
                            responses[g.method].append(p.response)
    assert len(responses["bpmg"]) >= len(responses["smg"]) > 30  # it serves at least what the SMG serves
    assert np.mean(responses["bpmg"]) < np.mean(responses["smg"])


@pytest.mark.parametrize("threshold", [0.15, 0.25])
def test_bpmg_serves_every_request_the_smg_serves(cs, threshold):
    """At any threshold, a request the SMG serves the BPMG serves (with its own progressive
    transition, or the SMG's with every part moving with the legs), and no part leaves the
    origin more than max_lead_s before the legs."""
    smg = build_smg(cs, threshold=threshold)
    bpmg = build_bpmg(cs, threshold=threshold, profile="sp4a")
    lead = int(round(bpmg.config.max_lead_s * cs.fps))
    served = {"smg": 0, "bpmg": 0}
    for a in range(3):
        for b in range(3):
            if a == b:
                continue
            for r in range(0, cs.clips[a].n_frames, 30):
                ps = smg.plan(a, b, r)
                pb = bpmg.plan(a, b, r)
                s_ok = ps is not None and ps.info.get("guard_ok", True)
                b_ok = pb is not None and pb.info.get("guard_ok", True)
                assert b_ok or not s_ok, (a, b, r)
                served["smg"] += s_ok
                served["bpmg"] += b_ok
                if b_ok:
                    for h in pb.hops:
                        assert all(m.i >= h.i_lower - lead for m in h.moves)
    assert served["bpmg"] >= served["smg"] > 0


def test_plan_timing_invariants(cs, smg, bpmg):
    k = cs.window
    for g in (smg, bpmg):
        p = g.plan("16_15", "09_06-run", 60)
        assert p is not None and p.hops[-1].dst == 2 and p.response >= 0
        h = p.hops[-1]
        assert h.scale(0) == 1.0  # the lower body / whole body is never time-scaled
        for n, m in enumerate(h.moves):
            assert m.i >= h.entry and m.j + k <= h.sync  # blends complete before the sync frame
            # each part reaches the sync frame exactly when the lower body does
            assert m.i + (h.sync - m.j) / h.scale(n) == pytest.approx(h.T)
        assert p.duration >= k - 1e-9
    assert smg.plan("16_15", "09_06-run", 60).duration == k


def test_rendered_clip_follows_sources_outside_the_blends(cs, smg):
    p = smg.plan("16_15", "07_05-walk", 30)
    motion, timing = realise_transition_plan(cs.clips, p, lead=30, tail=40)
    h = p.hops[0]
    walk, slow = cs.clips[0], cs.clips[1]
    # before the first blend the output is the origin clip, frame for frame
    first = int(timing["seams"][0][0])
    np.testing.assert_allclose(motion.rotations[:first], walk.rotations[timing["start_frame"]:timing["start_frame"] + first])
    np.testing.assert_allclose(motion.positions[:first], walk.positions[timing["start_frame"]:timing["start_frame"] + first], atol=1e-9)
    # after the blend: the target clip's poses (root moved rigidly in the ground plane)
    end = int(timing["seams"][-1][1])
    n = motion.n_frames - end
    src = slice(h.sync, h.sync + n)
    np.testing.assert_allclose(np.abs(np.sum(motion.rotations[end:, 1:] * slow.rotations[src, 1:], axis=-1)), 1.0, atol=1e-9)
    heights = motion.positions[end:, :, 1] - slow.positions[src, :, 1]
    assert np.ptp(heights) < 1e-6
    step_out = np.linalg.norm(np.diff(motion.positions[end:, 0, [0, 2]], axis=0), axis=1)
    step_src = np.linalg.norm(np.diff(slow.positions[src, 0, [0, 2]], axis=0), axis=1)
    np.testing.assert_allclose(step_out, step_src, atol=1e-9)


def _all_stimuli(cs, graph, times=(0.25, 0.5, 0.75)):
    out = []
    for a in range(3):
        for b in range(3):
            if a == b:
                continue
            for f in times:
                t = f * cs.clips[a].n_frames / cs.fps
                try:
                    out.append(synthesize_transition(graph, a, b, t, skate=False))
                except InputError:
                    pass  # near the end of a clip no transition is reachable
    return out


@pytest.mark.parametrize("method", ["smg", "bpmg"])
def test_every_synthesized_clip_loads_is_rigid_finite_and_pop_free(cs, smg, bpmg, method, tmp_path):
    graph = smg if method == "smg" else bpmg
    stimuli = _all_stimuli(cs, graph)
    assert len(stimuli) >= 12  # most (pair, time) requests can be served
    pairs = {(m["source_motions"][0]["name"], m["source_motions"][-1]["name"]) for _, m in stimuli}
    assert len(pairs) == 6
    rest = np.linalg.norm(cs.skeleton.offsets[1:], axis=1)
    for motion, manifest in stimuli:
        bvh, js = write_stimulus(motion, manifest, tmp_path / f"{motion.name}.bvh")
        back = load_motion(bvh)
        assert back.n_frames == motion.n_frames and back.skeleton.names == cs.skeleton.names
        np.testing.assert_allclose(back.positions, motion.positions, atol=1e-5)
        pos = back.positions
        assert np.isfinite(pos).all()
        par = back.skeleton.parents
        lengths = np.linalg.norm(pos[:, 1:] - pos[:, par[1:]], axis=-1)
        np.testing.assert_allclose(lengths, np.broadcast_to(rest, lengths.shape), atol=1e-5)
        # no pops: near every seam each joint moves no faster than 1.1 x its fastest speed in
        # the source clips of this transition
        involved = [cs.index(s["name"]) for s in manifest["source_motions"]]
        source_max = np.max([cs.max_joint_speed(c) for c in involved], axis=0)
        seams = manifest["transition"]["seams_output_frames"]
        chk = check_clip(back, source_max, seams)
        assert chk["pops"] == 0 and chk["seam_speed_max_ratio"] <= 1.1, (motion.name, chk)
        assert manifest["checks"]["ok"]
        assert json.loads(js.read_text())["method"] == method


def test_manifest_describes_the_stimulus(cs, bpmg):
    motion, man = synthesize_transition(bpmg, "walk", "run", 1.0, lead_s=0.5, tail_s=1.0)
    assert man["schema"] == "evalkit.synth.stimulus/1" and man["method"] == "bpmg"
    roles = {s["role"]: s for s in man["source_motions"]}
    assert roles["origin"]["name"] == "16_15" and roles["target"]["label"] == "run"
    assert roles["target"]["retargeted_from"]["matched"] == 31
    assert man["request"]["time_in_clip_s"] == pytest.approx(1.0)
    assert man["request"]["frame_in_output"] == 30  # 0.5 s of lead at 60 fps
    assert man["parameters"]["profile"] == "sp4a" and man["parameters"]["threshold"] == THRESHOLD
    parts = man["transition"]["hops"][-1]["parts"]
    assert [p["part"] for p in parts] == ["lower", "trunk+head", "left_arm", "right_arm"]
    assert man["transition"]["response_frames"] == min(p["leave_frame"] for p in man["transition"]["hops"][0]["parts"]) - 60
    sk = man["skate"]
    assert set(sk["sources"]) == {"16_15", "09_06-run"}
    assert "skate_speed_mean" in sk["synthesized"] and sk["synthesized"]["skate_source"]
    assert "mocap.cs.cmu.edu" in man["acknowledgement"]
    assert motion.n_frames == man["frames"]


def test_requests_that_cannot_be_served(cs, smg):
    with pytest.raises(InputError, match="outside"):
        synthesize_transition(smg, "walk", "run", 10.0)
    with pytest.raises(InputError, match="no transition"):
        synthesize_transition(smg, "walk", "run", 3.9)  # past the walk's last transition point
    with pytest.raises(InputError, match="same"):
        smg.plan("walk", "walk", 10)
    with pytest.raises(InputError, match="no clip named"):
        smg.plan("walk", "dance", 10)


def test_kovar_norm_favours_body_parts(cs):
    """With Kovar's un-normalised sum, a part (fewer joints) is always closer than the whole
    body, so at one threshold the BPMG finds even more candidates than with RMS distances."""
    s_rms = build_bpmg(cs, threshold=0.1, speed_guard=False).stats()
    full = cs.distances("full", "kovar")[(0, 1)]
    lower = cs.distances("lower", "kovar")[(0, 1)]
    assert (lower < full).all()
    t = float(np.sqrt(cs.weight_total("full"))) * 0.1  # the same poses as 0.1 m RMS for the whole body
    s_kov = build_bpmg(cs, threshold=t, norm="kovar", speed_guard=False).stats()
    assert s_kov["candidates"] >= s_rms["candidates"]


def test_reallusion_walks_and_run():
    d = shared_data("mocap", "cmu-reallusion")
    clips = [d / "007_01.bvh", d / "002_03.bvh", d / "007_04.bvh", d / "007_12.bvh"]
    cs = ClipSet.from_clips(clips)
    assert cs.skeleton.n_joints == 100
    smg = build_smg(cs, threshold=0.25)
    bpmg = build_bpmg(smg.clipset, threshold=0.25)
    assert bpmg.stats()["transition_points"] > smg.stats()["transition_points"]
    assert smg.stats()["connected_clip_pairs"] == 12 and bpmg.stats()["connected_clip_pairs"] == 12
    rest = np.linalg.norm(cs.skeleton.offsets[1:], axis=1)
    for g in (smg, bpmg):
        for a, b in [(0, 1), (1, 2), (2, 3), (3, 0)]:
            motion, man = synthesize_transition(g, a, b, 0.3 * cs.clips[a].n_frames / cs.fps, skate=False)
            assert man["checks"]["ok"], man["checks"]
            pos = motion.positions
            lengths = np.linalg.norm(pos[:, 1:] - pos[:, cs.skeleton.parents[1:]], axis=-1)
            np.testing.assert_allclose(lengths, np.broadcast_to(rest, lengths.shape), atol=1e-6)


def _served(g, cs, pairs, step=6):
    n = ok = 0
    for a, b in pairs:
        for r in range(0, cs.clips[a].n_frames - cs.window, step):
            p = g.plan(a, b, r)
            n += 1
            ok += p is not None and p.info.get("guard_ok", True)
    return ok / n


def test_bpmg_lower_body_track_distance_serves_runs_below_the_smg_threshold(cs):
    """Walk and run differ mostly in how fast the body travels: compared relative to the root's
    ground track, the legs of the bundled walk and run come within 0.15 m (Kovar's world-position
    distance: 0.25 m), so at 0.15 m the BPMG serves requests into and out of the run while the
    SMG and a BPMG on the world distance serve none; the whole-body fallback still covers every
    request the SMG serves."""
    run = next(i for i, c in enumerate(cs.clips) if "run" in c.name)
    pairs = [(a, b) for a in range(3) for b in range(3) if a != b and run in (a, b)]
    world = cs.distances("lower")
    track = cs.distances("lower_track")
    assert min(track[p].min() for p in pairs) < 0.15 < 0.2 < min(world[p].min() for p in pairs)
    smg = build_smg(cs, threshold=0.15)
    bp_world = build_bpmg(cs, threshold=0.15, lower_distance="world")
    bp_track = build_bpmg(cs, threshold=0.15)
    assert bp_track.config.lower_distance == "track"
    assert _served(smg, cs, pairs) == 0 and _served(bp_world, cs, pairs) == 0
    assert _served(bp_track, cs, pairs) > 0.5
    with pytest.raises(InputError, match="lower_distance"):
        build_bpmg(cs, threshold=0.15, lower_distance="feet")


def test_routes_may_start_and_end_outside_the_scc():
    """The Bandai Namco run (47 frames at 60 fps) is entered and left only around its frame 10:
    it can never be both entered and left, so it is outside the largest SCC at 0.2 m. A request
    into it or out of it is still served (the SCC matters for the clips a route passes through),
    along transitions that all lie under the threshold."""
    B = shared_data("mocap", "bandai-namco-1")
    clips = ClipSet.from_clips([B / "dataset-1_walk_normal_001.bvh", B / "dataset-1_run_normal_001.bvh"])
    smg = build_smg(clips, threshold=0.2)
    kept = smg.candidates[smg.candidates["in_graph"]]
    assert not ((kept["src"] == 1) | (kept["dst"] == 1)).any()  # the run is not in the SCC
    for a, b, r in ((0, 1, 60), (1, 0, 0)):
        p = smg.plan(a, b, r)
        assert p is not None and p.hops[0].src == a and p.hops[-1].dst == b
        assert all(h.moves[0].cost < 0.2 for h in p.hops)
    bp = build_bpmg(clips, threshold=0.2)
    assert bp.plan(0, 1, 60) is not None and bp.plan(1, 0, 0) is not None


def test_routes_do_not_depend_on_how_many_pairs_are_kept(cs):
    # routings are kept for the last ROUTE_CACHE clip pairs only (memory on large sets); a
    # routing computed again after being dropped gives the same plans
    kept = build_smg(cs, threshold=0.3, speed_guard=False)
    dropped = build_smg(cs, threshold=0.3, speed_guard=False)
    dropped.tg.ROUTE_CACHE = 1
    pairs = [(a, b) for a in range(3) for b in range(3) if a != b]
    plans = []
    for r in range(0, 70, 5):
        for a, b in pairs:  # every call switches pair: with one kept, every routing is recomputed
            p, q = kept.plan(a, b, r), dropped.plan(a, b, r)
            assert (p is None) == (q is None)
            if p is not None:
                assert [(h.i_lower, h.j_lower, h.src, h.dst) for h in p.hops] == [(h.i_lower, h.j_lower, h.src, h.dst) for h in q.hops]
                plans.append(p)
    assert len(plans) > 40
    assert len(dropped.tg._route_cache) == 1 and len(kept.tg._route_cache) == len(pairs)
