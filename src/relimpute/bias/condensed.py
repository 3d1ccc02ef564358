"""Condensed lists (Sakai 2007): unjudged documents removed from the run before scoring.

Biased in favour of unpooled runs (Sakai 2008; Webber & Park 2009 §1): the
documents promoted into the removed ones' ranks were found by the pooled
runs and are more likely relevant than those removed.
"""

from __future__ import annotations

from .base import Corrector, register_corrector, topic_scores


class CondensedLists(Corrector):
    """Score the judged-only condensed list of the new run."""

    name = "condensed"

    def _correct(self, context, rows, measure, reduced):
        scores = topic_scores(context.campaign, [measure], rows, condensed=True)[0]
        return {"estimate": scores.mean(axis=1)}


register_corrector(CondensedLists)
