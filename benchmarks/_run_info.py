"""What every benchmark records beside its figures: the machine and the time of the run."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path

#: the environment variables that set a numerical library's thread count
THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def machine() -> dict:
    """Python version, platform, CPUs and the 1-minute load average at the start."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


def thread_settings() -> dict:
    """The thread counts this process's environment sets (:data:`THREADS`), by name."""
    return {k: os.environ[k] for k in THREADS if k in os.environ}


def timed_child(argv: list[str], **popen) -> dict:
    """Run ``argv`` to its end as a child process: wall seconds, CPU seconds (user + system
    from its rusage), peak resident memory, and its stdout when ``stdout=subprocess.PIPE``.
    Raises RuntimeError when it fails."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, **popen)
    out = child.stdout.read() if child.stdout is not None else None
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited with status {status}")
    got = {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "user_s": round(usage.ru_utime, 2),
        "system_s": round(usage.ru_stime, 2),
        "peak_mb": round(usage.ru_maxrss / 1024, 1),
    }
    return got if out is None else {**got, "stdout": out}


#: runs the relimpute command line in a child: ``[sys.executable, "-c", CLI, *args]``
CLI = "import sys; from relimpute.cli import main; sys.exit(main())"


def cli_child(args: list[str], src) -> dict:
    """:func:`timed_child` of ``relimpute ARGS`` with ``src`` on PYTHONPATH, standard output
    read and dropped, standard error discarded."""
    import sys

    env = {**os.environ, "PYTHONPATH": str(src)}
    got = timed_child([sys.executable, "-c", CLI, *args], env=env, stdout=subprocess.PIPE,
                      stderr=subprocess.DEVNULL)  # fmt: skip
    got.pop("stdout")
    return got


def round_summary(table: list[dict], key: str, base: str, ratio_name: str = "ratio") -> dict:
    """Medians over the rounds of ``table`` of case ``key``'s CPU and peak memory, and its CPU
    divided by case ``base``'s within each round (median, min, max) under ``ratio_name``."""
    import statistics

    ratios = [row[key]["cpu_s"] / row[base]["cpu_s"] for row in table]
    return {
        "cpu_s_median": statistics.median(row[key]["cpu_s"] for row in table),
        "peak_mb_median": statistics.median(row[key]["peak_mb"] for row in table),
        ratio_name: {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)},
    }


def utc_now() -> str:
    """The current time, as the results files print it."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


def add_collection_arguments(parser, default_data: Path, results: Path, stem: str) -> None:
    """``--data`` (a collection folder; the default's results are ``<stem>.*``) and ``--out``."""
    parser.add_argument(
        "--data", type=Path, default=default_data,
        help=f"collection folder (qrels.txt, runs/); default DL 2019, whose results are "
        f"{stem}.*; others write {stem}_<folder>.*",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, default=results, help=f"where to write {stem}.*")


def write_results(
    result: dict, markdown: str, out: Path, data: Path, default_data: Path, stem: str
) -> None:
    """``<stem>.json`` and ``<stem>.md`` (``<stem>_<folder>.*`` for another collection); prints
    the markdown."""
    out.mkdir(parents=True, exist_ok=True)
    name = stem if data == default_data else f"{stem}_{data.name}"
    (out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / f"{name}.md").write_text(markdown)
    print(markdown)


def save_label(out: Path, stem: str, label: str, info: dict, markdown, figure) -> None:
    """Keep ``info`` under ``label`` in ``<out>/<stem>.json`` (its ``cases`` over the label's
    earlier ones; other labels kept), rewrite ``<stem>.md`` (``markdown(results)``) and
    ``<stem>.png`` (``figure(results, path)``) from every label, and print the markdown."""
    path = out / f"{stem}.json"
    results = json.loads(path.read_text()) if path.is_file() else {"labels": {}}
    old = results["labels"].get(label, {}).get("cases", {})
    results["labels"][label] = {**info, "cases": {**old, **info["cases"]}}
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    text = markdown(results)
    (out / f"{stem}.md").write_text(text)
    figure(results, out / f"{stem}.png")
    print(text)


def add_label_arguments(parser, src: Path, results: Path, stem: str) -> None:
    """``--label``, ``--src``, ``--note`` and ``--out``: what :func:`save_label` keeps."""
    parser.add_argument("--label", default="after", help="name of this measurement")
    parser.add_argument("--src", type=Path, default=src, help="source tree to measure")
    parser.add_argument("--note", default="", help="a sentence shown with the label")
    parser.add_argument("--out", type=Path, default=results, help=f"where to write {stem}.*")


def save_figure(fig, path: Path) -> None:
    """Lay ``fig`` out, write it to ``path`` at 100 dpi and close it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
