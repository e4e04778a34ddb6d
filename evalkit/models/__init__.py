"""Learned models: the naturalness discriminator (corruptions, window features, baselines,
evaluation) and classifiers of gesture/speech strength.

Public names (imported on first use, so that ``import evalkit.models.window_features`` stays light):
:class:`NaturalnessDiscriminator` (a scikit-learn classifier of windows), :func:`score_naturalness`
(one clip's verdict, :class:`MotionScore`), :func:`train` with :class:`TrainOptions` (the
``evalkit train`` job), :func:`load_model` / :func:`save_model` (the model file and its
metadata; ``"default"`` is the shipped model).
"""

from __future__ import annotations

import importlib

_PUBLIC = {
    "NaturalnessDiscriminator": "evalkit.models.discriminator",
    "MotionScore": "evalkit.models.discriminator",
    "score_naturalness": "evalkit.models.discriminator",
    "train": "evalkit.models.training",
    "TrainOptions": "evalkit.models.training",
    "load_model": "evalkit.models.training",
    "save_model": "evalkit.models.training",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    """The public names, imported from their module on first use (PEP 562)."""
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'evalkit.models' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
