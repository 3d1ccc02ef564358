"""Benchmark: a fusion-mc calibration study on a Dask LocalCluster against joblib on the same cores.

Run ``python benchmarks/bench_scale.py [--trials 100] [--workers 1,2,4]`` from the repository
root (needs ``relimpute[dask]``); writes ``benchmarks/results/scale.json`` and ``.md``. The
study: DL 2019, ``fusion-mc``, k = 10 runs one per group, c = 2, depth 100 (issue 29). For each
number of workers it runs the same study on joblib processes (loky) and on the
``distributed.LocalCluster`` of that many single-thread worker processes that
``--scheduler local`` starts (:func:`relimpute.parallel.cluster`, with its
``LOCAL_CLUSTER_CONFIG``; ``--dask-config default``: Dask's own settings), and records wall and
CPU seconds (this process and every process under it), the bytes sent (the shared objects,
once; each task's own unit), and each worker's peak memory (VmHWM). The workers are started
before the clock starts on both sides (loky: a warm-up map; Dask: the cluster), and each
imports relimpute on its first task, inside the timing (one trial run here first compiles
numba's kernels into their cache). With one worker, joblib runs in this process, already warm
(no worker to start or import). The figure of record is the ratio Dask / joblib (issue 29:
overhead within 10%), not the seconds: the machine is shared. The full run (100 trials) is for
a quiet machine. ``--backend joblib`` or ``dask`` runs one side and writes nothing, so that the
two can be timed as whole processes, pair by pair, by an outside timer (e.g. ``/usr/bin/time -v``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _run_info import machine, utc_now, write_results  # noqa: E402

DL19 = HERE.parent.parent / "shared" / "data" / "trec-dl-2019-passage"


def _tree_cpu() -> dict[int, float]:
    """CPU seconds (user + system) of this process and each process under it, by pid."""
    import psutil

    found = {}
    for proc in [psutil.Process(), *psutil.Process().children(recursive=True)]:
        try:
            times = proc.cpu_times()
            found[proc.pid] = times.user + times.system
        except psutil.Error:
            pass
    return found


def _cpu_since(before: dict[int, float]) -> float:
    after = _tree_cpu()
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def peak_rss_mb(pid: int | None = None) -> float:
    """Peak resident memory (VmHWM) of a process, in MB."""
    for line in Path(f"/proc/{pid or os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _record_sizes(sizes: dict):
    """Wrap relimpute.parallel.map_units to measure what a study sends (pickled bytes)."""
    import cloudpickle

    from relimpute import parallel

    original = parallel.map_units

    def measuring(function, units, *, shared=None, **options):
        sizes["shared_bytes"] = len(cloudpickle.dumps(parallel._Shared(shared or {})))
        per_task = [len(cloudpickle.dumps((function, i, u))) for i, u in enumerate(units)]
        sizes["task_bytes_mean"] = sum(per_task) / max(len(per_task), 1)
        return original(function, units, shared=shared, **options)

    parallel.map_units = measuring
    return original


def _study(campaign, groups, args, **where):
    from relimpute.calibration import run_study

    return run_study(campaign, "fusion-mc", n_trials=args.trials, k=10, c=2, depth=100, groups=groups,
                     seed=args.seed, progress=False, **where)  # fmt: skip


def on_joblib(campaign, groups, args, n: int) -> tuple[dict, object]:
    from joblib import Parallel, delayed
    from joblib.externals.loky import get_reusable_executor

    import psutil

    Parallel(n_jobs=n)(delayed(os.getpid)() for _ in range(4 * n))  # start the workers
    before, started = _tree_cpu(), time.perf_counter()
    study = _study(campaign, groups, args, jobs=n)
    wall = time.perf_counter() - started
    cpu = _cpu_since(before)
    workers = [p.pid for p in psutil.Process().children(recursive=True)
               if any("popen_loky" in part for part in p.cmdline())]  # fmt: skip
    peaks = [peak_rss_mb(pid) for pid in workers] if n > 1 else [peak_rss_mb()]  # 1: this process
    get_reusable_executor().shutdown(wait=True)  # the next run's workers start afresh
    return {"wall_s": wall, "cpu_s": cpu, "worker_peak_mb": peaks}, study


def on_dask(campaign, groups, args, n: int) -> tuple[dict, object]:
    from relimpute import parallel

    # relimpute's settings of the clusters it starts, or (--dask-config default) Dask's own
    settings = {} if args.dask_config == "default" else parallel.LOCAL_CLUSTER_CONFIG
    poisoned = "MALLOC_TRIM_THRESHOLD_" not in os.environ  # a nanny sets it here too, for its spawns
    started = time.perf_counter()
    with _local_config(settings), parallel.cluster(parallel.LOCAL, n) as client:
        client.wait_for_workers(n)
        startup = time.perf_counter() - started
        before, idle = _tree_cpu(), time.perf_counter()
        time.sleep(10 if args.backend == "both" else 0)  # the cluster's own ticking, no task to run
        idle_cpu = _cpu_since(before) / max(time.perf_counter() - idle, 1e-9)
        before, started = _tree_cpu(), time.perf_counter()
        study = _study(campaign, groups, args, client=client)
        wall = time.perf_counter() - started
        cpu = _cpu_since(before)
        peaks = list(client.run(peak_rss_mb).values())
    if poisoned:  # the next joblib run's workers must not inherit it
        os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    figures = {"wall_s": wall, "cpu_s": cpu, "worker_peak_mb": peaks, "cluster_start_s": startup,
               "idle_cpu_s_per_s": idle_cpu}  # fmt: skip
    return figures, study


@contextmanager
def _local_config(settings: dict):
    """relimpute.parallel.LOCAL_CLUSTER_CONFIG replaced by ``settings`` while the block runs."""
    from relimpute import parallel

    kept = parallel.LOCAL_CLUSTER_CONFIG
    parallel.LOCAL_CLUSTER_CONFIG = settings
    try:
        yield
    finally:
        parallel.LOCAL_CLUSTER_CONFIG = kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--workers", default="1,2,4", help="numbers of workers, comma-separated")
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--backend", choices=("both", "joblib", "dask"), default="both",
                        help="one side only: print its figures, write no results (to time the two "
                        "sides as whole processes, pair by pair)")  # fmt: skip
    parser.add_argument("--dask-config", choices=("relimpute", "default"), default="relimpute",
                        help="the clusters' Dask settings: relimpute's (parallel.LOCAL_CLUSTER_CONFIG, "
                        "as --scheduler local) or Dask's defaults")  # fmt: skip
    args = parser.parse_args()
    if not (DL19 / "qrels.txt").is_file():
        print(f"skipped: DL 2019 data not found at {DL19}")
        return
    from relimpute.data import Campaign
    from relimpute.groups import read_groups

    info = {**machine(), "started": utc_now()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(DL19 / "qrels.txt", DL19 / "runs", rel_threshold=2)
    groups = read_groups(DL19 / "groups.tsv").run_to_group()
    warm = time.perf_counter()  # numba's kernels compiled (or their cache read) once, here
    _study(campaign, groups, argparse.Namespace(trials=1, seed=args.seed))
    info["warm_up_s"] = round(time.perf_counter() - warm, 1)
    sizes: dict = {}
    _record_sizes(sizes)
    rows, reference = [], None
    for n in [int(x) for x in args.workers.split(",")]:
        for backend, run in (("joblib", on_joblib), ("dask", on_dask)):
            if args.backend not in ("both", backend):
                continue
            figures, study = run(campaign, groups, args, n)
            pairs = study.pairs.to_csv(index=False)
            reference = reference or pairs
            rows.append({"backend": backend, "workers": n, **figures, **sizes,
                         "same_pairs_as_first_run": pairs == reference})  # fmt: skip
            print(rows[-1], file=sys.stderr)
    if args.backend != "both":
        return
    ratios = []
    for n in sorted({r["workers"] for r in rows}):
        joblib_row, dask_row = (next(r for r in rows if r["workers"] == n and r["backend"] == b)
                                for b in ("joblib", "dask"))  # fmt: skip
        ratios.append({"workers": n, "wall_ratio": dask_row["wall_s"] / joblib_row["wall_s"],
                       "cpu_ratio": dask_row["cpu_s"] / joblib_row["cpu_s"]})  # fmt: skip
    result = {"machine": {**info, "load_average_1min_end": round(os.getloadavg()[0], 2)},
              "trials": args.trials, "seed": args.seed, "dask_config": args.dask_config,
              "target_overhead": 0.10, "runs": rows,
              "ratios": ratios}  # fmt: skip
    write_results(result, _markdown(result, args), args.out, DL19, DL19, "scale")


def _markdown(result: dict, args) -> str:
    m = result["machine"]
    lines = [
        "# Scale: a fusion-mc calibration study on a Dask LocalCluster vs joblib (DL 2019)",
        "",
        f"Command: `python benchmarks/bench_scale.py --trials {args.trials} --workers {args.workers} "
        f"--seed {args.seed} --dask-config {args.dask_config}`; {m['started']}; {m['cpus']} CPUs, load "
        f"{m['load_average_1min']} at the "
        f"start, {m['load_average_1min_end']} at the end; Python {m['python']}.",
        "",
        "| backend | workers | wall s | CPU s | worker peak MB | shared bytes (once) | bytes per task | same pairs |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["runs"]:
        peaks = ", ".join(f"{p:.0f}" for p in r["worker_peak_mb"])
        lines.append(f"| {r['backend']} | {r['workers']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {peaks} | "
                     f"{r['shared_bytes']:,} | {r['task_bytes_mean']:.0f} | {r['same_pairs_as_first_run']} |")  # fmt: skip
    lines += ["", "Figure of record, Dask / joblib on the same workers (target: overhead within 10%):", "",
              "| workers | wall ratio | CPU ratio |", "| --- | --- | --- |"]  # fmt: skip
    lines += [f"| {r['workers']} | {r['wall_ratio']:.3f} | {r['cpu_ratio']:.3f} |" for r in result["ratios"]]
    lines += ["", "Dask's cluster start (outside the timing): "
              + ", ".join(f"{r['workers']} workers {r['cluster_start_s']:.1f} s" for r in result["runs"]
                          if r["backend"] == "dask") + "."]  # fmt: skip
    idle = [r for r in result["runs"] if "idle_cpu_s_per_s" in r]
    if idle:
        lines += ["", "The idle cluster's own CPU (heartbeats, monitors; no task), CPU s per wall s: "
                  + ", ".join(f"{r['workers']} workers {r['idle_cpu_s_per_s']:.3f}" for r in idle) + "."]
    if m["load_average_1min"] > m["cpus"]:
        lines += ["", f"The machine was loaded (load {m['load_average_1min']} on {m['cpus']} CPUs): Dask's "
                  "scheduler, nannies and workers tick on the wall clock (the idle figure above), so "
                  "its CPU overhead grows with the waiting. These ratios are not of record; the full "
                  "run (100 trials) is for a quiet machine."]  # fmt: skip
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
