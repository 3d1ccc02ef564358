"""``relimpute COMMAND --help`` (issue 26: at most 0.1 s CPU each): what relimpute adds to the
interpreter's own start-up, apart from what the machine's interpreter costs.

Per command, the CPU time (user + system, the child's rusage) of ``relimpute COMMAND --help``
run as the console script runs it, beside two floors run in the same interleaved rounds:

- ``python -c pass``: the interpreter with ``site`` and every ``.pth`` file of the
  site-packages (here a sandbox's certifi hook, ``_sandboxing_egress_ca.pth``, is one: not
  relimpute's, and not on a user's machine);
- ``python -S -c pass``: the bare interpreter, no ``site`` at all.

The same command under ``-S`` (relimpute found through ``PYTHONPATH``, the only path it needs:
``--help`` loads nothing from the site-packages) gives relimpute's own share without the
``.pth`` files' noise: ``marginal = help(-S) − floor(-S)``. The figure of record is that
marginal share (ours) beside the total (what a user on this machine waits for).

``--python`` measures with another interpreter (for example a throwaway venv, ``python -m
venv /tmp/venv; /tmp/venv/bin/pip install .``: a user's interpreter, without this machine's
``.pth`` files), ``--installed`` its installed relimpute (a non-editable install) rather
than ``--src``.

    python benchmarks/bench_help.py [--rounds 15] [--src SRC] [--python PY [--installed]]

Writes ``benchmarks/results/help.json`` (every label measured) and ``help.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from _run_info import machine, utc_now

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CLI = "import sys; from relimpute.cli import main; sys.exit(main())"
TARGET_CPU_S = 0.1


def _commands(src: Path) -> list[str]:
    sys.path.insert(0, str(src))
    try:
        from relimpute.cli import _subcommand_index  # reads the modules' source only

        return ["(none)", *sorted(_subcommand_index())]
    finally:
        sys.path.remove(str(src))


def _cpu_seconds(python: str, args: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([python, *args], env=env, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cases(commands: list[str]) -> dict[str, list[str]]:
    """Name -> interpreter arguments of every process measured."""
    out = {"floor": ["-c", "pass"], "floor -S": ["-S", "-c", "pass"]}
    for command in commands:
        words = ["--help"] if command == "(none)" else [command, "--help"]
        out[f"{command}"] = ["-c", CLI, *words]
        out[f"{command} -S"] = ["-S", "-c", CLI, *words]
    return out


def _installed_at(python: str) -> Path:
    """The folder ``python``'s installed relimpute package lies in (its site-packages)."""
    code = "import relimpute, pathlib; print(pathlib.Path(relimpute.__file__).parents[1])"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    found = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())


def run(rounds: int, src: Path, python: str, installed: bool = False) -> dict:
    """Every case of :func:`cases` ``rounds`` times with ``python``: ``src`` first on its path,
    or (``installed``) its installed relimpute (found under ``-S`` through ``PYTHONPATH``)."""
    if not installed:
        env = bare_env = {**os.environ, "PYTHONPATH": str(src)}
    else:
        src = _installed_at(python)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        bare_env = {**env, "PYTHONPATH": str(src)}
    commands = _commands(src)
    processes = cases(commands)
    times: dict[str, list[float]] = {name: [] for name in processes}
    for _ in range(rounds):  # interleaved: a busy spell of the machine hits every case alike
        for name, args in processes.items():
            times[name].append(_cpu_seconds(python, args, bare_env if "-S" in args else env))
    median = {name: statistics.median(v) for name, v in times.items()}
    rows = {}
    for command in commands:
        total, bare = median[command], median[f"{command} -S"]
        rows[command] = {
            "total_cpu_s": round(total, 4),
            "floor_cpu_s": round(median["floor"], 4),
            "marginal_cpu_s": round(total - median["floor"], 4),
            "bare_total_cpu_s": round(bare, 4),
            "bare_floor_cpu_s": round(median["floor -S"], 4),
            "bare_marginal_cpu_s": round(bare - median["floor -S"], 4),
        }
    return {"rounds": rounds, "commands": rows, "all_cpu_s": times}


def markdown(results: dict) -> str:
    lines = [
        "# `relimpute COMMAND --help`: total CPU and relimpute's share",
        "",
        "`python benchmarks/bench_help.py --rounds N --label LABEL` (module docstring). Median CPU "
        "(user + system) per process over N interleaved rounds. *floor*: `python -c pass` "
        "(site and the site-packages' `.pth` files, one of them a sandbox's certifi hook that "
        "is not relimpute's); *floor -S*: `python -S -c pass`. *ours*: the command under `-S` "
        "less the `-S` floor, relimpute's own share (the figure of record); *total*: what a user "
        f"of this machine's interpreter waits for. Target: {TARGET_CPU_S} s CPU in total.",
        "",
    ]
    for label, info in results["labels"].items():
        rows = info["commands"]
        floor = next(iter(rows.values()))
        lines += [
            f"## {label}",
            "",
            f"{info['date']}, source `{info['src']}`, {info['rounds']} rounds, 1-min load average "
            f"{info['machine']['load_average_1min']} at start. {info.get('note', '')}".rstrip(),
            f"Floors: `python -c pass` {floor['floor_cpu_s']:.3f} s, `python -S -c pass` "
            f"{floor['bare_floor_cpu_s']:.3f} s (site and the `.pth` files: "
            f"{floor['floor_cpu_s'] - floor['bare_floor_cpu_s']:+.3f} s).",
            "",
            "| command | total (s) | above `python -c pass` (s) | ours: `-S` above `-S` floor (s) "
            "| total within target |",
            "| --- | ---: | ---: | ---: | --- |",
        ]
        for command, r in rows.items():
            name = "relimpute --help" if command == "(none)" else f"relimpute {command} --help"
            met = "met" if r["total_cpu_s"] <= TARGET_CPU_S else "missed"
            lines.append(
                f"| `{name}` | {r['total_cpu_s']:.3f} | {r['marginal_cpu_s']:+.3f} | "
                f"{r['bare_marginal_cpu_s']:+.3f} | {met} |"
            )
        ours = [r["bare_marginal_cpu_s"] for r in rows.values()]
        totals = [r["total_cpu_s"] for r in rows.values()]
        lines += [
            "",
            f"relimpute's own share: {min(ours):.3f}-{max(ours):.3f} s; totals "
            f"{min(totals):.3f}-{max(totals):.3f} s, {sum(t > TARGET_CPU_S for t in totals)} of "
            f"{len(totals)} above {TARGET_CPU_S} s.",
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="source tree to measure")
    parser.add_argument("--python", default=sys.executable, help="the interpreter to measure")
    parser.add_argument("--installed", action="store_true",
                        help="its installed relimpute, not --src")  # fmt: skip
    parser.add_argument("--label", default="after", help="name of this measurement")
    parser.add_argument("--note", default="", help="a sentence shown with the label")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write help.*")
    args = parser.parse_args(argv)
    path = args.out / "help.json"
    results = json.loads(path.read_text()) if path.is_file() else {"labels": {}}
    where = "installed" if args.installed else str(args.src)
    info = {"src": f"{where}, {args.python}", "machine": machine(), "date": utc_now(),
            "note": args.note}  # fmt: skip
    info.update(run(args.rounds, args.src.resolve(), args.python, args.installed))
    results["labels"][args.label] = info
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "help.md").write_text(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
