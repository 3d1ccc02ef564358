"""Whole commands against the floor: CPU of `relimpute evaluate`, `compare` / a pyarrow parse.

The floor is a fresh interpreter that reads the same files with pyarrow's CSV reader
(:func:`bench_load.parse_floor`: decompress, split into string columns; no checks, no
arrays, no relimpute); a command cannot cost less than that. Each round runs, one child
process after another, the floor, then every case with this tree and (``--before SRC``) with
another source tree, so that every ratio is taken within one round (the machine is shared:
its speed drifts between rounds, not within one). CPU is user + system of the child. Before
timing, both trees are byte-compiled (a user's install has its bytecode; none is timed
compiling) and each case's standard output is compared between the trees (md5).

Cases (DL 2019's 37 runs, official relevance grade 2):

- ``evaluate``: ``relimpute evaluate QRELS RUNS -m AP -m P@10 -m nDCG@10 --rel-threshold 2``
- ``compare``: ``relimpute compare QRELS RUNS --prior 0.5 --matrix --rel-threshold 2``
  (uniform p = 0.5, exact moments of every pair)

Writes ``benchmarks/results/floor.json`` and ``floor.md``.

    python benchmarks/bench_floor.py [--rounds 9] [--before SRC] [--cases evaluate compare]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
from pathlib import Path

from _run_info import CLI, add_collection_arguments, machine, round_summary, timed_child, \
    utc_now, write_results
from bench_load import DEFAULT_DATA, input_files

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CASES = {
    "evaluate": ["evaluate", "{qrels}", "{runs}", "-m", "AP", "-m", "P@10", "-m", "nDCG@10",
                 "--rel-threshold", "2"],
    "compare": ["compare", "{qrels}", "{runs}", "--prior", "0.5", "--matrix",
                "--rel-threshold", "2"],
}  # fmt: skip


def floor_argv(data: Path) -> list[str]:
    """A fresh interpreter running the bare parse of the files a load reads (no relimpute)."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n"
        "from pathlib import Path\nfrom bench_load import parse_floor\n"
        f"parse_floor([Path(p) for p in {[str(p) for p in input_files(data)]!r}])"
    )
    return [sys.executable, "-c", code]


def command(case: str, data: Path) -> list[str]:
    return [a.format(qrels=data / "qrels.txt", runs=data / "runs") for a in CASES[case]]


def _env(src: Path | None = None) -> dict:
    """The children's environment: the same for the floor and the commands."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(Path.home())} | (
        {"PYTHONPATH": str(src)} if src else {}
    )


def run_case(case: str, data: Path, src: Path) -> dict:
    """One child: ``relimpute CASE`` with ``src`` on PYTHONPATH; its stdout's md5."""
    got = timed_child([sys.executable, "-c", CLI, *command(case, data)], env=_env(src),
                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    got["md5"] = hashlib.md5(got.pop("stdout")).hexdigest()
    return got


def run(data: Path, rounds: int, cases: list[str], before: Path | None) -> dict:
    at_start = machine()  # the load average before the first child
    trees = {"this tree": ROOT / "src"} | ({"before": before} if before else {})
    for src in trees.values():  # a user's install has bytecode: none is timed compiling
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
    for src in trees.values():  # warm the file cache and numba's kernel cache
        for case in cases:
            run_case(case, data, src)
    timed_child(floor_argv(data), env=_env(), stdout=subprocess.DEVNULL)
    table = []
    for _ in range(rounds):
        row = {"floor": timed_child(floor_argv(data), env=_env(), stdout=subprocess.DEVNULL)}
        for case in cases:
            for tree, src in trees.items():
                row[f"{case}|{tree}"] = run_case(case, data, src)
        table.append(row)
    summary = {}
    for case in cases:
        for tree in trees:
            key = f"{case}|{tree}"
            summary[key] = {**round_summary(table, key, "floor", "ratio_to_floor"),
                            "md5": sorted({r[key]["md5"] for r in table})}
        if before:
            pairs = [r[f"{case}|this tree"]["cpu_s"] / r[f"{case}|before"]["cpu_s"] for r in table]
            summary[f"{case}|this tree / before"] = statistics.median(pairs)
    return {
        "benchmark": "floor",
        "data": str(data),
        "rounds": rounds,
        "cases": {case: " ".join(["relimpute", *command(case, data)]) for case in cases},
        "trees": {k: str(v) for k, v in trees.items()},
        "floor_cpu_s_median": statistics.median(r["floor"]["cpu_s"] for r in table),
        "floor_peak_mb_median": statistics.median(r["floor"]["peak_mb"] for r in table),
        "summary": summary,
        "table": table,
        "machine": at_start,
        "load_average_1min_end": machine()["load_average_1min"],
        "date": utc_now(),
    }


def markdown(result: dict, argv: list[str]) -> str:
    m = result["machine"]
    lines = [
        f"# Commands against the parse floor: {Path(result['data']).name}",
        "",
        f"`python benchmarks/bench_floor.py {' '.join(argv)}` on {result['date']} ({m['cpus']} "
        f"CPUs, 1-min load average {m['load_average_1min']} at start, "
        f"{result['load_average_1min_end']} at the end; Python {m['python']}). "
        f"{result['rounds']} interleaved rounds; CPU = user + system of each child process, "
        "median over rounds; a ratio is taken within each round, then its median (min-max) "
        "given. On a shared machine only such within-round ratios mean anything: the "
        "seconds themselves move with the load.",
        "",
        f"Floor (a fresh interpreter, pyarrow's CSV reader over the same files, no relimpute): "
        f"{result['floor_cpu_s_median']:.2f} s CPU, {result['floor_peak_mb_median']:.0f} MB peak.",
        "",
        "| command | tree | CPU s | peak MB | CPU / floor, median (min-max) | stdout md5 |",
        "| --- | --- | ---: | ---: | --- | --- |",
    ]
    for key, s in result["summary"].items():
        if not isinstance(s, dict):
            continue
        case, tree = key.split("|")
        r = s["ratio_to_floor"]
        lines.append(
            f"| `{case}` | {tree} | {s['cpu_s_median']:.2f} | {s['peak_mb_median']:.0f} | "
            f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f}) | {', '.join(s['md5'])} |"
        )
    lines += ["", "Commands: " + "; ".join(f"`{c}`" for c in result["cases"].values()) + "."]
    for key, value in result["summary"].items():
        if not isinstance(value, dict):
            lines.append(f"\n{key.replace('|', ': ')} (CPU, median of per-round ratios): "
                         f"{value:.3f}")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--before", type=Path, default=None,
                        help="another source tree (its src/ folder) timed in the same rounds")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    add_collection_arguments(parser, DEFAULT_DATA, RESULTS, "floor")
    args = parser.parse_args()
    if not (args.data / "qrels.txt").is_file():
        print(f"skipped: no collection at {args.data}")
        return
    result = run(args.data, args.rounds, args.cases, args.before)
    write_results(result, markdown(result, sys.argv[1:]), args.out, args.data, DEFAULT_DATA,
                  "floor")  # fmt: skip


if __name__ == "__main__":
    main()
