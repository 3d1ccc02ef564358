"""Load time of the TREC DL 2019 passage runs (issue 2), or another collection.

Times :meth:`Campaign.from_files <relimpute.data.Campaign.from_files>` on the
37 official runs and the qrels (read, check, build the arrays) against the bare
pyarrow parse of the same files, and reports wall and CPU time (best and median
of ``--repeat`` rounds) and peak memory. The relevance threshold is the
collection's (its ``relimpute.toml``; TREC DL folders have none and use grade 2,
their official one). Writes ``benchmarks/results/load.json`` and ``load.md``
(other collections: ``load_<folder>.*``). Skips cleanly (exit 0) when
``../shared/data`` is absent.

    python benchmarks/bench_load.py [--repeat 3] [--data PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

from _run_info import add_collection_arguments, machine, utc_now, write_results

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
RESULTS = ROOT / "benchmarks" / "results"
# relevant grade of collections whose folder has no relimpute.toml (TREC DL: grade 2 and up)
KNOWN_THRESHOLDS = {"trec-dl-2019-passage": 2, "trec-dl-2021-passage": 2}


def _timed(func, *args, **kwargs):
    """``func(*args, **kwargs)`` with its wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = func(*args, **kwargs)
    return value, time.perf_counter() - wall, time.process_time() - cpu


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / (1024**2 if sys.platform == "darwin" else 1024)


def parse_floor(paths: list[Path]) -> int:
    """The bare parse the loader cannot beat: decompress and split every file with pyarrow's
    CSV reader into string columns, no validation, no arrays built. Returns the rows read."""
    import gzip
    import io

    import pyarrow as pa
    import pyarrow.csv as pcsv

    rows = 0
    for path in paths:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        first_line = raw[: raw.index(b"\n")]
        names = [str(i) for i in range(len(first_line.split()))]
        table = pcsv.read_csv(
            io.BytesIO(raw),
            read_options=pcsv.ReadOptions(column_names=names),
            parse_options=pcsv.ParseOptions(delimiter="\t" if b"\t" in first_line else " "),
            convert_options=pcsv.ConvertOptions(column_types={n: pa.string() for n in names}),
        )
        rows += table.num_rows
    return rows


def child_peak_rss_mb(code: str) -> float:
    """Peak resident memory of a fresh interpreter running ``code`` (one load, nothing else)."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONWARNINGS": "ignore"}
    # VmHWM: ru_maxrss would carry the parent's high-water mark over fork + exec
    script = (
        f"import sys\n{code}\n"
        "print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1]) / 1024


def rel_threshold(data: Path) -> int:
    """The collection's relevance threshold: its relimpute.toml, else a known one, else 1."""
    from relimpute.collection_settings import resolve_rel_threshold

    threshold, source = resolve_rel_threshold(data / "qrels.txt", None)
    return threshold if source is not None else KNOWN_THRESHOLDS.get(data.name, threshold)


def input_files(data: Path) -> list[Path]:
    """The files a load reads: the run files (as ``from_files`` lists them), then the qrels."""
    from relimpute.io import run_files

    return [path for _, path in run_files(data / "runs")] + [data / "qrels.txt"]


def single_load_peaks(data: Path, threshold: int) -> dict:
    """Peak memory of one ``Campaign.from_files`` and of the bare parse, each in its own process."""
    load = (
        "from relimpute.data import Campaign\n"
        f"Campaign.from_files({str(data / 'qrels.txt')!r}, {str(data / 'runs')!r}, "
        f"rel_threshold={threshold})"
    )
    floor = (  # the file list is given: the floor's process imports no relimpute, no pandas
        f"sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\nfrom pathlib import Path\n"
        "from bench_load import parse_floor\n"
        f"parse_floor([Path(p) for p in {[str(p) for p in input_files(data)]!r}])"
    )
    return {
        "load_mb": round(child_peak_rss_mb(load), 1),
        "parse_floor_mb": round(child_peak_rss_mb(floor), 1),
    }


def run(data: Path, repeat: int) -> dict:
    from relimpute.data import Campaign

    threshold = rel_threshold(data)
    rss_before = _peak_rss_mb()
    files = input_files(data)
    rounds = []
    for _ in range(repeat):
        lines, floor_wall, floor_cpu = _timed(parse_floor, files)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            campaign, load_wall, load_cpu = _timed(
                Campaign.from_files, data / "qrels.txt", data / "runs", rel_threshold=threshold
            )
        rounds.append(
            {
                "load_s": load_wall,
                "load_cpu_s": load_cpu,
                "floor_s": floor_wall,
                "floor_cpu_s": floor_cpu,
            }
        )
    summary = {
        key: {
            "best": min(r[key] for r in rounds),
            "median": statistics.median(r[key] for r in rounds),
        }
        for key in rounds[0]
    }
    ratio = statistics.median(r["load_cpu_s"] / r["floor_cpu_s"] for r in rounds)
    return {
        "benchmark": "load",
        "data": str(data),
        "runs": campaign.n_systems,
        "input_lines": lines,
        "campaign": repr(campaign),
        "repeat": repeat,
        "seconds": summary,
        "cpu_ratio_to_parse_floor_median": round(ratio, 2),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "single_process_peak_rss": single_load_peaks(data, threshold),
        "rss_before_mb": round(rss_before, 1),
        "machine": machine(),
        "date": utc_now(),
    }


def markdown(result: dict) -> str:
    rows = [
        (f"`Campaign.from_files` ({result['runs']} runs + qrels: read, check, build)", "load"),
        ("pyarrow parse floor (`read_csv` of the same files: no checks, no arrays)", "floor"),
    ]
    sec = result["seconds"]
    table = "\n".join(
        f"| {label} | {sec[f'{k}_s']['best']:.2f} | {sec[f'{k}_s']['median']:.2f} "
        f"| {sec[f'{k}_cpu_s']['best']:.2f} | {sec[f'{k}_cpu_s']['median']:.2f} |"
        for label, k in rows
    )
    m = result["machine"]
    one = result["single_process_peak_rss"]
    data_option = "" if Path(result["data"]) == DEFAULT_DATA else f" --data {result['data']}"
    return f"""# Load benchmark: {Path(result["data"]).name}

`python benchmarks/bench_load.py --repeat {result["repeat"]}{data_option}` on {result["date"]}
({m["cpus"]} CPUs, 1-min load average {m["load_average_1min"]} at start, Python {m["python"]}).

{result["runs"]} runs + qrels, {result["input_lines"]:,} input lines -> {result["campaign"]}.

| step | wall best (s) | wall median (s) | CPU best (s) | CPU median (s) |
| --- | ---: | ---: | ---: | ---: |
{table}

Loading costs {result["cpu_ratio_to_parse_floor_median"]:.2f}x the CPU of the bare pyarrow
parse of the same files (median over rounds of the per-round ratio; target <= 2).

Peak resident memory of one load in a fresh process: {one["load_mb"]:.0f} MB, \
{one["load_mb"] / one["parse_floor_mb"]:.2f}x the
{one["parse_floor_mb"]:.0f} MB of the bare parse in a fresh process (targets: <= 300 MB on DL 2019,
<= 2x the bare parse). In this process,
over all rounds: {result["peak_rss_mb"]:.0f} MB (of which {result["rss_before_mb"]:.0f} MB
before loading: interpreter and imports).
On a shared machine wall time includes waiting for a core; CPU time does not.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds to time (default 3)")
    add_collection_arguments(parser, DEFAULT_DATA, RESULTS, "load")
    args = parser.parse_args(argv)
    if not (args.data / "qrels.txt").is_file():
        print(f"skipped: DL 2019 data not found at {args.data}")
        return 0
    result = run(args.data, args.repeat)
    write_results(result, markdown(result), args.out, args.data, DEFAULT_DATA, "load")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
