"""Strength scores and strength classifiers for gesture strokes (GSI) and pitch accents (PSI).

Two ways to turn features into a strength in [0, 1]:

* :class:`~evalkit.strength_scale.StrengthScale` (unsupervised, the default; it lives in
  :mod:`evalkit.strength_scale`, below gesture and speech, which use it): each feature is
  standardised against a reference population (optionally after a log), the z-scores are
  averaged, and the average is mapped through the normal CDF after dividing by its own
  reference SD. So 0.5 is the median stroke/accent of the reference population, 0.84 is one SD
  stronger, and the score grows monotonically with every feature.
* :class:`StrengthClassifier` (supervised): a scikit-learn classifier trained on labelled
  examples (strong vs weak, accented vs not), whose probability of the positive class is
  calibrated (Platt scaling / isotonic via ``CalibratedClassifierCV``) and used as the strength.

Classifiers are compared with the Matthews correlation coefficient under cross-validation grouped
by recording (:func:`grouped_mcc`, :func:`mcc_table`), as in the thesis' Table 4.1.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.metrics import accuracy_score, confusion_matrix, matthews_corrcoef
from sklearn.model_selection import GroupKFold, StratifiedGroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from evalkit.errors import InputError
from evalkit.strength_scale import StrengthScale, feature_matrix  # noqa: F401 (StrengthScale stays importable from here)


# --------------------------------------------------------------------------------------------
# Supervised classifiers
# --------------------------------------------------------------------------------------------
#: Classifier families. The thesis used SVMs trained by Pegasos (a stochastic sub-gradient
#: solver for the linear SVM) and SMO (libsvm's solver, here with an RBF kernel).
CLASSIFIERS: dict[str, str] = {
    "svm-pegasos": "linear SVM, stochastic sub-gradient (Pegasos-style SGD, hinge loss)",
    "svm-smo": "SVM with RBF kernel, SMO solver (libsvm)",
    "logistic": "logistic regression",
    "forest": "random forest (100 trees)",
}


def make_classifier(name: str, random_state: int = 0, class_weight: str | None = "balanced"):
    """A fresh scikit-learn pipeline (standardise, then classify) for a family in :data:`CLASSIFIERS`."""
    if name == "svm-pegasos":
        clf = SGDClassifier(loss="hinge", alpha=1e-3, max_iter=2000, tol=1e-4, class_weight=class_weight, random_state=random_state)
    elif name == "svm-smo":
        clf = SVC(kernel="rbf", C=1.0, gamma="scale", class_weight=class_weight, random_state=random_state)
    elif name == "logistic":
        clf = LogisticRegression(class_weight=class_weight, max_iter=1000)
    elif name == "forest":
        clf = RandomForestClassifier(n_estimators=100, min_samples_leaf=2, class_weight=class_weight, random_state=random_state, n_jobs=1)
    else:
        raise InputError(f"unknown classifier {name!r}; choose from {', '.join(CLASSIFIERS)}")
    return make_pipeline(StandardScaler(), clf)


class StrengthClassifier(BaseEstimator, ClassifierMixin):
    """A strength classifier whose positive-class probability is calibrated.

    Parameters:
        features: feature column names (order of ``X``'s columns).
        classifier: a name from :data:`CLASSIFIERS`.
        calibration: ``"sigmoid"`` (Platt) or ``"isotonic"``.
        cv: folds of the internal calibration (reduced automatically for small classes).
        random_state: seed.
    """

    def __init__(self, features: Sequence[str] = (), classifier: str = "svm-smo", calibration: str = "sigmoid", cv: int = 3, random_state: int = 0):
        self.features = features
        self.classifier = classifier
        self.calibration = calibration
        self.cv = cv
        self.random_state = random_state

    def fit(self, X, y) -> "StrengthClassifier":
        """Fit on ``X`` ``(samples, features)`` and binary labels ``y`` ``(samples,)``."""
        X = feature_matrix(X, self.features)
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise InputError(f"strength classifiers need exactly two classes, got {list(self.classes_)}")
        base = make_classifier(self.classifier, self.random_state)
        n_min = int(min(np.sum(y == c) for c in self.classes_))
        folds = min(self.cv, n_min)
        if folds >= 2:
            self.model_ = CalibratedClassifierCV(base, method=self.calibration, cv=folds).fit(X, y)
        else:  # too few examples of a class to calibrate: plain fit, raw probabilities if any
            self.model_ = base.fit(X, y)
        return self

    def predict(self, X) -> np.ndarray:
        return self.model_.predict(feature_matrix(X, self.features))

    def predict_proba(self, X) -> np.ndarray:
        """``(samples, 2)`` calibrated class probabilities (columns in ``classes_`` order)."""
        X = feature_matrix(X, self.features)
        if hasattr(self.model_, "predict_proba"):
            return self.model_.predict_proba(X)
        d = self.model_.decision_function(X)
        p = 1.0 / (1.0 + np.exp(-d))
        return np.column_stack([1 - p, p])

    def strength(self, X) -> np.ndarray:
        """``(samples,)`` probability of the positive (second, e.g. ``"strong"``) class."""
        return self.predict_proba(X)[:, 1]


# --------------------------------------------------------------------------------------------
# MCC under grouped cross-validation
# --------------------------------------------------------------------------------------------
def mcc_from_confusion(tp: int, tn: int, fp: int, fn: int) -> float:
    """Matthews correlation coefficient from the four cells of a binary confusion matrix.

    MCC = (TP·TN − FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)); 0 when a margin is empty
    (the convention of scikit-learn).
    """
    den = float(tp + fp) * float(tp + fn) * float(tn + fp) * float(tn + fn)
    if den == 0:
        return 0.0
    return float((tp * tn - fp * fn) / np.sqrt(den))


@dataclass(frozen=True)
class CVResult:
    """Out-of-fold result of one classifier on one feature set.

    ``mcc`` is computed on the pooled out-of-fold predictions (every example predicted once, by
    a model that never saw its group); ``fold_mcc`` per test fold that holds both classes.
    """

    classifier: str
    features: tuple[str, ...]
    mcc: float
    fold_mcc: tuple[float, ...]
    accuracy: float
    n: int
    n_positive: int
    n_groups: int
    confusion: tuple[int, int, int, int]  # tn, fp, fn, tp


def grouped_mcc(
    X,
    y,
    groups,
    classifier: str = "svm-smo",
    features: Sequence[str] = (),
    n_splits: int = 5,
    random_state: int = 0,
) -> CVResult:
    """Grouped k-fold cross-validated MCC of one classifier.

    Args:
        X: ``(samples, features)`` array or DataFrame (then ``features`` selects columns).
        y: ``(samples,)`` binary labels.
        groups: ``(samples,)`` group of each example (recording, speaker, clip): no group is in
            both a training and a test fold.
        n_splits: folds (at most the number of groups).
    """
    Xm = feature_matrix(X, features) if (features or isinstance(X, pd.DataFrame)) else np.asarray(X, float)
    y = np.asarray(y)
    groups = np.asarray(groups)
    classes = np.unique(y)
    if len(classes) != 2:
        raise InputError(f"MCC tables need exactly two classes, got {list(classes)}")
    n_groups = len(np.unique(groups))
    k = min(n_splits, n_groups)
    if k < 2:
        raise InputError(f"grouped cross-validation needs at least 2 groups, got {n_groups}")
    try:
        splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=random_state)
        splits = list(splitter.split(Xm, y, groups))
    except ValueError:
        splits = list(GroupKFold(n_splits=k).split(Xm, y, groups))
    pred = np.empty_like(y)
    fold_mcc = []
    for train, test in splits:
        model = make_classifier(classifier, random_state)
        if len(np.unique(y[train])) < 2:  # a fold without one class: predict the majority
            pred[test] = y[train][0]
        else:
            model.fit(Xm[train], y[train])
            pred[test] = model.predict(Xm[test])
        if len(np.unique(y[test])) == 2:  # MCC of a one-class test fold is undefined
            ftn, ffp, ffn, ftp = confusion_matrix(y[test], pred[test], labels=classes).ravel()
            fold_mcc.append(mcc_from_confusion(ftp, ftn, ffp, ffn))
    pos = classes[1]
    tn, fp, fn, tp = confusion_matrix(y, pred, labels=classes).ravel()
    return CVResult(
        classifier=classifier,
        features=tuple(features),
        mcc=float(matthews_corrcoef(y, pred)),
        fold_mcc=tuple(fold_mcc),
        accuracy=float(accuracy_score(y, pred)),
        n=len(y),
        n_positive=int(np.sum(y == pos)),
        n_groups=n_groups,
        confusion=(int(tn), int(fp), int(fn), int(tp)),
    )


def feature_subsets(features: Sequence[str]) -> list[tuple[str, ...]]:
    """Every non-empty subset of ``features``, singles first, the full set last."""
    return [c for r in range(1, len(features) + 1) for c in itertools.combinations(features, r)]


def mcc_table(
    data: pd.DataFrame,
    features: Sequence[str],
    label: str,
    group: str,
    classifiers: Iterable[str] = ("svm-pegasos", "svm-smo", "logistic", "forest"),
    subsets: Sequence[Sequence[str]] | None = None,
    n_splits: int = 5,
    random_state: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """MCC per feature set (rows) and classifier (columns), grouped cross-validation.

    Like the thesis' Table 4.1 (stroke strength from FMDistance, velocity range and maximum
    velocity) and Table 8.2 (pitch accents). Returns a tidy DataFrame with columns
    ``features, classifier, mcc, mcc_sd (over folds), accuracy, n, n_positive, n_groups``;
    pivot with ``.pivot(index="features", columns="classifier", values="mcc")``. ``progress``
    shows a progress bar.
    """
    for col in list(features) + [label, group]:
        if col not in data.columns:
            raise InputError(f"column {col!r} not in the data; columns are {', '.join(map(str, data.columns))}")
    d = data.dropna(subset=list(features) + [label, group])
    rows = []
    jobs = [(subset, clf) for subset in (subsets or feature_subsets(features)) for clf in classifiers]
    if progress:
        from tqdm import tqdm

        jobs = tqdm(jobs, desc="cross-validating", unit="model")
    for subset, clf in jobs:
        r = grouped_mcc(d, d[label].to_numpy(), d[group].to_numpy(), clf, features=tuple(subset), n_splits=n_splits, random_state=random_state)
        rows.append({
            "features": " + ".join(subset),
            "classifier": clf,
            "mcc": r.mcc,
            "mcc_sd": float(np.std(r.fold_mcc, ddof=1)) if len(r.fold_mcc) > 1 else float("nan"),
            "accuracy": r.accuracy,
            "n": r.n,
            "n_positive": r.n_positive,
            "n_groups": r.n_groups,
        })
    return pd.DataFrame(rows)


def format_mcc_table(table: pd.DataFrame) -> str:
    """A plain-text pivot of :func:`mcc_table` output (rows: feature sets; columns: classifiers)."""
    pivot = table.pivot(index="features", columns="classifier", values="mcc")
    order = list(dict.fromkeys(table["features"]))
    pivot = pivot.loc[order, list(dict.fromkeys(table["classifier"]))]
    return pivot.to_string(float_format=lambda v: f"{v:+.3f}")
