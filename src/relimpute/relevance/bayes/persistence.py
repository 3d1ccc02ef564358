"""Persistence of the Bayesian hierarchy: the posterior as netCDF, with the configuration and its hash."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .design import FORMAT_VERSION, _import_arviz
from .inference import FitDiagnostics


def config_hash(config_json: str) -> str:
    """SHA-256 of the configuration a saved model stores (detects an altered file)."""
    return hashlib.sha256(config_json.encode()).hexdigest()


def save(model, path: str | Path) -> Path:
    """Write ``model``'s posterior as netCDF with the configuration and its hash in the attrs."""
    if not getattr(model, "fitted_", False):
        raise RuntimeError("Bayes is not fitted: nothing to save")
    config_json = json.dumps(model.config(), sort_keys=True)
    idata = model.idata_.copy()
    idata.posterior.attrs.update(
        {
            "relimpute_config": config_json,
            "relimpute_config_hash": config_hash(config_json),
            "relimpute_fit_set": json.dumps(_fit_state(model.fusion_)),
            "relimpute_diagnostics": json.dumps(asdict(model.diagnostics_)),
        }
    )
    path = Path(path)
    idata.to_netcdf(str(path))
    return path


def load(cls, path: str | Path):
    """Restore a ``cls`` model written by :func:`save`, checking its configuration and hash."""
    az = _import_arviz()
    idata = az.from_netcdf(str(path))
    idata.load()
    attrs = dict(idata.posterior.attrs)
    if "relimpute_config" not in attrs:
        raise ValueError(f"{path}: not a saved relimpute 'bayes' model (no configuration)")
    config_json = attrs["relimpute_config"]
    if config_hash(config_json) != attrs.get("relimpute_config_hash"):
        raise ValueError(f"{path}: configuration does not match its hash (file altered?)")
    config = json.loads(config_json)
    if config.get("model") != cls.name or config.get("format") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: saved model {config.get('model')!r} format {config.get('format')} "
            f"is not {cls.name!r} format {FORMAT_VERSION}"
        )
    model = cls(**config["params"])
    fusion = model._posterior_model()
    state = json.loads(attrs["relimpute_fit_set"])
    for name in ("feature_mean_", "feature_scale_"):
        setattr(fusion, name, np.asarray(state[name], dtype=float))
    fusion.systems_, fusion.query_ids_ = tuple(state["systems_"]), tuple(state["query_ids_"])
    fusion.horizons_, fusion.n_fit_ = state["horizons_"], state["n_fit_"]
    fusion.draw_seed_ = state["draw_seed_"]
    # the grade scale (binary: two levels, no cut-point) of the default model's ordinal fit
    fusion.grade_levels_ = np.asarray(state.get("grade_levels_", [0, 1]), dtype=np.int64)
    fusion.anchor_ = int(state.get("anchor_", 1))
    fusion.cuts_ = np.asarray(state.get("cuts_", [0.0]), dtype=float)
    theta = idata.posterior["theta"].to_numpy()
    fusion.set_draws(theta.reshape(-1, theta.shape[-1]))
    fusion._engine = None
    fusion.fitted_ = True
    diag = json.loads(attrs["relimpute_diagnostics"])
    diag["problems"] = tuple(diag["problems"])
    for key in [k for k in idata.posterior.attrs if k.startswith("relimpute_")]:
        del idata.posterior.attrs[key]
    model.idata_, model.fusion_ = idata, fusion
    model.diagnostics_ = FitDiagnostics(**diag)
    model.fitted_ = True
    return model


def _fit_state(fusion) -> dict:
    """What the default model learned beside ``θ`` (the fit set's standardisation, pool
    depths, the topics and runs of ``θ``, the seed of its draws), JSON-ready."""
    return {
        "feature_mean_": fusion.feature_mean_.tolist(),
        "feature_scale_": fusion.feature_scale_.tolist(),
        "systems_": list(fusion.systems_),
        "query_ids_": list(fusion.query_ids_),
        "horizons_": {q: int(k) for q, k in fusion.horizons_.items()},
        "n_fit_": int(fusion.n_fit_),
        "draw_seed_": int(fusion.draw_seed_),
        "grade_levels_": np.asarray(fusion.grade_levels_).tolist(),
        "anchor_": int(fusion.anchor_),
        "cuts_": np.asarray(fusion.cuts_, dtype=float).tolist(),
    }
