"""The selection study on DL 2019 (Carterette 2007 §4.3 protocol), slow: medians per strategy.

Protocol (docs/math/reference-points.md): runs cut at rank 100, rel >= 2; per trial
10 of the 12 groups, one run each, the first two drawn are the initial pair;
every judgment hidden; an oracle from the official qrels; stop at
max(P, 1 − P) >= 0.95 (budget cap 2,000). MTC uses p = ½; IP judges in rank
order (its confidence computed with p = ½ so that it can stop at 0.95);
RTC re-estimates p with the expert model every 10 judgments.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute.selection import SimulatedAssessor, run_selection

CAP = 2000


def _trial_runs(campaign, groups, rng):
    chosen = rng.choice(sorted(groups), size=10, replace=False)
    return [str(rng.choice(sorted(groups[g]))) for g in chosen]


def _study(dl19, dl19_dir, n_trials, strategies):
    frame = pd.read_csv(dl19_dir / "groups.tsv", sep="\t")
    groups = {g: list(rows["run"]) for g, rows in frame.groupby("group")}
    hidden = dl19.with_judged([np.zeros(t.n_docs, bool) for t in dl19.topics])
    oracle = SimulatedAssessor(dl19)
    seeds = np.random.SeedSequence(2007).spawn(n_trials)
    out = {name: [] for name in strategies}
    for seed in seeds:
        runs = _trial_runs(dl19, groups, np.random.default_rng(seed))
        trial = hidden.subset(systems=runs)
        for name, (strategy, params) in strategies.items():
            result = run_selection(
                trial, strategy, oracle, runs[:2], depth=100, budget=CAP, **params
            )
            out[name].append(result.n_judgments)
    return {name: np.array(v) for name, v in out.items()}


@pytest.mark.slow
def test_dl19_median_judgments_mtc_ip(dl19, dl19_dir):
    counts = _study(dl19, dl19_dir, 40, {"mtc": ("mtc", {}), "ip": ("ip", {"prior": 0.5})})
    mtc, ip = counts["mtc"], counts["ip"]
    print(
        f"\nDL19, 40 trials: MTC median {np.median(mtc):.0f} mean {mtc.mean():.0f} "
        f"zero {np.mean(mtc == 0):.0%}; IP median {np.median(ip):.0f} mean {ip.mean():.0f}"
    )
    # docs/math/reference-points.md: MTC median 69, mean 296, 36% of trials stop at 0
    # (1,000 trials)
    assert 20 <= np.median(mtc) <= 200
    assert 0.15 <= np.mean(mtc == 0) <= 0.6
    assert np.median(ip) >= np.median(mtc)
    # depth-100 pooling of a pair is thousands of judgments; MTC needs a small share
    assert np.median(mtc) < 600


@pytest.mark.slow
def test_dl19_median_judgments_rtc(dl19, dl19_dir):
    pytest.importorskip("relimpute.relevance.rtc")
    counts = _study(dl19, dl19_dir, 20, {"rtc": ("rtc", {"model": "rtc"}), "mtc": ("mtc", {})})
    rtc, mtc = counts["rtc"], counts["mtc"]
    print(f"\nDL19, 20 trials: RTC median {np.median(rtc):.0f} (MTC {np.median(mtc):.0f})")
    assert (rtc <= CAP).all()
    assert np.median(rtc) < 600
