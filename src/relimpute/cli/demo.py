"""``relimpute demo``: the whole idea on an embedded, simulated collection.

A seeded simulated campaign (:mod:`relimpute.simulate`) stands in for a real
test collection: its full qrels are the truth. Only a shallow depth-k pool is
kept as judged, then each relevance model scores the systems and says how
sure it is of every pairwise comparison. The report sets each model against
the truth: Kendall τ of the system ranking, and the bookmaker W and accuracy
of its confident calls (Carterette 2007 §4.4). Needs no files and no network.
"""

from __future__ import annotations

import sys
import time

from .._defaults import DEFAULT_MODEL
from ._common import add_seed_argument, integer_at_least, positive_int
from ._format import add_format_argument, emit
from ._vocabulary import add_confidence_argument, add_quiet_argument

COMMAND = "demo"
DEMO_MODELS = ("nonrelevant", "uniform", "rtc", "fusion")
HELP = "run the main job on an embedded simulated collection (no data needed)"
DESCRIPTION = """\
A seeded simulated campaign (the simulator of relimpute.simulate) stands in
for a real test collection: its full qrels are the truth. Only a shallow
depth-k pool is kept as judged, then each relevance model scores the systems
and says how sure it is of every pairwise comparison. The report sets each
model against the truth: Kendall tau of the system ranking, and the bookmaker
W and accuracy of its confident calls (Carterette 2007 section 4.4). Needs no
files and no network.

example:
  relimpute demo                         # 12 systems, 25 topics, depth-5 pool
  relimpute demo --pool-depth 10 -M uniform -M rtc -M bayes --seed 3
"""


def add_arguments(parser) -> None:
    add_seed_argument(parser, "the simulation and the models")
    parser.add_argument(
        "--n-systems", type=integer_at_least(2), default=12,
        help="number of runs, 2 or more (default 12)",
    )  # fmt: skip
    parser.add_argument(
        "--n-topics", dest="topics", type=positive_int, default=25, help="number of topics (default 25)"
    )
    parser.add_argument(
        "--run-length", type=positive_int, default=100, help="documents per ranking (default 100)"
    )
    parser.add_argument(
        "--pool-depth", type=positive_int, default=5, help="judge only the depth-k pool (default 5)"
    )
    parser.add_argument(
        "--model",
        "-M",
        dest="models",
        action="append",
        metavar="NAME|PATH",
        help="a relevance model (registered name or settings file); repeat for more "
        f"(default: {' '.join(DEMO_MODELS)})",
    )
    add_confidence_argument(parser, "confidence counted as a confident call")
    add_quiet_argument(parser)
    add_format_argument(parser)


def run(args) -> int:
    import numpy as np
    import pandas as pd

    from ..calibration.metrics import bookmaker_w, kendall_tau, orient
    from ..confidence import ConfidenceEngine
    from ..measures import evaluate
    from ..relevance import load_model
    from ..simulate import simulate_campaign

    sim = simulate_campaign(
        n_topics=args.topics, n_systems=args.n_systems, depth=args.run_length, rng=args.seed
    )
    truth_campaign = sim.campaign
    judged = truth_campaign.pooled(args.pool_depth)
    n_judged = sum(int(t.judged.sum()) for t in judged.topics)
    n_known = sum(int(t.judged.sum()) for t in truth_campaign.topics)
    print(f"{sim}", file=sys.stderr)
    print(
        f"judged: the depth-{args.pool_depth} pool, {n_judged} of {n_known} judgments "
        f"({n_judged / n_known:.0%})",
        file=sys.stderr,
    )

    true_map = (
        evaluate(truth_campaign, ["AP"], missing="zero")
        .set_index("system")["value"]
        .reindex(truth_campaign.systems)
        .to_numpy()
    )
    a, b = np.triu_indices(truth_campaign.n_systems, k=1)
    true_delta = true_map[a] - true_map[b]
    decided = true_delta != 0

    engine = ConfidenceEngine()
    rows, answers = [], {}
    for name in args.models or DEMO_MODELS:
        started = time.perf_counter()
        model = load_model(name)
        estimate = model.fit_predict(judged, rng=args.seed)
        # posterior predictive Monte Carlo when the model has draws, as `relimpute compare`
        # states it; for a point estimate the normal approximation of Carterette 2007
        comparison = engine.confidence(judged, estimate, n_draws=4000, rng=args.seed)
        scores = comparison.scores
        seconds = time.perf_counter() - started
        answers[model.name] = (scores, comparison)
        e_map = scores.to_frame().set_index("system")["e_map"].reindex(judged.systems).to_numpy()
        p = comparison.to_frame()["p_a_better"].to_numpy()
        confidence, correct = orient(p[decided], true_delta[decided] > 0)
        sure = confidence >= args.confidence
        rows.append(
            {
                "model": model.name,
                "kendall_tau": kendall_tau(e_map, true_map),
                "W": bookmaker_w(confidence, correct),
                "accuracy": float(correct.mean()),
                f"share_conf>={args.confidence:g}": float(sure.mean()),
                f"accuracy_conf>={args.confidence:g}": float(correct[sure].mean()) if sure.any() else np.nan,
                "seconds": seconds,
            }
        )
    emit(pd.DataFrame(rows), args.format)
    print(
        "kendall_tau: ranking by E[MAP] vs the true MAP; W: bookmaker statistic "
        "(0 = confidence matches accuracy, negative = over-confident); a model with posterior "
        "draws states its confidence by Monte Carlo over them, the others by the normal "
        "approximation",
        file=sys.stderr,
    )
    if DEFAULT_MODEL in answers:
        _show_answer(*answers[DEFAULT_MODEL], dict(zip(truth_campaign.systems, true_map)))
    return 0


def _show_answer(scores, comparison, truth) -> None:
    """What a user gets from the default model: E[MAP] ± sd of the top runs, P(A beats B)."""
    frame = scores.to_frame().sort_values("e_map", ascending=False).head(5)
    print(f"\nthe default model's answer ({DEFAULT_MODEL}), the five best runs by E[MAP]:", file=sys.stderr)
    for row in frame.itertuples():
        print(
            f"  {row.system:<8} E[MAP] {row.e_map:.3f} ± {row.sd_map:.3f}   "
            f"true MAP {truth[row.system]:.3f}",
            file=sys.stderr,
        )
    inside = sum(abs(truth[r.system] - r.e_map) <= 2 * r.sd_map for r in frame.itertuples())
    print(
        f"  ({inside} of {len(frame)} true MAPs within E[MAP] ± 2 sd: the sd is the posterior's, "
        "mostly what lies below the judged pool)",
        file=sys.stderr,
    )
    first, second = frame["system"].iloc[0], frame["system"].iloc[1]
    pairs = comparison.to_frame().set_index(["system_a", "system_b"])["p_a_better"]
    p = pairs.get((first, second), None)
    p = 1.0 - pairs[(second, first)] if p is None else p
    print(
        f"  P({first} beats {second}) = {p:.3f}   (true: {truth[first] - truth[second]:+.3f} MAP)",
        file=sys.stderr,
    )
