"""Score a campaign's runs: per topic and averaged, as trec_eval does.

Topic policy (``missing=``): a run that retrieved nothing for a qrels topic
is either left out of that topic (``"skip"``, trec_eval's default: a run's
mean is over the qrels topics it retrieved for) or scored 0 there
(``"zero"``, trec_eval ``-c``: the mean is over all qrels topics). Topics in
a run but not in the qrels were dropped when the campaign was built (see
:mod:`relimpute.data`).

``condensed=True`` scores judged-only condensed lists (Sakai 2007): every
unjudged document is removed from each ranking before scoring, a baseline
for incomplete judgments. A run whose condensed list is empty still counts
as having retrieved for the topic (and scores 0 there).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..data import Campaign
from ._ranked import condense
from ._registry import GAINS, Measure, parse_measures

MISSING = ("skip", "zero")

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded by evaluate, not by run_means
    import pandas as pd


def evaluate(
    campaign: Campaign,
    measures: str | Measure | Iterable[str | Measure],
    *,
    per_topic: bool = False,
    missing: str = "skip",
    condensed: bool = False,
    gain: str = "linear",
) -> pd.DataFrame:
    """Score every run of ``campaign`` with ``measures``.

    Parameters
    ----------
    campaign
        Runs and judgments; binary measures use its ``rel_threshold`` unless
        the measure says ``rel=``.
    measures
        Names (``"AP"``, ``"P@10"``, ``"RBP(p=0.8)"``, ...) or parsed measures.
    per_topic
        Return one row per (system, topic, measure) instead of the means.
    missing
        ``"skip"`` (trec_eval default) or ``"zero"`` (trec_eval ``-c``), see
        the module docstring.
    condensed
        Score judged-only condensed lists (Sakai 2007).
    gain
        nDCG gains: ``"linear"`` (trec_eval) or ``"exponential"`` (2^rel − 1).

    Returns
    -------
    pandas.DataFrame
        Tidy: ``system, query_id, measure, value`` per topic, or
        ``system, measure, value`` (mean over the topics the policy keeps,
        or their sum for the counts NumRet, NumRel and NumRelRet, as
        trec_eval's ``all`` rows; NaN for a run with no such topic). Systems in campaign order,
        topics in campaign order, measures in the order given.
    """
    import pandas as pd

    parsed = parse_measures(measures)
    scores, keep = _scored(campaign, parsed, missing=missing, condensed=condensed, gain=gain)
    names = [str(m) for m in parsed]
    n_measures, n_systems, n_topics = scores.shape
    if per_topic:
        m_idx, s_idx, t_idx = np.meshgrid(
            np.arange(n_measures), np.arange(n_systems), np.arange(n_topics), indexing="ij"
        )
        order = np.lexsort((m_idx.ravel(), t_idx.ravel(), s_idx.ravel()))
        rows = order[np.broadcast_to(keep, scores.shape).ravel()[order]]
        return pd.DataFrame(
            {
                "system": np.asarray(campaign.systems, dtype=object)[s_idx.ravel()[rows]],
                "query_id": np.asarray(campaign.query_ids, dtype=object)[t_idx.ravel()[rows]],
                "measure": np.asarray(names, dtype=object)[m_idx.ravel()[rows]],
                "value": scores.ravel()[rows],
            }
        )
    return pd.DataFrame(
        {
            "system": np.repeat(np.asarray(campaign.systems, dtype=object), n_measures),
            "measure": np.tile(np.asarray(names, dtype=object), n_systems),
            "value": _means(parsed, scores, keep).T.ravel(),
        }
    )


def run_means(
    campaign: Campaign,
    measures: Iterable[Measure],
    *,
    missing: str = "skip",
    condensed: bool = False,
    gain: str = "linear",
) -> np.ndarray:
    """``(S, M)``: each run's mean (or sum) of each measure, the values :func:`evaluate`
    returns (systems in campaign order, measures in the order given), without pandas."""
    parsed = list(measures)
    scores, keep = _scored(campaign, parsed, missing=missing, condensed=condensed, gain=gain)
    return _means(parsed, scores, keep).T


def _scored(campaign, parsed, *, missing, condensed, gain) -> tuple[np.ndarray, np.ndarray]:
    """``(M, S, T)`` scores and the ``(S, T)`` (system, topic) cells the topic policy keeps."""
    if missing not in MISSING:
        raise ValueError(f"missing must be one of {MISSING}, got {missing!r}")
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
    scores = _score_all(campaign, parsed, condensed=condensed, gain=gain)
    keep = campaign.coverage() if missing == "skip" else np.ones(scores.shape[1:], dtype=bool)
    return scores, keep


def _means(parsed: list[Measure], scores: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``(M, S)`` means over the kept topics (sums for the counts; NaN with none kept)."""
    counts = keep.sum(axis=1)
    totals = np.where(keep, scores, 0.0).sum(axis=2)
    means = np.divide(totals, counts, out=np.full(totals.shape, np.nan), where=counts > 0)
    summed = np.array([m.aggregate == "sum" for m in parsed])
    means[summed] = np.where(counts > 0, totals[summed], np.nan)
    return means


def _score_all(
    campaign: Campaign, measures: list[Measure], *, condensed: bool, gain: str
) -> np.ndarray:
    """``(M, S, T)`` scores of every measure, system and topic."""
    out = np.zeros((len(measures), campaign.n_systems, campaign.n_topics))
    for t, topic in enumerate(campaign.topics):
        ranking = condense(topic.ranking, topic.judged) if condensed else topic.ranking
        for m, measure in enumerate(measures):
            out[m, :, t] = measure.score(
                ranking,
                topic.grades,
                judged=topic.judged,
                rel_threshold=campaign.rel_threshold,
                gain=gain,
            )
    return out
