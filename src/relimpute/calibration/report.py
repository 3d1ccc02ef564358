"""The calibration report: Carterette's Tables 2–4, scores beside W, paired tests, files.

Tables follow Carterette (2007) §5: Table 2 (share of pairs and accuracy per
confidence bin, W, median judgments, mean τ), Table 3 (pairs with two, one or
no initial systems), Table 4 (by the share of documents two runs retrieve in
common). Beside W the report gives the expected calibration error, the Brier
score and the log loss of the pairwise predictions, and every table exists
with and without confidence capped (Carterette's remedy for over-fitting: cap
at 0.95). Pairs whose true ΔMAP is exactly 0 have no winner and are left out
(their count is reported).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._deprecation import renamed_kwargs
from .._display import short_repr
from ..stats import CLOSE, MIN_PAIRS
from ..studies.tables import markdown_text
from .metrics import W_CAP
from .paired import paired_frame, paired_tests
from .scoring import (
    breakdown_frame,
    bins_frame,
    scored_pairs,
    summary_frame,
    trial_outcomes,
)
from .slices import TOP_K, slices_frame, top_by_judgments
from .study import CalibrationStudy, read_study

__all__ = [
    "CalibrationReport",
    "breakdown_frame",
    "bins_frame",
    "read_study",
    "scored_pairs",
    "summary_frame",
    "trial_outcomes",
]

# --------------------------------------------------------------------------- the report object


@dataclass(frozen=True, eq=False)
class CalibrationReport:
    """Every table of a study, raw and with confidence capped.

    Attributes
    ----------
    summary, bins, by_initial, by_similarity, slices, top_by_judgments
        Keyed ``"raw"`` and ``"capped"`` (confidence capped at ``cap``); ``slices``: the
        critics' tests (:mod:`relimpute.calibration.slices`), and the top-k slice split by
        the trials' judgments.
    trials
        Per-trial outcomes with the raw per-trial W (``w``) and the capped one (``w_capped``).
    paired
        Paired tests between strategies (judgments: Wilcoxon; τ, W: paired t).
    cap
        The confidence cap of the ``"capped"`` tables.
    config
        The study's configuration.
    """

    summary: dict[str, pd.DataFrame]
    bins: dict[str, pd.DataFrame]
    by_initial: dict[str, pd.DataFrame]
    by_similarity: dict[str, pd.DataFrame]
    trials: pd.DataFrame
    paired: pd.DataFrame
    cap: float
    config: dict[str, Any] = field(default_factory=dict)
    slices: dict[str, pd.DataFrame] = field(default_factory=dict)
    top_by_judgments: dict[str, pd.DataFrame] = field(default_factory=dict)

    @classmethod
    def from_study(cls, study: CalibrationStudy, cap: float = 0.95) -> CalibrationReport:
        caps = {"raw": None, "capped": cap}
        trials = trial_outcomes(study)
        trials["w_capped"] = trial_outcomes(study, cap)["w"].to_numpy()
        tests = paired_frame(paired_tests(trials)) if len(study.strategies) > 1 else pd.DataFrame()
        return cls(
            summary={k: summary_frame(study, v) for k, v in caps.items()},
            bins={k: bins_frame(study, v) for k, v in caps.items()},
            by_initial={k: breakdown_frame(study, "initial", v) for k, v in caps.items()},
            by_similarity={k: breakdown_frame(study, "similarity", v) for k, v in caps.items()},
            trials=trials,
            paired=tests,
            cap=cap,
            config=dict(study.config),
            slices={k: slices_frame(scored_pairs(study, v), study.strategies) for k, v in caps.items()},
            top_by_judgments={k: top_by_judgments(scored_pairs(study, v), study.trials, study.strategies)
                              for k, v in caps.items()},
        )

    def to_frame(self) -> pd.DataFrame:
        """The raw and capped summaries in one table (column ``confidence``)."""
        return pd.concat(
            [f.assign(confidence=k) for k, f in self.summary.items()], ignore_index=True
        )

    def __repr__(self) -> str:
        strategies = list(dict.fromkeys(self.trials["strategy"])) if len(self.trials) else []
        return short_repr(
            self,
            f"strategies={strategies!r}",
            f"{len(self.trials)} strategy trials",
            f"cap={self.cap}",
        )

    # ---------------------------------------------------------------- text

    def terminal_summary(self) -> str:
        """A one-screen summary: per strategy W, accuracy at ≥ 0.95, ECE, judgments, τ."""
        raw, capped = self.summary["raw"], self.summary["capped"]
        cfg = self.config
        lines = [
            (
                f"relimpute calibrate: {cfg.get('n_trials')} trials, k={cfg.get('k')}, "
                f"c={cfg.get('c')}, confidence={cfg.get('alpha')}, depth={cfg.get('depth')}, "
                + (f"at most {cfg['max_judgments']} judgments, " if cfg.get("max_judgments") else "")
                + f"rel>={cfg.get('rel_threshold')}"
            ),
            "",
            (
                f"{'strategy':<12}{'W':>8}{'W 95% CI':>18}{'W cap':>8}{'acc≥.95':>9}{'(share)':>9}"
                f"{'ECE':>7}{'Brier':>7}{'med/mean judged':>17}{'tau':>7}"
            ),
        ]
        for (_, r), (_, rc) in zip(raw.iterrows(), capped.iterrows()):
            ci = f"({r['w_low']:.2f}, {r['w_high']:.2f})"
            lines.append(
                f"{r['strategy']:<12}{r['w']:>8.2f}{ci:>18}{rc['w']:>8.2f}"
                f"{_pct(r['accuracy_conf_95']):>9}{_pct(r['share_conf_95']):>9}"
                f"{r['ece']:>7.3f}{r['brier']:>7.3f}"
                f"{r['median_judgments']:>8.0f} / {r['mean_judgments']:<6.0f}{r['mean_tau']:>7.3f}"
            )
        notes = _unfinished(self.trials, cfg)
        if notes:
            lines += ["", *notes]
        if not self.paired.empty:
            lines += [
                "",
                "paired tests, mean difference a - b (p): judgments Wilcoxon, tau and W paired t",
            ]
            for (sa, sb), part in self.paired.groupby(["strategy_a", "strategy_b"], sort=False):
                cells = [
                    f"{t['outcome']} {t['mean_difference']:+.3g} ({t['pvalue']:.2g})"
                    for _, t in part.iterrows()
                ]
                lines.append(f"  {sa} vs {sb}: " + ", ".join(cells))
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The whole report as markdown (tables raw, then capped)."""
        cfg = self.config
        out = [
            "# Calibration study (Carterette 2007, §4.3–4.4)",
            "",
            (
                f"{cfg.get('n_trials')} trials; k = {cfg.get('k')} runs per trial"
                f"{' (one per group)' if cfg.get('one_per_group') else ''}, c = {cfg.get('c')} "
                f"initial; judged to confidence {cfg.get('alpha')} (the paper's α){_budget_text(cfg)}; "
                "runs truncated at depth "
                f"{cfg.get('depth')}; relevant = grade ≥ {cfg.get('rel_threshold')}; "
                f"seed {cfg.get('seed')}."
            ),
            f"Strategies: {_strategy_text(cfg)}.",
            *[f"{note}." for note in _unfinished(self.trials, cfg)],
            (
                "`P` = max(P(ΔMAP < 0), P(ΔMAP > 0)); W = mean W_i with −W_i capped at "
                f"{W_CAP:g}; pairs with a true ΔMAP of exactly 0 are left out."
            ),
            "",
        ]
        for key, title in (("raw", "uncapped confidence"), ("capped", f"confidence capped at {self.cap:g}")):
            out += [f"## Table 2 ({title})", "", _table2_markdown(self.bins[key], self.summary[key]), ""]
            out += ["### Scores beside W", "", _markdown(_summary_view(self.summary[key])), ""]
            out += [f"## Slices: the critics' tests ({title})", "", _slices_text(), "",
                    _markdown(self.slices[key]) if key in self.slices else "(none)", ""]
            if key in self.top_by_judgments:
                out += [f"### The top-{TOP_K} slice by the trial's judgments ({title})", "",
                        _by_judgments_text(), "", _markdown(self.top_by_judgments[key]), ""]
            out += [
                f"## Table 3: pairs with two / one / no initial systems ({title})",
                "",
                _breakdown_markdown(self.by_initial[key]),
                "",
                f"## Table 4: by run similarity, share of documents in common ({title})",
                "",
                _breakdown_markdown(self.by_similarity[key]),
                "",
            ]
        if not self.paired.empty:
            out += [
                "## Paired tests between strategies (same trials)",
                "",
                "Judgments: Wilcoxon signed-rank; τ and per-trial W: paired t-test; differences are a − b.",
                "",
                _markdown(self.paired),
                "",
            ]
        out += ["![reliability diagram](reliability.svg)", ""]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.terminal_summary()

    def _title(self) -> str:
        """Names the study: collection (when known), trials, runs per trial, depth, threshold."""
        c = self.config
        depth = f"depth {c['depth']}" if c.get("depth") else "full depth"
        where = f"{c['collection']}: " if c.get("collection") else ""
        return (
            f"{where}reliability of P(A beats B) — {c.get('n_trials', '?')} trials of "
            f"{c.get('k', '?')} runs ({c.get('c', '?')} initial), {depth}, "
            f"relevant grade >= {c.get('rel_threshold', '?')}"
        )

    # ---------------------------------------------------------------- files

    @renamed_kwargs(directory="folder")
    def write(self, folder: str | os.PathLike, study: CalibrationStudy | None = None) -> list[Path]:
        """Write the report (markdown, CSV, JSON, reliability diagram PNG+SVG) into ``folder``.

        With ``study`` the raw pair table is written too (``pairs.csv.gz``),
        so that :func:`read_study` can rebuild the study from the folder.
        """
        from .._files import atomic_write_text, output_directory
        from .plots import reliability_diagram

        out = output_directory(folder)
        written = []

        def put(name: str, text: str) -> None:
            atomic_write_text(out / name, text)
            written.append(out / name)

        put("summary.txt", self.terminal_summary() + "\n")
        for key in ("raw", "capped"):
            suffix = "" if key == "raw" else "_capped"
            put(f"summary{suffix}.csv", self.summary[key].to_csv(index=False))
            put(f"table2_bins{suffix}.csv", self.bins[key].to_csv(index=False))
            put(f"table3_initial{suffix}.csv", self.by_initial[key].to_csv(index=False))
            put(f"table4_similarity{suffix}.csv", self.by_similarity[key].to_csv(index=False))
            if key in self.slices:
                put(f"slices{suffix}.csv", self.slices[key].to_csv(index=False))
            if key in self.top_by_judgments:
                put(f"top_by_judgments{suffix}.csv", self.top_by_judgments[key].to_csv(index=False))
        put("trials.csv", self.trials.to_csv(index=False))
        if not self.paired.empty:
            put("paired_tests.csv", self.paired.to_csv(index=False))
        if study is not None:
            put("pairs.csv.gz", study.pairs.to_csv(index=False))
        document = {
            "config": self.config,
            "cap": self.cap,
            "summary": {k: _records(v) for k, v in self.summary.items()},
            "bins": {k: _records(v) for k, v in self.bins.items()},
            "by_initial": {k: _records(v) for k, v in self.by_initial.items()},
            "by_similarity": {k: _records(v) for k, v in self.by_similarity.items()},
            "slices": {k: _records(v) for k, v in self.slices.items()},
            "top_by_judgments": {k: _records(v) for k, v in self.top_by_judgments.items()},
            "paired_tests": _records(self.paired),
        }
        put("report.json", json.dumps(document, indent=2, default=_json_default) + "\n")
        for ext in ("png", "svg"):
            path = out / f"reliability.{ext}"
            reliability_diagram(
                self.bins["raw"], path, capped=self.bins["capped"], cap=self.cap, title=self._title()
            )
            written.append(path)
        put("report.md", self.to_markdown())  # last: a kill before it leaves the UNFINISHED one
        return written


# --------------------------------------------------------------------------- formatting helpers


def _pct(x: float) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{100 * x:.1f}%"


def _num(x: Any) -> str:
    if isinstance(x, (float, np.floating)):
        return "-" if not np.isfinite(x) else f"{x:.4g}"
    return str(x)


def _markdown(frame: pd.DataFrame) -> str:
    cols = [markdown_text(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(markdown_text(_num(v)) for v in row) + " |")
    return "\n".join(lines)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(frame.to_json(orient="records")) if not frame.empty else []


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def _strategy_text(cfg: dict[str, Any]) -> str:
    specs = cfg.get("strategy_specs", {})
    parts = []
    for name, spec in specs.items():
        text = f"{name} = {spec['selector']} judgments + {spec['model']} model"
        if spec.get("budget_from"):
            text += f" (as many judgments as {spec['budget_from']})"
        if spec.get("monte_carlo_draws"):
            text += f", confidence from {spec['monte_carlo_draws']} Monte Carlo draws"
        parts.append(text)
    return "; ".join(parts) or "-"


def _unfinished(trials: pd.DataFrame, cfg) -> list[str]:
    """One line per strategy whose trials did not all stop at the confidence, or raised
    warnings (a fit that did not converge, ...): never a silent stop. A strategy that
    spends another's budget stops there by design and is not listed for it."""
    specs = cfg.get("strategy_specs", {})
    lines = []
    for strategy, part in trials.groupby("strategy", sort=False):
        follows = specs.get(strategy, {}).get("budget_from") is not None
        reasons = part.loc[part["stopped_because"] != "confidence", "stopped_because"]
        cells = []
        if len(reasons) and not follows:
            counts = reasons.value_counts()
            why = ", ".join(f"{n} {STOP_WORDS.get(r, r)}" for r, n in counts.items())
            cells.append(f"{len(reasons)} of {len(part)} trials did not reach the confidence ({why})")
        warned = int((part.get("warnings", pd.Series(0, index=part.index)) > 0).sum())
        if warned:
            cells.append(f"{warned} trial(s) raised warnings (trials.csv: warning_messages)")
        if cells:
            lines.append(f"{strategy}: " + "; ".join(cells))
    return lines


#: how a trial's ``stopped_because`` reads in the report
STOP_WORDS = {"budget": "at the judgment budget", "exhausted": "with nothing left to judge"}


def _budget_text(cfg) -> str:
    """How a judgment budget cut the trials short, if the study had one."""
    return f" or {cfg['max_judgments']} judgments, whichever came first" if cfg.get("max_judgments") else ""


def _slices_text() -> str:
    return (
        f"`all` pairs; `top-{TOP_K}`: both runs among the collection's {TOP_K} best by true MAP; "
        f"`close`: |true ΔMAP| < {CLOSE:g}. Target, judged where a slice has at least {MIN_PAIRS} "
        "pairs: W ≥ 0 and at least 95% of the pairs stated at ≥ 0.95 right. A slice picked by "
        "the true difference holds the pairs whose sign is hardest: on `close` even a forecaster "
        "calibrated by construction is right less often than it states, at W below 0 "
        "(docs/studies.md, \"Slices\")."
    )


def _by_judgments_text() -> str:
    return (
        f"The `top-{TOP_K}` pairs by how many documents their trial judged (the strategy judges "
        "for the initial runs only). What is left unjudged the model fills from the runs' "
        "consensus, which among a collection's best runs can order them backwards: accuracy "
        "far below the mean stated confidence in the rows with few judgments is that bias, "
        "not chance (docs/studies.md, \"Slices\")."
    )


def _summary_view(summary: pd.DataFrame) -> pd.DataFrame:
    view = summary[
        [
            "strategy", "trials", "pairs", "w", "w_low", "w_high", "accuracy", "ece", "brier",
            "log_loss", "share_conf_95", "accuracy_conf_95", "median_judgments",
            "mean_judgments", "share_zero_judgments", "share_stopped_at_budget", "mean_tau", "ties_excluded",
            "trials_with_warnings",
        ]
    ].copy()
    return view.rename(columns={"w_low": "W 2.5%", "w_high": "W 97.5%", "w": "W"})


def _table2_markdown(bins: pd.DataFrame, summary: pd.DataFrame) -> str:
    strategies = list(dict.fromkeys(bins["strategy"]))
    header = ["confidence"] + [
        markdown_text(f"{s} {col}") for s in strategies for col in ("% in bin", "accuracy")
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label in dict.fromkeys(bins["bin"]):
        cells = [label]
        for s in strategies:
            row = bins[(bins["strategy"] == s) & (bins["bin"] == label)].iloc[0]
            cells += [_pct(row["share"]), _pct(row["accuracy"])]
        lines.append("| " + " | ".join(cells) + " |")
    by = summary.set_index("strategy")
    for label, col, fmt in (
        ("W", "w", "{:.2f}"),
        ("median judged", "median_judgments", "{:.0f}"),
        ("mean judged", "mean_judgments", "{:.0f}"),
        ("mean τ", "mean_tau", "{:.3f}"),
    ):
        cells = [label]
        for s in strategies:
            cells += [fmt.format(by.loc[s, col]), ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _breakdown_markdown(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "(no pairs)"
    out = []
    for strategy in dict.fromkeys(frame["strategy"]):
        part = frame[frame["strategy"] == strategy]
        groups = list(dict.fromkeys(part["group"]))
        header = ["confidence"] + [markdown_text(f"{g} accuracy (n)") for g in groups]
        lines = [f"**{strategy}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for label in dict.fromkeys(part["bin"]):
            cells = [label]
            for g in groups:
                row = part[(part["group"] == g) & (part["bin"] == label)].iloc[0]
                cells.append(f"{_pct(row['accuracy'])} ({int(row['n'])})")
            lines.append("| " + " | ".join(cells) + " |")
        for label, col, fmt in (("W", "group_w", "{:.2f}"), ("pairs", "group_pairs", "{:d}")):
            cells = [label]
            for g in groups:
                value = part[part["group"] == g][col].iloc[0]
                cells.append(fmt.format(int(value) if fmt == "{:d}" else value))
            lines.append("| " + " | ".join(cells) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out)
