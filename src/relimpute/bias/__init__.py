"""Pool-bias correction for runs that did not contribute to the pool.

Webber & Park (2009), Lipani et al. (2015, 2016) and relimpute's relevance models.

Layers:

pools (:mod:`.pools`, :mod:`.groups`)
    depth-k pools from any subset of runs, leave-one-run-out and
    leave-one-group-out reduced pools (only runs flagged ``pooled`` in
    ``groups.tsv`` contribute), and a check that a pool reproduces a qrels.
correctors (one module each, one interface: :class:`Corrector`)
    ``reduced`` (no correction; RBP residual interval), ``condensed`` (Sakai),
    ``webber-park`` (Algorithm 1, with add-back), ``webber-park-topics``
    (Algorithm 2, Eqs. 1–3, 6, 7), ``lipani`` (Lipani et al. 2016, P@n),
    ``anti-precision`` (Lipani et al. 2015, P@n) and ``model`` (E[full-pool
    score] under a relevance model, with its interval).
study (:mod:`.study`)
    the leave-one-group-out study: MAE, SRE, SRE*, Kendall τ and interval
    coverage per corrector, measure and depth.
new runs (:mod:`.newrun`)
    a run outside the pool against the official runs: its pool score with an
    interval, its rank distribution and P(it beats each) (``relimpute newrun``).
"""

from . import (  # noqa: F401  (their import order is the report's order of correctors)
    anti_precision,
    common_topics,
    condensed,
    lipani,
    model,
    reduced,
    webber_park,
)
from .base import (
    STUDY_MEASURES,
    Correction,
    Corrector,
    PoolContext,
    available_correctors,
    get_corrector,
    register,  # deprecated: register_corrector
    register_corrector,
    topic_scores,
)
from .common_topics import TopicAdjustment, common_topic_adjustment
from ..groups import RunGroups, groups_from_frame, read_groups
from .pools import (
    LeaveOutPool,
    depth_pool,
    leave_one_group_out,
    leave_one_run_out,
    pool_counts,
    pool_reproduction,
)

__all__ = [
    "STUDY_MEASURES",
    "Correction",
    "Corrector",
    "LeaveOutPool",
    "PoolContext",
    "RunGroups",
    "TopicAdjustment",
    "available_correctors",
    "common_topic_adjustment",
    "depth_pool",
    "get_corrector",
    "groups_from_frame",
    "leave_one_group_out",
    "leave_one_run_out",
    "pool_counts",
    "pool_reproduction",
    "read_groups",
    "register_corrector",
    "topic_scores",
]
