"""A run's effect carried below the pool (``beyond_run_carry``; ``docs/math/fusion.md``, "Below
the pool").

The fusion model's run effects ``u_j`` act through the votes ``1 / log2(1 + r)``, which fade with
the rank. The carry adds to a document below the pool ``β`` times the vote-weighted mean effect of
the runs that retrieve it, less one centre per campaign chosen so that the expected number of
relevant documents below the pool stays what it was: the carry moves relevance between those
documents, the decay below the pool keeps their level.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from .evidence import TopicEvidence, _log_depth_ratio


def carried_rows(ev: TopicEvidence) -> np.ndarray:
    """The documents the carry acts on: retrieved, best rank below the pool depth."""
    return (_log_depth_ratio(ev) > 0) & (ev.votes.getnnz(axis=1) > 0)


def carry_factors(ev: TopicEvidence, carry: float) -> np.ndarray:
    """Per document the factor on its runs' votes in the design, ``1 + β / Σ_j v_ij`` on the
    carried documents (the run effects then add ``β Σ_j v_ij u_j / Σ_j v_ij``), 1 elsewhere."""
    rows = carried_rows(ev)
    votes = np.asarray(ev.votes.sum(axis=1)).ravel()
    return 1.0 + np.where(rows, carry / np.where(rows, votes, 1.0), 0.0)


def carry_centres(evidence: list[TopicEvidence], eta, effects, carry: float) -> list[np.ndarray]:
    """Per topic the centre ``c`` on the carried documents (0 elsewhere): with ``eta`` the
    log-odds with the carry, ``Σ expit(η_i − c)`` over every carried document of the campaign
    equals ``Σ expit(η_i − β s_i)``, their expected count without it (``s_i`` the vote-weighted
    mean of ``effects``, one per run). Newton's method on the one number ``c``."""
    rows = [carried_rows(ev) for ev in evidence]
    if not carry or not any(r.any() for r in rows):
        return [np.zeros(len(r)) for r in rows]
    effects = np.asarray(effects, float)
    votes = [ev.votes[r] for ev, r in zip(evidence, rows)]
    shift = [v @ effects / np.asarray(v.sum(axis=1)).ravel() for v in votes]
    with_carry = np.concatenate([e[r] for e, r in zip(eta, rows)])
    target = expit(with_carry - carry * np.concatenate(shift)).sum()
    centre = 0.0
    for _ in range(100):
        p = expit(with_carry - centre)
        step = (p.sum() - target) / max(float((p * (1 - p)).sum()), 1e-300)
        centre += step
        if abs(step) < 1e-12:
            break
    return [np.where(r, centre, 0.0) for r in rows]


def with_carry_spread(run_effects, below, evidence, effects, sd: float, rng, n: int):
    """The draws' run effects below the pool and their weights, with the carry's spread joined:
    per draw ``(β_d − β)(u_j − ū)`` (``β_d − β ~ N(0, sd²)``, one per draw, shared by every run
    and topic; ``ū`` the runs' mean effect) on the vote shares of the carried documents. As
    extra columns of the run-effect term the draws already compute; unchanged when ``sd`` is 0."""
    if not sd:
        return run_effects, below
    effects = np.asarray(effects, float)
    shift = rng.normal(0.0, sd, size=(n, 1)) * (effects - effects.mean())[None, :]
    weights = []
    for ev in evidence:
        rows = carried_rows(ev)
        votes = np.asarray(ev.votes.sum(axis=1)).ravel()
        weights.append(sp.diags(np.where(rows, 1.0 / np.where(rows, votes, 1.0), 0.0)) @ ev.votes)
    if run_effects is None:
        return shift, [sp.csr_matrix(w) for w in weights]
    joined = [sp.hstack([b, w], format="csr") for b, w in zip(below, weights)]
    return np.hstack([run_effects, shift]), joined
