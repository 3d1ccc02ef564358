"""The model-guided design: sample where the model is unsure of what decides the comparison.

Active statistical inference (Zrnic & Candès, ICML 2024, §3: π ∝ the model's uncertainty
about each unit's contribution) applied to ΔMAP: an unjudged document d of topic t gets

    u_d = sqrt(p_d (1 − p_d)) · Σ_{(a,b)} |g^a_d − g^b_d| / E[R_t]

where p_d is the relevance model's probability (the default model fitted on the judgments
given), ``g^a_d − g^b_d`` MTC's weight of d in ΔAP of the pair (a, b) (Carterette 2007 §2.1,
:func:`~.mtc.system_sums`) summed over the pairs asked (every pair of the runs by default),
and E[R_t] = Σ p over the topic's universe. π = clip(c · u, floor, 1) with c such that Σ π is
the budget (:func:`~.designs.pps_inclusion`, over all topics at once: a topic the comparison
hardly depends on gets the floor); the floor π_min > 0 keeps every candidate drawable, so
the design-based estimators stay unbiased whatever the model.

The draw is Poisson sampling with one uniform U_d per document: d is drawn when U_d < π_d,
and its ``entry`` is U_d / π_d. The drawn documents are asked in the order of their entry,
over all topics, so the documents answered by the time the entries pass f ∈ (0, 1] are
{d : U_d < f π_d}: exactly a Poisson sample with inclusion f · π_d (nested in the whole
draw). A look at fraction f of the design (:mod:`.looks`) is therefore a probability sample
with known π, whatever the answers seen before it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .mtc import pair_abs_sum, system_sums

#: The default model (``judge``'s posterior strategy fits the same).
DEFAULT_MODEL = "fusion"


def fit_model(campaign, model: str, rng: np.random.Generator):
    """``model`` (a registered name or settings file) fitted on ``campaign``'s judgments: its
    estimate of every document (seeded from ``rng``)."""
    from ..relevance.base import get_model
    from ..relevance.settings import load_settings

    settings = load_settings(model)
    return get_model(settings.model, **settings.params).fit_predict(
        campaign, rng=int(rng.integers(2**31))
    )


def pair_rows(systems: tuple[str, ...], pairs) -> np.ndarray:
    """``(P, 2)`` row indices into ``systems`` of ``pairs`` (None: every pair)."""
    index = {name: k for k, name in enumerate(systems)}
    if pairs is None:
        return np.array([(a, b) for a in range(len(systems)) for b in range(a + 1, len(systems))],
                        dtype=int).reshape(-1, 2)  # fmt: skip
    unknown = sorted({n for pair in pairs for n in pair} - set(index))
    if unknown:
        raise ValueError(f"the pairs name runs not compared: {', '.join(unknown)}")
    return np.array([(index[a], index[b]) for a, b in pairs], dtype=int).reshape(-1, 2)


def guided_uncertainty(campaign, estimate, systems, depth: int, pairs=None) -> pd.DataFrame:
    """Every unjudged document of the depth-``depth`` pool of ``systems``: ``query_id, doc_id,
    rank`` (its best), ``weight`` (Σ over ``pairs`` of |its weight in ΔAP| / E[R_t]), ``p``
    (``estimate``'s) and ``uncertainty`` u_d = sqrt(p (1 − p)) · weight (module docstring)."""
    systems = tuple(systems)
    rows = campaign.system_rows(systems)
    compared = pair_rows(systems, pairs)
    threshold = campaign.rel_threshold
    parts = []
    for t, topic in enumerate(campaign.topics):
        p = np.where(topic.judged, topic.grades >= threshold, estimate.p[t]).astype(float)
        cut = [min(int(topic.depth[s]), depth) for s in rows]
        g = np.stack([system_sums(topic.ranking[s], k, p) for s, k in zip(rows, cut)])
        pool = topic.retrieved(rows, depth)
        expected_r = p[pool | topic.judged].sum()
        weight = pair_abs_sum(g, compared) / (expected_r if expected_r > 0 else 1.0)
        best = np.full(topic.n_docs, np.iinfo(np.int32).max)
        for s, k in zip(rows, cut):
            np.minimum.at(best, topic.ranking[s, :k], np.arange(1, k + 1))
        open_ = np.flatnonzero(pool & ~topic.judged)
        parts.append(pd.DataFrame({
            "query_id": topic.query_id, "doc_id": topic.doc_ids[open_].astype(str),
            "rank": best[open_], "weight": weight[open_], "p": p[open_],
            "uncertainty": np.sqrt(p[open_] * (1 - p[open_])) * weight[open_],
        }))  # fmt: skip
    return pd.concat(parts, ignore_index=True)
