"""AP, P@k and nDCG@k of one run on one topic as functions of sampled totals, with the
linearised (delta-method) variable of each estimate.

A measure is f(T_1, ..., T_m) of totals over the universe (:mod:`.totals`); its estimate is
f(T̂(λ)) and, to first order in the weights w_d = 1[d ∈ S] / π_d,

    f(T̂) − f(T) ≈ Σ_d z_d (w_d − 1),    z_d = Σ_i ∂f/∂T_i · ∂T̂_i/∂w_d

(the derivatives at the sample's estimates: Binder 1996; Demnati & Rao 2004), so its design
variance is that of the linear total Σ z_d w_d (:func:`.design.design_covariance`). The
approximation drops the second-order terms of the ratio and of AP's pairs; its error is
O(1/|S|) relative (``tests/test_survey_estimators.py`` measures it by enumeration).

- P@k = (1/k) Σ_{r_d ≤ k} x_d: linear (HT exactly unbiased).
- AP = N / R, N = Σ_{j ≤ k} x_j x_k / k, R = Σ_U x_d (statAP's ratio, :mod:`relimpute
  .measures.statap`); AP@k keeps ranks ≤ k in N. Its totals, ratio bias and jackknife are
  :mod:`.batched`'s, for one sample or many; :func:`ratio_parts` is its ratio.
- nDCG@k = DCG@k / IDCG@k(R_1, ..., R_G), R_g the number of documents of grade g; the ideal
  DCG of fractional counts interpolates linearly between whole documents
  (IDCG = Σ_m (g_m − g_{m+1}) D(c_m), c_m the count of grades ≥ g_m, D the cumulative
  discount, piecewise linear), equal to the usual one at whole counts (``sample_eval.pl``
  rounds the counts instead).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...measures import parse_measure
from ...measures.ndcg import dcg_discounts, gain_values
from .design import TopicSample
from .totals import Total, linear_total

#: The measure families the design-based estimators cover.
SURVEY_FAMILIES = ("AP", "P", "nDCG")


@dataclass
class Control:
    """A topic's predictions over its universe: ``p`` = P(relevant), ``gain`` the expected
    gain, ``grades`` the grades of the ideal DCG and ``grade_p`` (G, n) P(grade = g)."""

    p: np.ndarray
    gain: np.ndarray
    grade_p: dict


def no_control(topic: TopicSample) -> Control:
    """Predictions of zero: every estimator is then HT."""
    zero = np.zeros(len(topic.doc_ids))
    return Control(zero, zero, {})


def survey_measure(name):
    """The :class:`~relimpute.measures.Measure` ``name`` parses to, refused unless AP, P@k or
    nDCG@k (the measures made of design-estimable totals)."""
    measure = parse_measure(name)
    if measure.family not in SURVEY_FAMILIES or (measure.family == "P" and not measure.cutoff):
        raise ValueError(f"{measure}: design-based estimates cover AP, P@k and nDCG@k")
    return measure


def measure_totals(measure, topic: TopicSample, rank: np.ndarray, control: Control,
                   rel_threshold: int, weights: np.ndarray | None = None
                   ) -> tuple[list[Total], callable]:
    """The totals of ``measure`` (P@k, nDCG@k; AP's are :mod:`.batched`'s) for a run with
    ``rank`` (per universe document, 0 = not retrieved) and the function f(values) ->
    (value, gradient) that makes the measure; with replicate ``weights`` (B, n)
    (:func:`.design.replicates`) the totals' HT parts are ``(B,)`` (no gradient: f(values)
    then gives the B values)."""
    w = topic.weight if weights is None else weights
    grade = np.where(topic.judged, topic.grade, 0)
    k = measure.cutoff
    kept = rank if k is None else np.where(rank <= k, rank, 0)
    if measure.family == "P":
        coef = np.where(kept > 0, 1.0 / k, 0.0)
        x = (grade >= rel_threshold).astype(float)
        return [linear_total(coef, x, control.p, w)], _identity
    scheme = dict(measure.params).get("gain", "linear")
    gains = gain_values(grade, scheme)
    depth = int(kept.max()) if k is None else k
    discount = np.zeros(len(x_ := gains))
    discount[kept > 0] = dcg_discounts(max(depth, 1))[kept[kept > 0] - 1]
    levels = np.unique(grade[topic.judged & (grade > 0)])[::-1]  # g_1 > g_2 > ...
    totals = [linear_total(discount, x_, control.gain, w)]
    for g in levels:
        totals.append(linear_total(np.ones(len(grade)), (grade == g).astype(float),
                                   control.grade_p.get(int(g), np.zeros(len(grade))), w))
    level_gain = gain_values(levels, scheme)
    ideal_depth = k if k is not None else len(grade)
    return totals, lambda v: _ndcg(v, level_gain, ideal_depth)


def _identity(v):
    return v[0], np.array([1.0])


#: An estimated count of relevant documents below this is none: what is left when a
#: model-assisted R̂'s residuals cancel its predictions (104 − 104 ≈ 1e-14) is roundoff.
NO_RELEVANT = 1e-9


def relevant_judged(weights: np.ndarray, relevant: np.ndarray):
    """Σ_d 1[w_d > 0] x_d: the relevant documents a sample judged (``weights`` (n,)), or each
    replicate's own sample (``weights`` (B, n): a delete-one replicate that left out a relevant
    document judged one fewer), the floor of R̂ in :func:`ratio_parts`."""
    return (np.asarray(weights) > 0) @ np.asarray(relevant, dtype=float)


def ratio_parts(n, r, least=0.0):
    """AP = N / R elementwise from its totals: (value, ∂/∂N, ∂/∂R), R̂ held at least ``least``
    (:func:`relevant_judged`, per replicate for replicate totals: R cannot be smaller, and a
    model-assisted R̂ below it, from predictions that overrate, would make the ratio explode;
    held, ∂/∂R is 0); an R̂ below :data:`NO_RELEVANT` is 0 (AP 0, gradient 0)."""
    n, r = np.asarray(n, dtype=float), np.asarray(r, dtype=float)
    held = r < least
    r = np.maximum(r, least)
    ok = r >= NO_RELEVANT
    safe = np.where(ok, r, 1.0)
    return (np.where(ok, n / safe, 0.0), np.where(ok, 1.0 / safe, 0.0),
            np.where(ok & ~held, -n / safe**2, 0.0))


def _cumulative_discount(c: float, depth: int) -> tuple[float, float]:
    """D(c) = ∫_0^min(c, depth) 1/log2(⌈u⌉ + 1) du and its right derivative."""
    c = max(c, 0.0)
    if c >= depth:
        return float(dcg_discounts(depth).sum()), 0.0
    whole = int(np.floor(c))
    disc = dcg_discounts(whole + 1)
    return float(disc[:whole].sum() + (c - whole) * disc[whole]), float(disc[whole])


def _ndcg(values, level_gain, depth):
    if np.ndim(values[0]):  # replicates: the values alone
        rows = np.broadcast_arrays(*values)
        return np.array([_ndcg([r[b] for r in rows], level_gain, depth)[0]
                          for b in range(len(rows[0]))]), None
    dcg, counts = values[0], np.asarray(values[1:], dtype=float)
    grad = np.zeros(len(values))
    if not len(counts):
        return 0.0, grad
    cumulative = np.cumsum(counts)
    steps = level_gain - np.append(level_gain[1:], 0.0)
    d = [_cumulative_discount(c, depth) for c in cumulative]
    ideal = float(sum(s * di for s, (di, _) in zip(steps, d)))
    if ideal <= 0:
        return 0.0, grad
    slope = np.array([s * dd for s, (_, dd) in zip(steps, d)])
    d_ideal = np.cumsum(slope[::-1])[::-1]  # ∂IDCG/∂R_l = Σ_{m ≥ l} (g_m − g_{m+1}) D'(c_m)
    grad[0] = 1.0 / ideal
    grad[1:] = -dcg / ideal**2 * d_ideal
    return dcg / ideal, grad


def linearised(totals: list[Total], make, lam: float) -> tuple[float, np.ndarray]:
    """The estimate f(T̂(λ)) and its linearised variable z over the universe."""
    value, grad = make([t.value(lam) for t in totals])
    z = sum(g * t.derivative(lam) for g, t in zip(grad, totals))
    return value, z


def replicate_values(totals: list[Total], make, lam: float) -> np.ndarray:
    """f(T̂(λ)) under each replicate's weights (totals from replicate weights)."""
    return np.asarray(make([t.value(lam) for t in totals])[0], dtype=float)


def prediction_part(totals: list[Total], make) -> tuple[np.ndarray, np.ndarray]:
    """(u, v) with z(λ) ≈ u − λ v at the HT point: u from the judgments, v from the
    predictions read on the sample (for tuning λ)."""
    _, grad = make([t.value(0.0) for t in totals])
    u = sum(g * t.dx for g, t in zip(grad, totals))
    v = sum(g * t.dp for g, t in zip(grad, totals))
    return u, v
