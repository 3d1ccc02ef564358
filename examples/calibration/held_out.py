"""Fusion's settings learned across collections, and the held-out settings each study uses.

Run from the repository root (data in ``../shared/data``)::

    python examples/calibration/held_out.py

1. The prior mean of fusion's feature weights (``weight_mean``, per raw feature unit):
   the model with the shipped settings (but a weakly informative N(0, 2²) prior on the
   weights) is fitted on each development collection's official qrels and its
   posterior-mode weights are put back on the raw features
   (``choices/weights_by_collection.csv``, not committed; condensed in
   ``models/provenance/weight_mean.md``). ``models/fusion.json`` ships their mean.
2. For each collection ``C``, ``held_out/C/fusion.json``: the shipped settings with every
   setting chosen from data replaced by the one chosen *without* ``C``: ``weight_mean``
   the mean of the other two collections' weights, ``run_effect_sd``, ``beyond_decay``
   and ``weight_sd`` their leave-one-collection-out choices (``models/provenance/``).
   ``run.sh`` scores each collection with its own folder (``relimpute calibrate --settings-dir``),
   so the studies' numbers are held-out numbers.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from choose_setting import COLLECTIONS, DATA, SHIPPED  # the script beside this one
from relimpute import Campaign
from relimpute.relevance.fusion import FEATURE_NAMES, Fusion

HERE = Path(__file__).resolve().parent
#: the value chosen for each collection on the other two (models/provenance/<setting>.md)
LOCO_CHOICES = {
    "run_effect_sd": {"dl19": 3.0, "dl21": 4.0, "trec8": 3.0},
    "beyond_decay": {"dl19": 0.6, "dl21": 0.3, "trec8": 0.6},
    "weight_sd": {"dl19": 0.25, "dl21": 0.5, "trec8": 0.25},
    "beyond_run_sd": {"dl19": 1.0, "dl21": 1.0, "trec8": 1.0},
    "beyond_decay_sd": {"dl19": 1.25, "dl21": 2.0, "trec8": 1.25},  # choose_below_pool.py
}

#: the prior on the weights when fitting them on a collection's official qrels
FIT_PRIOR = {"weight_mean": (0.0, 0.0, 0.0), "weight_sd": 2.0}


def fitted_weights() -> pd.DataFrame:
    """Posterior-mode weights per raw feature unit, one row per collection."""
    rows = []
    for name, (folder, threshold) in COLLECTIONS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            campaign = Campaign.from_files(
                DATA / folder / "qrels.txt", DATA / folder / "runs", rel_threshold=threshold
            )
        # a weakly informative N(0, 2²) prior on the weights, whatever models/ ships
        model = Fusion(**{**SHIPPED, **FIT_PRIOR, "n_draws": 0})
        model.fit(campaign, rng=0)
        raw = model.coef_[: len(FEATURE_NAMES)] / model.feature_scale_
        rows.append({"collection": name, **dict(zip(FEATURE_NAMES, raw)), "n_fit": model.n_fit_})
    return pd.DataFrame(rows)


def held_out_settings(weights: pd.DataFrame, name: str) -> dict:
    others = weights[weights["collection"] != name]
    params = dict(SHIPPED)
    params["weight_mean"] = [round(float(v), 3) for v in others[list(FEATURE_NAMES)].mean()]
    for param, choice in LOCO_CHOICES.items():
        params[param] = choice[name]
    fitted_on = "+".join(others["collection"])
    return {
        "model": "fusion",
        "params": params,
        "provenance": {
            "data": f"chosen without {name}: weight_mean fitted on {fitted_on}; "
            + "; ".join(f"{p} chosen on {fitted_on}" for p in LOCO_CHOICES),
            "command": "python examples/calibration/held_out.py",
            "how_chosen": "models/fusion.json with every data-chosen setting replaced by its "
            f"leave-one-collection-out value for {name} (examples/calibration/held_out.py)",
        },
    }


def main() -> int:
    weights = fitted_weights()
    (HERE / "choices").mkdir(exist_ok=True)
    weights.to_csv(HERE / "choices" / "weights_by_collection.csv", index=False)
    print(weights.round(3).to_string(index=False))
    print("mean over the three:", weights[list(FEATURE_NAMES)].mean().round(3).tolist())
    for name in COLLECTIONS:
        folder = HERE / "held_out" / name
        folder.mkdir(parents=True, exist_ok=True)
        body = held_out_settings(weights, name)
        (folder / "fusion.json").write_text(json.dumps(body, indent=2) + "\n")
        print(name, body["params"]["weight_mean"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
