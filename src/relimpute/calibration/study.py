"""A reusability study's results (Carterette 2007 §4.3): pairwise predictions, trial outcomes.

:func:`~relimpute.calibration.run_study` makes one; :func:`read_study` reads one back from a
report folder; :func:`combine_studies` joins studies run on the same trials.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._deprecation import renamed_kwargs
from .._display import short_repr
from .scoring import summary_frame


@dataclass(frozen=True, eq=False)
class CalibrationStudy:
    """Every pairwise prediction and per-trial outcome of a reusability study.

    Attributes
    ----------
    pairs
        One row per (trial, strategy, pair): ``trial, strategy, system_a,
        system_b, e_delta_map, p_a_better, true_delta_map, true_rank_a, true_rank_b,
        n_initial, similarity``; ``p_a_better = P(MAP_a > MAP_b)``; the ranks are by true MAP
        among all the collection's runs (1 = best).
    trials
        One row per (trial, strategy): ``trial, strategy, seed, systems,
        initial, judgments, stopped_because, selection_confidence (the
        initial pair's ``max(P, 1 − P)`` when judging stopped, as the
        selection loop saw it), tau, seconds, warnings, warning_messages``.
    config
        How the study was run (k, c, α, depth, seed, strategies, ...).
    """

    pairs: pd.DataFrame
    trials: pd.DataFrame
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def strategies(self) -> list[str]:
        return list(dict.fromkeys(self.trials["strategy"]))

    @property
    def n_trials(self) -> int:
        return int(self.trials["trial"].nunique())

    def to_frame(self) -> pd.DataFrame:
        """The pair table (the raw material of every calibration metric)."""
        return self.pairs.copy()

    def __repr__(self) -> str:
        return short_repr(
            self,
            f"{self.n_trials} trials",
            f"strategies={self.strategies!r}",
            f"{len(self.pairs)} pairwise predictions",
        )

    def __str__(self) -> str:
        summary = summary_frame(self)
        return (
            f"CalibrationStudy: {self.n_trials} trials, strategies {', '.join(self.strategies)}\n"
            + summary.to_string(index=False, float_format=lambda x: f"{x:.3f}")
        )


def combine_studies(*studies: CalibrationStudy) -> CalibrationStudy:
    """One study from studies run on the same trials (same seed, k, c, depth, runs).

    Strategies are taken in order, a name already present being skipped (its
    first occurrence wins), and only the trials present in every study are
    kept, so the comparisons stay paired. Raises ValueError when a shared
    trial differs (other seed or run set): those studies were not paired.
    """
    if not studies:
        raise ValueError("no studies given")
    keys = ["trial", "seed", "systems", "initial"]
    common = None
    for study in studies:
        specs = study.trials[keys].drop_duplicates().set_index("trial")
        if common is not None:
            shared = common.index.intersection(specs.index)
            if not common.loc[shared].astype(str).equals(specs.loc[shared].astype(str)):
                raise ValueError("the studies' trials differ (seed, runs or initial pair): not paired")
            common = common.loc[shared]
        else:
            common = specs
    kept = set(common.index)
    pairs, trials, specs, names = [], [], {}, []
    for study in studies:
        for name in study.strategies:
            if name in names:
                continue
            names.append(name)
            pairs.append(study.pairs[(study.pairs["strategy"] == name) & study.pairs["trial"].isin(kept)])
            trials.append(study.trials[(study.trials["strategy"] == name) & study.trials["trial"].isin(kept)])
            specs[name] = dict(study.config.get("strategy_specs", {})).get(name, {})
    config = {**studies[0].config, "n_trials": len(kept), "strategies": names, "strategy_specs": specs}
    return CalibrationStudy(
        pairs=pd.concat(pairs, ignore_index=True),
        trials=pd.concat(trials, ignore_index=True),
        config=config,
    )


@renamed_kwargs(directory="folder")
def read_study(folder: str | os.PathLike) -> CalibrationStudy:
    """Rebuild a study from a folder written by ``CalibrationReport.write(..., study=study)``.

    Lets a finished study be re-reported (another cap, new tables) without
    running its trials again.
    """
    from ..errors import InputError

    folder = Path(folder)
    manifest = folder / "manifest.json"
    state = json.loads(manifest.read_text(encoding="utf-8")).get("state") if manifest.is_file() else None
    if state not in (None, "complete"):
        raise InputError("the study in this folder did not finish (go on with --resume)", str(folder))
    needed = [folder / "pairs.csv.gz", folder / "trials.csv", folder / "report.json"]
    missing = [p.name for p in needed if not p.is_file()]
    if missing:
        raise InputError(f"not a calibration report folder with pairs (missing {missing})", str(folder))
    pairs = pd.read_csv(needed[0], dtype={"system_a": str, "system_b": str})
    trials = pd.read_csv(needed[1], keep_default_na=False, na_values=[""])
    trials = trials.drop(columns=[c for c in ("w", "w_capped") if c in trials.columns])
    if "warning_messages" in trials:
        trials["warning_messages"] = trials["warning_messages"].astype(object).fillna("")  # all empty: read as NaN floats
    config = json.loads(needed[2].read_text())["config"]
    return CalibrationStudy(pairs=pairs, trials=trials, config=config)

