"""CPU of the design-based coverage study (``examples/design_based/study.py``) on one collection,
extrapolated to the full coverage grid: 500 samplings per cell, budgets 5/10/20%, every design and
control variate, MAP of every run and ΔMAP of every pair. The batched estimators read up to 25
samplings of a topic at once, so N below 25 overstates their cost per sampling: the figure to
quote is N = 25 (one full block); N = 2 is for a slow tree beside it.

Each round runs the study as a child process with ``--samplings N`` and every budget, with this
tree and (``--before ROOT``, e.g. a worktree of main) with another, the order alternating
between rounds (the machine is shared: its speed drifts between rounds). CPU is user + system
of the child. The grid's CPU is extrapolated from the cells' own CPU, which the study prints per
(design, budget): grid = (child − Σ cells) + Σ cells × 500 / N (loading, pilot fits and the
guided design's plan are paid once per budget whatever N). Each tree runs with the environment
it is given (no thread variable set): the study's own BLAS settings count.

Writes ``benchmarks/results/survey_grid.json`` and ``survey_grid.md``.

    python benchmarks/bench_survey_grid.py --samplings 25
    python benchmarks/bench_survey_grid.py --samplings 2 --before /work/main --stem survey_grid_n2
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _run_info import machine, thread_settings, timed_child, utc_now, write_results

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
GRID, BUDGETS = 500, ("0.05", "0.10", "0.20")
CELL = re.compile(r"\((\w+), budget (\d+)%: ([\d.]+) CPU s\)")


def run_study(tree: Path, collection: str, samplings: int, budgets) -> dict:
    """One child: the study of ``tree`` with ``tree/src`` on PYTHONPATH; its cells' CPU."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tree / "src")
    with tempfile.TemporaryDirectory() as out:
        got = timed_child([sys.executable, str(tree / "examples" / "design_based" / "study.py"),
                           collection, "--samplings", str(samplings), "--budgets", *budgets,
                           "--out", out], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL)  # fmt: skip
    cells = {f"{d} {b}%": float(s) for d, b, s in CELL.findall(got.pop("stdout").decode())}
    per_cell = sum(cells.values())
    got.update(cells=cells, cells_cpu_s=round(per_cell, 1),
               grid_cpu_s=round(got["cpu_s"] - per_cell + per_cell * GRID / samplings, 1))
    return got


def _commit(tree: Path) -> str:
    """The tree's checked-out commit and whether it has changes."""
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--", "src",
                            "examples/design_based"], capture_output=True, text=True).stdout
    return head + (" + changes" if dirty.strip() else "")


def run(collection: str, samplings: int, budgets, rounds: int, before: Path | None) -> dict:
    at_start = machine()
    trees = {"this tree": ROOT} | ({"before": before} if before else {})
    table = []
    for i in range(rounds):
        names = list(trees) if i % 2 == 0 else list(trees)[::-1]
        table.append({name: run_study(trees[name], collection, samplings, budgets)
                      for name in names})
    summary = {name: {"cpu_s_median": statistics.median(r[name]["cpu_s"] for r in table),
                      "grid_cpu_min_median": round(statistics.median(
                          r[name]["grid_cpu_s"] for r in table) / 60, 1)} for name in trees}
    if before:
        summary["this tree / before (grid)"] = round(statistics.median(
            r["this tree"]["grid_cpu_s"] / r["before"]["grid_cpu_s"] for r in table), 4)
    return {"benchmark": "survey_grid", "collection": collection, "samplings": samplings,
            "budgets": list(budgets), "grid_samplings": GRID, "rounds": rounds,
            "trees": {k: f"{v} ({_commit(v)})" for k, v in trees.items()}, "summary": summary,
            "table": table,
            "threads": thread_settings(), "machine": at_start,
            "load_average_1min_end": machine()["load_average_1min"], "date": utc_now()}


def markdown(result: dict) -> str:
    lines = [f"# The coverage study's grid on {result['collection']} (the design-based coverage grid)", "",
             f"`examples/design_based/study.py {result['collection']} --samplings "
             f"{result['samplings']} --budgets {' '.join(result['budgets'])}` (every design and "
             f"control), CPU extrapolated to {result['grid_samplings']} samplings per cell "
             f"(module docstring); {result['rounds']} round(s), {result['date']}, load "
             f"{result['machine']['load_average_1min']} → {result['load_average_1min_end']} on "
             f"{result['machine']['cpus']} CPUs.", "",
             "| tree | CPU of the run (s) | cells' CPU (s) | grid CPU (min) |", "|---|---|---|---|"]
    for name in result["trees"]:
        row = result["table"][0][name]
        lines.append(f"| {name} | {result['summary'][name]['cpu_s_median']} | "
                     f"{row['cells_cpu_s']} | {result['summary'][name]['grid_cpu_min_median']} |")
    if "this tree / before (grid)" in result["summary"]:
        lines += ["", f"Grid CPU, this tree ÷ before: "
                      f"{result['summary']['this tree / before (grid)']}."]
    lines += ["", "Cells of the first round (CPU s):", ""]
    for name in result["trees"]:
        cells = result["table"][0][name]["cells"]
        lines.append(f"- {name}: " + ", ".join(f"{k} {v:g}" for k, v in cells.items()))
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collection", default="dl19")
    parser.add_argument("--samplings", type=int, default=2)
    parser.add_argument("--budgets", nargs="+", default=list(BUDGETS))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--before", type=Path, help="another tree's root (src/, examples/)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--stem", default="survey_grid", help="the results' file name")
    args = parser.parse_args(argv)
    result = run(args.collection, args.samplings, args.budgets, args.rounds, args.before)
    write_results(result, markdown(result), args.out, Path(args.collection),
                  Path(args.collection), args.stem)


if __name__ == "__main__":
    main()
