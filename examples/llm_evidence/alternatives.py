"""What else could ``--llm-labels`` answer? Two alternatives to the default, against its table.

Run from the repository root::

    python examples/llm_evidence/alternatives.py [--collections dl19,dl21] [--pools 1,3]

The designs of ``default_check.py`` (TREC DL 2019 and 2021 passage, human judgments of the
depth-1 or depth-3 pool, UMBRELA GPT-4o's labels on every other judged pair, the official MAP
as the truth). The default model (``--llm-labels``, no ``--model``) is fitted once per design,
through the command's own functions; then:

label shift σ
    The default's posterior draws with one more term: in each draw the log-odds of every
    unjudged, labelled document move together by a shift from N(0, σ²), shared by the topics
    and runs (the labels' calibration, learned on the pool's top documents, can be wrong about
    all the documents below it at once; the more of the answer rests on labels, the more the
    shift moves it). σ = 0 is the default.
substitution + model interval
    Substitution's point (trec_eval on the human plus label qrels) with the default's 95%
    interval moved onto it (the interval's offsets from E kept).

Per design and answer: mean |bias|, mean bias, Kendall τ against the official MAP, coverage of
the official MAPs by the 95% intervals and their mean width; the σ chosen on each collection
for the other by ``default_check.py``'s criterion (item 4's conditions met, then the smaller
mean |bias|); and where the default's ranking and substitution's disagree with the official
one (pairs each gets wrong, and the official gap of the pairs only the default gets wrong).
Writes ``alternatives.csv``, ``alternatives_flips.csv`` and ``alternatives.md`` to ``--out``.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from default_check import (COLLECTIONS, DATA, conditions_met, design, design_parser, each_design, scores,
                           substitution_map)
from relimpute.cli import build_parser
from relimpute.cli._common import load_campaign
from relimpute.cli._estimand import estimand_engine
from relimpute.cli._relevance import relevance_estimate
from relimpute.cli._intervals import interval_table
from relimpute.cli._requests import CampaignInputs, Estimand, RelevanceSource
from relimpute.labels import read_labels
from relimpute.measures import parse_measures

SIGMAS = (0.0, 0.25, 0.5, 0.75, 1.0)


def shifted(estimate, targets, sigma: float, seed: int = 123):
    """The estimate whose draws move the log-odds of ``targets`` (per topic, bool) by one
    N(0, σ²) shift per draw; a draw at exactly 0 or 1 (no evidence) keeps it."""
    if sigma == 0:
        return estimate
    shift = np.random.default_rng(seed).normal(0.0, sigma, estimate.draws.n_draws)[:, None]

    def move(t, draws):
        out, mask = np.array(draws, copy=True), targets[t]
        if mask.any():
            q = np.clip(out[:, mask], 1e-12, 1 - 1e-12)
            moved = 1.0 / (1.0 + np.exp(-(np.log(q) - np.log1p(-q) + shift)))
            out[:, mask] = np.where((out[:, mask] > 0) & (out[:, mask] < 1), moved, out[:, mask])
        return out

    return replace(estimate, draws=estimate.draws.map(move))


def flips(truth, e, sub) -> dict:
    """Pairs of runs ordered against the official MAP by the default and by substitution."""
    i, j = np.triu_indices(len(truth), 1)
    right = np.sign(truth[i] - truth[j])
    wrong_e, wrong_s = np.sign(e[i] - e[j]) != right, np.sign(sub[i] - sub[j]) != right
    only_e = wrong_e & ~wrong_s
    gap = np.abs(truth[i] - truth[j])
    return {"pairs": len(i), "default_wrong": int(wrong_e.sum()), "substitution_wrong": int(wrong_s.sum()),
            "only_default_wrong": int(only_e.sum()), "only_substitution_wrong": int((wrong_s & ~wrong_e).sum()),
            "median_gap_only_default": float(np.median(gap[only_e])) if only_e.any() else np.nan,
            "median_gap_all": float(np.median(gap)),
            "corr_error_official": float(np.corrcoef(e - truth, truth)[0, 1])}  # fmt: skip


def run_design(collection: str, depth: int, tmp: Path):
    folder = DATA / COLLECTIONS[collection]
    full, kept, qrels, labels, truth = design(collection, depth, tmp)
    sub = substitution_map(full, kept, read_labels(labels))
    argv = ["evaluate", str(qrels), str(folder / "runs"), "--rel-threshold", "2", "--intervals",
            "--llm-labels", str(labels), "--format", "tsv"]  # fmt: skip
    args = build_parser(["evaluate"]).parse_args(argv)
    args.estimand = "complete"
    campaign = load_campaign(CampaignInputs.from_args(args, "evaluate"), "evaluate")
    measures = parse_measures(["AP"])
    estimate = relevance_estimate(RelevanceSource.from_args(args), campaign, measures, "evaluate",
                                  args.seed)
    engine = estimand_engine(Estimand.from_args(args), campaign, "evaluate", depth=None)
    codes = campaign.labels[0].align(campaign)
    targets = [(c >= 0) & ~t.judged for c, t in zip(codes, campaign.topics)]
    setting = {"collection": collection, "pool_depth": depth}
    rows, default = [{**setting, "answer": "substitution", **scores(truth, sub)}], None
    for sigma in SIGMAS:
        table = interval_table(campaign, shifted(estimate, targets, sigma), measures, args, engine)
        table = table.set_index("system").reindex(list(campaign.systems))
        e, lo, hi = (table[c].to_numpy() for c in ("E[AP]", "ci_low[AP]", "ci_high[AP]"))
        name = "default" if sigma == 0 else f"label shift {sigma:g}"
        rows.append({**setting, "answer": name, "sigma": sigma, **scores(truth, e, lo, hi)})
        if sigma == 0:
            default = (e, lo, hi)
        print(f"{collection} pool {depth} σ {sigma:g}: {rows[-1]}", file=sys.stderr, flush=True)
    e, lo, hi = default
    rows.append({**setting, "answer": "substitution + model interval",
                 **scores(truth, sub, lo + sub - e, hi + sub - e)})  # fmt: skip
    return rows, {**setting, **flips(truth, e, sub)}


def choice(table: pd.DataFrame) -> pd.DataFrame:
    """Per collection, the σ chosen on the other (``default_check.py``'s criterion) and its rows."""
    rows = conditions_met(table, table["sigma"].notna())
    out = []
    for held in rows["collection"].unique():
        dev = rows[rows["collection"] != held].groupby("sigma")[["met", "mean_abs_bias"]].sum()
        if dev.empty:
            continue
        best = dev.sort_values(["met", "mean_abs_bias"], ascending=[False, True]).index[0]
        out.append(rows[(rows["collection"] == held) & (rows["sigma"] == best)].assign(chosen_on="the other"))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def main(argv=None) -> int:
    args = design_parser(__doc__.splitlines()[0]).parse_args(argv)
    out = Path(args.out)
    rows, flipped = [], []
    for collection, depth, tmp in each_design(args):
        more, flip = run_design(collection, depth, tmp)
        rows += more
        flipped.append(flip)
    table, flips_table = pd.DataFrame(rows), pd.DataFrame(flipped)
    table.to_csv(out / "alternatives.csv", index=False, float_format="%.4f")
    flips_table.to_csv(out / "alternatives_flips.csv", index=False, float_format="%.4f")
    held = choice(table)
    text = ("Development: every answer on every design\n\n" + table.round(4).to_markdown(index=False)
            + "\n\nHeld out: the label shift chosen on the other collection\n\n"
            + (held.round(4).to_markdown(index=False) if len(held) else "(one collection only)")
            + "\n\nPairs of runs ordered against the official MAP\n\n" + flips_table.round(4).to_markdown(index=False) + "\n")  # fmt: skip
    (out / "alternatives.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
