"""The Fréchet distance equals the scipy.linalg.sqrtm formula of the field's scripts."""

import numpy as np
import pytest

from evalkit.distribution.frechet import frechet_distance, frechet_distance_sqrtm, frechet_from_features, gaussian


@pytest.mark.parametrize("d,n", [(4, 50), (32, 300), (54, 40)])  # 54 dims from 40 rows: singular covariance
def test_equals_sqrtm_formula(d, n):
    rng = np.random.default_rng(d)
    a = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    b = rng.normal(0.3, 1.2, size=(n + 7, d)) @ rng.normal(size=(d, d))
    ours = frechet_from_features(a, b)
    ref = frechet_distance_sqrtm(*gaussian(a), *gaussian(b))
    assert ours == pytest.approx(ref, rel=1e-6, abs=1e-6)


def test_equals_sqrtm_on_real_kinetic_features(cmu_dir):
    from evalkit.distribution.canonical import canonical_positions
    from evalkit.features.kinetic import kinetic_features
    from evalkit.motion import load_motion
    from evalkit.motion.formats import iter_motion_files

    feats = []
    for f in iter_motion_files([cmu_dir]):
        pos, _, _ = canonical_positions(load_motion(f), 30.0)
        for s in range(0, len(pos) - 60, 60):  # 2-s pieces
            feats.append(kinetic_features(pos[s:s + 60], 30.0).ravel())
    x = np.array(feats)
    a, b = x[::2], x[1::2]
    assert frechet_from_features(a, b) == pytest.approx(frechet_distance_sqrtm(*gaussian(a), *gaussian(b)), rel=1e-6)


def test_identical_sets_give_zero_and_batched_matches_single():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 8))
    assert frechet_from_features(x, x) == pytest.approx(0.0, abs=1e-9)
    mus = rng.normal(size=(5, 8))
    covs = np.stack([np.cov(rng.normal(size=(30, 8)), rowvar=False) for _ in range(5)])
    batched = frechet_distance(mus, covs, mus[::-1], covs[::-1])
    single = [frechet_distance(mus[i], covs[i], mus[4 - i], covs[4 - i]) for i in range(5)]
    np.testing.assert_allclose(batched, single, rtol=1e-12)
    # a pure mean shift of 2 in one dimension adds exactly 4
    assert frechet_distance(mus[0], covs[0], mus[0] + np.eye(8)[0] * 2, covs[0]) == pytest.approx(4.0, abs=1e-8)


def test_raw_space_fgd_is_genea_windows_flattened_and_standardised(cmu_dir):
    """fgd_raw equals the sqrtm formula on windows cut by hand: ``window`` frames every
    ``window // 2`` frames of the frame-normalised poses (hips dropped), each coordinate
    standardised by the reference's frames; the interval holds the value."""
    from evalkit.distribution.embedding import load_extractor
    from evalkit.distribution.extract import ExtractOptions, features_of_motions
    from evalkit.distribution.metrics import RAW_MIN_STD, FeatureSet, set_metrics
    from evalkit.motion import load_motion
    from evalkit.motion.formats import iter_motion_files

    ms = [load_motion(f) for f in iter_motion_files([cmu_dir])]
    feats = features_of_motions(ms, "x", ExtractOptions(extractor=load_extractor(), score=False))
    sys_, ref = feats[:3], feats[3:]
    r = set_metrics(FeatureSet(sys_), FeatureSet(ref), n_boot=50, seed=0)
    frames = np.concatenate([c.poses[:, 3:] for c in ref]).astype(float)
    mean, sd = frames.mean(0), np.maximum(frames.std(0), RAW_MIN_STD)

    def cut(clips):
        out = []
        for c in clips:
            p = (c.poses[:, 3:].astype(float) - mean) / sd
            for s in range(0, len(p) - 30 + 1, 15):
                out.append(p[s:s + 30].ravel())
        return np.array(out)

    a, b = cut(sys_), cut(ref)
    assert a.shape[1] == 30 * 51 and r["n_raw_windows"] == len(a)
    assert r["fgd_raw"] == pytest.approx(frechet_distance_sqrtm(*gaussian(b), *gaussian(a)), rel=1e-6)
    assert r["fgd_raw_ci_low"] <= r["fgd_raw"] <= r["fgd_raw_ci_high"]
    assert 0 < r["fgd_raw_boot_variance"] <= 1
