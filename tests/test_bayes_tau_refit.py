"""The DL 2019 τ diagnosis's tables (examples/bayes_calibration/tau_summary.py, tau_refit.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from relimpute.calibration.metrics import kendall_tau

FOLDER = Path(__file__).resolve().parents[1] / "examples" / "bayes_calibration"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, FOLDER / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(truth, est, key="study"):
    text = lambda v: ",".join(f"{x:.6f}" for x in v)  # noqa: E731
    return pd.Series({"map_true": text(truth), f"map_{key}": text(est)})


@pytest.mark.parametrize("seed", range(5))
def test_discordant_pairs_add_up_to_kendall_tau(seed):
    """Without ties τ = 1 − 4 D / (n (n − 1)): the split into pairs with an initial run and
    the rest counts every discordant pair once."""
    summary = _load("tau_summary")
    rng = np.random.default_rng(seed)
    truth, est = rng.random(10), rng.random(10)
    split = summary.discordant(_row(truth, est), "study")
    assert split["initial"] + split["other"] == pytest.approx((1 - kendall_tau(est, truth)) * 45 / 2)


def test_discordant_pairs_with_an_initial_run():
    """Swapping an initial run (first two) with another run is one such pair; the initial pair
    itself and two other runs swapped count as the rest."""
    summary = _load("tau_summary")
    truth = np.arange(10, 0, -1.0)
    est = truth.copy()
    est[[1, 2]] = est[[2, 1]]
    est[[5, 6]] = est[[6, 5]]  # two other runs
    est[[0, 1]] = est[[1, 0]]  # est 8, 10, 9, ...: (0, 1) the initial pair, (0, 2) initial-other
    assert summary.discordant(_row(truth, est), "study") == {"initial": 1, "other": 2}


def test_trial_range():
    assert _load("tau_refit").trial_range("3,7,10-12") == [3, 7, 10, 11, 12]
