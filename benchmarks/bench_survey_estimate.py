"""The design-based and model-assisted estimators beside `evaluate`: CPU of whole commands.

Target: the estimators for DL 2019's 37 runs × 43 topics within 2× `evaluate`'s time. A
sample is drawn once (``examples/design_based/draw_sample.py``: statAP's PPS over the judged
documents, 10%, seed 1, written as qrels with inclusion probabilities); each round then runs,
one child process after another,

- ``evaluate``: ``relimpute evaluate QRELS RUNS -m AP --rel-threshold 2`` (the yardstick);
- ``evaluate-ht``: ``relimpute evaluate SAMPLE RUNS -m AP --estimator ht --rel-threshold 2``
  (every run's MAP, its interval);
- ``compare-ht``: ``relimpute compare SAMPLE RUNS --estimator ht --rel-threshold 2`` (every
  run and every one of the 666 pairs: ΔMAP, its interval, P(A beats B));
- ``compare-ppi``: the same with ``--estimator ppi++ --llm-labels`` UMBRELA GPT-4o's labels as
  the control variate (λ cross-fitted over topics);

and each case's CPU (user + system of the child) is divided by the yardstick's in the same
round; the median (min–max) of those ratios is reported. Writes
``benchmarks/results/survey_estimate.json`` and ``.md``.

    python benchmarks/bench_survey_estimate.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from _run_info import cli_child, machine, round_summary, utc_now, write_results

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DATA = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
LABELS = DATA / "llm" / "umbrela-gpt-4o.txt"
TARGET = 2.0
CASES = {
    "evaluate": ["evaluate", "{qrels}", "{runs}", "-m", "AP", "--rel-threshold", "2"],
    "evaluate-ht": ["evaluate", "{sample}", "{runs}", "-m", "AP", "--estimator", "ht",
                    "--rel-threshold", "2"],
    "compare-ht": ["compare", "{sample}", "{runs}", "--estimator", "ht", "--rel-threshold", "2"],
    "compare-ppi": ["compare", "{sample}", "{runs}", "--estimator", "ppi++", "--llm-labels",
                    "{labels}", "--rel-threshold", "2"],
}  # fmt: skip


def draw_sample(folder: Path) -> Path:
    """The 10% PPS sample of DL 2019's judged documents, as the example draws it."""
    path = folder / "sample.tsv"
    subprocess.run([sys.executable, str(ROOT / "examples" / "design_based" / "draw_sample.py"),
                    str(path), "--rate", "0.1", "--seed", "1"], check=True,
                   env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return path


def command(case: str, sample: Path) -> list[str]:
    return [a.format(qrels=DATA / "qrels.txt", runs=DATA / "runs", sample=sample, labels=LABELS)
            for a in CASES[case]]  # fmt: skip


def run(rounds: int, sample: Path) -> dict:
    at_start = machine()
    src = ROOT / "src"
    for case in CASES:  # warm the file cache and numba's kernel cache
        cli_child(command(case, sample), src)
    table = [{case: cli_child(command(case, sample), src) for case in CASES}
             for _ in range(rounds)]
    summary = {case: round_summary(table, case, "evaluate") for case in CASES}
    return {
        "benchmark": "survey_estimate", "rounds": rounds, "target_ratio": TARGET,
        "cases": {c: " ".join(["relimpute", *command(c, Path("SAMPLE"))]) for c in CASES},
        "summary": summary, "table": table, "machine": at_start,
        "load_average_1min_end": machine()["load_average_1min"], "date": utc_now(),
    }  # fmt: skip


def markdown(result: dict, argv: list[str]) -> str:
    m = result["machine"]
    lines = [
        "# Design-based and model-assisted estimates beside `evaluate` (DL 2019)",
        "",
        f"`python benchmarks/bench_survey_estimate.py {' '.join(argv)}` on {result['date']} "
        f"({m['cpus']} CPUs, 1-min load average {m['load_average_1min']} at start, "
        f"{result['load_average_1min_end']} at the end; Python {m['python']}). "
        f"{result['rounds']} rounds, the cases one after another in each; CPU = user + system "
        "of each child; a ratio to `evaluate` is taken within each round, then its median "
        "(min-max). SAMPLE: `examples/design_based/draw_sample.py SAMPLE --rate 0.1 --seed 1`.",
        "",
        "| case | CPU s | peak MB | CPU ÷ evaluate's, median (min-max) | "
        f"target ≤ {TARGET:g}× |",
        "| --- | ---: | ---: | --- | --- |",
    ]
    for case, s in result["summary"].items():
        r = s["ratio"]
        met = "—" if case == "evaluate" else ("met" if r["median"] <= TARGET else "missed")
        lines.append(f"| `{case}` | {s['cpu_s_median']:.2f} | {s['peak_mb_median']:.0f} | "
                     f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f}) | {met} |")
    lines += ["", "Commands: " + "; ".join(f"`{c}`" for c in result["cases"].values()) + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not (DATA / "qrels.txt").is_file() or not LABELS.is_file():
        print(f"skipped: no DL 2019 data (with llm/ labels) at {DATA}")
        return
    with tempfile.TemporaryDirectory() as folder:
        result = run(args.rounds, draw_sample(Path(folder)))
    write_results(result, markdown(result, sys.argv[1:]), args.out, DATA, DATA,
                  "survey_estimate")  # fmt: skip


if __name__ == "__main__":
    main()
