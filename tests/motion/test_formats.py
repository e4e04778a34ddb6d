"""Readers of SMPL-family parameter files, HumanML3D, MDM results and joint-position arrays.

All files are built here from the bundled CMU capture with known truth
(:mod:`evalkit.constructed.known_truth`); no file made by the original tools exists on this machine.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from scipy import sparse
from scipy.spatial.transform import Rotation

from evalkit.errors import EvalkitError, FileFormatError
from evalkit.motion import find_roles, load_motion, mirror, resample
from evalkit.motion import topology as topo
from evalkit.motion.formats import iter_motion_files
from evalkit.constructed.known_truth import DEFAULT_CLIPS, write_samples
from evalkit.motion.formats.smpl import joint_positions

# Z-up world (AMASS) -> Y-up: (x, y, z) -> (x, z, -y)
Z_TO_Y = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]])


@pytest.fixture(scope="module")
def samples(tmp_path_factory, cmu_dir):
    return write_samples(tmp_path_factory.mktemp("formats"), [cmu_dir / c for c in DEFAULT_CLIPS])


def _load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return load_motion(path, **kw)


def fk_params(poses, trans, rest, parents):
    """Independent forward kinematics of SMPL parameters: scipy rotations, a loop per joint."""
    n_f, n_j = len(poses), len(parents)
    aa = poses.reshape(n_f, n_j, 3)
    rest = np.broadcast_to(rest, (n_f, n_j, 3)) if rest.ndim == 2 else rest
    world_r = [None] * n_j
    pos = np.zeros((n_f, n_j, 3))
    for j, p in enumerate(parents):
        local = Rotation.from_rotvec(aa[:, j])
        if p < 0:
            world_r[j] = local
            pos[:, j] = rest[:, 0] + trans
        else:
            world_r[j] = world_r[p] * local
            pos[:, j] = pos[:, p] + world_r[p].apply(rest[:, j] - rest[:, p])
    return pos


@pytest.mark.parametrize("name,up", [("amass_smplh.npz", "z"), ("amass_smplx.npz", "z"), ("beat2_smplx.npz", "y")])
def test_parameter_files_read_back_as_written(samples, name, up):
    t = samples[name]
    with pytest.warns(UserWarning, match="no --body-model"):
        m = load_motion(t["path"])
    assert m.meta["up_axis"] == up and m.fps == t["fps"] and topo.topology_of(m.skeleton.names) == t["skeleton"]
    assert np.abs(m.positions - t["positions"]).max() < 1e-5  # float32 file
    # and independently of evalkit's FK: scipy rotations on the default rest joints
    data = np.load(t["path"])
    pos = fk_params(data["poses"].astype(np.float64), data["trans"].astype(np.float64),
                    topo.default_rest_joints(t["skeleton"]), topo.TOPOLOGIES[t["skeleton"]][1])
    if up == "z":
        pos = pos @ Z_TO_Y.T
    assert np.abs(joint_positions(m) - pos).max() < 1e-6


def test_parameter_file_follows_the_real_capture(samples, cmu_dir):
    """The CMU joints that map one to one (knees, ankles, elbows...) point the same way in the
    SMPL file: each bone's direction matches the capture's within 1 degree."""
    cmu = resample(load_motion(cmu_dir / "16_15.amc"), 30)
    m = _load(samples["amass_smplh.npz"]["path"])
    r_cmu, r_smpl = find_roles(cmu.skeleton), find_roles(m.skeleton)
    for a, b in (("left_hip", "left_knee"), ("left_knee", "left_ankle"), ("right_shoulder", "right_elbow"),
                 ("right_elbow", "right_wrist"), ("left_ankle", "left_toe")):
        u = cmu.positions[:, r_cmu[b]] - cmu.positions[:, r_cmu[a]]
        v = m.positions[:, r_smpl[b]] - m.positions[:, r_smpl[a]]
        cos = np.sum(u * v, -1) / np.linalg.norm(u, axis=-1) / np.linalg.norm(v, axis=-1)
        assert np.degrees(np.arccos(np.clip(cos, -1, 1))).max() < 1.0, (a, b)


def test_humanml3d_joints_round_trip_and_match_the_capture(samples, cmu_dir):
    t = samples["hml_joints.npy"]
    m = load_motion(t["path"])
    assert m.fps == 20 and m.n_joints == 22 and m.meta["format"] == "humanml3d-joints"
    assert np.abs(joint_positions(m) - t["positions"]).max() < 1e-6
    cmu = resample(load_motion(cmu_dir / "16_15.amc"), 20)
    r = find_roles(cmu.skeleton)
    for smpl_joint, role in (("left_knee", "left_knee"), ("right_ankle", "right_ankle"), ("head", "head"),
                             ("left_wrist", "left_wrist"), ("pelvis", "hips")):
        assert np.abs(m.positions[:, m.skeleton.index(smpl_joint)] - cmu.positions[:, r[role]]).max() < 1e-3


def test_humanml3d_features_give_the_joints_in_humanml3ds_start_pose(samples):
    t = samples["hml_vecs.npy"]
    m = load_motion(t["path"])
    assert m.meta["format"] == "humanml3d-features" and m.fps == 20
    assert np.abs(joint_positions(m) - t["positions"]).max() < 1e-4  # float32 features, integrated
    # the start pose faces +Z with the root above the origin
    assert abs(m.positions[0, 0, 0]) < 1e-6 and abs(m.positions[0, 0, 2]) < 1e-6


def test_normalised_features_are_warned_about(tmp_path, samples):
    feats = np.load(samples["hml_vecs.npy"]["path"])
    z = (feats - feats.mean(0)) / (feats.std(0) + 1e-6)
    np.save(tmp_path / "z.npy", z)
    with pytest.warns(UserWarning, match="un-normalised"):
        load_motion(tmp_path / "z.npy")


def test_mdm_results_are_one_clip_per_sample_with_text(samples):
    t = samples["results.npy"]
    files = list(iter_motion_files([t["path"]]))
    assert [f.name for f in files] == ["results#0.npy", "results#1.npy", "results#2.npy"]
    for i, f in enumerate(files):
        m = load_motion(f)
        assert m.name == f"results#{i}" and m.meta["text"] == t["text"][i]
        assert m.n_frames == len(t["positions"][i])  # trimmed to lengths[i]
        assert np.abs(joint_positions(m) - t["positions"][i]).max() < 1e-6
    with pytest.warns(UserWarning, match="holds 3 clips"):
        assert load_motion(t["path"]).n_frames == len(t["positions"][0])
    with pytest.raises(EvalkitError, match="no clip 7"):
        load_motion(t["path"].with_name("results#7.npy"))


def test_generic_positions_need_a_frame_rate_and_take_a_skeleton(samples, tmp_path):
    for name in ("positions_smpl24.npy", "positions.csv"):
        t = samples[name]
        with pytest.raises(FileFormatError, match="--array-fps"):
            load_motion(t["path"])
        m = load_motion(t["path"], array_fps=30)
        assert m.n_joints == 24 and np.abs(joint_positions(m) - t["positions"]).max() < 1e-5
    # a YAML skeleton with other names: roles from its own map
    names, parents = topo.TOPOLOGIES["smpl24"]
    lines = ["joints:"] + [f"  - {{name: j{i}, parent: {('j%d' % p) if p >= 0 else 'null'}}}" for i, p in enumerate(parents)]
    lines += ["roles:"] + [f"  {r}: j{i}" for r, i in topo.ROLE_INDEX["smpl24"].items()]
    (tmp_path / "sk.yaml").write_text("\n".join(lines) + "\n")
    m = load_motion(samples["positions_smpl24.npy"]["path"], array_fps=30, skeleton=tmp_path / "sk.yaml")
    assert find_roles(m.skeleton)["left_ankle"] == m.skeleton.index("j7")
    by_name = m.positions[:, [m.skeleton.index(f"j{i}") for i in range(24)]]
    assert np.abs(by_name - samples["positions_smpl24.npy"]["positions"]).max() < 1e-6
    with pytest.raises(FileFormatError, match="24 joints per frame, but --skeleton smplx55 has 55"):
        load_motion(samples["positions_smpl24.npy"]["path"], array_fps=30, skeleton="smplx")


def test_roles_by_index_for_every_topology():
    from evalkit.motion.model import Skeleton

    for key, (names, parents) in topo.TOPOLOGIES.items():
        sk = Skeleton(names, np.array(parents), topo.default_offsets(key), [("Zrotation",)] * len(names))
        roles = find_roles(sk)
        assert roles == topo.ROLE_INDEX[key]
        assert names[roles["left_toe"]] == "left_foot" and names[roles["right_shoulder"]] == "right_shoulder"
        # in depth-first order (as evalkit keeps them) by the same table
        order = topo.depth_first(parents)
        assert list(order[:5]) == [0, 1, 4, 7, 10]  # pelvis, left hip, knee, ankle, foot
        dfs = Skeleton([names[o] for o in order], np.array([list(order).index(parents[o]) if parents[o] >= 0 else -1
                                                            for o in order]),
                       topo.default_offsets(key)[order], [("Zrotation",)] * len(names))
        assert {r: dfs.names[j] for r, j in find_roles(dfs).items()} == topo.ROLE_JOINTS[key]


def test_position_clips_mirror_and_resample(samples):
    m = load_motion(samples["hml_joints.npy"]["path"])
    mm = mirror(m)
    r = find_roles(m.skeleton)
    # mirroring swaps the sides and reflects x
    assert np.allclose(mm.positions[:, r["right_ankle"], 0], -m.positions[:, r["left_ankle"], 0], atol=1e-6)
    up = resample(m, 60)
    assert up.n_frames == (m.n_frames - 1) * 3 + 1
    assert np.abs(up.positions[::3] - m.positions).max() < 1e-6


# -- body models ----------------------------------------------------------------------------------
def synthetic_model(key: str, n_betas: int = 16, seed: int = 0) -> dict:
    """A body-model file made here (no licensed model data): each joint regressed from 4 of its own
    vertices around the default rest joint; random shape directions."""
    rng = np.random.default_rng(seed)
    names, parents = topo.TOPOLOGIES[key]
    rest = topo.default_rest_joints(key)
    n_j = len(names)
    v = np.concatenate([np.repeat(rest, 4, axis=0) + rng.normal(0, 0.02, (4 * n_j, 3)), rng.normal(0, 0.3, (40, 3))])
    jr = np.zeros((n_j, len(v)))
    for j in range(n_j):
        w = rng.random(4)
        jr[j, 4 * j:4 * j + 4] = w / w.sum()
    sd = rng.normal(0, 0.01, (len(v), 3, n_betas))
    kt = np.stack([np.array(parents), np.arange(n_j)])
    kt[0, 0] = 4294967295  # as the official files store the root's parent
    return {"v_template": v, "shapedirs": sd, "J_regressor": jr, "kintree_table": kt.astype(np.int64),
            "f": np.zeros((1, 3), dtype=np.int64)}


def test_body_model_npz_and_pkl_give_the_regressed_shaped_joints(tmp_path, samples):
    model = synthetic_model("smplh52")
    np.savez(tmp_path / "model.npz", **model)
    pkl = dict(model, J_regressor=sparse.csc_matrix(model["J_regressor"]))
    (tmp_path / "model.pkl").write_bytes(pickle.dumps(pkl, protocol=2))
    data = dict(np.load(samples["amass_smplh.npz"]["path"]))
    betas = np.random.default_rng(1).normal(0, 1.0, 16)
    data["betas"] = betas
    np.savez(tmp_path / "clip.npz", **data)
    expected_rest = model["J_regressor"] @ (model["v_template"] + model["shapedirs"] @ betas)
    expected = fk_params(data["poses"].astype(np.float64), data["trans"].astype(np.float64), expected_rest,
                         topo.TOPOLOGIES["smplh52"][1]) @ Z_TO_Y.T
    for f in ("model.npz", "model.pkl"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no default-skeleton warning with a model
            m = load_motion(tmp_path / "clip.npz", body_model=tmp_path / f)
        assert np.abs(joint_positions(m) - expected).max() < 1e-6, f
        assert m.meta["skeleton"].startswith("body model")


def test_smplx_expressions_move_the_rest_joints_per_frame(tmp_path, samples):
    model = synthetic_model("smplx55", n_betas=20)  # SMPL-X v1.0 layout: 10 shape + 10 expression
    np.savez(tmp_path / "smplx.npz", **model)
    data = dict(np.load(samples["beat2_smplx.npz"]["path"]))
    expr = np.random.default_rng(2).normal(0, 1.0, (len(data["poses"]), 10))
    data["expressions"], data["betas"] = expr, np.zeros(10)
    np.savez(tmp_path / "clip.npz", **data)
    m = load_motion(tmp_path / "clip.npz", body_model=tmp_path / "smplx.npz")
    jr, v, sd = model["J_regressor"], model["v_template"], model["shapedirs"]
    rest = np.einsum("jv,fvc->fjc", jr, v[None] + np.einsum("vck,fk->fvc", sd[:, :, 10:], expr))
    expected = fk_params(data["poses"].astype(np.float64), data["trans"].astype(np.float64), rest,
                         topo.TOPOLOGIES["smplx55"][1])
    assert np.abs(joint_positions(m) - expected).max() < 1e-6


def test_a_model_of_another_topology_is_refused(tmp_path, samples):
    np.savez(tmp_path / "smpl.npz", **synthetic_model("smpl24", 10))
    with pytest.raises(EvalkitError, match="52 joints.*24 joints"):
        load_motion(samples["amass_smplh.npz"]["path"], body_model=tmp_path / "smpl.npz")


def test_a_pickled_model_with_code_is_refused(tmp_path, samples):
    class Payload:
        def __reduce__(self):
            return (print, ("ran",))

    (tmp_path / "evil.pkl").write_bytes(pickle.dumps({"v_template": Payload()}))
    with pytest.raises(FileFormatError, match="builtins.print.*--allow-pickle"):
        load_motion(samples["amass_smplh.npz"]["path"], body_model=tmp_path / "evil.pkl")


def test_folders_pick_motion_and_skip_other_arrays(tmp_path, samples):
    import shutil

    for name in ("amass_smplh.npz", "hml_joints.npy", "positions.csv", "results.npy"):
        shutil.copy(samples[name]["path"], tmp_path / name)
    np.savez(tmp_path / "shape.npz", betas=np.zeros(16), gender=np.array("female"))  # AMASS body shape
    np.save(tmp_path / "mean.npy", np.zeros(263))  # HumanML3D's Mean.npy: not a clip
    (tmp_path / "scores.csv").write_text("clip,skate\nx,0.1\n")
    names = [p.name for p in iter_motion_files([tmp_path])]
    assert names == ["amass_smplh.npz", "hml_joints.npy", "results#0.npy", "results#1.npy", "results#2.npy"]
    # a CSV is read when named
    assert [p.name for p in iter_motion_files([tmp_path / "positions.csv"])] == ["positions.csv"]
