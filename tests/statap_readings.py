"""statMAP's acceptance ("the mean statMAP of every pooled run is within 2 standard errors of
its full-qrels MAP") under each defensible reading, for the table in docs/sampled.md.

Readings of the criterion: (a) 2 × the standard error of the mean of the samplings; (b) 2 ×
the estimator's own standard error (the sd of one statMAP over samplings). Readings of the
truth and the design: today's Poisson design over the pool plus every relevant document
(``statap_study``), the same over the depth-100 pool alone with MAP on the qrels restricted to
it (c), and the paper's design (d): n draws *with replacement* from the pool, d drawn with
probability p_d ∝ the AP prior (no floor, no cap), so π_d = 1 − (1 − p_d)^n, n set so that the
expected number of distinct documents judged is 10% of the pool. Under (d) the estimator is
the same statAP (π_jk taken as π_j π_k, as in the paper's estimator), and also its other
reading, the document itself counted in precision at its rank with weight 1/π_d instead of 1.

    python tests/statap_readings.py [samplings]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

import statap_study
from relimpute.io import read_qrels, read_run, sort_trec
from relimpute.measures.statap import stat_ap
from relimpute.selection.designs import ap_prior

SEED = 2006


def _ranked_runs(run_paths: list[Path]) -> dict[str, pd.DataFrame]:
    out = {}
    for path in run_paths:
        run = sort_trec(read_run(path)[["query_id", "doc_id", "score"]])
        run["rank"] = run.groupby("query_id", sort=False).cumcount() + 1
        out[path.name] = run
    return out


def paper_design(qrels_path: Path, run_paths: list[Path], rel_threshold: int):
    """Per topic (with a relevant document in the pool): the draw probability p and π of its
    pooled relevant documents, the number of draws n, and each run's ranks of them."""
    relevant = read_qrels(qrels_path)
    relevant = relevant[relevant["relevance"] >= rel_threshold]
    runs = _ranked_runs(run_paths)
    topics = []
    for topic, rel in relevant.groupby("query_id", sort=True):
        ranked = {name: run[run["query_id"] == topic] for name, run in runs.items()}
        top = pd.concat([r[r["rank"] <= statap_study.DEPTH] for r in ranked.values()])
        weight = top.assign(w=ap_prior(top["rank"].to_numpy(), statap_study.DEPTH)).groupby(
            "doc_id")["w"].sum()
        p = weight / weight.sum()
        n = _draws(p.to_numpy(), statap_study.RATE * len(p))
        docs = rel["doc_id"][rel["doc_id"].isin(p.index)].to_numpy()
        at = {}
        for name, r in ranked.items():
            hit = r[r["doc_id"].isin(docs)]
            at[name] = (pd.Index(docs).get_indexer(hit["doc_id"]), hit["rank"].to_numpy())
        p_rel = p[docs].to_numpy()
        topics.append((topic, p_rel, n, at, {name: len(r) > 0 for name, r in ranked.items()}))
    return topics, list(runs)


def _draws(p: np.ndarray, expected: float) -> int:
    """Fewest draws n with Σ (1 − (1 − p)^n) ≥ ``expected`` distinct documents."""
    low, high = 1, 1
    while (1 - (1 - p) ** high).sum() < expected:
        low, high = high, high * 2
    while low < high:
        mid = (low + high) // 2
        low, high = (mid + 1, high) if (1 - (1 - p) ** mid).sum() < expected else (low, mid)
    return high


def paper_study(topics, names, samplings: int, seed: int = SEED) -> pd.DataFrame:
    """Per run: MAP on the pool-restricted qrels, and the mean and sd over the samplings of
    statMAP (doc itself weight 1) and of its other reading (weight 1/π_d)."""
    rng = np.random.default_rng(seed)
    total = {"statMAP": np.zeros((samplings, len(names))), "self 1/pi": np.zeros(
        (samplings, len(names)))}
    full, count = np.zeros(len(names)), np.zeros(len(names))
    for _, p, n, at, retrieved in topics:
        pi = 1 - (1 - p) ** n
        drawn = rng.multinomial(n, np.r_[p, max(0.0, 1 - p.sum())], size=samplings)[:, :-1]
        y = (drawn > 0) / pi
        r_hat = y.sum(axis=1)
        for j, name in enumerate(names):
            if not retrieved[name]:
                continue
            index, rank = at[name]
            w = y[:, index]
            ap = stat_ap(w, rank, r_hat)
            total["statMAP"][:, j] += ap
            extra = (w * (w - 1) / rank).sum(axis=1)  # d's own term x/(k π²) instead of x/(k π)
            total["self 1/pi"][:, j] += ap + np.divide(extra, r_hat, out=np.zeros_like(extra),
                                                       where=r_hat > 0)
            full[j] += stat_ap(np.ones(len(index)), rank, float(len(p)))
            count[j] += 1
    out = {"MAP": full / count}
    for label, values in total.items():
        out[label] = (values / count).mean(axis=0)
        out[f"{label} sd"] = (values / count).std(axis=0, ddof=1)
    return pd.DataFrame(out, index=pd.Index(names, name="system"))


def within(estimate: pd.Series, truth: pd.Series, sd: pd.Series, samplings: int) -> dict:
    """Runs within 2 se of the mean (a) and within 2 sd of one estimate (b); the bias."""
    bias = estimate - truth
    return {"bias mean": bias.mean(), "bias max": bias.abs().max(),
            "(a) within 2 se": int((bias.abs() <= 2 * sd / np.sqrt(samplings)).sum()),
            "(b) within 2 sd": int((bias.abs() <= 2 * sd).sum()), "runs": len(bias),
            "sd median": sd.median()}


def readings(folder: Path, threshold: int, samplings: int) -> pd.DataFrame:
    runs = statap_study.pooled_runs(folder)
    qrels = folder / "qrels.txt"
    rows = {}
    for label, pool_only in (("Poisson, pool + relevant; MAP full", False),
                             ("(c) Poisson, pool; MAP on the pool", True)):
        topics, names = statap_study.load(qrels, runs, threshold, pool_only)
        table = statap_study.study(topics, names, samplings, seed=SEED)
        sd = table["se"] * np.sqrt(samplings)
        rows[label] = within(table["statMAP"], table["MAP"], sd, samplings)
        if not pool_only:
            full_map = table["MAP"]
    topics, names = paper_design(qrels, runs, threshold)
    table = paper_study(topics, names, samplings)
    for estimator in ("statMAP", "self 1/pi"):
        sd = table[f"{estimator} sd"]
        rows[f"(d) with replacement, pool; {estimator}; MAP on the pool"] = within(
            table[estimator], table["MAP"], sd, samplings)
        rows[f"(d) with replacement, pool; {estimator}; MAP full"] = within(
            table[estimator], full_map, sd, samplings)
    return pd.DataFrame(rows).T


if __name__ == "__main__":
    data = Path(__file__).resolve().parents[2] / "shared" / "data"
    samplings = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    pd.set_option("display.width", 200)
    for folder, threshold in (("trec-dl-2019-passage", 2), ("trec-8-adhoc", 1)):
        print(folder, samplings, "samplings")
        print(readings(data / folder, threshold, samplings).round(4).to_string())
