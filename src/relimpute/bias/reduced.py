"""The baseline: no correction, unjudged documents count as nonrelevant (the reduced pool).

For RBP the score comes with Moffat & Zobel's (2008) residual, so the
interval ``[RBP, RBP + residual]`` holds every score the run could have with
more judgments, the full-pool score included.
"""

from __future__ import annotations

import numpy as np

from ..measures import parse_measure
from .base import Corrector, register_corrector


class ReducedPool(Corrector):
    """Reduced-pool score as is (Lipani et al. 2016 §4.1 "Reduced Pool")."""

    name = "reduced"

    def _correct(self, context, rows, measure, reduced):
        columns = {"estimate": reduced}
        if measure.family == "RBP":
            residual_measure = parse_measure(
                f"RBPres(p={measure.param('p')})" + (f"@{measure.cutoff}" if measure.cutoff else "")
            )
            campaign = context.campaign
            residual = np.mean(
                [
                    residual_measure.score(t.ranking[rows], t.grades, judged=t.judged)
                    for t in campaign.topics
                ],
                axis=0,
            )
            columns.update(ci_low=reduced, ci_high=reduced + residual, residual=residual)
        return columns


register_corrector(ReducedPool)
