"""The posterior selector on the initial pair of the reproduction's trials (development check).

For each trial of the paper's protocol on TREC-8 (seed 2007, runs cut at 100, one run per
group), judge for the initial pair with ``PosteriorSelection`` (the default model with the
settings chosen without TREC-8, refitted every 10 judgments, stopping at a posterior predictive
confidence of 0.95) and say how many judgments it took, the confidence, and whether the call
agrees with the official qrels; MTC's judgments on the same trial come from the reproduction's
``results/trials.csv`` when present (``reproduce.py`` writes it).

    python examples/rtc_paper/posterior_initial_pair.py --trials 1-13 --cap 400
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute import Campaign
from relimpute.calibration.strategies import get_calibration_strategy, with_settings_from
from relimpute.calibration.trials import trial_specs, true_map
from relimpute.groups import read_groups
from relimpute.selection import PosteriorSelection, SelectionSession, SimulatedAssessor

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1].parent / "shared" / "data" / "trec-8-adhoc"
HELD_OUT = HERE.parent / "calibration" / "held_out" / "trec8"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", default="1-13", help="trial numbers: a range A-B or a list")
    parser.add_argument("--cap", type=int, default=400, help="stop undecided after this many judgments")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        raise SystemExit(f"TREC-8 ad hoc not found at {DATA} (see examples/README.md)")
    lo, _, hi = args.trials.partition("-")
    wanted = range(int(lo), int(hi) + 1) if hi else [int(t) for t in args.trials.split(",")]
    campaign = Campaign.from_files(DATA / "qrels.txt", DATA / "runs", rel_threshold=1).truncated(100, shrink=True)
    specs = trial_specs(campaign.systems, 200, 10, 2, 2007, read_groups(DATA / "groups.tsv").run_to_group())
    selector = with_settings_from([get_calibration_strategy("posterior")], HELD_OUT)[0].selector_kwargs()
    trials = HERE / "results" / "trials.csv"
    mtc = (pd.read_csv(trials).query("strategy == 'mtc'").set_index("trial")["judgments"]
           if trials.is_file() else pd.Series(dtype=float))  # fmt: skip
    rows = []
    for t in wanted:
        spec = specs[t]
        full = campaign.subset(list(spec.systems))
        truth = true_map(full)
        a, b = spec.initial
        hidden = full.with_judged([np.zeros(x.n_docs, dtype=bool) for x in full.topics]).subset([a, b])
        session = SelectionSession(hidden, PosteriorSelection(**selector), (a, b), confidence=0.95, rng=1)
        oracle = SimulatedAssessor(full)
        while session.stop_reason() is None and session.n_judged < args.cap:
            q, d = session.propose()
            session.judge(q, d, oracle.judge(q, d))
        p = float(session.tracker.p_a_better()[0])
        rows.append({
            "trial": t, "judgments": session.n_judged, "decided": session.stop_reason() == "confidence",
            "p_a_better": round(p, 3), "true_delta_map": round(truth[a] - truth[b], 4),
            "right": (p > 0.5) == (truth[a] > truth[b]), "mtc_judgments": mtc.get(t, np.nan),
        })  # fmt: skip
        print(f"trial {t}: {session.n_judged} judgments", flush=True)
    print(pd.DataFrame(rows).to_markdown(index=False))


if __name__ == "__main__":
    main()
