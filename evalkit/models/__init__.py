"""Learned models: the naturalness discriminator (corruptions, window features, baselines,
evaluation) and classifiers of gesture/speech strength."""
