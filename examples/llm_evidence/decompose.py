"""fusion-llm's MAP bias split into R and the numerator, per group of documents.

Run from the repository root::

    python examples/llm_evidence/decompose.py [--collections dl19,dl21] [--settings KEY=VALUE,...] [--out DIR]

In each headline design of ``study.py`` (pool 3, random 10; UMBRELA GPT-4o) fusion-llm is fitted
(the study's settings, ``study.EARLIER``, or ``--settings`` over them) and each topic's AP of each run is written
``S / R``: ``S = Σ_k x_k prec@k`` over the run's ranking, ``R`` the relevant documents the
campaign counts (judged, retrieved, or labelled: ``counted_documents``). With independent
Bernoulli(p), ``E[S] = Σ_k p_k (1 + Σ_{j<k} p_j) / k`` exactly; the answer is taken as
``E[S] / E[R]`` of the point estimate, and averaged over the posterior draws (the draws' answer,
as ``relimpute compare``'s Monte Carlo). Per run, against the truth's ``S* / R*``::

    bias = S/R − S*/R* = (S*/R − S*/R*)  +  (S − S*)/R
                          R's share         the numerator's share

Every document of a topic is in one group: ``human`` (a kept NIST judgment), ``labelled``
(NIST-judged, not kept: the LLM's label) split into retrieved by some run or not,
``unlabelled`` (never judged by NIST: no label; non-relevant in the truth); and by the
depth of its best rank over the runs. Per group, label value and depth: documents per topic,
E[relevant] of the point estimate and of the draws' mean, and the true number (the label
model's calibration, retrieved against not, at the top against deep). Writes
``decompose.csv`` (per collection, design, answer: the bias and its two shares, and each
group's share of R's error, and the log loss of the point estimate's p on the labelled
documents: the criterion ``runs_weight`` is chosen by, leave-one-collection-out) and
``decompose_groups.csv.gz``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from study import EARLIER, kept_judgments, load, per_topic_ap, variant  # noqa: E402

from relimpute.confidence import counted_documents  # noqa: E402
from relimpute.labels import labelled_documents  # noqa: E402
from relimpute.relevance import FusionLLM  # noqa: E402

SOURCE = "umbrela-gpt-4o"
DESIGNS = (("pool", 3), ("random", 10))
DEPTHS = ((1, 3, "1-3"), (4, 10, "4-10"), (11, 20, "11-20"), (21, 100, "21-100"), (101, 10**9, ">100"))


def numerator(ranking: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``(S,)`` or ``(D, S)``: E[Σ_k x_k prec@k] of each run under independent Bernoulli(q)
    (``q`` ``(n,)`` or ``(D, n)``)."""
    q2 = np.atleast_2d(q)
    out = np.zeros((q2.shape[0], ranking.shape[0]))
    for s, row in enumerate(ranking):
        docs = row[row >= 0]
        x = q2[:, docs]
        before = np.cumsum(x, axis=1) - x
        out[:, s] = (x * (1 + before) / np.arange(1, len(docs) + 1)).sum(axis=1)
    return out if q.ndim == 2 else out[0]


def best_rank(topic) -> np.ndarray:
    """``(n,)`` the best (1-based) rank any run gives each document; 0 if none retrieves it."""
    best = np.full(topic.n_docs, np.iinfo(np.int64).max)
    for row in topic.ranking:
        docs = row[row >= 0]
        np.minimum.at(best, docs, np.arange(1, len(docs) + 1))
    return np.where(best == np.iinfo(np.int64).max, 0, best)


def groups(full, kept, t, codes) -> np.ndarray:
    """``(n,)`` group names of topic ``t``'s documents (module docstring)."""
    f, k = full.topics[t], kept.topics[t]
    retrieved = f.retrieved()
    return np.where(
        k.judged, "human",
        np.where(f.judged, np.where(retrieved, "labelled, retrieved", "labelled, unretrieved"), "unlabelled"),
    )  # fmt: skip


def decompose(collection, full, design, size, seed, model_kwargs):
    kept = kept_judgments(full, design, size, np.random.default_rng(seed))
    campaign = replace(kept, labels=tuple(s for s in kept.labels if s.name == SOURCE))
    estimate = FusionLLM(**{**EARLIER, **model_kwargs}).fit_predict(campaign, rng=seed)
    named = labelled_documents(campaign)
    codes = next(s for s in campaign.labels if s.name == SOURCE).align(campaign)
    truth_ap = per_topic_ap(full)
    rel = full.relevant()
    answers = {"point": [], "draws": []}  # per topic: (bias, R share, numerator share) per run
    group_r = {"point": {}, "draws": {}}
    cells = []
    for t, topic in enumerate(campaign.topics):
        counted = counted_documents(topic, labelled=named[t])
        truth = rel[t].astype(float)
        s_true = numerator(topic.ranking, truth)
        r_true = truth[counted].sum() + (rel[t] & ~counted).sum()  # nothing uncounted is relevant
        ok = np.isclose(np.where(r_true > 0, s_true / max(r_true, 1), 0), truth_ap[t]).all()
        if not ok:
            raise AssertionError(f"{collection} topic {t}: S*/R* is not the official AP")
        kind = groups(full, kept, t, codes)
        for answer, q in (("point", np.asarray(estimate.p[t], float)), ("draws", np.asarray(estimate.draws[t]))):
            q2 = np.atleast_2d(q)
            r = q2[:, counted].sum(axis=1)[:, None]
            s = numerator(topic.ranking, q2)
            answers[answer].append(np.stack([
                (s / r - s_true / r_true).mean(axis=0),
                (s_true / r - s_true / r_true).mean(axis=0),
                ((s - s_true) / r).mean(axis=0),
            ]))  # fmt: skip
            for g in np.unique(kind):
                m = counted & (kind == g)
                group_r[answer].setdefault(g, []).append(q2[:, m].sum(axis=1).mean() - truth[m].sum())
        mean = np.asarray(estimate.draws[t]).mean(axis=0)
        depth = best_rank(full.topics[t])
        for g in np.unique(kind):
            for lo, hi, name in ((0, 0, "unretrieved"), *DEPTHS):
                for v in np.unique(codes[t]):
                    m = (kind == g) & (depth >= lo) & (depth <= hi) & (codes[t] == v)
                    if m.any():
                        cells.append({"group": g, "depth": name, "label": int(v), "n": int(m.sum()),
                                      "expected_point": float(estimate.p[t][m].sum()),
                                      "expected_draws": float(mean[m].sum()), "true": float(truth[m].sum())})  # fmt: skip
    setting = {"collection": collection, "design": design, "size": size,
               "model": " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                 for k, v in model_kwargs.items()) or "the study's settings"}  # fmt: skip
    hidden = [full.topics[t].judged & ~kept.topics[t].judged for t in range(full.n_topics)]
    x = np.clip(np.concatenate([np.asarray(q, float)[h] for q, h in zip(estimate.p, hidden)]), 1e-6, 1 - 1e-6)
    y = np.concatenate([r[h] for r, h in zip(rel, hidden)])
    log_loss = float(-np.mean(np.where(y, np.log(x), np.log1p(-x))))
    rows = []
    for answer, per_topic in answers.items():
        b, rs, ns = np.mean(per_topic, axis=0)  # (S,) each: averaged over topics
        rows.append({**setting, "answer": answer, "labelled_log_loss": log_loss,
                     "mean_bias": b.mean(), "mean_abs_bias": np.abs(b).mean(),
                     "bias_R_share": rs.mean(), "bias_numerator_share": ns.mean(),
                     **{f"R_error_{g}": float(np.mean(v)) for g, v in group_r[answer].items()}})  # fmt: skip
        print(f"{collection} {design} {size} {answer}: " + ", ".join(
            f"{k} {v:.3f}" for k, v in rows[-1].items() if isinstance(v, float)), file=sys.stderr)  # fmt: skip
    frame = pd.DataFrame(cells).groupby(["group", "depth", "label"], as_index=False).sum()
    frame[["expected_point", "expected_draws", "true", "n"]] /= full.n_topics  # per topic
    return rows, [{**setting, **r} for r in frame.to_dict("records")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", default="dl19,dl21")
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--settings", default={}, type=lambda text: variant(":" + text)[1], metavar="KEY=VALUE,...",
                        help="FusionLLM settings (e.g. unlabelled=nonrelevant,runs_weight=0.5)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    campaigns = {c: load(c, [SOURCE]) for c in args.collections.split(",")}
    results = [decompose(c, full, design, size, args.seed, args.settings)
               for c, full in campaigns.items() for design, size in DESIGNS]  # fmt: skip
    pd.DataFrame([r for rows, _ in results for r in rows]).to_csv(out / "decompose.csv", index=False, float_format="%.4f")
    pd.DataFrame([c for _, cells in results for c in cells]).to_csv(
        out / "decompose_groups.csv.gz", index=False, float_format="%.3f", compression={"method": "gzip", "mtime": 0}
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
