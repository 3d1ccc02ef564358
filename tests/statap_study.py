"""statMAP's unbiasedness over seeded Poisson samplings of a collection's full qrels.

The qrels are taken as the full judgments. For each topic the universe U is the depth-100
pool of the runs given plus every relevant document (so that R is the qrels' R); each document
of U is sampled independently with π_d ∝ statAP's AP-prior weight Σ_runs (1/Z) Σ_{i=r}^{Z} 1/i
(r its rank in a run, Z = 100), capped at 1 and floored at ``floor``, scaled so that the
expected sample is ``rate`` × |pool|. Only the relevant documents of a sample change statAP,
so only they are drawn. Run as a script for the numbers in docs/sampled.md:

    python tests/statap_study.py           # both collections, 1,000 samplings, every pooled run
    python tests/statap_study.py --pool-only   # U = the depth-100 pool alone
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.io import read_qrels, read_run, sort_trec
from relimpute.measures.statap import stat_ap
from relimpute.selection.designs import ap_prior, pps_inclusion

DEPTH = 100


def load(qrels_path: Path, run_paths: list[Path], rel_threshold: int, pool_only: bool = False):
    """Per topic: π of its relevant documents and each run's ranks of them (``pool_only``: U
    is the pool alone, a relevant document outside it counts as nonrelevant, for MAP too)."""
    qrels = read_qrels(qrels_path)
    relevant = qrels[qrels["relevance"] >= rel_threshold]
    runs = {p.name: sort_trec(read_run(p)[["query_id", "doc_id", "score"]]) for p in run_paths}
    for run in runs.values():
        run["rank"] = run.groupby("query_id", sort=False).cumcount() + 1
    topics = []
    for topic, rel in relevant.groupby("query_id", sort=True):
        docs = rel["doc_id"].to_numpy()
        ranked = {name: run[run["query_id"] == topic] for name, run in runs.items()}
        top = pd.concat([r[r["rank"] <= DEPTH] for r in ranked.values()])
        prior = top.assign(w=ap_prior(top["rank"].to_numpy(), DEPTH)).groupby("doc_id")["w"].sum()
        if pool_only:
            docs = docs[np.isin(docs, prior.index)]
        universe = prior.reindex(prior.index.union(pd.Index(docs)), fill_value=0.0)
        pi = pd.Series(pps_inclusion(universe.to_numpy(), RATE * len(prior), FLOOR), universe.index)
        at = {}
        for name, r in ranked.items():
            hit = r[r["doc_id"].isin(docs)]
            at[name] = (pd.Index(docs).get_indexer(hit["doc_id"]), hit["rank"].to_numpy())
        topics.append((topic, pi[docs].to_numpy(), at, {n: len(r) > 0 for n, r in ranked.items()}))
    return topics, list(runs)


RATE, FLOOR = 0.10, 0.01


def study(topics, names, samplings: int, seed: int, known_r: bool = False) -> pd.DataFrame:
    """Per run: full-qrels MAP, mean and standard error of statMAP over the samplings
    (``known_r``: with each topic's true R in place of R̂, exactly unbiased)."""
    rng = np.random.default_rng(seed)
    total = np.zeros((samplings, len(names)))
    full = np.zeros(len(names))
    count = np.zeros(len(names))
    for _, pi, at, retrieved in topics:
        y = (rng.random((samplings, len(pi))) < pi) / pi
        r_hat = float(len(pi)) if known_r else y.sum(axis=1)
        for j, name in enumerate(names):
            if not retrieved[name]:
                continue  # trec_eval's default: a topic the run does not retrieve is skipped
            index, rank = at[name]
            total[:, j] += stat_ap(y[:, index], rank, r_hat)
            full[j] += stat_ap(np.ones(len(index)), rank, float(len(pi)))
            count[j] += 1
    stat = total / count
    return pd.DataFrame({
        "MAP": full / count,
        "statMAP": stat.mean(axis=0),
        "se": stat.std(axis=0, ddof=1) / np.sqrt(samplings),
    }, index=pd.Index(names, name="system"))  # fmt: skip


def r_hat(topics, samplings: int, seed: int) -> dict[str, float]:
    """Σ_t R̂_t over the samplings (the same draws as :func:`study`): true R, mean, se."""
    rng = np.random.default_rng(seed)
    total = np.zeros(samplings)
    for _, pi, _, _ in topics:
        total += ((rng.random((samplings, len(pi))) < pi) / pi).sum(axis=1)
    return {"R": float(sum(len(t[1]) for t in topics)), "mean": float(total.mean()),
            "se": float(total.std(ddof=1) / np.sqrt(samplings))}


def pooled_runs(folder: Path) -> list[Path]:
    groups = pd.read_csv(folder / "groups.tsv", sep="\t", dtype=str)
    pooled = groups.loc[groups["pooled"] == "yes", "run"]
    return sorted(folder / "runs" / f"{run}.gz" for run in pooled)


if __name__ == "__main__":
    data = Path(__file__).resolve().parents[2] / "shared" / "data"
    samplings = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 1000
    pool_only = "--pool-only" in sys.argv  # U = the pool: relevant documents outside it dropped
    for folder, threshold in (("trec-dl-2019-passage", 2), ("trec-8-adhoc", 1)):
        topics, names = load(data / folder / "qrels.txt", pooled_runs(data / folder), threshold,
                             pool_only)
        table = study(topics, names, samplings, seed=2006)
        known = study(topics, names, samplings, seed=2006, known_r=True)
        total = r_hat(topics, samplings, seed=2006)
        for label, t in (("statMAP (N/R-hat)", table), ("N-hat/R (true R)", known)):
            z = (t["statMAP"] - t["MAP"]) / t["se"]
            bias = t["statMAP"] - t["MAP"]
            print(f"{folder} {label}: {len(names)} pooled runs, {samplings} samplings, "
                  f"|z| max {z.abs().max():.2f}, beyond 2 se {int((z.abs() > 2).sum())}, "
                  f"bias mean {bias.mean():+.4f} max |bias| {bias.abs().max():.4f}, "
                  f"median se {t['se'].median():.5f}")
        print(f"{folder} sum of R-hat: R {total['R']:.0f}, mean {total['mean']:.1f}, "
              f"se {total['se']:.1f}")
        if "-v" in sys.argv:
            print(table.assign(known=known["statMAP"]).round(4).to_string())
