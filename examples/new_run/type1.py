"""How often is a 'significant' difference on a shallow pool wrong on the full qrels?

Run from the repository root::

    python examples/new_run/type1.py                 # DL 2019, DL 2021, TREC-8
    python examples/new_run/type1.py --quick         # 10 runs per collection

MacAvaney & Soldaini (SIGIR 2023) found that with unjudged documents scored nonrelevant, paired
tests on shallow pools call 15-30% of differences significant that the full judgments do not
support. Here the qrels are cut to the depth-10 pool of every run; for every pair of runs a
paired t-test over topics (two-sided, 0.05, no correction) is run on (a) trec_eval's AP on the
cut qrels and (b) the default model's expected AP per topic, E[AP] (estimand complete, exact
moments), (c) the same with each topic's judgment variance of ΔAP added, and (d) as
`relimpute evaluate --baseline RUN --intervals --test t` runs it ("CLI": E[AP] and the judgment
variance of the mean difference from Monte Carlo over the model's posterior draws, 1,000
draws). A call is wrong when the same test on the full qrels' AP is not significant or has the
other sign. TREC-8: the 71 pooled runs cut at rank 100 (the full qrels judge everything they
retrieve). Writes ``results/type1.md`` and
``results/type1_pairs.csv.gz``.
"""

from __future__ import annotations

import argparse
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from relimpute.confidence import ConfidenceEngine
from relimpute.measures import evaluate
from relimpute.relevance import load_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate import COLLECTIONS, absent, load  # noqa: E402

HERE = Path(__file__).resolve().parent
POOL_DEPTH = 10
ALPHA = 0.05


def per_topic_ap(campaign) -> np.ndarray:
    """``(S, T)`` trec_eval AP (every qrels topic, -c)."""
    frame = evaluate(campaign, ["AP"], per_topic=True, missing="zero")
    wide = frame.pivot(index="system", columns="query_id", values="value")
    return wide.loc[list(campaign.systems), list(campaign.query_ids)].to_numpy()


def calls(scores: np.ndarray, pairs) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: the paired t-test's p-value and the sign of the mean difference."""
    a, b = scores[[i for i, _ in pairs]], scores[[j for _, j in pairs]]
    d = a - b
    with np.errstate(invalid="ignore", divide="ignore"):
        p = stats.ttest_1samp(d, 0.0, axis=1).pvalue
    return np.nan_to_num(p, nan=1.0), np.sign(d.mean(axis=1))


def study(name: str, quick: bool, seed: int, n_draws: int = 1000) -> pd.DataFrame:
    campaign, _ = load(name)
    if quick:
        campaign = campaign.subset(systems=list(campaign.systems[:10]))
    cut = campaign.pooled(POOL_DEPTH)
    estimate = load_model().fit(cut, rng=seed).predict(cut, grades=False)
    pairs = list(combinations(range(campaign.n_systems), 2))
    names = [(campaign.systems[i], campaign.systems[j]) for i, j in pairs]
    exact = ConfidenceEngine().confidence(cut, estimate, pairs=names, method="normal")
    expected = exact.scores.e_ap
    p_full, s_full = calls(per_topic_ap(campaign), pairs)
    rows = pd.DataFrame({"collection": name, "a": [campaign.systems[i] for i, _ in pairs],
                         "b": [campaign.systems[j] for _, j in pairs],
                         "p_full": p_full, "sign_full": s_full})  # fmt: skip
    for label, scores in (("trec_eval", per_topic_ap(cut)), ("E[AP]", expected)):
        p, s = calls(scores, pairs)
        rows[f"p_{label}"], rows[f"sign_{label}"] = p, s
    # the same t-test with each topic's judgment variance of ΔAP added to the topic spread
    d, v = exact.e_delta_ap, exact.var_delta_ap
    t = d.shape[1]
    se = np.sqrt(d.var(axis=1, ddof=1) / t + v.sum(axis=1) / t**2)
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = d.mean(axis=1) / se
    rows["p_E[AP]+var"] = np.nan_to_num(2 * stats.t.sf(np.abs(stat), t - 1), nan=1.0)
    rows["sign_E[AP]+var"] = np.sign(d.mean(axis=1))
    # as `evaluate --baseline RUN --intervals` runs it: E[AP] and the judgment variance of each
    # mean difference from Monte Carlo over the model's posterior draws (joint across topics)
    drawn = ConfidenceEngine().confidence(cut, estimate, pairs=names, n_draws=n_draws, rng=seed)
    d = drawn.scores.e_ap[[i for i, _ in pairs]] - drawn.scores.e_ap[[j for _, j in pairs]]
    se = np.sqrt(d.var(axis=1, ddof=1) / t + drawn.var_delta_map)
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = d.mean(axis=1) / se
    rows["p_CLI"] = np.nan_to_num(2 * stats.t.sf(np.abs(stat), t - 1), nan=1.0)
    rows["sign_CLI"] = np.sign(d.mean(axis=1))
    return rows


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    out = []
    for name, part in rows.groupby("collection", sort=False):
        truth = (part["p_full"] < ALPHA)
        for label in ("trec_eval", "E[AP]", "E[AP]+var", "CLI"):
            called = part[f"p_{label}"] < ALPHA
            wrong = called & (~truth | (part[f"sign_{label}"] != part["sign_full"]))
            out.append({
                "collection": name, "scores": label, "pairs": len(part),
                "significant": int(called.sum()), "wrong": int(wrong.sum()),
                "wrong share": wrong.sum() / max(called.sum(), 1),
                "full-qrels significant found": (called & truth).sum() / max(truth.sum(), 1),
            })  # fmt: skip
    return pd.DataFrame(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", nargs="+", default=list(COLLECTIONS),
                        choices=list(COLLECTIONS))  # fmt: skip
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    if absent(args.collections):
        return 0
    rows = pd.concat([study(c, args.quick, args.seed) for c in args.collections])
    table = summary(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    rows.to_csv(args.out / "type1_pairs.csv.gz", index=False, float_format="%.6g")
    (args.out / "type1.md").write_text(table.to_markdown(index=False, floatfmt=".3f") + "\n")
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
