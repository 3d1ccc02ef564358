"""Carterette (2007) RTC on TREC-8 ad hoc, reading by reading, beside the paper's Table 5.

The paper's protocol (§4.3): k = 10 runs (one per group), c = 2 initial runs,
runs cut at rank 100, the RTC loop (MTC selection, the expert model refitted
every 10 judgments) until 95% confidence on the initial pair, then the model
fitted on those judgments predicts every document of the 10 runs.

Each *reading* is one way of filling a gap in the paper's text (named in
README.md); every reading uses the same trials (same runs, same initial pair).

    python examples/rtc_paper/reproduce.py --trials 200 --jobs 2 -o examples/rtc_paper/results
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from relimpute import Campaign
from relimpute.calibration import CalibrationReport, run_study
from relimpute.calibration.strategies import Strategy, get_calibration_strategy
from relimpute.groups import read_groups
from relimpute.relevance import RTC

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec-8-adhoc"

#: Carterette 2007 Table 5, column ad-hoc 99 (TREC-8), RTC.
PAPER = {
    "W": -0.44,
    "median judged": 179,
    "mean tau": 0.532,
    "accuracy 0.95-0.99": 0.928,
    "accuracy 0.99-1": 0.996,  # the paper's bin "1.0"
}

#: Carterette 2007 Tables 3 and 4, RTC, W by group (pooled over ad-hoc 94 and 96-99, not
#: TREC-8 alone: the closest our one collection allows)
PAPER_W_BY_INITIAL = {"two initial": -1.11, "one initial": -0.87, "no initial": -0.27}
PAPER_W_BY_SIMILARITY = {"0-0.1": 0.44, "0.1-0.2": -0.45, "0.2-0.3": -0.49}

PAPER_MODEL = RTC().get_params()  # the class defaults are the paper's reading

#: reading name -> stage parameters of RTC (the rest: class defaults)
READINGS: dict[str, dict] = {
    # every stage as the class defaults read the paper
    "paper": {},
    # stage 2: each expert's Platt fit on its own judged documents only (no pull to the pooled fit)
    "platt-independent": {"calibration_shrinkage": 0.0},
    # stage 3: the Beta(1, 1) density on each weight itself, which confines it to [0, 1]
    "weights-in-unit-interval": {"calibration_shrinkage": 0.0, "weight_prior": "beta_weight"},
    # the loop: the model chooses what to judge, the stopping confidence keeps p = 1/2 (MTC's)
    "stop-on-prior": {},
}

#: readings that change the selection loop rather than the model
LOOP = {"stop-on-prior": {"stop_on": "prior"}}


def reading_strategy(name: str, overrides: dict) -> Strategy:
    """The RTC loop and the generalisation with one reading of the paper's model."""
    params = {**PAPER_MODEL, **overrides}
    return Strategy(
        name=f"rtc[{name}]",
        selector="rtc",
        model=RTC(**params),
        selector_params={"model": "rtc", "model_params": params, **LOOP.get(name, {})},
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--readings", default=",".join(READINGS), help="comma-separated readings")
    parser.add_argument("-o", "--output", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        raise SystemExit(f"TREC-8 ad hoc not found at {DATA} (see ../shared/data/README.md)")
    campaign = Campaign.from_files(DATA / "qrels.txt", DATA / "runs", rel_threshold=1)
    strategies = [get_calibration_strategy("mtc")] + [
        reading_strategy(n, READINGS[n]) for n in args.readings.split(",") if n
    ]
    study = run_study(
        campaign,
        strategies,
        n_trials=args.trials,
        k=10,
        c=2,
        depth=100,
        groups=read_groups(DATA / "groups.tsv").run_to_group(),
        seed=args.seed,
        jobs=args.jobs,
    )
    report = CalibrationReport.from_study(study)
    args.output.mkdir(parents=True, exist_ok=True)
    report.write(args.output, study)
    tables = [
        ("Table 5 (ad-hoc 99 = TREC-8)", side_by_side(report)),
        ("Table 3: W by how many of the pair were initial runs", w_by_group(report.by_initial["raw"], PAPER_W_BY_INITIAL)),
        ("Table 4: W by the pair's overlap", w_by_group(report.by_similarity["raw"], PAPER_W_BY_SIMILARITY)),
    ]
    text = "\n\n".join(f"### {title}\n\n{frame.to_markdown(index=False)}" for title, frame in tables)
    (args.output / "paper_vs_ours.md").write_text(
        f"{args.trials} trials, seed {args.seed} (python examples/rtc_paper/reproduce.py "
        f"--trials {args.trials} --seed {args.seed})\n\n{text}\n"
    )
    print(text)


def side_by_side(report: CalibrationReport) -> pd.DataFrame:
    """The paper's Table 5 column beside each strategy's numbers."""
    summary = report.summary["raw"].set_index("strategy")
    bins = report.bins["raw"]
    rows = [{"strategy": "Carterette 2007, Table 5 (ad-hoc 99)", **PAPER}]
    for strategy, row in summary.iterrows():
        b = bins[bins["strategy"] == strategy].set_index("bin")
        rows.append(
            {
                "strategy": strategy,
                "W": round(float(row["w"]), 2),
                "median judged": float(row["median_judgments"]),
                "mean tau": round(float(row["mean_tau"]), 3),
                "accuracy 0.95-0.99": round(float(b["accuracy"].get("0.95-0.99", float("nan"))), 3),
                "accuracy 0.99-1": round(float(b["accuracy"].get("0.99-1", float("nan"))), 3),
            }
        )
    return pd.DataFrame(rows)


def w_by_group(frame: pd.DataFrame, paper: dict[str, float]) -> pd.DataFrame:
    """W per group (Tables 3 and 4), the paper's RTC column first."""
    groups = frame.drop_duplicates(["strategy", "group"])
    table = groups.pivot(index="group", columns="strategy", values="group_w").round(2)
    table.insert(0, "Carterette 2007 (RTC)", pd.Series(paper))
    return table.reindex([g for g in table.index if g in paper] + [g for g in table.index if g not in paper]).reset_index()


if __name__ == "__main__":
    main()
