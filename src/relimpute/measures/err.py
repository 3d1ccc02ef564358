"""Expected reciprocal rank, ERR@k (Chapelle, Metzler, Zhang & Grinspan 2009, Eq. 4).

A user scans down the list and stops at rank r, satisfied, with probability
``R_r = (2^g_r − 1) / 2^g_max`` for a document of grade ``g_r``;
``ERR@k = Σ_{r ≤ k} (1/r) R_r Π_{i < r} (1 − R_i)``. As in ``gdeval.pl`` (the
TREC Web track's evaluation script, ir_measures' ERR provider) ``g_max`` is 4
whatever the collection's scale, negative grades count 0, and unjudged
documents count 0. Without a cutoff the whole list counts.
"""

from __future__ import annotations

import numpy as np

from ._ranked import at_ranks, check_values, in_draw_chunks, top_k
from ._registry import GradedMeasure, register_measure

#: gdeval.pl's ``$MAX_JUDGMENT``: the grade at which a document surely satisfies.
MAX_GRADE = 4


@in_draw_chunks
def expected_reciprocal_rank(
    ranking: np.ndarray, grades: np.ndarray, k: int | None = None
) -> np.ndarray:
    """ERR@k of every system on one topic: ``(S,)`` or ``(B, S)``.

    ``grades`` is ``(n,)`` or ``(B, n)`` graded labels (at most ``MAX_GRADE``).
    """
    grades = check_values(grades, "grades")
    ranking = top_k(ranking, grades, k)
    if grades.size and np.max(grades) > MAX_GRADE:
        raise ValueError(f"ERR takes grades up to {MAX_GRADE} (gdeval.pl), got {np.max(grades)}")
    stop = (np.exp2(np.maximum(grades.astype(np.float64), 0.0)) - 1.0) / 2.0**MAX_GRADE
    stop_at = at_ranks(ranking, stop)
    reach = np.cumprod(1.0 - stop_at, axis=-1)
    reach = np.concatenate([np.ones(reach.shape[:-1] + (1,)), reach[..., :-1]], axis=-1)
    return (stop_at * reach) @ (1.0 / np.arange(1, ranking.shape[1] + 1))


class ERR(GradedMeasure):
    """Expected reciprocal rank over the grades."""

    description = "expected reciprocal rank over the grades (gdeval.pl, max grade 4)"

    def _graded_score(self, ranking, grades, gain):
        return expected_reciprocal_rank(ranking, grades, self.cutoff)  # gdeval.pl's gains, always


register_measure(ERR, family="ERR", cutoff_rule="optional")
