"""The default relevance model, ``fusion``: the runs' consensus learned where judging followed
the ranks (docs/math/fusion.md).

Modules: :mod:`.model` (:class:`Fusion`: the fit and the point estimate), :mod:`.evidence`
(each topic's features and pool depth), :mod:`.prior` (the prior of θ), :mod:`.capture` (the
capture adjustment for documents judged beyond the pool), :mod:`.draws` (the posterior draws)
and :mod:`._kernels` (their compiled loops).
"""

from .capture import capture_factors
from .evidence import (
    FEATURE_NAMES,
    N_FEATURES,
    TopicEvidence,
    judged_prefixes,
    pool_depth,
    topic_evidence,
)
from .model import CUT_SD, PLUG_IN, SPREAD_RATIO, Fusion

__all__ = [
    "CUT_SD",
    "FEATURE_NAMES",
    "N_FEATURES",
    "PLUG_IN",
    "SPREAD_RATIO",
    "Fusion",
    "TopicEvidence",
    "capture_factors",
    "judged_prefixes",
    "pool_depth",
    "topic_evidence",
]
