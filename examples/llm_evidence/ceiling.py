"""How far can labels go: the oracle-calibrated ceiling of the study's goals (bias, τ).

Run from the repository root::

    python examples/llm_evidence/ceiling.py [--collections dl19,dl21] [--pool 3] [--random 10]
        [--source umbrela-gpt-4o] [--draws 500] [--out examples/llm_evidence/results]

In ``study.py``'s designs (same seed, so the same kept human labels) every NIST-judged pair
not kept gets a probability of relevance from an *oracle* that read the official qrels; kept
human labels keep their grade; a document NIST never judged is non-relevant (the labels' pool,
``FusionLLM(unlabelled="nonrelevant")``, trec_eval's reading). R counts every labelled
document, as the study's engine does (docs/math/average-precision.md). The oracles
(:data:`ORACLES`), each the share NIST judged relevant (grade >= 2) of a cell:

``oracle``, ``oracle, per topic``
    cell: the label value; fitted on every official judgment of the collection, or of the
    topic (a label value the topic lacks takes the collection's share).
``oracle where applied`` (``, per topic``)
    the same fitted on the judged pairs not kept, where the probabilities are used.
``oracle label x rank``
    cell: label value and the document's best rank over the runs (:data:`RANK_EDGES`).
``oracle label + runs``
    a logistic regression on the truth of the pairs not kept: label value, topic and the
    runs' evidence (:func:`runs_features`), coefficients known. Not a cell share.

The first four bound any method that reads only the label value (per collection or topic);
the last, roughly, an additive label + topic + runs model such as ``fusion-llm``'s. Two
answers per oracle:

exact
    E[AP] of every run and topic from the library's engine (``ConfidenceEngine.evaluate``:
    E[Q] / E[R], Carterette 2007 §2.1), E[MAP], its mean |bias| against the official MAP
    and Kendall's τ of E[MAP] against it.
drawn
    relevance of every labelled document drawn Bernoulli(oracle p) independently,
    ``--draws`` times; per draw MAP, τ and mean |bias|: how a calibrated model's answer
    would scatter (the spread of τ, and P(τ >= 0.95)).

Beside them ``substitution`` (the label's grade >= 2 taken as the truth) on the same kept
labels. Sanity oracles (``oracle`` only, each design; the run stops if one fails): the
vectorised per-draw AP equals ``relimpute.measures``' AP (trec_eval's definition) on the same
drawn qrels for three draws (to 1e-9), and the engine's E[MAP] of one run (the median) lies
within 4 Monte Carlo standard errors plus ``TOLERANCE`` (E[Q] / E[R] stands in for E[Q / R])
of its mean MAP over ``--check-draws`` draws. Writes ``ceiling.csv``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study import kept_judgments, llm_grades, load, metrics, per_topic_ap, substituted  # noqa: E402

from relimpute.calibration.metrics import kendall_tau  # noqa: E402
from relimpute.confidence import ConfidenceEngine  # noqa: E402
from relimpute.relevance.base import RelevanceEstimate  # noqa: E402

#: |engine E[MAP] - brute-force mean MAP| allowed: 4 Monte Carlo standard errors plus this
#: much for E[Q] / E[R] standing in for E[Q / R] (the engine's ratio, Carterette 2007 §2.1)
TOLERANCE = 0.002
GOAL_TAU = 0.95
#: upper edges of the best-rank bins of the "label x rank" oracle: 1, 2-3, 4-5, 6-10, 11-20,
#: 21-50, 51-100, 101-1000, not retrieved
RANK_EDGES = np.array([1, 3, 5, 10, 20, 50, 100, 1000])
#: the oracles (method name: cell, population the shares are fitted on, per topic or not)
ORACLES = {
    "oracle": {"by": "label", "fitted_on": "all", "per_topic": False},
    "oracle, per topic": {"by": "label", "fitted_on": "all", "per_topic": True},
    "oracle where applied": {"by": "label", "fitted_on": "labelled", "per_topic": False},
    "oracle where applied, per topic": {"by": "label", "fitted_on": "labelled", "per_topic": True},
    "oracle label x rank": {"by": "label x rank", "fitted_on": "labelled", "per_topic": False},
    "oracle label + runs": {"by": "logistic", "fitted_on": "labelled", "per_topic": True},
}
GOAL_BIAS = 0.01


def best_rank_bin(topic) -> np.ndarray:
    """``(n,)`` the bin of each document's best rank over the runs (:data:`RANK_EDGES`; last: none)."""
    best = np.full(topic.n_docs, np.iinfo(np.int64).max)
    valid = topic.ranking >= 0
    rank = np.broadcast_to(np.arange(1, topic.ranking.shape[1] + 1), topic.ranking.shape)
    np.minimum.at(best, topic.ranking[valid], rank[valid])
    return np.searchsorted(RANK_EDGES, best, side="right")


def runs_features(topic) -> np.ndarray:
    """``(n, 6)`` the runs' evidence on each document: log best rank, retrieved at all, the share
    of runs retrieving it within ranks 10, 100 and 1000, and its mean reciprocal rank."""
    valid = topic.ranking >= 0
    rank = np.broadcast_to(np.arange(1, topic.ranking.shape[1] + 1), topic.ranking.shape)
    best = np.full(topic.n_docs, topic.ranking.shape[1] + 1)
    np.minimum.at(best, topic.ranking[valid], rank[valid])
    n_runs = topic.ranking.shape[0]
    share = [np.bincount(topic.ranking[valid & (rank <= k)], minlength=topic.n_docs) / n_runs
             for k in (10, 100, 1000)]  # fmt: skip
    reciprocal = np.bincount(topic.ranking[valid], weights=1.0 / rank[valid], minlength=topic.n_docs) / n_runs
    return np.column_stack([np.log(best), best <= topic.ranking.shape[1], *share, reciprocal])


def logistic_p(full, cells, fitted, rel) -> list[np.ndarray]:
    """Per topic, P(relevant) of every judged document (0 elsewhere) from a logistic regression
    on the truth of the ``fitted`` documents (label value and topic one-hot plus
    :func:`runs_features`): the best additive label + topic + runs model, its coefficients
    known (nearly unregularised)."""
    from sklearn.linear_model import LogisticRegression

    size = 1 + max(int(c.max(initial=0)) for c in cells)

    def design(t, topic, c):
        judged = topic.judged
        x = np.zeros((int(judged.sum()), size + full.n_topics))
        x[np.arange(len(x)), c[judged]] = 1.0
        x[:, size + t] = 1.0
        return np.hstack([x, runs_features(topic)[judged]])

    xs = [design(t, topic, c) for t, (topic, c) in enumerate(zip(full.topics, cells))]
    x = np.vstack([d[m[t.judged]] for d, m, t in zip(xs, fitted, full.topics)])
    y = np.concatenate([r[m] for r, m in zip(rel, fitted)])
    model = LogisticRegression(C=1e4, fit_intercept=False, max_iter=5000).fit(x, y)
    out = []
    for d, t in zip(xs, full.topics):
        p = np.zeros(t.n_docs)
        p[t.judged] = model.predict_proba(d)[:, 1]
        out.append(p)
    return out


def oracle_p(full, kept, codes, oracle: dict) -> list[np.ndarray]:
    """Kept human labels at their truth, every other judged pair at the share NIST judged
    relevant of its cell, documents NIST never judged 0 (the labels' pool).

    ``oracle``: ``by`` "label" (cell: the label value), "label x rank" (label value and
    :func:`best_rank_bin`) or "logistic" (no cells: :func:`logistic_p`); ``fitted_on`` "all"
    (every official judgment) or "labelled" (the judged pairs not kept, where the
    probabilities are applied); ``per_topic``: each topic's own shares, a cell the topic lacks
    taking the collection's.
    """
    rel = full.relevant()
    if any((c[t.judged] < 0).any() for c, t in zip(codes, full.topics)):
        raise ValueError("a judged pair has no label: the ceiling assumes the labels cover the judged pairs")
    n_bins = len(RANK_EDGES) + 1
    cells = [np.maximum(c, 0) * n_bins + best_rank_bin(t) if oracle["by"] == "label x rank" else np.maximum(c, 0)
             for c, t in zip(codes, full.topics)]  # fmt: skip
    size = 1 + max(int(c.max(initial=0)) for c in cells)
    fitted = [f.judged & ~k.judged if oracle["fitted_on"] == "labelled" else f.judged
              for f, k in zip(full.topics, kept.topics)]  # fmt: skip
    if oracle["by"] == "logistic":
        shares = logistic_p(full, cells, fitted, rel)
        return [np.where(k.judged, r, np.where(f.judged, q, 0.0)).astype(float)
                for f, k, r, q in zip(full.topics, kept.topics, rel, shares)]  # fmt: skip
    counts = [np.bincount(c[m], minlength=size) for c, m in zip(cells, fitted)]
    hits = [np.bincount(c[m & r], minlength=size) for c, m, r in zip(cells, fitted, rel)]
    pooled = np.divide(sum(hits), sum(counts), out=np.zeros(size), where=sum(counts) > 0)
    out = []
    for f, k, c, n, h, r in zip(full.topics, kept.topics, cells, counts, hits, rel):
        share = np.where(n > 0, h / np.maximum(n, 1), pooled) if oracle["per_topic"] else pooled
        out.append(np.where(k.judged, r, np.where(f.judged, share[c], 0.0)).astype(float))
    return out


def exact_map(campaign, p) -> np.ndarray:
    """E[MAP] per run from the library's engine (``ConfidenceEngine.evaluate``)."""
    estimate = RelevanceEstimate(campaign.query_ids, tuple(t.doc_ids for t in campaign.topics), tuple(p))
    return ConfidenceEngine().confidence(campaign, estimate, pairs=[], method="normal").scores.e_map


def drawn_ap(topic, p: np.ndarray, rng, n_draws: int, chunk: int = 100) -> np.ndarray:
    """``(n_draws, S)`` AP of every run with relevance drawn Bernoulli(p) where 0 < p < 1 (p 0/1:
    fixed), R over every document that can be relevant (trec_eval's AP on the drawn qrels)."""
    uncertain = np.flatnonzero((p > 0) & (p < 1))
    fixed = p >= 1
    ranking = topic.ranking
    valid = ranking >= 0
    ranks = np.arange(1.0, ranking.shape[1] + 1.0)
    out = np.empty((n_draws, ranking.shape[0]))
    for start in range(0, n_draws, chunk):
        m = min(chunk, n_draws - start)
        rel = np.broadcast_to(fixed, (m, len(p))).copy()
        rel[:, uncertain] = rng.random((m, len(uncertain))) < p[uncertain]
        at = rel[:, np.where(valid, ranking, 0)] & valid  # (m, S, D)
        big_r = rel.sum(axis=1)[:, None]
        ap = (at * np.cumsum(at, axis=2) / ranks).sum(axis=2)
        out[start:start + m] = np.divide(ap, big_r, out=np.zeros_like(ap), where=big_r > 0)
    return out


def drawn_maps(full, p, rng, n_draws: int) -> np.ndarray:
    """``(n_draws, S)`` MAP per draw (:func:`drawn_ap` per topic, averaged over topics)."""
    return np.mean([drawn_ap(t, q, rng, n_draws) for t, q in zip(full.topics, p)], axis=0)


def check(full, kept, p, seed: int, check_draws: int) -> dict:
    """The two sanity oracles of the module docstring; raises if either fails."""
    rng = np.random.default_rng(seed)
    # 1. the vectorised per-draw AP equals relimpute.measures' AP on the drawn qrels
    for _ in range(3):
        state = rng.bit_generator.state
        mine = drawn_maps(full, p, rng, 1)[0]
        rng.bit_generator.state = state
        grades = []
        for t, q in zip(full.topics, p):
            uncertain = np.flatnonzero((q > 0) & (q < 1))
            rel = (q >= 1).copy()
            rel[uncertain] = rng.random((1, len(uncertain)))[0] < q[uncertain]
            grades.append(np.where(rel, 2, 0))
        nobody = full.with_judged([np.zeros(t.n_docs, bool) for t in full.topics])
        theirs = per_topic_ap(substituted(full, nobody, grades)).mean(axis=0)
        if np.abs(mine - theirs).max() > 1e-9:
            raise AssertionError(f"per-draw AP differs from relimpute.measures by {np.abs(mine - theirs).max():.2e}")
    # 2. the engine's E[MAP] against brute-force draws, one run (the median official MAP)
    engine = exact_map(kept, p)
    maps = drawn_maps(full, p, rng, check_draws)
    run = int(np.argsort(engine)[len(engine) // 2])
    mc, se = maps[:, run].mean(), maps[:, run].std(ddof=1) / np.sqrt(check_draws)
    gap = abs(engine[run] - mc)
    if gap > 4 * se + TOLERANCE:
        raise AssertionError(f"{full.systems[run]}: engine E[MAP] {engine[run]:.5f}, draws {mc:.5f} ± {se:.5f}")
    return {"check_run": full.systems[run], "check_engine": engine[run], "check_draws_mean": mc, "check_se": se}


def ceiling(collection: str, full, design: str, size: int, source: str, args) -> list[dict]:
    kept = kept_judgments(full, design, size, np.random.default_rng(args.seed))
    if [s.name for s in kept.labels] != [source]:
        raise AssertionError(f"the kept campaign carries {kept.labels}: R would not count the labelled documents")
    truth = per_topic_ap(full).mean(axis=0)
    label = next(s for s in full.labels if s.name == source)
    codes = label.align(full)
    setting = {"collection": collection, "design": design, "size": size,
               "human_per_topic": sum(int(t.judged.sum()) for t in kept.topics) / full.n_topics}  # fmt: skip
    sub = per_topic_ap(substituted(full, kept, llm_grades(full, label))).mean(axis=0)
    rows = [{**setting, "method": "substitution", **metrics(truth, sub)}]
    for method, oracle in ORACLES.items():
        started = time.process_time()
        p = oracle_p(full, kept, codes, oracle)
        row = {**setting, "method": method, **metrics(truth, exact_map(kept, p))}
        row |= {"bias_goal_met": row["mean_abs_bias"] <= GOAL_BIAS, "tau_goal_met": row["tau"] >= GOAL_TAU}
        if args.check_draws and method == "oracle":
            row |= check(full, kept, p, args.seed, args.check_draws)
        maps = drawn_maps(full, p, np.random.default_rng(args.seed), args.draws)
        taus = np.array([kendall_tau(m, truth) for m in maps])
        bias = np.abs(maps - truth).mean(axis=1)
        row |= {
            "drawn_tau_mean": taus.mean(), "drawn_tau_q05": np.quantile(taus, 0.05),
            "drawn_tau_q50": np.median(taus), "drawn_tau_q95": np.quantile(taus, 0.95),
            "drawn_share_tau_goal": (taus >= GOAL_TAU).mean(),
            "drawn_abs_bias_mean": bias.mean(), "drawn_abs_bias_q05": np.quantile(bias, 0.05),
            "drawn_mean_bias": (maps - truth).mean(), "draws": args.draws,
            "cpu_seconds": time.process_time() - started,
        }  # fmt: skip
        rows.append(row)
    for r in rows:
        print("  " + ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()),
              file=sys.stderr)  # fmt: skip
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", default="dl19,dl21")
    parser.add_argument("--pool", default="3", help="pool depths k, comma-separated")
    parser.add_argument("--random", default="10", help="human labels per topic m, comma-separated")
    parser.add_argument("--source", default="umbrela-gpt-4o")
    parser.add_argument("--draws", type=int, default=500, help="relevance draws from the oracle p per design")
    parser.add_argument("--check-draws", type=int, default=2000,
                        help="brute-force draws checking the engine's E[MAP] (0: no check)")
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    if args.draws < 2:
        parser.error(f"--draws must be at least 2, got {args.draws}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    designs = [("pool", int(k)) for k in args.pool.split(",") if k] + [
        ("random", int(m)) for m in args.random.split(",") if m
    ]
    rows = []
    for collection in args.collections.split(","):
        full = load(collection, [args.source])
        print(f"{collection}: {full}", file=sys.stderr)
        for design, size in designs:
            rows += ceiling(collection, full, design, size, args.source, args)
            pd.DataFrame(rows).to_csv(out / "ceiling.csv", index=False, float_format="%.4f")
    return 0


if __name__ == "__main__":
    sys.exit(main())
