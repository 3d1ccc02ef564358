"""Where ``--llm-labels``' answer loses τ and coverage against substitution, per run and per label.

Run from the repository root::

    python examples/llm_evidence/diagnose_default.py [--collections dl19,dl21] [--pools 1,3]
        [--out examples/llm_evidence/results]

The designs of ``default_check.py`` (TREC DL 2019 and 2021 passage, relevant: grade >= 2; the
human judgments of the depth-k pool kept, UMBRELA GPT-4o's labels on every other NIST-judged
pair; the campaign as ``relimpute evaluate --llm-labels`` reads it; the truth: the official
MAP). Every E[MAP] here is the point estimate's (exact moments, no posterior draws), so it
differs a little from ``evaluate``'s (the mean over draws). Per design, answers:

previous default
    fusion-llm with the runs' log-odds on a labelled document at weight 0.5, the runs' effects
    (the default model's per-run effects, learned from the judgments) weighted 0.5 with them.
default
    the same with the runs' effects kept whole (``run_effects_weight=1``).
labelled at their truth
    the default's estimate with every labelled document at its official relevance: what is
    left is not the labels' (0 if the answer's estimand is the official MAP's).
labels calibrated by the truth, per label / per topic and label
    every labelled document at the share of its label value (in its topic) that NIST judged
    relevant, read off the official qrels: the best a calibration by label value can do.
substitution
    label grade >= 2 relevant (trec_eval on the human plus label qrels, as E[MAP] of 0/1).

Columns: mean |bias| and mean bias of MAP, Kendall τ against the official MAP, the correlation
of the error with the official MAP (negative: the best runs stated lowest), and, for the five
best and the five worst runs by official MAP, the labelled documents in their top 10 per topic
and run: the expected number relevant against the true number. ``default_calibration.csv``:
per design and label value, the previous and the new default's mean probability of the labelled
documents against the share relevant, by the document's best rank over the runs.
Writes ``default_diagnosis.csv``, ``default_calibration.csv`` and ``default_diagnosis.md``.
"""

from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from default_check import COLLECTIONS, DATA, design, design_parser, each_design
from relimpute.calibration.metrics import kendall_tau
from relimpute.cli import build_parser
from relimpute.cli._common import load_campaign
from relimpute.cli._requests import CampaignInputs
from relimpute.confidence import ConfidenceEngine
from relimpute.relevance import FusionLLM

MODELS = {"previous default": {"run_effects_weight": 0.5}, "default": {}}
BUCKETS = ([0, 3, 10, 30, 100, np.inf], ["1-3", "4-10", "11-30", "31-100", "no run"])


def campaign_and_truth(collection: str, depth: int, tmp: Path):
    """The campaign ``evaluate --llm-labels`` reads, each topic's official relevance on its
    documents, the official MAP per run."""
    full, _, qrels, labels, truth = design(collection, depth, tmp)
    folder = DATA / COLLECTIONS[collection]
    argv = ["evaluate", str(qrels), str(folder / "runs"), "--rel-threshold", "2", "--llm-labels", str(labels)]
    with contextlib.redirect_stderr(io.StringIO()):
        args = build_parser(["evaluate"]).parse_args(argv)
        campaign = load_campaign(CampaignInputs.from_args(args, "evaluate"), "evaluate")
    relevant = []
    for t, f in zip(campaign.topics, full.topics):
        where = pd.Series(np.arange(f.n_docs), index=f.doc_ids).reindex(t.doc_ids).to_numpy()
        known = ~np.isnan(where)
        r = np.zeros(t.n_docs, bool)
        r[known] = f.grades[where[known].astype(int)] >= 2
        relevant.append(r)
    return campaign, relevant, truth


def best_rank(topic) -> np.ndarray:
    best = np.full(topic.n_docs, np.inf)
    for row in topic.ranking:
        row = row[row >= 0]
        best[row] = np.minimum(best[row], np.arange(1, len(row) + 1))
    return best


def run_design(collection: str, depth: int, tmp: Path):
    campaign, relevant, truth = campaign_and_truth(collection, depth, tmp)
    codes = campaign.labels[0].align(campaign)
    labelled = [(c >= 0) & ~t.judged for c, t in zip(codes, campaign.topics)]
    order = np.argsort(-truth)
    setting = {"collection": collection, "pool_depth": depth}
    rows, calibration = [], []

    def score(answer, estimate, p):
        e = ConfidenceEngine().confidence(campaign, replace(estimate, p=tuple(p), draws=None),
                                          pairs=[], method="normal").scores.e_map  # fmt: skip
        row = {**setting, "answer": answer, "mean_abs_bias": np.abs(e - truth).mean(),
               "mean_bias": (e - truth).mean(), "tau": kendall_tau(e, truth),
               "corr_error_official": np.corrcoef(e - truth, truth)[0, 1]}  # fmt: skip
        for name, runs in (("best5", order[:5]), ("worst5", order[-5:])):
            top = [[r[:10][r[:10] >= 0] for r in t.ranking[runs]] for t in campaign.topics]
            docs = [np.concatenate([d[m[d]] for d in tops]) for tops, m in zip(top, labelled)]
            n = len(runs) * campaign.n_topics
            row[f"{name}_expected"] = sum(x[d].sum() for x, d in zip(p, docs)) / n
            row[f"{name}_true"] = sum(r[d].sum() for r, d in zip(relevant, docs)) / n
        rows.append(row)
        print(f"{collection} pool {depth} {answer}: " + ", ".join(
            f"{k} {v:.3f}" for k, v in row.items() if isinstance(v, float)), file=sys.stderr)  # fmt: skip

    v = np.concatenate([c[m] for c, m in zip(codes, labelled)])
    y = np.concatenate([r[m] for r, m in zip(relevant, labelled)])
    ranks = np.concatenate([best_rank(t)[m] for t, m in zip(campaign.topics, labelled)])
    bucket = pd.cut(ranks, BUCKETS[0], labels=BUCKETS[1])
    for answer, settings in MODELS.items():
        model = FusionLLM(**settings)
        estimate = model.fit_predict(campaign, rng=0)
        p = [np.asarray(x, float) for x in estimate.p]
        score(answer, estimate, p)
        u = np.array([estimate.params["run_effects"].get(s, 0.0) for s in campaign.systems])
        rows[-1] |= {"run_effects_sd": u.std(), "run_effects_corr_official": np.corrcoef(u, truth)[0, 1]}
        x = np.concatenate([q[m] for q, m in zip(p, labelled)])
        frame = pd.DataFrame({"label": v, "best_rank": bucket, "p": x, "relevant": y})
        cells = frame.groupby(["label", "best_rank"], observed=True)
        calibration.append(cells.agg(n=("p", "size"), mean_p=("p", "mean"), share_relevant=("relevant", "mean"))
                           .reset_index().assign(**setting, answer=answer))  # fmt: skip
    score("labelled at their truth", estimate, [np.where(m, r, x) for x, m, r in zip(p, labelled, relevant)])
    shares = np.array([y[v == k].mean() if (v == k).any() else 0.0 for k in range(v.max() + 1)])
    score("labels calibrated by the truth, per label", estimate,
          [np.where(m, shares[np.maximum(c, 0)], x) for x, m, c in zip(p, labelled, codes)])  # fmt: skip
    per_topic = []
    for x, m, c, r in zip(p, labelled, codes, relevant):
        share = np.array([r[m & (c == k)].mean() if (m & (c == k)).any() else 0.0 for k in range(len(shares))])
        per_topic.append(np.where(m, share[np.maximum(c, 0)], x))
    score("labels calibrated by the truth, per topic and label", estimate, per_topic)
    values = np.array([int(k) for k in campaign.labels[0].categories])
    score("substitution", estimate,
          [np.where(m, (values[np.maximum(c, 0)] >= 2).astype(float), x) for x, m, c in zip(p, labelled, codes)])  # fmt: skip
    return rows, calibration


def main(argv=None) -> int:
    args = design_parser(__doc__.splitlines()[0]).parse_args(argv)
    results = [run_design(*where) for where in each_design(args)]
    table = pd.DataFrame([row for rows, _ in results for row in rows])
    cells = pd.concat([c for _, calibration in results for c in calibration], ignore_index=True)
    out = Path(args.out)
    table.to_csv(out / "default_diagnosis.csv", index=False, float_format="%.4f")
    cells.to_csv(out / "default_calibration.csv", index=False, float_format="%.4f")
    shown = cells.pivot_table(index=["collection", "pool_depth", "answer", "label"], columns="best_rank",
                              values="mean_p", observed=True)  # fmt: skip
    truth = cells[cells["answer"] == "default"].pivot_table(
        index=["collection", "pool_depth", "label"], columns="best_rank", values="share_relevant", observed=True)
    text = ("E[MAP] of the point estimate (no draws) against the official MAP\n\n"
            + table.round(4).to_markdown(index=False)
            + "\n\nMean probability of the labelled documents by label and best rank over the runs\n\n"
            + shown.round(3).to_markdown() + "\n\nShare NIST judged relevant\n\n" + truth.round(3).to_markdown() + "\n")  # fmt: skip
    (out / "default_diagnosis.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
