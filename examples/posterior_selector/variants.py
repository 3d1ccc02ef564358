"""The study of run.sh with the posterior selector's own settings changed (``relimpute calibrate``
names a strategy but does not set a selector's parameters).

Runs ``--strategies`` (default ``mtc``, ``fusion-mc`` and ``posterior``, the latter with
``--choose`` and ``--check-every``) on each collection, the protocol of run.sh (k = 10, c = 2,
depth 100, seed 2007, budget 300 unless ``--budget``, the default model's settings chosen
without the collection), and writes one ``relimpute calibrate``-style folder per collection
under ``--out`` for summarize.py. Trial *t* and each strategy's random stream are those of
run.sh, so the runs pair with its trials:

    python examples/posterior_selector/variants.py --choose variance --trials 10 \\
        --out examples/posterior_selector/variance
    python examples/posterior_selector/variants.py --check-every 1 --strategies posterior \\
        --out examples/posterior_selector/checked
    python examples/posterior_selector/variants.py --update reweight --min-ess 0.5 \\
        --strategies posterior --out examples/posterior_selector/results_reweight/ess50
    python examples/posterior_selector/variants.py --update reweight --min-ess 0.5 --confirm \\
        --strategies posterior --out examples/posterior_selector/results_reweight/confirm
    python examples/posterior_selector/variants.py --update reweight --min-ess 0.5 --confirm \\
        --choose-from predictive --strategies posterior --collections dl19 \\
        --out examples/posterior_selector/results_reweight/predictive
    python examples/posterior_selector/summarize.py examples/posterior_selector/variance
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from _protocol import C, COLLECTIONS, DEPTH, K, SEED, held_out, load


def log_confirms(path: Path) -> None:
    """Append each confirming refit of the posterior selector to ``path`` (one JSON line: the
    initial pair, the judgments so far, the check's and the refit's P(ΔMAP > 0)). The loop
    before a trial's first confirm is that of the selector without ``confirm``, which would
    have stopped there (with ``--jobs 1``: the study's process)."""
    import json

    from relimpute.selection.posterior import PosteriorSelection

    confirmed = PosteriorSelection._confirmed

    def logged(self, state):
        done = confirmed(self, state)
        if done:
            judgments, check, refit = self.confirms_[-1]
            with path.open("a") as out:
                out.write(json.dumps({"systems": list(state.systems), "judgments": judgments,
                                      "check": check.tolist(), "refit": refit.tolist()}) + "\n")  # fmt: skip
        return done

    PosteriorSelection._confirmed = logged


def log_cpu(path: Path) -> None:
    """Append each trial's process CPU seconds to ``path`` (one JSON line: trial, cpu_s; the
    trials.csv ``seconds`` are wall time, which on a shared machine includes waiting for a
    core). With ``--jobs 1`` the trials run in this process."""
    import json
    import time

    from relimpute.calibration import trials

    run = getattr(trials.run_trial, "untimed", trials.run_trial)

    def timed(campaign, spec, *args, **kwargs):
        start = time.process_time()
        out = run(campaign, spec, *args, **kwargs)
        with path.open("a") as log:
            log.write(json.dumps({"trial": spec.trial, "cpu_s": time.process_time() - start}) + "\n")
        return out

    timed.untimed = run
    trials.run_trial = timed


def main(argv: list[str] | None = None) -> None:
    from relimpute.calibration import CalibrationTrials
    from relimpute.calibration.strategies import get_calibration_strategy, with_settings_from
    from relimpute.selection.posterior import CHOOSE, CHOOSE_FROM, UPDATE
    from relimpute.studies import run

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--choose", choices=CHOOSE, default="mtc")
    parser.add_argument("--check-every", type=int, default=None,
                        help="the posterior selector's checks between refits (default: none)")
    parser.add_argument("--update", choices=UPDATE, default="refit",
                        help="the posterior selector between refits (default: refit)")
    parser.add_argument("--min-ess", type=float, default=0.5,
                        help="with --update reweight: refit when the weights' ESS falls below this x draws")
    parser.add_argument("--fixed-refits", action="store_true",
                        help="with --update reweight: refit every 10 judgments, not on the ESS")
    parser.add_argument("--confirm", action="store_true",
                        help="the posterior selector refits at a check's candidate stop and stops "
                             "only if the refit's confidence reaches the target too")
    parser.add_argument("--choose-from", choices=CHOOSE_FROM, default="refit",
                        help="the p the posterior selector's choice reads: the latest refit's, "
                             "its draws' mean weighted by the labels since, or that mean unweighted "
                             "(default: refit)")
    parser.add_argument("--n-draws", type=int, default=None,
                        help="the posterior selector's draws per refit (default: the strategy's)")
    parser.add_argument("--strategies", default="mtc,fusion-mc,posterior")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--collections", default=",".join(COLLECTIONS))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    for name in args.collections.split(","):
        campaign, groups = load(name)
        own = {"choose": args.choose, "check_every": args.check_every}
        if args.update != "refit":  # (the identity of the earlier studies' folders unchanged)
            own.update(update=args.update, min_ess=args.min_ess)
            if args.fixed_refits:
                own["ess_refits"] = False
        if args.n_draws is not None:
            own["n_draws"] = args.n_draws
        if args.confirm:
            own["confirm"] = True
        if args.choose_from != "refit":
            own["choose_from"] = args.choose_from
        strategies = [get_calibration_strategy(s) for s in args.strategies.split(",")]
        strategies = [
            replace(s, selector_params={**s.selector_params, **own}) if s.name == "posterior" else s
            for s in strategies
        ]
        strategies = with_settings_from(strategies, held_out(name))
        study = CalibrationTrials(
            campaign, tuple(strategies), n_trials=args.trials, k=K, c=C, depth=DEPTH, seed=SEED,
            groups=groups, max_judgments=args.budget, collection=COLLECTIONS[name][0],
        )  # fmt: skip
        if args.confirm:
            if args.jobs != 1:
                parser.error("--confirm logs its refits from this process: use --jobs 1")
            log_confirms(args.out / name / "confirms.jsonl")
        if args.jobs == 1:
            log_cpu(args.out / name / "cpu.jsonl")
        # each trial is saved as it ends: a killed run goes on from there (or --trials fewer)
        run(study, args.out / name, jobs=args.jobs, resume=True, progress=False)
        print(f"{name}: {args.out / name}", flush=True)


if __name__ == "__main__":
    main()
