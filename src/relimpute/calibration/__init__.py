"""Calibration studies: is a confidence of 75% right 75% of the time? (Carterette 2007, §4.3–4.4).

Layers: :mod:`.metrics` (bins, the bookmaker W, ECE, Brier, log loss, τ on
plain arrays), :mod:`.paired` (paired tests between strategies),
:mod:`.strategies` (selector + relevance model, by name), :mod:`.trials`
(the trial protocol), :mod:`.trial_study` (the trials as a study on
:func:`relimpute.studies.run`: :func:`run_study`), :mod:`.study` (its results), :mod:`.report` (Tables 2–4,
files, terminal summary) and :mod:`.plots` (the reliability diagram).
"""

from .metrics import (
    BIN_EDGES,
    W_CAP,
    bin_table,
    bookmaker_terms,
    bookmaker_w,
    brier_score,
    cap_confidence,
    expected_calibration_error,
    kendall_tau,
    orient,
)
from .paired import PairedTest, paired_tests
from .report import CalibrationReport
from .strategies import (
    Strategy,
    available_calibration_strategies,
    get_calibration_strategy,
    register_calibration_strategy,
    register_strategy,  # deprecated: register_calibration_strategy
)
from .study import CalibrationStudy, combine_studies, read_study
from .trial_study import CalibrationTrials, run_study
from .trials import (
    TrialSpec,
    run_similarity,
    run_trial,
    trial_specs,
    true_map,
)

__all__ = [
    "BIN_EDGES",
    "W_CAP",
    "CalibrationReport",
    "CalibrationStudy",
    "CalibrationTrials",
    "PairedTest",
    "Strategy",
    "TrialSpec",
    "available_calibration_strategies",
    "bin_table",
    "bookmaker_terms",
    "bookmaker_w",
    "brier_score",
    "cap_confidence",
    "combine_studies",
    "expected_calibration_error",
    "get_calibration_strategy",
    "kendall_tau",
    "orient",
    "paired_tests",
    "read_study",
    "register_calibration_strategy",
    "run_similarity",
    "run_study",
    "run_trial",
    "trial_specs",
    "true_map",
]
