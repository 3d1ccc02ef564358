"""Which documents should humans judge when an LLM has labelled them? LARA's protocol.

Run from the repository root::

    python examples/llm_evidence/selection.py [--collection dl19] [--source umbrela-gpt-4o]
        [--per-topic 1,2,3,5,10] [--out examples/llm_evidence/results]

On TREC DL 2019 passage (runs cut at rank 100, all runs compared, no judgment at the
start), each selector chooses the documents an oracle reading the official qrels judges
(Takehi et al. SIGIR 2025's protocol: quality against the number of human judgments).
After 1, 2, 3, 5 and 10 judgments per topic (on average) the judgments so far, with the
LLM's labels as evidence, are generalised by ``fusion-llm`` (the same answer for every
selector), and its E[MAP] ranking of the runs is scored against the official MAP:
Kendall's τ and the maximum rank drop (the most places any run falls from its true
rank; Voorhees 2018); the columns ending ``_pool`` score fusion-llm with
``unlabelled="nonrelevant"`` (the labelled documents taken as the pool). Selectors (all judge for every pair of runs, none stops):

mtc
    MTC with p = ½ (Carterette 2007 Algorithm 1).
posterior
    MTC's weights on the default model's p, refitted every 10 judgments: the choice of
    ``--strategy posterior`` (its stopping rule plays no part here).
rtc+labels
    The same on ``fusion-llm`` (the labels as evidence): what the labels add to the choice
    through the model's p alone.
llm
    ``--strategy llm``: MTC's weight times the labelled model's 2p(1 − p), refitted every
    10 judgments, among each run's next unjudged document (:class:`relimpute.selection.LLMSelection`).
llm-anywhere
    The same weight over every candidate (``frontier=False``): judgments chosen for the
    labels anywhere in the rankings, not a pool.

Writes ``selection_curve.csv`` (one row per selector and checkpoint) to ``--out``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.calibration.metrics import kendall_tau
from relimpute.calibration.trials import true_map
from relimpute.confidence import ConfidenceEngine
from relimpute.data import Campaign
from relimpute.labels import read_labels, with_labels
from relimpute.relevance import FusionLLM
from relimpute.selection import MTC, LLMSelection, RTCSelection, SelectionSession, SimulatedAssessor

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
COLLECTIONS = {"dl19": "trec-dl-2019-passage", "dl21": "trec-dl-2021-passage"}
DEPTH = 100


def selectors() -> dict:
    return {
        "mtc": lambda: MTC(),
        "posterior": lambda: RTCSelection(model="fusion", stop_on="model"),
        "rtc+labels": lambda: RTCSelection(model="fusion-llm", stop_on="model"),
        "llm": lambda: LLMSelection(stop_on="model"),
        "llm-anywhere": lambda: LLMSelection(stop_on="model", frontier=False),
    }


def max_drop(estimate: np.ndarray, truth: np.ndarray) -> int:
    """The most places any run falls from its true rank in the estimated ranking (Voorhees 2018)."""
    true_rank = np.argsort(np.argsort(-truth))
    est_rank = np.argsort(np.argsort(-estimate))
    return int(max(0, (est_rank - true_rank).max()))


#: the answers scored at each checkpoint: column suffix and FusionLLM settings
#: (the study's: runs_weight 1, class defaults until default_check.py chose 0.5 and the pool)
ANSWERS = {"": {"unlabelled": "runs", "runs_weight": 1.0}, "_pool": {"unlabelled": "nonrelevant", "runs_weight": 1.0}}


def score(campaign: Campaign, truth: pd.Series, seed: int) -> dict:
    """fusion-llm on the judgments so far (the study's settings, and with the labels' documents as the
    pool: suffix ``_pool``): τ, max drop and mean |bias| of its E[MAP] against the truth."""
    t = truth[list(campaign.systems)].to_numpy()
    out = {}
    for suffix, settings in ANSWERS.items():
        estimate = FusionLLM(**settings).fit_predict(campaign, rng=seed)
        scores = ConfidenceEngine().confidence(campaign, estimate, pairs=[], method="normal").scores
        e_map = np.asarray(scores.e_map, dtype=float)
        out |= {f"tau{suffix}": kendall_tau(e_map, t), f"max_drop{suffix}": max_drop(e_map, t),
                f"mean_abs_bias{suffix}": float(np.abs(e_map - t).mean())}  # fmt: skip
    return out


def curve(name, make, hidden, full, truth, checkpoints, seed) -> list[dict]:
    assessor = SimulatedAssessor(full)
    started = time.perf_counter()
    session = SelectionSession(hidden, make(), confidence=None, rng=seed)
    rows, labelled = [], 0
    codes = [source.align(hidden) for source in hidden.labels]
    for target in checkpoints:
        while session.n_judged < target:
            proposal = session.propose()
            if proposal is None:
                break
            q, d = proposal
            t, i = session.state.locate(q, d)
            labelled += any(c[t][i] >= 0 for c in codes)
            session.judge(q, d, assessor.judge(q, d))
        row = {"selector": name, "judgments": session.n_judged,
               "per_topic": session.n_judged / hidden.n_topics, "labelled_share": labelled / max(1, session.n_judged),
               **score(session.state.current_campaign(), truth, seed),
               "seconds": time.perf_counter() - started}  # fmt: skip
        print("  " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()),
              file=sys.stderr)  # fmt: skip
        rows.append(row)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="dl19", choices=sorted(COLLECTIONS))
    parser.add_argument("--source", default="umbrela-gpt-4o")
    parser.add_argument("--per-topic", default="1,2,3,5,10", help="checkpoints, judgments per topic")
    parser.add_argument("--selectors", default=",".join(selectors()))
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    folder = DATA / COLLECTIONS[args.collection]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = Campaign.from_files(folder / "qrels.txt", folder / "runs", rel_threshold=2).truncated(DEPTH, shrink=True)
    full = with_labels(full, [read_labels(folder / "llm" / f"{args.source}.txt")], unknown_documents="drop")
    truth = true_map(full)
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    checkpoints = [round(float(k) * full.n_topics) for k in args.per_topic.split(",")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = [{"selector": "no judgment", "judgments": 0, "per_topic": 0.0, "labelled_share": np.nan,
             **score(hidden, truth, args.seed), "seconds": 0.0}]  # fmt: skip
    known = selectors()
    for name in args.selectors.split(","):
        print(f"{args.collection} {args.source} {name}", file=sys.stderr)
        rows += curve(name, known[name], hidden, full, truth, checkpoints, args.seed)
        frame = pd.DataFrame(rows).assign(collection=args.collection, source=args.source)
        frame.to_csv(out / f"selection_curve_{args.collection}.csv", index=False, float_format="%.4f")
    return 0


if __name__ == "__main__":
    sys.exit(main())
