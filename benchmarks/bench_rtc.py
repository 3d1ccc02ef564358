"""RTC speed and predictive quality on DL 2019 (writes benchmarks/results/rtc.md).

Speed: the rank → probability problem (stage 1) cold and warm, a full fit
with ~500 random judgments (cold: empty stage-1 memo; warm: memo filled),
and the judging-loop refit after one more judgment.
Quality: held-out log loss / Brier / AUC of the paper's settings and of
each named deviation, against the uniform prior, for ~500 random judgments
and for the depth-2 pool.

    python benchmarks/bench_rtc.py
"""

from __future__ import annotations

import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.data import Campaign
from relimpute.relevance import expert, get_model
from relimpute.relevance.quality import heldout_quality, split_judgments

ROOT = Path(__file__).resolve().parents[1]
DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
OUT = ROOT / "benchmarks" / "results" / "rtc.md"

VARIANTS = {
    "paper (class defaults)": {},
    "shipped models/rtc.json: max_rank 100 + calibrated": {
        "max_rank": 100,
        "unretrieved": "calibrated",
    },
    "intercept": {"intercept": True},
    "gaussian prior (sd 1)": {"weight_prior": "gaussian"},
    "unretrieved = calibrated": {"unretrieved": "calibrated"},
    "intercept + calibrated": {"intercept": True, "unretrieved": "calibrated"},
    "max_rank = 100": {"max_rank": 100},
    "no Platt targets": {"platt_targets": False},
    "independent Platt (shrinkage 0)": {"calibration_shrinkage": 0.0},
    "prior_strength = 10": {"prior_strength": 10.0},
}


def _timed(fn, repeat=1):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def speed(campaign: Campaign) -> pd.DataFrame:
    rows = []
    expert.rank_probabilities(50, 1, 1)  # compile the kernels
    for depth in (100, 1000):
        expert._SOLVED.clear()
        cold = _timed(lambda d=depth: expert.rank_probabilities(d, 5, 20))
        warm = _timed(lambda d=depth: expert.rank_probabilities(d, 6, 20))  # nearest-solution start
        rows.append(
            {
                "what": f"stage 1, depth {depth}: cold / warm start (s)",
                "value": f"{cold:.3f} / {warm:.3f}",
            }
        )
    keep = split_judgments(campaign, protocol="random", fraction=0.054, rng=1)
    train = campaign.with_judged(keep)
    n = sum(int(k.sum()) for k in keep)
    for max_rank in (None, 100):
        model = get_model("rtc", max_rank=max_rank, unretrieved="calibrated")
        expert._SOLVED.clear()
        cold = _timed(lambda m=model: m.fit(train))
        warm = _timed(lambda m=model: m.fit(train), repeat=3)
        # the judging loop: one more judgment in one topic, refit
        more = [k.copy() for k in keep]
        t = int(np.argmax([t.judged.sum() for t in campaign.topics]))
        more[t][np.flatnonzero(campaign.topics[t].judged & ~keep[t])[0]] = True
        loop = _timed(lambda m=model, k=more: m.fit(campaign.with_judged(k)))
        predict = _timed(lambda m=model: m.predict(train), repeat=3)
        label = "calibrated, " + ("every rank" if max_rank is None else f"max_rank {max_rank}")
        rows.append({"what": f"fit, {n} judgments, {label}: cold (s)", "value": f"{cold:.2f}"})
        rows.append({"what": f"fit, {n} judgments, {label}: warm memo (s)", "value": f"{warm:.3f}"})
        rows.append({"what": f"refit after one more judgment, {label} (s)", "value": f"{loop:.3f}"})
        rows.append({"what": f"predict, {label} (s)", "value": f"{predict:.3f}"})
    return pd.DataFrame(rows)


def quality(campaign: Campaign) -> pd.DataFrame:
    rows = []
    for protocol, kw in (("random ~500", {"protocol": "random", "fraction": 0.054, "rng": 1}),
                         ("depth-2 pool", {"protocol": "pool", "depth": 2})):  # fmt: skip
        keep = split_judgments(campaign, **kw)
        models = {"uniform prior (p = 1/2)": get_model("uniform")}
        models.update({k: get_model("rtc", **v) for k, v in VARIANTS.items()})
        for label, model in models.items():
            q = heldout_quality(model, campaign, keep, rng=0)
            rows.append({"protocol": protocol, "model": label, "n_train": q.n_train,
                         "n_test": q.n_test, "log_loss": q.log_loss, "brier": q.brier,
                         "auc": q.auc})  # fmt: skip
    return pd.DataFrame(rows)


def unjudged_mass(campaign: Campaign) -> pd.DataFrame:
    """Fit on the full qrels: how much relevance lands on the unjudged documents."""
    rows = []
    judged_rel = sum(int(r.sum()) for r in campaign.relevant()) / campaign.n_topics
    for label, params in (("paper (class defaults)", {}),
                          ("shipped models/rtc.json", VARIANTS["shipped models/rtc.json: max_rank 100 + calibrated"]),
                          ("intercept + calibrated", VARIANTS["intercept + calibrated"])):  # fmt: skip
        est = get_model("rtc", **params).fit_predict(campaign)
        unjudged = np.concatenate([p[~t.judged] for t, p in zip(campaign.topics, est.p)])
        rows.append({"model": label, "unjudged docs": unjudged.size,
                     "mean p unjudged": float(unjudged.mean()),
                     "E[unjudged relevant] per topic": float(unjudged.sum() / campaign.n_topics),
                     "judged relevant per topic": judged_rel})  # fmt: skip
    return pd.DataFrame(rows)


def _markdown(frame: pd.DataFrame) -> str:
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append(
            "| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in row) + " |"
        )
    return "\n".join(lines)


def main() -> None:
    if not (DL19 / "qrels.txt").is_file():
        raise SystemExit(f"DL 2019 data not found at {DL19}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(DL19 / "qrels.txt", DL19 / "runs", rel_threshold=2)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    s = speed(campaign)
    q = quality(campaign)
    mass = unjudged_mass(campaign)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        "# RTC on DL 2019 (37 runs, 43 topics, rel >= 2)\n\n"
        f"Command: `python benchmarks/bench_rtc.py`; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load:.1f} at start (shared machine: "
        "timings are upper bounds).\n\n## Speed\n\n" + _markdown(s) +
        "\n\n## Held-out predictive quality\n\nFit on the kept judgments, scored on every "
        "other judged document (all topics pooled).\n\n" + _markdown(q) +
        "\n\n## Relevance mass on unjudged documents (fit on the full qrels)\n\n"
        "Not measured by the held-out scores (they only see judged documents): DL 2019's "
        "unjudged documents are mostly deep in the runs, where few are relevant.\n\n"
        + _markdown(mass) + "\n"
    )  # fmt: skip
    print(OUT.read_text())


if __name__ == "__main__":
    main()
