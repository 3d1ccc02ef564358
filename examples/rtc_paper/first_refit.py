"""Why the paper's RTC loop stops after ten judgments: what one refit does to E[ΔMAP].

For each trial of the paper's protocol (TREC-8 ad hoc, runs cut at 100, one run per group,
the study's seed), run the RTC loop with the paper's model and record, at every refit,
E[ΔMAP] and its sd for the initial pair, and E[ΔMAP] once more with every unjudged
document's probability replaced by their mean: the part of the move that the judged
documents make, without the model's learned differences between documents.

    python examples/rtc_paper/first_refit.py --trials 10
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute import Campaign
from relimpute.calibration.trials import trial_specs
from relimpute.groups import read_groups
from relimpute.selection import RTCSelection, SelectionSession, SimulatedAssessor
from relimpute.selection.stopping import PairConfidence

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec-8-adhoc"


def refit_rows(campaign: Campaign, spec, max_judgments: int) -> list[dict]:
    full = campaign.subset(list(spec.systems))
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    loop = RTCSelection(model="rtc")  # the paper's model: the class defaults
    session = SelectionSession(hidden.subset(list(spec.initial)), loop, spec.initial, confidence=0.95)
    oracle, state, rows = SimulatedAssessor(full), session.state, []
    while True:
        if session.n_judged % loop.interval == 0:  # right after a refit
            mean, var = session.tracker.moments()
            saved = [p.copy() for p in state.p]
            level = np.concatenate([p[c] for p, c in zip(state.p, state.candidates)]).mean()
            for p, c in zip(state.p, state.candidates):
                p[c] = level
            flat, _ = PairConfidence(state).moments()
            for p, s in zip(state.p, saved):
                p[:] = s
            rows.append({"trial": spec.trial, "judgments": session.n_judged,
                         "e_delta_map": mean[0], "sd_delta_map": np.sqrt(var[0]),
                         "e_delta_map_flattened": flat[0],
                         "confidence": float(session.confidence()[0])})
        if session.stop_reason() is not None or session.n_judged >= max_judgments:
            return rows
        q, d = session.propose()
        session.judge(q, d, oracle.judge(q, d))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("-o", "--output", type=Path, default=Path(__file__).parent / "results" / "first_refit.csv")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        raise SystemExit(f"TREC-8 ad hoc not found at {DATA} (see examples/README.md)")
    campaign = Campaign.from_files(DATA / "qrels.txt", DATA / "runs", rel_threshold=1).truncated(100, shrink=True)
    specs = trial_specs(campaign.systems, args.trials, 10, 2, args.seed, read_groups(DATA / "groups.tsv").run_to_group())
    frame = pd.DataFrame([row for spec in specs for row in refit_rows(campaign, spec, 400)])
    args.output.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.output, index=False, float_format="%.5f")
    print(frame.to_markdown(index=False, floatfmt=("g", "g", ".4f", ".4f", ".4f", ".4f")))


if __name__ == "__main__":
    main()
