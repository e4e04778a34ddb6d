"""Distribution metrics: how far a system's motion is, as a set, from real motion.

FGD (an autoencoder embedding of fixed-length windows, :mod:`.embedding`), FGD on raw data space
(GENEA: flattened windows) and on single poses, FID_k / FID_g on the AIST++ kinetic and geometric
features (:mod:`.geometric`), Div_k / Div_g (:mod:`.diversity`), EMAGE's L1 divergence and EDGE's
PFC (:mod:`.physical`), all with bootstrap intervals over clips (:mod:`.metrics`) and the protocol
recorded with every number (:mod:`.compare`). Every rig is reached through joint roles on one
canonical joint set (:mod:`.windows`). Definitions, sources and differences from the public code:
docs/distribution.md.
"""

from evalkit.distribution.compare import Comparison, compare, write_outputs
from evalkit.distribution.embedding import (
    Extractor, ProtocolMismatchError, TrainingSettings, WindowProtocol, check_protocol, load_extractor,
    train_extractor,
)
from evalkit.distribution.frechet import frechet_distance, frechet_distance_sqrtm, frechet_from_features

__all__ = [
    "Comparison", "compare", "write_outputs", "Extractor", "ProtocolMismatchError", "TrainingSettings",
    "WindowProtocol", "check_protocol", "load_extractor", "train_extractor", "frechet_distance",
    "frechet_distance_sqrtm", "frechet_from_features",
]
