"""Time and peak memory of the main commands on a simulated campaign of a real track's size.

Writes a seeded campaign with :func:`relimpute.simulate.write_simulated` (``--size rag-2024``:
301 topics x 77 runs x 100; ``million-query``: 10,000 topics x 40 runs x 100; ``--topics N``
scales the topics down for a quick look), then runs, each in its own process, ``evaluate -m
map``, ``fit -o FILE`` (with the posterior draws' companion), ``compare --estimate FILE`` and the
default ``compare`` (fit inside), recording wall and CPU seconds and peak resident memory (the
child's ``ru_maxrss``), and the peak per byte of the input files (what
:data:`relimpute.io.memory.FIT_BYTES_PER_INPUT_BYTE` bounds). Writes
``benchmarks/results/campaign_size_<size>[_<topics>].json`` and ``.md``. The machine is shared
by whatever else runs: the seconds are this run's, the memory is the figure of record.

    python benchmarks/bench_campaign_size.py --size million-query [--topics 1000] [--work /tmp]
        [--steps evaluate fit compare-estimate compare] [--llm-labels]

``--llm-labels``: the qrels are the depth-3 pool's judgments and a label file gives every pair
of the depth-10 pool a noisy grade (the truth's, moved by -1, 0 or +1 at random, seeded), as
``--llm-labels`` to every step that fits a model (``fusion-llm``); results ``..._labels``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from _run_info import cli_child, machine, timed_child, utc_now, write_results

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
RESULTS = ROOT / "benchmarks" / "results"
#: issue 45's bound for fit + compare of a Million Query-sized campaign on one machine
MEMORY_TARGET_MB = 8 * 1024
#: the steps, in order: ``--steps`` key, the results' name, the command (``compare
#: --estimate`` reads the file ``fit -o`` wrote)
STEPS = {
    "evaluate": ("evaluate -m map", ["evaluate", "QRELS", "RUNS", "-m", "map"]),
    "fit": ("fit -o FILE", ["fit", "QRELS", "RUNS", "-o", "FILE"]),
    "compare-estimate": ("compare --estimate FILE", ["compare", "QRELS", "RUNS", "--estimate", "FILE"]),
    "compare": ("compare (default model)", ["compare", "QRELS", "RUNS"]),
}


#: writes ``labels.txt`` from the depth-10 pool's ``qrels.txt`` in ``folder``: each grade moved by
#: -1, 0 or +1 (clipped to 0..3), seeded
_LABELS = (
    "import numpy as np, pandas as pd; q = pd.read_csv('{folder}/qrels.txt', sep=' ', header=None, dtype={{0: str, 2: str}}); "
    "g = np.random.default_rng({seed}); q[3] = np.clip(q[3] + g.integers(-1, 2, len(q)), 0, 3); "
    "q.to_csv('{folder}/labels.txt', sep=' ', header=False, index=False)"
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="million-query", choices=("rag-2024", "million-query"))
    parser.add_argument("--topics", type=int, default=None, help="fewer topics than the size's")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--steps", nargs="+", choices=tuple(STEPS), default=tuple(STEPS),
                        help="the steps to run (default all; a busy machine: fit alone)")
    parser.add_argument("--llm-labels", action="store_true",
                        help="human judgments of the depth-3 pool, noisy labels of the depth-10 pool's")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(SRC))
    from relimpute.simulate import SIZES

    folder = Path(tempfile.mkdtemp(prefix="campaign_size.", dir=args.work))
    shutil.rmtree(folder)
    params = {} if args.topics is None else {"n_topics": args.topics}
    write = (
        "import sys; from relimpute.simulate import write_simulated; "
        f"write_simulated({str(folder)!r}, {args.size!r}, rng={args.seed}, **{params!r})"
    )
    if args.llm_labels:  # the same seed writes the same topics and runs: the depth-3 pool's qrels beside
        write += (f"; write_simulated({str(folder / 'human')!r}, {args.size!r}, pool_depth=3, rng={args.seed}, "
                  f"**{params!r}); {_LABELS.format(folder=str(folder), seed=args.seed)}")  # fmt: skip
    rows = {"write": timed_child([sys.executable, "-c", write], env={"PYTHONPATH": str(SRC)})}
    qrels, runs, estimate = folder / "qrels.txt", folder / "runs", folder / "estimate.tsv"
    labels = []
    if args.llm_labels:
        qrels, labels = folder / "human" / "qrels.txt", ["--llm-labels", folder / "labels.txt"]
    input_mb = sum(p.stat().st_size for p in [qrels, *runs.iterdir()]) / 2**20
    try:
        for key in STEPS:
            if key not in args.steps:
                continue
            name, step = STEPS[key]
            step = [qrels if a == "QRELS" else runs if a == "RUNS" else estimate if a == "FILE" else a for a in step]
            step += labels if key != "evaluate" else []
            rows[name] = cli_child([str(a) for a in step], SRC)
            print(name, rows[name], flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for row in rows.values():
        row["peak_per_input_byte"] = round(row["peak_mb"] / input_mb, 2)
    size = {**SIZES[args.size], **params}
    result = {
        "when": utc_now(),
        "machine": machine(),
        "size": args.size,
        "campaign": size,
        "seed": args.seed,
        "input_mb": round(input_mb, 1),
        "memory_target_mb": MEMORY_TARGET_MB,
        "steps": rows,
    }
    lines = [
        f"# Commands on a simulated campaign: {args.size} "
        f"({size['n_topics']:,} topics x {size['n_systems']} runs x {size['depth']})"
        + (", human judgments of the depth-3 pool, --llm-labels on the depth-10 pool's" if labels else ""),
        "",
        f"{result['when']}, {input_mb:,.0f} MB of qrels and runs; memory target for fit and "
        f"compare: {MEMORY_TARGET_MB / 1024:.0f} GB.",
        "",
        "| step | wall s | CPU s | peak MB | peak / input bytes |",
        "|---|---|---|---|---|",
        *(
            f"| {name} | {r['wall_s']} | {r['cpu_s']} | {r['peak_mb']:,.0f} | "
            f"{r['peak_per_input_byte']} |"
            for name, r in rows.items()
        ),
    ]
    stem = f"campaign_size_{args.size}" + (f"_{args.topics}" if args.topics else "") + ("_labels" if labels else "")
    write_results(result, "\n".join(lines) + "\n", args.out, folder, folder, stem)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
