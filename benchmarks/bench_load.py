"""Load-and-convert time for the TREC DL 2019 passage runs (issue 2), or another collection.

Reads the 37 official runs and the qrels (parse + validate), then builds the
:class:`~relimpute.data.Campaign` arrays, and reports wall and CPU time of each
step (best and median of ``--repeat`` rounds) and the process's peak memory.
Writes ``benchmarks/results/load.json`` and ``load.md``. Skips cleanly (exit 0)
when ``../shared/data`` is absent.

    python benchmarks/bench_load.py [--repeat 3] [--data PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
RESULTS = ROOT / "benchmarks" / "results"


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
        ncols = len(raw[: raw.index(b"\n")].split())
        names = [str(i) for i in range(ncols)]
        table = pcsv.read_csv(
            io.BytesIO(raw),
            read_options=pcsv.ReadOptions(column_names=names),
            parse_options=pcsv.ParseOptions(delimiter=" " if b"\t" not in raw[:200] else "\t"),
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


def single_load_peaks(data: Path) -> dict:
    """Peak memory of one ``Campaign.from_files`` and of the bare parse, each in its own process."""
    load = (
        "from relimpute.data import Campaign\n"
        f"Campaign.from_files({str(data / 'qrels.txt')!r}, {str(data / 'runs')!r}, rel_threshold=2)"
    )
    floor = (
        f"sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\nfrom pathlib import Path\n"
        "from bench_load import parse_floor\n"
        f"d = Path({str(data)!r})\nparse_floor(sorted((d / 'runs').iterdir()) + [d / 'qrels.txt'])"
    )
    return {
        "load_mb": round(child_peak_rss_mb(load), 1),
        "parse_floor_mb": round(child_peak_rss_mb(floor), 1),
    }


def run(data: Path, repeat: int) -> dict:
    import pyarrow as pa

    from relimpute.data import Campaign
    from relimpute.io import read_qrels, read_runs

    rss_before = _peak_rss_mb()
    files = sorted(p for p in (data / "runs").iterdir() if p.is_file()) + [data / "qrels.txt"]
    rounds = []
    for _ in range(repeat):
        _, floor_wall, floor_cpu = _timed(parse_floor, files)
        (runs, qrels), parse_wall, parse_cpu = _timed(
            lambda: (read_runs(data / "runs"), read_qrels(data / "qrels.txt"))
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            campaign, build_wall, build_cpu = _timed(
                Campaign.from_frames, qrels, runs, rel_threshold=2, validate=False
            )
        rounds.append(
            {
                "parse_s": parse_wall,
                "build_s": build_wall,
                "total_s": parse_wall + build_wall,
                "parse_cpu_s": parse_cpu,
                "build_cpu_s": build_cpu,
                "total_cpu_s": parse_cpu + build_cpu,
                "floor_s": floor_wall,
                "floor_cpu_s": floor_cpu,
            }
        )
    lines = sum(len(r) for r in runs.values()) + len(qrels)
    summary = {
        key: {
            "best": min(r[key] for r in rounds),
            "median": statistics.median(r[key] for r in rounds),
        }
        for key in rounds[0]
    }
    ratio = statistics.median(r["total_cpu_s"] / r["floor_cpu_s"] for r in rounds)
    return {
        "benchmark": "load",
        "data": str(data),
        "runs": len(runs),
        "input_lines": lines,
        "campaign": repr(campaign),
        "repeat": repeat,
        "seconds": summary,
        "cpu_ratio_to_parse_floor_median": round(ratio, 2),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "single_process_peak_rss": single_load_peaks(data),
        "rss_before_mb": round(rss_before, 1),
        "arrow_peak_mb": round(pa.default_memory_pool().max_memory() / 2**20, 1),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average_1min": round(os.getloadavg()[0], 2),
        },
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }


def markdown(result: dict) -> str:
    rows = [
        (f"parse + validate ({result['runs']} runs + qrels)", "parse_s", "parse_cpu_s"),
        ("build Campaign arrays", "build_s", "build_cpu_s"),
        ("total", "total_s", "total_cpu_s"),
        ("pyarrow parse floor (no validation, no arrays)", "floor_s", "floor_cpu_s"),
    ]
    sec = result["seconds"]
    table = "\n".join(
        f"| {label} | {sec[w]['best']:.2f} | {sec[w]['median']:.2f} | {sec[c]['best']:.2f} |"
        for label, w, c in rows
    )
    m = result["machine"]
    one = result["single_process_peak_rss"]
    data_option = "" if Path(result["data"]) == DEFAULT_DATA else f" --data {result['data']}"
    return f"""# Load benchmark: {Path(result["data"]).name}

`python benchmarks/bench_load.py --repeat {result["repeat"]}{data_option}` on {result["date"]}
({m["cpus"]} CPUs, 1-min load average {m["load_average_1min"]} at start, Python {m["python"]}).

{result["runs"]} runs + qrels, {result["input_lines"]:,} input lines -> {result["campaign"]}.

| step | wall best (s) | wall median (s) | CPU best (s) |
| --- | ---: | ---: | ---: |
{table}

Loading costs {result["cpu_ratio_to_parse_floor_median"]:.2f}x the CPU of the bare pyarrow
parse of the same files (median over rounds of the per-round ratio; target <= 2).

Peak resident memory of one load in a fresh process: {one["load_mb"]:.0f} MB (target <= 300),
against {one["parse_floor_mb"]:.0f} MB for the bare parse in a fresh process. In this process,
over all rounds: {result["peak_rss_mb"]:.0f} MB (of which {result["rss_before_mb"]:.0f} MB
before loading: interpreter and imports); pyarrow pool peak {result["arrow_peak_mb"]:.0f} MB.
On a shared machine wall time includes waiting for a core; CPU time does not.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds to time (default 3)")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA,
        help="collection folder (qrels.txt, runs/); default DL 2019, whose results are load.*; "
        "others write load_<folder>.*",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write load.json/.md")
    args = parser.parse_args(argv)
    if not (args.data / "qrels.txt").is_file():
        print(f"skipped: DL 2019 data not found at {args.data}")
        return 0
    result = run(args.data, args.repeat)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "load" if args.data == DEFAULT_DATA else f"load_{args.data.name}"
    (args.out / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / f"{stem}.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
