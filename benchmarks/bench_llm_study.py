"""The whole LLM-evidence study (issue 28's speed goal): every design, every method.

Runs ``examples/llm_evidence/study.py`` as its README's "every design" commands do, one
child process each, one after the other: both collections, pools of depth 1, 3, 5 and 5,
10, 20 random human labels per topic, UMBRELA GPT-4o; first every method (substitution,
PPI, PPI++, the default model, fusion-llm), then the model rows again with the labels'
pool beside them (``--merge``). Per command: wall seconds, CPU seconds (user + system,
from the child's rusage) and peak resident memory; the 1-minute load average at the start
and at the end. Then checks the study's answer against the committed
``examples/llm_evidence/results/summary.csv``: every number of every row but the fit's wall
time (``fit_seconds``). Writes ``benchmarks/results/llm_study.json`` and ``llm_study.md``.

    python benchmarks/bench_llm_study.py [--keep DIR] [--name llm_study] [--plan readme]

``--plan one`` runs the same study as one command (every method with the labels' pool
beside them), without the second command's repeated fits of the default model and fusion-llm.

The children inherit the environment: ``OPENBLAS_NUM_THREADS=1 python ... --name
llm_study_blas1`` measures the study with one BLAS thread (the thread settings are recorded).

Target: the whole study <= 30 minutes on 2 cores (:data:`TARGET_WALL_S`). numba's kernels
are taken as cached by an earlier run (the first run on a new install compiles them).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from _run_info import machine, thread_settings, timed_child, utc_now

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
STUDY = ROOT / "examples" / "llm_evidence" / "study.py"
COMMITTED = ROOT / "examples" / "llm_evidence" / "results" / "summary.csv"
DATA = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
TARGET_WALL_S = 30 * 60.0
DESIGNS = ["--pool", "1,3,5", "--random", "5,10,20", "--sources", "umbrela-gpt-4o"]
POOL = ["--variant", "pool:unlabelled=nonrelevant"]
PLANS = {
    "readme": {
        "every method": DESIGNS,
        "model rows with the labels' pool": [*DESIGNS, "--methods", "fusion,fusion-llm", *POOL, "--merge"],
    },
    "one": {"every method and the labels' pool": [*DESIGNS, *POOL]},
}
PLAN_TEXT = {
    "readme": 'the README\'s two "every design" commands',
    "one": "`--plan one`: the same study as one command",
}
KEYS = ["collection", "design", "size", "method", "source"]
UNTIMED = ["fit_seconds"]


def measure(args: list[str], log: Path) -> dict:
    """Wall, CPU and peak memory of ``python study.py ARGS`` in a child process (its output to ``log``)."""
    with open(log, "w") as err:
        got = timed_child([sys.executable, str(STUDY), *args], cwd=ROOT, stdout=err, stderr=err)
    return {
        "command": "python examples/llm_evidence/study.py " + shlex.join(args),
        **got,
        "load_average_1min_end": round(os.getloadavg()[0], 2),
    }


def against_committed(summary: Path, committed: Path = COMMITTED) -> dict:
    """Rows of ``summary`` (a study's summary.csv) beside the committed one: how many match, the
    largest difference of any number but the wall times, and the rows that differ."""
    new, old = (pd.read_csv(p).fillna({"source": ""}).set_index(KEYS) for p in (summary, committed))
    shared = new.index.intersection(old.index)
    columns = [c for c in new.columns.intersection(old.columns) if c not in UNTIMED]
    a = new.loc[shared, columns].to_numpy(float)
    b = old.loc[shared, columns].to_numpy(float)
    filled = np.isnan(b) & ~np.isnan(a)  # a number the committed file's older script left blank
    same = (a == b) | (np.isnan(a) & np.isnan(b)) | filled
    gap = np.where(same, 0.0, np.abs(a - b))
    differ = ~same.all(axis=1)
    return {
        "rows": len(new),
        "rows_compared": len(shared),
        "rows_identical": int((~differ).sum()),
        "largest_difference": float(np.nan_to_num(gap, nan=np.inf).max()) if len(shared) else None,
        "cells_filled": {c: int(n) for c, n in zip(columns, filled.sum(axis=0)) if n},
        "rows_differing": [" / ".join(map(str, k)) for k in shared[differ]],
        "only_new": [" / ".join(map(str, k)) for k in new.index.difference(old.index)],
        "only_committed": [" / ".join(map(str, k)) for k in old.index.difference(new.index)],
    }


def markdown(result: dict, name: str = "llm_study") -> str:
    rows = [
        f"| {name} | `{got['command']}` | {got['wall_s']:.0f} | {got['cpu_s']:.0f} "
        f"({got['user_s']:.0f} + {got['system_s']:.0f}) | {got['peak_mb']:.0f} | {got['load_average_1min_end']} |"
        for name, got in result["commands"].items()
    ]
    total = result["total"]
    check = result["against_committed"]
    met = "met" if total["wall_s"] <= TARGET_WALL_S else "missed"
    return "\n".join([
        "# The whole LLM-evidence study (issue 28)",
        "",
        f"`{_environment(result['threads'])}python benchmarks/bench_llm_study.py"
        f"{'' if name == 'llm_study' else ' --name ' + name}"
        f"{'' if result.get('plan', 'readme') == 'readme' else ' --plan ' + result['plan']}` on {result['date']}, run under `nice -n "
        f"{result['niceness']}` on a machine of {result['machine']['cpus']} cores shared by 3 "
        f"developers: 1-minute load average {result['machine']['load_average_1min']} at the start. "
        f"One child process per command ({PLAN_TEXT[result.get('plan', 'readme')]}, from the "
        "repository root, `--out` a temporary folder); CPU = user + system of the child. Wall time "
        "includes waiting for a core the other developers hold. numba's kernels were cached by an "
        "earlier run.",
        "",
        "| step | command | wall (s) | CPU (s) (user + system) | peak (MB) | load at end |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
        *rows,
        f"| **whole study** | | **{total['wall_s']:.0f}** | **{total['cpu_s']:.0f}** | "
        f"{total['peak_mb']:.0f} | |",
        "",
        f"Target: the whole study <= {TARGET_WALL_S / 60:.0f} minutes on 2 cores: **{met}** "
        f"({total['wall_s'] / 60:.1f} minutes wall, {total['cpu_s'] / 60:.1f} CPU minutes).",
        "",
        f"The answer against the committed `examples/llm_evidence/results/summary.csv`: "
        f"{check['rows_identical']} of {check['rows_compared']} rows identical in every number but "
        f"`fit_seconds` (largest difference {check['largest_difference']:g}; cells blank in the "
        f"committed file and filled now: {_cells(check['cells_filled'])}); rows differing: "
        f"{', '.join(check['rows_differing']) or 'none'}; rows only in this run: "
        f"{', '.join(check['only_new']) or 'none'}; only in the committed file: "
        f"{', '.join(check['only_committed']) or 'none'}.",
        "",
    ])  # fmt: skip


def _environment(threads: dict) -> str:
    return "".join(f"{k}={v} " for k, v in threads.items())


def _cells(counts: dict) -> str:
    return ", ".join(f"{n} of `{c}`" for c, n in counts.items()) or "none"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="write the study's summary.csv and logs here (default: a temporary folder)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write NAME.json and NAME.md")
    parser.add_argument("--name", default="llm_study", help="results file stem (default llm_study)")
    parser.add_argument("--plan", choices=list(PLANS), default="readme",
                        help="readme: the README's two commands; one: the same rows from one command")
    args = parser.parse_args(argv)
    if not (DATA / "qrels.txt").is_file():
        print(f"skipped: {DATA} not found")
        return 0
    threads = thread_settings()
    result = {"date": utc_now(), "machine": machine(), "niceness": os.nice(0), "threads": threads,
              "plan": args.plan, "commands": {}}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="relimpute-llm-study-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for i, (name, command) in enumerate(PLANS[args.plan].items()):
            got = measure([*command, "--out", str(folder)], folder / f"study_{i + 1}.log")
            result["commands"][name] = {**got, "command": got["command"].replace(str(folder), "OUT")}
            print(f"{name}: {got['wall_s']} s wall, {got['cpu_s']} s CPU, {got['peak_mb']} MB", flush=True)
        result["against_committed"] = against_committed(folder / "summary.csv")
    steps = result["commands"].values()
    result["total"] = {
        "wall_s": round(sum(s["wall_s"] for s in steps), 1),
        "cpu_s": round(sum(s["cpu_s"] for s in steps), 1),
        "peak_mb": max(s["peak_mb"] for s in steps),
    }
    result["target_wall_s"] = TARGET_WALL_S
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n")
    text = markdown(result, args.name)
    (args.out / f"{args.name}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
