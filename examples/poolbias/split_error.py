"""Where a left-out group's nDCG@10 error comes from: relevance, or the split into grades.

For each group left out of the depth-k pool (as in ``run.py``), the default model is fitted
on the others' pool and predicts the group's would-be-pooled unjudged passages; the full
pool's qrels then say which are relevant and at which grade. Per group, two shifts of the
model's log-odds are fitted by maximum likelihood on those passages (each with its standard
error from the observed information):

- ``delta``: of the log-odds of relevance, from which passages are relevant (what the
  correction's between-group term ``group_sd`` stands for);
- ``eps``: of the log-odds the split into grades is taken at, from the grades given true
  relevance (grade 3 among the relevant, grade 1 among the others;
  ``docs/math/fusion.md``, "A left-out group's split").

The spread of the groups' shifts beyond their standard errors (method of moments) is the
between-group variance the correction's draws must carry.

    nice -n 10 python examples/poolbias/split_error.py ../shared/data/trec-dl-2019-passage \
        --depth 10 --rel-threshold 2 --out results/dl19_d10_split_error.tsv
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar
from scipy.special import expit, log_expit, logit

from relimpute.bias import read_groups
from relimpute.bias.base import PoolContext
from relimpute.bias.model import ModelBased, would_be_pooled
from relimpute.bias.pools import group_leave_outs
from relimpute.data import Campaign

from run import held_out_settings


def _shift_fit(loglik) -> tuple[float, float]:
    """The maximising shift of ``loglik(s)`` and its standard error (numerical curvature)."""
    best = minimize_scalar(lambda s: -loglik(s), bounds=(-6, 6), method="bounded").x
    h = 1e-3
    curv = -(loglik(best + h) - 2 * loglik(best) + loglik(best - h)) / h**2
    return float(best), float(1 / np.sqrt(curv)) if curv > 0 else np.inf


def group_rows(campaign, groups, depth, settings, seed=0) -> list[dict]:
    """One row per left-out group: counts, expected counts and the two fitted shifts."""
    pooled = groups.pooled_runs(campaign.systems)
    full = campaign.pooled(depth, pooled)
    out = []
    for label, left_out, kept in group_leave_outs(full, groups, runs=pooled):
        judged = full.pooled(depth, kept)  # the others' pool
        context = PoolContext.build(judged.subset(list(kept) + list(left_out)), kept, depth)
        corrector = ModelBased(model=settings, seed=seed)
        rows = context.campaign.system_index(list(left_out))
        runs, estimate = corrector._restricted(context, rows)
        unknown = would_be_pooled(runs, np.arange(len(left_out)), depth)
        shares = estimate.grades
        eta_p, eta_s, above, below, grade = [], [], [], [], []
        for t, (topic, mask) in enumerate(zip(runs.topics, unknown)):
            truth = full.topics[full.query_ids.index(runs.query_ids[t])]
            position = {d: i for i, d in enumerate(truth.doc_ids)}
            idx = np.array([position.get(d, -1) for d in topic.doc_ids[mask]], dtype=np.int64)
            judged = np.where(idx >= 0, truth.judged[np.maximum(idx, 0)], False)
            g = np.where(judged, truth.grades[np.maximum(idx, 0)], 0)
            p = np.clip(estimate.p[t][mask], 1e-9, 1 - 1e-9)
            eta_p.append(logit(p))
            eta_s.append(logit(p) + np.nan_to_num(shares.offset[t][mask]))
            above.append(shares.above[t][mask, 0])
            below.append(shares.below[t][mask, 0])
            grade.append(g)
        eta_p, eta_s, a, b, g = map(np.concatenate, (eta_p, eta_s, above, below, grade))
        rel = g >= campaign.rel_threshold
        # the topic's cut-points c_3 and c_1 behind each passage's split at eta_s
        a, b = np.clip(a, 1e-9, 1 - 1e-9), np.clip(b, 1e-9, 1 - 1e-9)
        c3 = logit(a * expit(eta_s)) - eta_s
        c1 = -logit((1 - b) * expit(-eta_s)) - eta_s

        def relevance(s):
            return float(np.sum(np.where(rel, log_expit(eta_p + s), log_expit(-eta_p - s))))

        def split(s):
            e = eta_s + s
            top = np.clip(np.exp(log_expit(e + c3) - log_expit(e)), 1e-12, 1 - 1e-12)
            low = np.clip(-np.expm1(log_expit(-e - c1) - log_expit(-e)), 1e-12, 1 - 1e-12)
            return float(np.sum(np.where(rel, np.where(g >= 3, np.log(top), np.log1p(-top)),
                                         np.where(g >= 1, np.log(low), np.log1p(-low)))))  # fmt: skip

        delta, delta_se = _shift_fit(relevance)
        eps, eps_se = _shift_fit(split)
        out.append({
            "group": label, "runs": len(left_out), "passages": len(g),
            "relevant": int(rel.sum()), "expected_relevant": float(expit(eta_p).sum()),
            "grade3": int((g >= 3).sum()), "expected_grade3_given_relevant": float(a[rel].sum()),
            "grade1": int((g == 1).sum()), "expected_grade1_given_nonrelevant": float(b[~rel].sum()),
            "delta": delta, "delta_se": delta_se, "eps": eps, "eps_se": eps_se,
        })  # fmt: skip
        print(out[-1], flush=True)
    return out


def between(values, se) -> float:
    """Method-of-moments between-group sd: ``sqrt(max(var − mean se², 0))``."""
    values, se = np.asarray(values), np.asarray(se)
    keep = np.isfinite(se) & (se < 10)  # groups with passages to learn from
    return float(np.sqrt(max(np.var(values[keep], ddof=1) - np.mean(se[keep] ** 2), 0.0)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collection")
    parser.add_argument("--depth", type=int, required=True)
    parser.add_argument("--rel-threshold", type=int, default=2)
    parser.add_argument("--out", required=True)
    parser.add_argument("--from-table", action="store_true", help="summarise --out, do not refit")
    args = parser.parse_args()
    root = Path(args.collection)
    groups = read_groups(root / "groups.tsv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        campaign = Campaign.from_files(root / "qrels.txt", root / "runs", rel_threshold=args.rel_threshold)
    campaign = campaign.subset(list(groups.pooled_runs(campaign.systems)))
    out = Path(__file__).resolve().parent / args.out
    if args.from_table:
        table = pd.read_csv(out, sep="\t")
    else:
        table = pd.DataFrame(group_rows(campaign, groups, args.depth, held_out_settings("fusion", root)))
        table.to_csv(out, sep="\t", index=False, float_format="%.4g")
    seen = table[table.passages > 0]
    print(table.to_string(index=False))
    for name, part in (("all groups", seen), ("without the largest |eps|", seen.drop(seen.eps.abs().idxmax()))):
        print(f"{name} ({len(part)}): between-group sd of delta {between(part.delta, part.delta_se):.3f}, "
              f"of eps {between(part.eps, part.eps_se):.3f}; corr(delta, eps) "
              f"{np.corrcoef(part.delta, part.eps)[0, 1]:+.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
