"""The delete-one jackknife of AP (relimpute.confidence.survey) against replicates computed by
hand, for every sample of two tiny universes.

Each replicate is the sample with one document d left out (Poisson: the rest keep 1/π;
stratified: the rest of d's stratum reweighted N_h/(n_h − 1), its pairs by the factor of
n_h − 1 draws, Wolter 2007 §4.5), and its AP is statAP's ratio on that replicate alone, R̂
held at the relevant documents *that replicate* judged (the full sample's count, one more
when d is relevant, is not a bound on it). Both universes make the hold matter: a relevant
document judged for certain (π = 1, or a census stratum) beside one sampled relevant
document, whose replicate without it has R̂ = 1 < 2. Exact to 1e-12.
"""

from __future__ import annotations

from itertools import combinations, product

import numpy as np
import pytest

from relimpute.confidence.survey import POISSON, STRATIFIED, TopicSample, topic_estimate

RANK = np.array([1, 3, 2, 5, 4, 0])  # 0: not retrieved


def statap_by_hand(weight, relevant, stratum, pair_factor):
    """Σ_k w_k x_k / r_k (1 + Σ_{j ranked above k} f w_j x_j) / max(Σ w x, Σ 1[w > 0] x), f the
    pair factor within a stratum (1 across strata)."""
    judged = weight > 0
    counted = np.flatnonzero(judged & (RANK > 0) & (relevant == 1))
    numerator = 0.0
    for k in counted:
        above = sum(weight[j] * (pair_factor[stratum[j]] if stratum[j] == stratum[k] else 1.0)
                    for j in counted if RANK[j] < RANK[k])
        numerator += weight[k] / RANK[k] * (1.0 + above)
    r_hat = max(float(weight @ relevant), float(relevant[judged].sum()))
    return numerator / r_hat if r_hat > 0 else 0.0


def held_too_high(replicate, weight, relevant):
    """Whether the full sample's count of relevant judged (``weight``) would hold the
    ``replicate``'s R̂ (its own count lets it be)."""
    return replicate @ relevant < relevant[weight > 0].sum()


# Poisson: documents 0, 2 and 3 judged for certain; document 1 the only relevant one sampled, so
# AP has no pair of sampled relevant documents and the jackknife needs no pair correction
PI = np.array([1.0, 0.6, 1.0, 1.0, 0.5, 0.4])
RELEVANT_P = np.array([1, 1, 0, 0, 0, 0])


def test_poisson_replicates_hold_r_at_their_own_relevant_judged():
    n, sampled, one = len(PI), np.flatnonzero(PI < 1), np.zeros(len(PI), int)
    bound = False
    for bits in product((0, 1), repeat=len(sampled)):
        judged = PI >= 1
        judged[sampled[np.array(bits, dtype=bool)]] = True
        weight = np.where(judged, 1 / PI, 0.0)
        full = statap_by_hand(weight, RELEVANT_P, one, np.ones(1))
        expected = 0.0
        for d in np.flatnonzero(judged & (PI < 1)):
            rep = np.where(np.arange(n) == d, 0.0, weight)
            bound |= held_too_high(rep, weight, RELEVANT_P)
            expected += (1 - PI[d]) * (statap_by_hand(rep, RELEVANT_P, one, np.ones(1)) - full) ** 2
        topic = TopicSample("t", np.array([f"d{i}" for i in range(n)]),
                            np.where(judged, RELEVANT_P, -1), PI.copy(), one,
                            np.array([float(n)]), np.array([float(judged.sum())]), np.ones(1),
                            POISSON)
        value, var, *_ = topic_estimate(topic, "AP", RANK, bias_correction=False)
        assert value == pytest.approx(full, abs=1e-12)
        assert var == pytest.approx(expected, abs=1e-12)
    assert bound  # the full sample's count would have held some replicate's R̂


# stratified: stratum 0 (documents 0-1, the top) judged in full, stratum 1 (2-5) two of four
RELEVANT = np.array([1, 1, 0, 1, 0, 0])
STRATUM = np.array([0, 0, 1, 1, 1, 1])
SIZE, DRAWN = np.array([2.0, 4.0]), np.array([2.0, 2.0])


def test_stratified_replicates_hold_r_at_their_own_relevant_judged():
    factor = np.array([1.0, (DRAWN[1] / SIZE[1]) ** 2 / (2 * 1 / (SIZE[1] * (SIZE[1] - 1)))])
    bound = False
    for pick in combinations(range(2, 6), 2):
        judged = STRATUM == 0
        judged[list(pick)] = True
        weight = np.where(judged, (SIZE / DRAWN)[STRATUM], 0.0)
        full = statap_by_hand(weight, RELEVANT, STRATUM, factor)
        replicates = []
        for d in pick:  # the census stratum has no replicates (π = 1)
            rep = weight.copy()
            rep[d] = 0.0
            rep[[e for e in pick if e != d]] = SIZE[1] / (DRAWN[1] - 1)
            replicates.append(statap_by_hand(rep, RELEVANT, STRATUM, [1.0, 0.0]))  # one draw
            bound |= held_too_high(rep, weight, RELEVANT)
        coef = (1 - DRAWN[1] / SIZE[1]) * (DRAWN[1] - 1) / DRAWN[1]
        expected = coef * sum((v - np.mean(replicates)) ** 2 for v in replicates)
        pi = (DRAWN / SIZE)[STRATUM]
        topic = TopicSample("t", np.array([f"d{i}" for i in range(6)]),
                            np.where(judged, RELEVANT, -1), pi, STRATUM.copy(), SIZE.copy(),
                            DRAWN.copy(), factor, STRATIFIED)
        value, var, *_ = topic_estimate(topic, "AP", RANK, bias_correction=False)
        assert value == pytest.approx(full, abs=1e-12)
        assert var == pytest.approx(expected, abs=1e-12)
    assert bound  # as above
