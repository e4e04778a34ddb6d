"""MCC, grouped cross-validation, strength scales and classifiers."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, matthews_corrcoef
from sklearn.model_selection import KFold, cross_val_predict

from tests.conftest import shared_data
from evalkit.errors import ConfigError, InputError
from evalkit.models.strength import (
    CLASSIFIERS,
    StrengthClassifier,
    StrengthScale,
    format_mcc_table,
    grouped_mcc,
    make_classifier,
    mcc_from_confusion,
    mcc_table,
)


def test_mcc_by_hand_on_unbalanced_classes():
    """5 positives in 100. Hand-worked: TP=2, FN=3, FP=1, TN=94.
    MCC = (2*94 - 1*3) / sqrt((2+1)(2+3)(94+1)(94+3)) = 185 / sqrt(138225) = 185 / 371.786 = 0.49760."""
    y = np.array([1] * 5 + [0] * 95)
    pred = np.array([1, 1, 0, 0, 0] + [1] + [0] * 94)
    assert mcc_from_confusion(tp=2, tn=94, fp=1, fn=3) == pytest.approx(0.49760, abs=5e-5)
    assert matthews_corrcoef(y, pred) == pytest.approx(0.49760, abs=5e-5)
    # accuracy flatters the always-negative classifier; MCC does not
    majority = np.zeros(100, dtype=int)
    assert accuracy_score(y, majority) == 0.95
    assert matthews_corrcoef(y, majority) == 0.0 == mcc_from_confusion(0, 95, 0, 5)
    # and MCC is symmetric in which class is called positive
    assert matthews_corrcoef(1 - y, 1 - pred) == pytest.approx(0.49760, abs=5e-5)
    # perfect and inverted predictions
    assert mcc_from_confusion(5, 95, 0, 0) == 1.0 and mcc_from_confusion(0, 0, 95, 5) == -1.0


@pytest.fixture(scope="module")
def bandai_strokes():
    from evalkit.gesture import STROKE_FEATURES, analyze_gestures
    from evalkit.motion import load_motion

    rows = []
    for p in sorted(shared_data("gesture", "bandai-namco").glob("*.bvh")):
        d = analyze_gestures(load_motion(p)).strokes_frame()
        m = re.match(r"dataset-\d_(?P<gesture>[a-z-]+)_(?P<style>[a-z]+)_\d+", p.stem)
        rows.append(d.assign(gesture=m["gesture"], style=m["style"]))
    df = pd.concat([r for r in rows if len(r)], ignore_index=True).astype({c: float for c in STROKE_FEATURES})
    # proxy label from the actor's performed style: angry/happy strokes are the strong class
    return df.assign(strong=df["style"].isin(["angry", "happy"]).astype(int))


def test_grouped_mcc_is_the_pooled_out_of_fold_mcc(bandai_strokes):
    from evalkit.gesture import STROKE_FEATURES

    d = bandai_strokes
    r = grouped_mcc(d, d["strong"], d["gesture"], "logistic", features=STROKE_FEATURES)
    tn, fp, fn, tp = r.confusion
    assert tn + fp + fn + tp == len(d) and tp + fn == r.n_positive == int(d["strong"].sum())
    assert r.mcc == pytest.approx(mcc_from_confusion(tp, tn, fp, fn))
    assert r.n_groups == d["gesture"].nunique()
    assert r.n_positive / r.n < 0.2  # unbalanced: few strong strokes
    assert all(-1 <= m <= 1 for m in r.fold_mcc)


def test_grouping_prevents_leakage():
    """A label that only depends on the recording: random splits 'learn' it from the recording's
    identity, grouped splits cannot (constructed toy data; the point is the splitting)."""
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(20), 10)
    y = groups % 2  # a property of the recording, not of anything measured in the example
    X = np.eye(20)[groups] + rng.normal(0, 0.05, (len(groups), 20))  # which recording it came from
    leaky = cross_val_predict(make_classifier("logistic"), X, y, cv=KFold(5, shuffle=True, random_state=0))
    assert matthews_corrcoef(y, leaky) > 0.8
    assert abs(grouped_mcc(X, y, groups, "logistic").mcc) < 0.3


def test_stroke_strength_table_like_thesis_table_4_1(bandai_strokes):
    from evalkit.gesture import STROKE_FEATURES

    table = mcc_table(bandai_strokes, STROKE_FEATURES, "strong", "gesture", classifiers=("svm-pegasos", "svm-smo"))
    assert len(table) == 7 * 2  # every feature subset x classifier
    assert table["mcc"].between(-1, 1).all()
    assert (table["n_groups"] == bandai_strokes["gesture"].nunique()).all()
    text = format_mcc_table(table)
    assert "fm_distance + velocity_range + max_velocity" in text and "svm-smo" in text
    # the strong performed styles are told apart better than chance by some feature set
    assert table["mcc"].max() > 0.2


def test_accent_classifier_on_constructed_emphasis():
    """Real LJ speech with F0 raised on known syllables (constructed labels): the pitch-accent
    classifier finds them better than chance under recording-grouped CV."""
    from evalkit.speech import ACCENT_FEATURES, load_audio
    from evalkit.speech.emphasis import emphasis_dataset

    files = sorted(shared_data("speech", "ljspeech").glob("*.wav"))[:8]
    data = emphasis_dataset([load_audio(p) for p in files], fraction=0.3, semitones=4.0, seed=1)
    assert data["constructed"].all()
    assert 0.15 < data["emphasized"].mean() < 0.45
    r = grouped_mcc(data, data["emphasized"], data["recording"], "svm-smo", features=ACCENT_FEATURES, n_splits=4)
    assert r.n_groups == 8
    assert r.mcc > 0.1


def test_strength_scale_round_trip_and_monotone():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0], "b": [0.1, 0.4, 0.2, 0.9, 0.5]})
    s = StrengthScale(features=("a", "b"), log=("a",)).fit(X)
    st = s.strength(X)
    assert np.all((st > 0) & (st < 1))
    assert s.strength(X.assign(a=X["a"] * 2)).min() > 0 and np.all(s.strength(X.assign(a=X["a"] * 2)) > st)
    back = StrengthScale.from_dict(s.to_dict())
    np.testing.assert_allclose(back.strength(X), st)
    with pytest.raises(ConfigError):
        StrengthScale.from_dict({"features": ["a"], "mean": [1, 2], "scale": [1], "spread": 1})
    with pytest.raises(InputError, match="missing feature column"):
        s.strength(X[["a"]])


def test_strength_classifier_gives_calibrated_probabilities(bandai_strokes):
    from evalkit.gesture import STROKE_FEATURES

    d = bandai_strokes
    for name in CLASSIFIERS:
        clf = StrengthClassifier(features=STROKE_FEATURES, classifier=name).fit(d, d["strong"])
        p = clf.strength(d)
        assert p.shape == (len(d),) and np.all((p >= 0) & (p <= 1))
        assert set(clf.predict(d)) <= {0, 1}
    with pytest.raises(InputError, match="two classes"):
        StrengthClassifier(features=STROKE_FEATURES).fit(d, np.zeros(len(d)))
    with pytest.raises(InputError, match="unknown classifier"):
        make_classifier("perceptron")
