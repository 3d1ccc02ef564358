"""Speed and held-out quality of the Bayesian hierarchy ("bayes") on DL 2019.

A fit on DL 2019-sized input (37 runs, 43 topics, ~1,000 judgments: the
depth-3 pool, 912 judgments; a random ~11% of the qrels; and, "complete", a
random 0.5% of every retrieved document with unjudged ones taken as
nonrelevant, the unbiased case of quality.complete_judgments) with NUTS on
2 cores (target < 60 s) and with ADVI (target < 10 s), then prediction of
p and 100 joint draws for all 200,666 documents. Quality: log loss, Brier
and AUC on the held-out judgments against the uniform prior (and RTC), and
the expected number of relevant documents per topic (Σ p) against the truth.
Writes benchmarks/results/hierarchical.{md,json}.

    python benchmarks/bench_hierarchical.py [--protocols pool3 random complete] [--methods advi nuts]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.cli._format import _markdown
from relimpute.data import Campaign
from relimpute.relevance import get_model, load_model, load_settings
from relimpute.relevance.quality import (
    auc,
    brier,
    complete_judgments,
    log_loss,
    split_judgments,
)

ROOT = Path(__file__).resolve().parents[1]
DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
OUT = ROOT / "benchmarks" / "results" / "hierarchical"

PROTOCOLS = {
    "pool3": {"protocol": "pool", "depth": 3},
    "random": {"protocol": "random", "fraction": 0.108, "rng": 2019},
    # every retrieved document judged (unjudged = nonrelevant), 0.5% of them kept
    "complete": {"protocol": "random", "fraction": 0.005, "rng": 2019},
}


def _bayes(**overrides):
    """The shipped models/bayes.json settings with some overridden."""
    return get_model("bayes", **{**load_settings("bayes").params, **overrides})


MODELS = {
    "uniform": lambda: get_model("uniform"),
    "rtc": lambda: load_model("rtc"),
    "advi": lambda: _bayes(method="advi"),
    "nuts": lambda: _bayes(),
    "nuts-pymc": lambda: _bayes(sampler="pymc"),
}


def relevant_counts(campaign: Campaign, p: tuple[np.ndarray, ...]) -> dict:
    """Mean expected (Σ p) and true relevant per topic; geometric mean of their ratio."""
    expected = np.array([pt.sum() for pt in p])
    true = np.array([r.sum() for r in campaign.relevant()], dtype=float)
    has = true > 0
    return {
        "expected_R": round(float(expected.mean()), 1),
        "true_R": round(float(true.mean()), 1),
        "R_ratio": round(float(np.exp(np.mean(np.log(expected[has] / true[has])))), 2),
    }


def run_one(name: str, campaign: Campaign, keep: list[np.ndarray]) -> dict:
    train = campaign.with_judged(keep)
    model = MODELS[name]()
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(train, rng=1)
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    wall = time.perf_counter()
    estimate = model.predict(train)
    predict_wall = time.perf_counter() - wall
    diagnostics = getattr(model, "diagnostics_", None)
    compile_s = getattr(diagnostics, "compile_seconds", math.nan)
    test = [t.judged & ~k for t, k in zip(campaign.topics, keep)]
    y = np.concatenate([r[m] for r, m in zip(campaign.relevant(), test)])
    p = np.concatenate([pt[m] for pt, m in zip(estimate.p, test)])
    row = {
        "model": name,
        "n_train": int(sum(k.sum() for k in keep)),
        "n_test": int(y.size),
        "fit_wall_s": round(fit_wall, 1),
        "fit_cpu_s": round(fit_cpu, 1),
        "compile_s": None if math.isnan(compile_s) else round(compile_s, 1),
        "predict_wall_s": round(predict_wall, 1),
        "n_draws": estimate.n_draws,
        "log_loss": round(log_loss(y, p), 4),
        "brier": round(brier(y, p), 4),
        "auc": round(auc(y, p), 4),
        **relevant_counts(campaign, estimate.p),
        "warnings": "; ".join(
            str(w.message)[:120] for w in caught if "Convergence" in type(w.message).__name__
        ),
    }
    row["diagnostics"] = str(diagnostics) if diagnostics is not None else ""
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocols", nargs="+", default=list(PROTOCOLS), choices=list(PROTOCOLS))
    parser.add_argument(
        "--methods", nargs="+", default=["uniform", "rtc", "advi", "nuts"], choices=list(MODELS)
    )
    args = parser.parse_args(argv)
    if not (DL19 / "qrels.txt").is_file():
        print(f"skipped: DL 2019 data not found at {DL19}")
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(DL19 / "qrels.txt", DL19 / "runs", rel_threshold=2)
    meta = {
        "command": "python benchmarks/bench_hierarchical.py " + " ".join(argv or []),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "campaign": repr(campaign),
    }
    rows = []
    for protocol in args.protocols:
        truth = complete_judgments(campaign) if protocol == "complete" else campaign
        keep = split_judgments(truth, **PROTOCOLS[protocol])
        for name in args.methods:
            load = os.getloadavg()[0]
            row = {
                "protocol": protocol,
                **run_one(name, truth, keep),
                "load_avg_1min": round(load, 1),
            }
            print(row, flush=True)
            rows.append(row)
            write(meta, rows)  # after every row: a long run keeps what it measured
    print(_markdown(pd.DataFrame(rows).drop(columns=["diagnostics", "warnings"])))
    return 0


def write(meta: dict, rows: list[dict]) -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    table = _markdown(pd.DataFrame(rows).drop(columns=["diagnostics", "warnings"]))
    notes = "\n".join(
        f"- {r['protocol']} / {r['model']}: {r['diagnostics']}"
        + (f" WARNING: {r['warnings']}" if r["warnings"] else "")
        for r in rows
        if r["diagnostics"]
    )
    OUT.with_suffix(".md").write_text(
        f"# Bayesian hierarchy on DL 2019\n\n`{meta['command']}` ({meta['date']}, {meta['machine']}; "
        f"{meta['campaign']})\n\nFit wall time includes PyMC/nutpie compilation (`compile_s`: "
        "the part spent compiling the model for nutpie, nan for the other models); `load_avg_1min` is "
        "the machine's load when the row started (2 cores shared with other jobs: wall time "
        "includes waiting for a core, CPU time does not).\n\n"
        f"{table}\n\nDiagnostics:\n\n{notes}\n"
    )


if __name__ == "__main__":
    raise SystemExit(main())
