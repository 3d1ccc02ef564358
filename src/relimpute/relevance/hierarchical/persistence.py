"""Persistence of the Bayesian hierarchy: the posterior as netCDF, with the configuration and its hash."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from .design import FORMAT_VERSION, _import_arviz
from .inference import FitDiagnostics


def config_hash(config_json: str) -> str:
    """SHA-256 of the configuration a saved model stores (detects an altered file)."""
    return hashlib.sha256(config_json.encode()).hexdigest()


def save(model, path: str | Path) -> Path:
    """Write ``model``'s posterior as netCDF with the configuration and its hash in the attrs."""
    if not getattr(model, "fitted_", False):
        raise RuntimeError("BayesianHierarchy is not fitted: nothing to save")
    config_json = json.dumps(model.config(), sort_keys=True)
    idata = model.idata_.copy()
    idata.posterior.attrs.update(
        {
            "relimpute_config": config_json,
            "relimpute_config_hash": config_hash(config_json),
            "relimpute_systems": json.dumps(model.systems_),
            "relimpute_topics": json.dumps(model.topics_),
            "relimpute_predict_seed": str(model.predict_seed_),
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
    # saved before delta_pooling existed: per-system δ_j
    model = cls(**{"delta_pooling": "partial", **config["params"]})
    systems = tuple(json.loads(attrs["relimpute_systems"]))
    topics = tuple(json.loads(attrs["relimpute_topics"]))
    post = idata.posterior
    if post.sizes.get("system") != len(systems) or post.sizes.get("topic") != len(topics):
        raise ValueError(f"{path}: posterior dimensions do not match the saved systems/topics")
    diag = json.loads(attrs["relimpute_diagnostics"])
    diag["problems"] = tuple(diag["problems"])
    for key in [k for k in post.attrs if k.startswith("relimpute_")]:
        del post.attrs[key]
    model._set_state(
        idata=idata,
        systems=systems,
        topics=topics,
        diagnostics=FitDiagnostics(**diag),
        predict_seed=int(attrs["relimpute_predict_seed"]),
    )
    model.fitted_ = True
    return model
