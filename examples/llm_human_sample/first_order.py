"""What a first-order (one document at a time) model-assisted AP cannot remove: its bias,
computed exactly, with the LLM label as the control and 10 human labels per topic.

Run from the repository root::

    python examples/llm_human_sample/first_order.py dl19|dl21 [--draws 400] [--humans 10]

Set-up as ``few_human.py``: a topic's universe is the pairs NIST judged, relevant = grade ≥ 2,
UMBRELA GPT-4o labels every pair; truth is the official AP. Write AP = N / R with
N = Σ_k x_k / r_k + Σ_{r_j < r_k} x_j x_k / r_k (multilinear in the 0/1 relevance x) and
R = Σ x. Expanding about the control p, AP(x) = AP(p) + Σ_d h_d (x_d − p_d) + remainder, with
h = ∂AP/∂x at p. The first-order estimator adds the inclusion-weighted residuals
Σ_{d ∈ S} h_d (x_d − p_d) / π_d: design-unbiased for the linear term (single weights
1/π ≈ N/10 only), so its bias is the remainder — the pairs of residuals and the ratio's
curvature — computed here exactly over the universe, with no sampling.

Controls: ``calibrated``, p = P(NIST ≥ 2 | UMBRELA grade) read on the *other* collection's
qrels (held out); ``oracle``, the same shifted on the logit scale per topic until Σ p = R (the
best any per-topic recalibration of the label could do: it uses the truth). ``--draws`` seeded
uniform samples of ``--humans`` pairs per topic give the first-order estimator's coverage (its
variance by the stratified SRS formula) and Kendall τ against the official MAP.

The remainder is what a pairwise estimate with weights 1/π_jk ≈ (N/10)² has to carry instead
(the difference estimator of ``few_human.py``): unbiased, but at π ≈ 0.05 heavy-tailed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import expit, logit
from scipy.stats import kendalltau

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
FOLDERS = {"dl19": "trec-dl-2019-passage", "dl21": "trec-dl-2021-passage"}
LABELS = "umbrela-gpt-4o.txt"


def _table(path, names):
    return pd.read_csv(path, sep=r"\s+", header=None, names=names, dtype={"t": str, "d": str})


def calibration(collection: str) -> dict:
    """P(NIST grade ≥ 2 | UMBRELA grade) on ``collection``'s judged pairs."""
    folder = DATA / FOLDERS[collection]
    both = _table(folder / "qrels.txt", ["t", "i", "d", "g"]).merge(
        _table(folder / "llm" / LABELS, ["t", "i", "d", "label"]), on=["t", "d"])
    return (both.g >= 2).groupby(both.label).mean().to_dict()


def topics(collection: str, held_out: str):
    """Per topic with a relevant document: (x, p, ranks (runs, N), 0 = not retrieved), and the
    run names; ranks in trec_eval's order (score descending, document id descending)."""
    folder = DATA / FOLDERS[collection]
    judged = _table(folder / "qrels.txt", ["t", "i", "d", "g"]).merge(
        _table(folder / "llm" / LABELS, ["t", "i", "d", "label"])[["t", "d", "label"]],
        on=["t", "d"], how="left")
    judged["p"] = judged.label.map(calibration(held_out)).astype(float)
    runs = []
    for path in sorted((folder / "runs").iterdir()):
        run = _table(path, ["t", "q", "d", "rank", "s", "name"])
        run = run.sort_values(["t", "s", "d"], ascending=[True, False, False])
        run["r"] = run.groupby("t").cumcount() + 1
        run["run"] = path.name.split(".")[0]
        runs.append(run[["t", "d", "r", "run"]])
    names = sorted(r.run.iloc[0] for r in runs)
    ranked = pd.concat(runs).merge(judged[["t", "d"]], on=["t", "d"])
    out = {}
    for t, g in judged.groupby("t"):
        x = (g.g.to_numpy() >= 2).astype(float)
        if not x.any():
            continue
        position = pd.Series(np.arange(len(g)), index=g.d.to_numpy())
        ranks = np.zeros((len(names), len(g)))
        hits = ranked[ranked.t == t]
        ranks[hits.run.map({n: i for i, n in enumerate(names)}).to_numpy(),
              position[hits.d].to_numpy()] = hits.r.to_numpy()
        out[t] = (x, g.p.to_numpy(), ranks)
    return out, names


def numerator(v, ranks):
    """N(v) per run and ∂N/∂v_d (N multilinear, so the derivative is exact)."""
    value, grad = np.zeros(len(ranks)), np.zeros(ranks.shape)
    for a, rank in enumerate(ranks):
        seen = np.nonzero(rank)[0]
        order = seen[np.argsort(rank[seen])]
        r, w = rank[order], v[order]
        before = np.cumsum(w) - w
        later = np.cumsum((w / r)[::-1])[::-1] - w / r
        value[a] = np.sum(w / r + w * before / r)
        grad[a, order] = 1 / r + before / r + later
    return value, grad


def first_order(x, p, ranks):
    """(AP(x), AP(p), h · (x − p) per document): the truth, the control's point and the
    linear residual terms."""
    truth = numerator(x, ranks)[0] / x.sum()
    value, grad = numerator(p, ranks)
    point = value / p.sum()
    return truth, point, (grad - point[:, None]) / p.sum() * (x - p)[None, :]


def oracle(p, relevant):
    """p shifted on the logit scale until it sums to the topic's number of relevant."""
    z = logit(np.clip(p, 1e-4, 1 - 1e-4))
    return expit(z + brentq(lambda s: expit(z + s).sum() - relevant, -30, 30))


def study(collection: str, control: str, draws: int, humans: int, seed: int):
    held_out = "dl21" if collection == "dl19" else "dl19"
    per, names = topics(collection, held_out)
    rng = np.random.default_rng(seed)
    truth, point, remainder, est, var = [], [], [], [], []
    for x, p, ranks in per.values():
        if control == "oracle":
            p = oracle(p, x.sum())
        ap, ap_p, terms = first_order(x, p, ranks)
        truth.append(ap), point.append(ap_p), remainder.append(ap - ap_p - terms.sum(1))
        n_all = len(x)
        m = min(humans, n_all)
        drawn = terms[:, np.argsort(rng.random((draws, n_all)), 1)[:, :m]]  # (runs, B, m)
        est.append(ap_p[:, None] + n_all * drawn.mean(-1))
        s2 = drawn.var(-1, ddof=1) if m > 1 else np.zeros(drawn.shape[:2])
        var.append(n_all**2 * (1 - m / n_all) * s2 / m)
    T = len(per)
    MAP = np.mean(truth, 0)
    est, se = np.mean(est, 0), np.sqrt(np.sum(var, 0)) / T  # (runs, B)
    covered = np.abs(est - MAP[:, None]) <= 1.96 * se
    return {
        "collection": collection, "control": f"{control} (p read on {held_out})",
        "label point |bias|": np.abs(np.mean(point, 0) - MAP).mean(),
        "first-order |bias| (exact)": np.abs(np.mean(remainder, 0)).mean(),
        "first-order |bias| (draws)": np.abs(est.mean(1) - MAP).mean(),
        "coverage": covered.mean(), "width": 2 * 1.96 * se.mean(),
        "tau": np.mean([kendalltau(est[:, b], MAP)[0] for b in range(est.shape[1])]),
        "tau of label point": kendalltau(np.mean(point, 0), MAP)[0],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", choices=sorted(FOLDERS))
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--humans", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not (DATA / FOLDERS[args.collection]).is_dir():
        print(f"needs {DATA / FOLDERS[args.collection]} (the shared data)", file=sys.stderr)
        return 2
    rows = [study(args.collection, c, args.draws, args.humans, args.seed)
            for c in ("calibrated", "oracle")]
    with pd.option_context("display.width", 200, "display.precision", 4):
        print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
