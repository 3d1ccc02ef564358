"""One line on stderr when a relevance model failed the project's own calibration study.

The shipped reusability studies (Carterette 2007 §4.3–4.4: :data:`SUMMARIES`, the
reproduction of RTC and the hierarchy's held-out study among them, and
``benchmarks/results/calibration.json`` for strategies only benchmarked there) measure the
bookmaker W of each strategy's confidence; the target is W >= -0.5 with 95% confidence
(``w_low``). A model whose confidence the studies found over-stated says so, with
the W measured, when a command uses it. The studies live in the repository (source and
editable installs); without them nothing is said.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

#: W at or above which a strategy's confidence counts as calibrated (examples/calibration)
W_TARGET = -0.5
#: the calibration strategies whose confidence is the model's (uniform: MTC's uniform prior;
#: rtc: the loop and model of Carterette 2007, ``rtc[paper]`` in its reproduction; bayes: its
#: shipped settings, NUTS draws carried into Monte Carlo, ``bayes-mc``)
STRATEGY_OF_MODEL = {"rtc": ("rtc", "rtc[paper]"), "uniform": ("mtc",), "bayes": ("bayes-mc",)}
#: the study summaries read, relative to the repository (the hierarchy's held-out study last)
SUMMARIES = (
    "examples/calibration/*/summary.csv",
    "examples/rtc_paper/results/summary.csv",
    "examples/bayes_calibration/loco/*/summary.csv",
)
#: the strategy of the default answer (the default model, confidence over its posterior draws)
DEFAULT_STRATEGY = "fusion-mc"


def _repository() -> Path | None:
    root = Path(__file__).resolve().parents[3]
    return root if (root / "examples" / "calibration").is_dir() else None


def _study_name(summary: Path) -> str:
    folder = summary.parent
    return folder.parent.name if folder.name == "results" else folder.name


def measured_w(strategy: str | tuple[str, ...], root: Path | None = None) -> list[tuple[str, float, float]]:
    """``(study, W, lower 95% bound)`` of ``strategy`` (or any of several names) in every
    shipped study that ran it."""
    root = root or _repository()
    if root is None:
        return []
    names = (strategy,) if isinstance(strategy, str) else tuple(strategy)
    found = []
    for pattern in SUMMARIES:  # a later source only for strategies the earlier ones lack
        if found:
            break
        for summary in sorted(root.glob(pattern)):
            try:
                with open(summary, encoding="utf-8", newline="") as handle:
                    rows = [r for r in csv.DictReader(handle) if r.get("strategy") in names]
                found += [(_study_name(summary), float(r["w"]), float(r["w_low"])) for r in rows]
            except (OSError, KeyError, ValueError):
                continue
    if not found:  # strategies only the calibration benchmark ran (bayes)
        bench = root / "benchmarks" / "results" / "calibration.json"
        try:
            headline = json.loads(bench.read_text(encoding="utf-8"))["headline"]
            rows = [headline[name] for name in names if name in headline]
            found += [("dl19 benchmark", float(r["w"]), float(r["w_low"])) for r in rows]
        except (OSError, KeyError, TypeError, ValueError):
            pass
    return found


def calibration_warning(model: str, root: Path | None = None) -> str | None:
    """The warning for ``model`` (a registered name) when a shipped study found its
    confidence over-stated (W's lower bound below :data:`W_TARGET`), else None."""
    strategy = STRATEGY_OF_MODEL.get(str(model))
    if strategy is None:
        return None
    studies = measured_w(strategy, root)
    failed = [(name, w) for name, w, low in studies if low < W_TARGET]
    if not failed:
        return None
    measured = ", ".join(f"{w:+.2f} on {name}" for name, w in failed)
    default = measured_w(DEFAULT_STRATEGY, root)
    passes = default and all(low >= W_TARGET for _, _, low in default)
    return (
        f"warning: model {model!r} failed the shipped calibration study (W {measured}; "
        f"calibrated is W >= {W_TARGET:g}): its confidence is over-stated"
        + ("; the default model passes" if passes else "")
    )


def warn_if_uncalibrated(model: str | None, command: str) -> None:
    """Print :func:`calibration_warning` for ``model`` on stderr (nothing for None or a
    model the studies pass)."""
    import sys

    message = calibration_warning(model) if model is not None else None
    if message:
        print(f"relimpute {command}: {message}", file=sys.stderr)
