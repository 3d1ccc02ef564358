"""`relimpute evaluate` against trec_eval, end to end: CPU seconds per process.

Times, as separate processes over the same decompressed run files and qrels
(trec_eval 9 reads no gzip; the runs are unpacked once to a temporary folder,
untimed), for ``--rounds`` interleaved rounds:

- trec_eval the way researchers run it: one process per run file,
  ``trec_eval -l N QRELS RUN`` (N = the collection's relevance threshold,
  default measures), CPU summed over the runs;
- ``relimpute evaluate QRELS RUNS/ --rel-threshold N`` with its default
  measures, and with the measures of trec_eval's default set it shares
  (``-f trec``, trec_eval's layout);
- the same default command on the original ``.gz`` runs;
- the imports of the evaluate path alone (Python, numpy, pandas, pyarrow).

Output goes to /dev/null; CPU time is user + system from the children's
rusage. Before timing, the shared measures' "all" lines of both tools are
compared run by run. Writes ``benchmarks/results/evaluate.json`` and
``evaluate.md`` (other collections: ``evaluate_<folder>.*``). Skips cleanly
(exit 0) when ``../shared/data`` is absent or no trec_eval is on PATH.

    python benchmarks/bench_evaluate.py [--trec-eval PATH] [--rounds 5] [--data PATH]
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _run_info import add_collection_arguments, machine, utc_now, write_results
from bench_load import DEFAULT_DATA, rel_threshold

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CLI = "import sys; from relimpute.cli import main; sys.exit(main())"
IMPORTS = "import relimpute.cli.evaluate, relimpute.data, relimpute.measures"
# trec_eval's default measures that relimpute computes (its names, accepted by -m);
# trec_eval's default set also has gm_map and iprec_at_recall_0.00 ... 1.00, which relimpute has not
SHARED = ["num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank"] + [
    f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)
]
SHARED_OPTIONS = [a for m in SHARED for a in ("-m", m)]
TRECEVAL = "trec_eval, one process per run"
DEFAULT = "relimpute evaluate, default measures"
SHARED_CASE = "relimpute evaluate, trec_eval's shared measures (-f trec)"
GZ = "relimpute evaluate, default measures, .gz runs"
FLOOR = "imports of the evaluate path (floor)"


def _cpu(cmd: list[str], env: dict | None = None) -> tuple[float, float]:
    """CPU (user + system) and wall seconds of one process, its output discarded."""
    before, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, time.perf_counter() - wall


def unpack_runs(runs: Path, into: Path) -> list[Path]:
    """The run files of ``runs`` (as relimpute lists them), decompressed into ``into``."""
    from relimpute.io import run_files

    paths = []
    for name, path in run_files(runs):
        target = into / name
        opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
        with opener(path, "rb") as source, open(target, "wb") as out:
            shutil.copyfileobj(source, out)
        paths.append(target)
    return paths


def _all_lines(text: str) -> dict[str, dict[str, str]]:
    """trec_eval layout -> {runid: {measure: printed value}} of the "all" lines."""
    blocks: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in text.splitlines():
        measure, topic, value = line.split()
        if topic != "all":
            continue
        if measure == "runid":
            current = blocks.setdefault(value, {})
        else:
            current[measure] = value
    return blocks


def agreement(trec_eval: str, qrels: Path, plain: Path, files: list[Path], threshold: int, env):
    """Compare the shared measures' "all" lines of trec_eval and relimpute, run by run."""
    ours = subprocess.run(
        [sys.executable, "-c", CLI, "evaluate", str(qrels), str(plain), "--rel-threshold",
         str(threshold), "-Q", "-f", "trec", *SHARED_OPTIONS],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    ours_by_run = _all_lines(ours)  # runid = the file's name
    compared = identical = 0
    max_diff = 0.0
    for path in files:
        mine = ours_by_run[path.name]
        theirs = subprocess.run(
            [trec_eval, "-l", str(threshold), str(qrels), str(path)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        (reference,) = _all_lines(theirs).values()
        for measure in ["num_q", *SHARED]:
            compared += 1
            identical += reference[measure] == mine[measure]
            max_diff = max(max_diff, abs(float(reference[measure]) - float(mine[measure])))
    return {"values_compared": compared, "printed_identically": identical, "max_abs_diff": max_diff}


def run(data: Path, trec_eval: str, rounds: int) -> dict:
    threshold = rel_threshold(data)
    qrels = data / "qrels.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    version = subprocess.run([trec_eval, "-v"], capture_output=True, text=True, check=False)
    with tempfile.TemporaryDirectory(prefix="bench_evaluate_") as tmp:
        plain = Path(tmp)
        files = unpack_runs(data / "runs", plain)
        evaluate = [sys.executable, "-c", CLI, "evaluate", str(qrels)]
        options = ["--rel-threshold", str(threshold), "-Q"]
        relimpute = {
            DEFAULT: [*evaluate, str(plain), *options],
            SHARED_CASE: [*evaluate, str(plain), *options, "-f", "trec", *SHARED_OPTIONS],
            GZ: [*evaluate, str(data / "runs"), *options],
            FLOOR: [sys.executable, "-c", IMPORTS],
        }
        check = agreement(trec_eval, qrels, plain, files, threshold, env)
        cpu: dict[str, list[float]] = {name: [] for name in [TRECEVAL, *relimpute]}
        wall: dict[str, list[float]] = {name: [] for name in cpu}
        for _ in range(rounds):
            per_run = [_cpu([trec_eval, "-l", str(threshold), str(qrels), str(f)]) for f in files]
            cpu[TRECEVAL].append(sum(c for c, _ in per_run))
            wall[TRECEVAL].append(sum(w for _, w in per_run))
            for name, cmd in relimpute.items():
                c, w = _cpu(cmd, env)
                cpu[name].append(c)
                wall[name].append(w)
    ratios = {
        name: statistics.median(t / r for t, r in zip(cpu[TRECEVAL], cpu[name], strict=True))
        for name in (DEFAULT, SHARED_CASE, GZ)
    }
    return {
        "benchmark": "evaluate",
        "data": str(data),
        "runs": len(files),
        "rel_threshold": threshold,
        "trec_eval": {"path": trec_eval, "version": (version.stdout + version.stderr).strip()},
        "shared_measures": SHARED,
        "rounds": rounds,
        "cpu_s_median": {name: statistics.median(v) for name, v in cpu.items()},
        "wall_s_median": {name: statistics.median(v) for name, v in wall.items()},
        "cpu_s_all": cpu,
        "trec_eval_cpu_over_relimpute_median": ratios,
        "agreement": check,
        "machine": machine(),
        "date": utc_now(),
    }


def markdown(result: dict) -> str:
    cpu, wall, ratio = (
        result["cpu_s_median"],
        result["wall_s_median"],
        result["trec_eval_cpu_over_relimpute_median"],
    )
    rows = "\n".join(
        f"| {name} | {cpu[name]:.2f} | {wall[name]:.2f} | "
        + (f"{ratio[name]:.2f}x |" if name in ratio else "|")
        for name in cpu
    )
    m, check, n = result["machine"], result["agreement"], result["runs"]
    data_option = "" if Path(result["data"]) == DEFAULT_DATA else f" --data {result['data']}"
    threshold = result["rel_threshold"]
    return f"""# Evaluate benchmark: {Path(result["data"]).name}

`python benchmarks/bench_evaluate.py --trec-eval {result["trec_eval"]["path"]} \
--rounds {result["rounds"]}{data_option}` on {result["date"]}
({m["cpus"]} CPUs, 1-min load average {m["load_average_1min"]} at start, Python {m["python"]};
{result["trec_eval"]["version"]}).
{n} runs and the qrels, relevant = grade >= {threshold}, output to /dev/null. Median over
{result["rounds"]} interleaved rounds; trec_eval is {n} processes per round
(`trec_eval -l {threshold} qrels run`, default measures), its CPU and wall summed.

| process | CPU (s) | wall (s) | trec_eval CPU / this |
| --- | ---: | ---: | ---: |
{rows}

`relimpute evaluate` over the {n} runs takes {ratio[DEFAULT]:.2f}x less CPU than trec_eval over
the same files with its default measures ({ratio[SHARED_CASE]:.2f}x with the measures both
compute, in trec_eval's layout; {ratio[GZ]:.2f}x reading the `.gz` runs it is given, which
trec_eval cannot read). The last row is what Python, numpy, pandas and pyarrow cost before a
file is read.

What is computed: trec_eval's default set is num_q, num_ret, num_rel, num_rel_ret, map,
gm_map, Rprec, bpref, recip_rank, iprec_at_recall at 11 points and P at 9 cutoffs; relimpute
computes {len(result["shared_measures"])} of them (not gm_map nor iprec_at_recall), and its
default set is AP, P@10, nDCG@10, Rprec and Judged@10. Of the shared measures' "all" lines
({check["values_compared"]} values: num_q and the {len(result["shared_measures"])} measures for
each run), {check["printed_identically"]} print identically at trec_eval's 4 decimals (largest
difference {check["max_abs_diff"]:.1g}). trec_eval reads the qrels again in each of its
processes, as it does when run once per run file; relimpute reads them once.

The trec_eval binary measured was built as trec_eval's own Makefile builds it (`-g`, no `-O`:
the Linux binary in Anserini's jar, which pyserini ships); much of its CPU is in libc (string
compares, sorting), the rest in its own code, unoptimised, so an `-O2` build would narrow the gap.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval", metavar="PATH", help="trec_eval binary (default: "
                        "trec_eval on PATH)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    add_collection_arguments(parser, DEFAULT_DATA, RESULTS, "evaluate")
    args = parser.parse_args(argv)
    if not (args.data / "qrels.txt").is_file():
        print(f"skipped: data not found at {args.data}")
        return 0
    trec_eval = shutil.which(args.trec_eval or "trec_eval")
    if trec_eval is None and args.trec_eval is not None:
        print(f"error: --trec-eval {args.trec_eval}: no such executable", file=sys.stderr)
        return 2
    if trec_eval is None:
        print(
            "skipped: no trec_eval on PATH; build it (usnistgov/trec_eval on GitHub: make) "
            "and pass --trec-eval PATH"
        )
        return 0
    result = run(args.data, trec_eval, args.rounds)
    write_results(result, markdown(result), args.out, args.data, DEFAULT_DATA, "evaluate")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
