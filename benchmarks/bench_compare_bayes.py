"""``relimpute compare --model bayes`` on DL 2019: where the time goes, and what a user sees.

Two parts. ``stages`` runs the command's steps in this process and times each
(wall and CPU): load the campaign, import PyMC, compile the model for nutpie,
NUTS sampling (the chains, tuning steps and draws of ``models/bayes.json``),
prediction of every document over the posterior draws, and the Monte Carlo
over every pair of runs (4,000 draws, as ``compare``); with the sampler's
diagnostics. ``cli`` runs ``relimpute compare QRELS RUNS --rel-threshold 2
--model bayes`` in a pseudo-terminal, as a new user would, and records when
its first output (the progress bar) appears and when it ends. Target (issue
25): progress within 2 s, done in at most 2 minutes on 2 cores. Writes
``benchmarks/results/compare_bayes.{json,md}``; skipped without
``../shared/data``.

    python benchmarks/bench_compare_bayes.py [--parts stages cli]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _run_info import machine, utc_now  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
RESULTS = ROOT / "benchmarks" / "results"


def _timed(func, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    value = func(*args, **kwargs)
    return value, round(time.perf_counter() - wall, 2), round(time.process_time() - cpu, 2)


def stages() -> dict:
    """Each step of ``compare --model bayes`` timed in this process."""
    from relimpute import Campaign
    from relimpute.confidence import ConfidenceEngine
    from relimpute.relevance import load_model
    from relimpute.relevance.bayes import _import_pymc

    row: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign, row["load_wall_s"], row["load_cpu_s"] = _timed(
            Campaign.from_files, DATA / "qrels.txt", DATA / "runs", rel_threshold=2
        )
        _, row["import_wall_s"], row["import_cpu_s"] = _timed(_import_pymc)
        model = load_model("bayes")
        _, fit_wall, row["fit_cpu_s"] = _timed(model.fit, campaign, rng=0)
    d = model.diagnostics_
    row["compile_wall_s"] = round(d.compile_seconds, 2)
    row["sampling_wall_s"] = round(d.seconds - d.compile_seconds, 2)
    row["fit_wall_s"] = fit_wall
    estimate, row["predict_wall_s"], row["predict_cpu_s"] = _timed(model.predict, campaign)
    _, row["mc_wall_s"], row["mc_cpu_s"] = _timed(
        ConfidenceEngine().monte_carlo, campaign, estimate, n_draws=4000, rng=0
    )
    row["total_wall_s"] = round(
        sum(row[k] for k in ("load_wall_s", "import_wall_s", "fit_wall_s", "predict_wall_s", "mc_wall_s")),
        2,
    )
    row["judged"] = d.n_judged
    row["diagnostics"] = str(d)
    row["mean_leapfrog_steps"] = round(float(model.idata_.sample_stats["n_steps"].mean()), 1)
    return row


def cli() -> dict:
    """The command in a pseudo-terminal: seconds to its first output and to its end."""
    import pexpect

    command = (
        f"relimpute compare {DATA / 'qrels.txt'} {DATA / 'runs'} --rel-threshold 2 "
        "--model bayes --seed 0 --format tsv"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    child = pexpect.spawn(command, env=dict(os.environ), timeout=1800, encoding="utf-8")
    child.expect(r"\S")
    first = time.perf_counter() - start
    try:
        more = child.read_nonblocking(200, timeout=1)
    except pexpect.TIMEOUT:  # a busy machine: nothing more within a second
        more = ""
    first_text = (child.after + more).strip().splitlines()[0]
    child.expect(pexpect.EOF)
    child.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "command": command,
        "first_output_s": round(first, 2),
        "first_output": first_text[:120],
        "total_wall_s": round(time.perf_counter() - start, 2),
        "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2),
        "exit_status": child.exitstatus,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", nargs="+", choices=("stages", "cli"), default=["stages", "cli"])
    args = parser.parse_args(argv)
    if not (DATA / "qrels.txt").is_file():
        print(f"skipped: {DATA} not found")
        return 0
    result = {"date": utc_now(), "machine": machine()}
    for part in args.parts:
        result[part] = {"stages": stages, "cli": cli}[part]()
        result[part]["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)
        print(part, json.dumps(result[part], indent=1), flush=True)
        write(result, [p for p in args.parts if p in result])  # a later part's failure keeps it
    return 0


def write(result: dict, parts: list[str]) -> None:
    lines = [
        "# `relimpute compare --model bayes` on DL 2019 (37 runs, official qrels, rel >= 2)",
        "",
        f"`python benchmarks/bench_compare_bayes.py --parts {' '.join(parts)}` "
        f"({result['date']}, {result['machine']['cpus']} CPUs, load {result['machine']['load_average_1min']} "
        "at the start: wall time includes waiting for a core, CPU time does not). "
        "Target (issue 25): progress within 2 s, done in at most 2 minutes on 2 cores.",
        "",
    ]
    for part in parts:
        lines += [f"## {part}", "", "| what | value |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in result[part].items()]
        lines.append("")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "compare_bayes.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "compare_bayes.md").write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
