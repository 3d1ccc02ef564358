"""The default model at scale (issue 26, item 5): ``relimpute compare`` and ``fit`` as a user
runs them, one process each, on a run of 2 million lines and on DL 2019.

Writes a synthetic campaign to a temporary folder: 43 topics; one run retrieving all
46,512 documents of every topic (2,000,016 lines), two runs of depth 1000; qrels: the
depth-10 pool of the three runs plus 60 documents drawn from the big run's ranks 11-300
(as active learning adds beyond a pool), about 88 judged per topic. Then times, in a
child process each, default ``relimpute compare`` (``--seed 1``) and ``relimpute fit -o``
on it, and default ``relimpute compare --rel-threshold 2`` over DL 2019's 37 runs (when
``../shared/data`` has it): wall seconds, CPU seconds (user + system, from the child's
rusage) and peak resident memory (its ``ru_maxrss``); with ``--repeats N`` the run of median
CPU time of N is kept, with every run's CPU. ``--src`` measures another source
tree (for example the code before a change) under ``--label``; every label measured is
kept in ``benchmarks/results/default_scale.json`` and shown side by side in
``default_scale.md``, with the largest difference between the labels' DL 2019 answers.

    python benchmarks/bench_default_scale.py [--label after] [--src src] [--cases ...] [--repeats N]
        [--reference SRC]

This machine's speed drifts by a quarter within an hour, so an absolute CPU target is read
against a yardstick too: ``--reference SRC`` (a checkout of dff357b, the code issue 26 timed at
18 s CPU on DL 2019) runs DL 2019's compare in turn with ``--src``, pair by pair, and the
median CPU ratio times 18 s is the figure on the issue's machine.

Targets: 2M-line run: compare <= 30 s and <= 1 GB, fit <= 20 s and <= 1 GB; DL 2019
compare <= 6 s CPU. On a shared machine wall time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from _run_info import add_label_arguments, machine, save_figure, save_label, timed_child, utc_now

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
CLI = "import sys; from relimpute.cli import main; sys.exit(main())"
#: issue 26's yardstick: default DL 2019 compare at commit dff357b, 18 s of CPU on its machine
REFERENCE = {"commit": "dff357b", "cpu_s": 18.0}
TARGETS = {
    "big compare": {"wall_s": 30.0, "peak_mb": 1024.0},
    "big fit": {"wall_s": 20.0, "peak_mb": 1024.0},
    "dl19 compare": {"cpu_s": 6.0},
}


def write_campaign(root: Path, n_topics: int = 43, n_docs: int = 46_512, depth: int = 1000) -> None:
    """The synthetic campaign of the module docstring (deterministic)."""
    rng = np.random.default_rng(2026)
    (root / "runs").mkdir(parents=True, exist_ok=True)
    runs: dict[str, list] = {"big": [], "small_a": [], "small_b": []}
    qrels = []
    for t in range(n_topics):
        query = str(1000 + t)
        merit = rng.normal(size=n_docs)
        relevant = merit > np.quantile(merit, 1 - 60 / n_docs)
        for name, noise, k in (("big", 1.0, n_docs), ("small_a", 0.8, depth), ("small_b", 1.2, depth)):
            order = np.argsort(-(merit + noise * rng.normal(size=n_docs)), kind="stable")[:k]
            runs[name].append((query, order))
        pool = np.unique(np.concatenate([order[:10] for _, order in (r[-1] for r in runs.values())]))
        extra = rng.choice(runs["big"][-1][1][10:300], size=60, replace=False)
        for d in np.unique(np.concatenate([pool, extra])):
            qrels.append(f"{query} 0 D{d} {int(relevant[d])}\n")
    (root / "qrels.txt").write_text("".join(qrels))
    for name, parts in runs.items():
        with open(root / "runs" / name, "w") as out:
            for query, order in parts:
                score = np.linspace(100.0, 1.0, len(order))
                out.write("".join(
                    f"{query} Q0 D{d} {i + 1} {s:.4f} {name}\n"
                    for i, (d, s) in enumerate(zip(order, score))
                ))  # fmt: skip


def measure(args: list[str], src: Path) -> dict:
    """Wall, CPU and peak memory of ``relimpute ARGS`` in a child process; its stdout."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    return timed_child([sys.executable, "-c", CLI, *args], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)  # fmt: skip


def _median_run(runs: list[dict]) -> dict:
    """The run of median CPU time."""
    return sorted(runs, key=lambda r: r["cpu_s"])[(len(runs) - 1) // 2]


def measure_median(args: list[str], src: Path, repeats: int) -> dict:
    """:func:`measure` ``repeats`` times: the run of median CPU time, with every run's CPU."""
    runs = [measure(args, src) for _ in range(repeats)]
    middle = _median_run(runs)
    return {**middle, "cpu_runs": [r["cpu_s"] for r in runs]} if repeats > 1 else middle


def measure_against(args: list[str], src: Path, reference: Path, repeats: int) -> dict:
    """:func:`measure_median` of ``src`` with the ``reference`` tree run in turn (A B A B ...):
    every pair's CPU ratio, as the machine's speed drifts between pairs."""
    runs, yardstick = [], []
    for _ in range(repeats):
        runs.append(measure(args, src))
        yardstick.append(measure(args, reference))
    middle = _median_run(runs)
    ratios = [a["cpu_s"] / b["cpu_s"] for a, b in zip(runs, yardstick)]
    return {**middle, "cpu_runs": [r["cpu_s"] for r in runs],
            "reference_cpu_runs": [r["cpu_s"] for r in yardstick], "cpu_ratios": ratios}  # fmt: skip


def run(cases: list[str], src: Path, repeats: int = 1, reference: Path | None = None) -> dict:
    found = {}
    with tempfile.TemporaryDirectory(prefix="relimpute-scale-") as tmp:
        big = Path(tmp)
        if any(c.startswith("big") for c in cases):
            write_campaign(big)
        commands = {
            "big compare": ["compare", str(big / "qrels.txt"), str(big / "runs"), "--seed", "1",
                            "-f", "tsv"],
            "big fit": ["fit", str(big / "qrels.txt"), str(big / "runs"), "-o", str(big / "p.tsv"),
                        "-f", "tsv"],
            "dl19 compare": ["compare", str(DL19 / "qrels.txt"), str(DL19 / "runs"),
                             "--rel-threshold", "2", "--seed", "1", "-f", "tsv"],
        }  # fmt: skip
        for case in cases:
            if case.startswith("dl19") and not (DL19 / "qrels.txt").is_file():
                print(f"skipped: {case} ({DL19} not found)")
                continue
            if reference is not None and case == "dl19 compare":
                found[case] = measure_against(commands[case], src, reference, repeats)
            else:
                found[case] = measure_median(commands[case], src, repeats)
            print(f"{case}: {found[case]['wall_s']} s wall, {found[case]['cpu_s']} s CPU, "
                  f"{found[case]['peak_mb']} MB", flush=True)  # fmt: skip
    return found


def _answer(stdout: str):
    import pandas as pd

    frame = pd.read_csv(io.StringIO(stdout), sep="\t")
    return frame.set_index(["system_a", "system_b"]).sort_index()


def markdown(results: dict) -> str:
    labels = list(results["labels"])
    rows = []
    for case, target in TARGETS.items():
        for label in labels:
            got = results["labels"][label]["cases"].get(case)
            if got is None:
                continue
            met = all(got[k] <= v for k, v in target.items())
            on_cpu = all(got[_on_cpu(k)] <= v for k, v in target.items())
            goal = ", ".join(f"{k} <= {v:g}" for k, v in target.items())
            runs = got.get("cpu_runs")
            cpu = f"{got['cpu_s']:.1f}" + (f" (median of {len(runs)})" if runs else "")
            rows.append(
                f"| {case} | {label} | {got['wall_s']:.1f} | {cpu} | "
                f"{got['peak_mb']:.0f} | {goal} | {'met' if met else 'missed'} | "
                f"{'met' if on_cpu else 'missed'} |"
            )
    lines = [
        "# The default model at scale",
        "",
        "`python benchmarks/bench_default_scale.py --label LABEL [--src SRC]` (module docstring: "
        "the synthetic 2M-line campaign, the commands). One child process per command; CPU = "
        "user + system. The machine is shared: wall time includes waiting for a core, and CPU "
        "time grows when the cores are busy (load average at the start of each label below). "
        "The last column reads a wall-time target against the CPU time (what a quiet machine's "
        "wall time would be, these commands running on one core). Figure: "
        "[default_scale.png](default_scale.png). Where DL 2019's CPU goes, stage by stage: "
        "[default_scale_profile.md](default_scale_profile.md).",
        "",
        "| command | code | wall (s) | CPU (s) | peak (MB) | target | as measured | CPU for wall |",
        "| --- | --- | ---: | ---: | ---: | --- | --- | --- |",
        *rows,
        "",
    ]
    lines += _against_reference(results)
    for label in labels:
        info = results["labels"][label]
        lines.append(
            f"- {label}: {info['date']}, source `{info['src']}`, 1-min load average "
            f"{info['machine']['load_average_1min']} at start. {info.get('note', '')}".rstrip()
        )
    answers = {
        label: _answer(info["cases"]["dl19 compare"]["stdout"])
        for label, info in results["labels"].items()
        if "dl19 compare" in info["cases"]
    }
    lines += answer_changes(answers, "DL 2019 answers against `{first}` (same seed; draws are "
                            "random):")  # fmt: skip
    return "\n".join(lines) + "\n"


def answer_changes(answers: dict, heading: str, difference: str = "dMAP") -> list[str]:
    """Lines comparing each label's answer (``answers``: label -> :func:`_answer`) with the
    first label's, under ``heading`` (``{first}``: that label); none for fewer than two."""
    if len(answers) < 2:
        return []
    first, *others = answers
    lines = ["", heading.format(first=first), ""]
    for label in others:
        a, b = answers[first], answers[label]
        dp = (a["p_a_better"] - b["p_a_better"]).abs()
        de = (a["e_delta_map"] - b["e_delta_map"]).abs() / a["sd_delta_map"]
        lines.append(
            f"- `{label}`: {len(a)} pairs; largest |ΔP(A beats B)| {dp.max():.3f} "
            f"(median {dp.median():.4f}); largest |ΔE[{difference}]| {de.max():.3f} sd "
            f"(median {de.median():.4f} sd)."
        )
    return lines


def _against_reference(results: dict) -> list[str]:
    """The labels measured with ``--reference``: DL 2019's compare on the issue's machine."""
    rows = []
    target = TARGETS["dl19 compare"]["cpu_s"]
    for label, info in results["labels"].items():
        got = info["cases"].get("dl19 compare", {})
        if "cpu_ratios" not in got:
            continue
        ratio = float(np.median(got["cpu_ratios"]))
        there = ratio * REFERENCE["cpu_s"]
        rows.append(
            f"| {label} | {got['cpu_s']:.2f} | {np.median(got['reference_cpu_runs']):.2f} | "
            f"{ratio:.3f} ({min(got['cpu_ratios']):.3f}-{max(got['cpu_ratios']):.3f}) | "
            f"{there:.1f} | {'met' if there <= target else 'missed'} |"
        )
    if not rows:
        return []
    return [
        f"DL 2019 compare against issue 26's yardstick: the code it timed at {REFERENCE['cpu_s']:g} s "
        f"CPU (commit {REFERENCE['commit']}), run in turn with each label ({len(rows)} label(s); "
        "`--reference`). Ratio: median over the pairs (min-max); on the issue's machine: the "
        f"ratio times {REFERENCE['cpu_s']:g} s. Target {target:g} s.",
        "",
        "| code | CPU (s) here | yardstick CPU (s) here | CPU ratio | on the issue's machine (s) | target |",
        "| --- | ---: | ---: | --- | ---: | --- |",
        *rows,
        "",
    ]


def _on_cpu(key: str) -> str:
    """The measurement a target on ``key`` is read against on a busy machine."""
    return "cpu_s" if key == "wall_s" else key


def figure(results: dict, path: Path) -> None:
    """CPU seconds and peak memory of every command per label, against the targets."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(results["labels"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    width = 0.8 / len(labels)
    for panel, (key, title) in zip(axes, (("cpu_s", "CPU (s)"), ("peak_mb", "peak memory (MB)"))):
        for i, label in enumerate(labels):
            cases = results["labels"][label]["cases"]
            values = [cases.get(case, {}).get(key, np.nan) for case in TARGETS]
            panel.bar(np.arange(len(TARGETS)) + (i - (len(labels) - 1) / 2) * width, values,
                      width, label=label)  # fmt: skip
        for j, target in enumerate(TARGETS.values()):
            goal = next((v for k, v in target.items() if _on_cpu(k) == key), None)
            if goal is not None:
                panel.hlines(goal, j - 0.45, j + 0.45, color="k", ls="--", lw=1)
        panel.set_xticks(np.arange(len(TARGETS)), list(TARGETS))
        panel.set_ylabel(title)
    axes[0].set_title("dashed: the target (wall-time targets read on CPU)", fontsize=9)
    axes[1].legend(fontsize=7)
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_label_arguments(parser, ROOT / "src", RESULTS, "default_scale")
    parser.add_argument("--cases", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs per command; the one of median CPU time is kept")  # fmt: skip
    parser.add_argument("--reference", type=Path, default=None,
                        help=f"a source tree of commit {REFERENCE['commit']}: DL 2019's compare "
                        "runs in turn with it (module docstring)")  # fmt: skip
    args = parser.parse_args(argv)
    info = {"src": str(args.src), "machine": machine(), "date": utc_now(), "note": args.note}
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    reference = args.reference.resolve() if args.reference else None
    info["cases"] = run(args.cases, args.src.resolve(), args.repeats, reference)
    save_label(args.out, "default_scale", args.label, info, markdown, figure)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
