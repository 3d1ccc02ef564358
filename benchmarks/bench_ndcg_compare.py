"""``relimpute compare -m nDCG@10`` against ``-m MAP`` on DL 2019, as a user runs them.

Default ``relimpute compare --rel-threshold 2 --seed 1`` (the default model with its posterior
draws, Monte Carlo) over DL 2019's runs, once with ``-m MAP`` and once with ``-m nDCG@10``, in
a child process each, in turn (MAP, nDCG@10, MAP, nDCG@10, ...: the machine's speed drifts),
``--repeats`` rounds: CPU seconds (user + system), wall seconds, peak memory; per round the CPU
ratio nDCG@10 / MAP, and its median. Cases: ``pair`` (``--systems p_bert bm25base_p``, the pair
the question "Which MAP?" timed at 107 s CPU against 5.8 s for MAP) and ``all`` (the 37 runs,
666 pairs). ``--src`` measures another source tree (e.g. the code before a change) under
``--label``; every label is kept in ``benchmarks/results/ndcg_compare.json`` and shown in
``ndcg_compare.md`` and ``ndcg_compare.png``, with the nDCG@10 answers of the labels side by side.

    python benchmarks/bench_ndcg_compare.py [--label after] [--src SRC] [--cases pair all]
        [--repeats 3]

Target: nDCG@10's compare within 2× the MAP compare's CPU.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from _run_info import add_label_arguments, machine, save_figure, save_label, utc_now
from bench_default_scale import DL19, RESULTS, ROOT, _answer, answer_changes, measure

CASES = {"pair": ["--systems", "p_bert", "bm25base_p"], "all": []}
MEASURES = ("MAP", "nDCG@10")
TARGET_RATIO = 2.0


def run(cases: list[str], src: Path, repeats: int) -> dict:
    """Per case and measure the CPU, wall and peak of every round, and nDCG@10's answer."""
    found = {}
    for case in cases:
        base = ["compare", str(DL19 / "qrels.txt"), str(DL19 / "runs"), "--rel-threshold", "2",
                "--seed", "1", "-f", "tsv", *CASES[case]]  # fmt: skip
        rounds = {m: [] for m in MEASURES}
        for _ in range(repeats):
            for name in MEASURES:
                got = measure([*base, "-m", name], src)
                rounds[name].append(got)
                print(f"{case} {name}: {got['cpu_s']} s CPU, {got['wall_s']} s wall", flush=True)
        found[case] = {
            name: {key: [r[key] for r in runs] for key in ("cpu_s", "wall_s", "peak_mb")}
            for name, runs in rounds.items()
        }
        found[case]["ratios"] = [
            round(b["cpu_s"] / a["cpu_s"], 3) for a, b in zip(rounds["MAP"], rounds["nDCG@10"])
        ]
        found[case]["answer"] = rounds["nDCG@10"][-1]["stdout"]
    return found


def markdown(results: dict) -> str:
    rows = []
    for case in CASES:
        for label, info in results["labels"].items():
            got = info["cases"].get(case)
            if got is None:
                continue
            ratios = got["ratios"]
            ratio = float(np.median(ratios))
            rows.append(
                f"| {case} | {label} | {np.median(got['MAP']['cpu_s']):.1f} | "
                f"{np.median(got['nDCG@10']['cpu_s']):.1f} | {ratio:.2f} "
                f"({min(ratios):.2f}-{max(ratios):.2f}, {len(ratios)} rounds) | "
                f"{np.median(got['nDCG@10']['peak_mb']):.0f} | "
                f"{'met' if ratio <= TARGET_RATIO else 'missed'} |"
            )
    lines = [
        "# compare -m nDCG@10 against -m MAP (DL 2019)",
        "",
        "`python benchmarks/bench_ndcg_compare.py --label LABEL [--src SRC]` (module docstring). "
        "Default `relimpute compare --rel-threshold 2 --seed 1`, one child process per command, "
        "MAP and nDCG@10 in turn; CPU = user + system, medians over the rounds; the ratio is "
        "nDCG@10's CPU over MAP's in the same round. Figure: [ndcg_compare.png](ndcg_compare.png).",
        "",
        f"| runs | code | MAP CPU (s) | nDCG@10 CPU (s) | ratio | nDCG@10 peak (MB) | "
        f"target ≤ {TARGET_RATIO:g}× |",
        "| --- | --- | ---: | ---: | --- | ---: | --- |",
        *rows,
        "",
    ]
    for label, info in results["labels"].items():
        lines.append(
            f"- {label}: {info['date']}, source `{info['src']}`, 1-min load average "
            f"{info['machine']['load_average_1min']} at start. {info.get('note', '')}".rstrip()
        )
    lines += _answers(results)
    return "\n".join(lines) + "\n"


def _answers(results: dict) -> list[str]:
    """The labels' nDCG@10 answers against the first label's (same seed; draws are random)."""
    lines = []
    for case in CASES:
        answers = {label: _answer(info["cases"][case]["answer"])
                   for label, info in results["labels"].items() if case in info["cases"]}  # fmt: skip
        heading = f"nDCG@10 answers ({case}) against `{{first}}` (same seed; draws are random):"
        lines += answer_changes(answers, heading, "ΔnDCG@10")
    return lines


def figure(results: dict, path: Path) -> None:
    """CPU seconds of MAP and nDCG@10 per case and label, the target (2× MAP) dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = [(case, label, info["cases"][case]) for case in CASES
            for label, info in results["labels"].items() if case in info["cases"]]  # fmt: skip
    fig, ax = plt.subplots(figsize=(max(4, 1.6 * len(bars)), 3.8))
    x = np.arange(len(bars))
    for shift, name in ((-0.2, "MAP"), (0.2, "nDCG@10")):
        values = [np.median(got[name]["cpu_s"]) for _, _, got in bars]
        ax.bar(x + shift, values, 0.4, label=name)
    for i, (_, _, got) in enumerate(bars):
        ax.hlines(TARGET_RATIO * np.median(got["MAP"]["cpu_s"]), i - 0.4, i + 0.4, color="k",
                  ls="--", lw=1)  # fmt: skip
    ax.set_xticks(x, [f"{case}\n{label}" for case, label, _ in bars], fontsize=8)
    ax.set_ylabel("CPU (s), median")
    ax.set_yscale("log")
    ax.set_title(f"DL 2019 compare; dashed: {TARGET_RATIO:g}× MAP", fontsize=9)
    ax.legend(fontsize=8)
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_label_arguments(parser, ROOT / "src", RESULTS, "ndcg_compare")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--repeats", type=int, default=3, help="rounds of MAP then nDCG@10")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if not (DL19 / "qrels.txt").is_file():
        print(f"skipped: {DL19} not found")
        return 0
    info = {"src": str(args.src), "machine": machine(), "date": utc_now(), "note": args.note}
    info["cases"] = run(args.cases, args.src.resolve(), args.repeats)
    save_label(args.out, "ndcg_compare", args.label, info, markdown, figure)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
