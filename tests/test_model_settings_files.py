"""models/*.json, models/README.md and the model classes agree (issue 24, "one science per
name"): every setting a file names is a hyper-parameter of its class, a class built from its
defaults is the shipped configuration (``Fusion()`` is ``load_model("fusion")``), and
every ``name=value`` the README states in backquotes equals the file's value."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re

import numpy as np

from relimpute.relevance import Fusion, load_model
from relimpute.relevance.base import _REGISTRY
from relimpute.relevance.settings import MODELS_DIRS

MODELS = MODELS_DIRS[0]
#: models whose class defaults are not the shipped settings, and why (none)
NOT_DEFAULTS: dict[str, str] = {}


def _plain(value):
    """Tuples as lists, as JSON holds them."""
    return json.loads(json.dumps(value))


def _effective(name: str, params: dict) -> dict:
    """The hyper-parameters with a model's None-means-default spelled out."""
    params = _plain(params)
    if name == "bayes" and params.get("priors") is None:
        from relimpute.relevance.bayes import DEFAULT_PRIORS

        params["priors"] = dict(DEFAULT_PRIORS)
    return params


def _rows(readme: str) -> dict[str, str]:
    """Table rows of models/README.md by the file they describe."""
    rows = {}
    for line in readme.splitlines():
        match = re.match(r"\|\s*`([\w-]+\.json)`\s*\|", line)
        if match:
            rows[match.group(1)] = line
    return rows


def test_every_file_and_the_readme_agree_with_the_code():
    _REGISTRY.discover()
    files = sorted(MODELS.glob("*.json"))
    assert files, f"no settings files in {MODELS}"
    rows = _rows((MODELS / "README.md").read_text(encoding="utf-8"))
    assert set(rows) == {f.name for f in files}, "one README row per settings file"
    checked = 0
    for path in files:
        body = json.loads(path.read_text(encoding="utf-8"))
        name, params = body["model"], body["params"]
        assert path.stem == name and name in _REGISTRY
        cls = _REGISTRY[name]
        accepted = set(inspect.signature(cls.__init__).parameters) - {"self"}
        assert set(params) <= accepted, f"{path.name}: {sorted(set(params) - accepted)}"
        assert cls.__name__ in rows[path.name], f"{path.name}: the README names another class"
        shipped = _effective(name, load_model(name).get_params())
        if name not in NOT_DEFAULTS:
            assert _effective(name, cls().get_params()) == shipped, f"{name}: class defaults"
        for key, text in re.findall(r"`([\w.]+)=([^`]+)`", rows[path.name]):
            value = ast.literal_eval(text.replace("true", "True").replace("false", "False"))
            if "." in key:  # a module constant: `module.NAME=value`
                module, const = key.rsplit(".", 1)
                actual = getattr(importlib.import_module(f"relimpute.relevance.{module}"), const)
            else:
                assert key in params, f"README names {key} for {path.name}, the file does not"
                actual = params[key]
            assert _plain(actual) == value, f"{path.name}: README says {key}={text}, code {actual}"
            checked += 1
    assert checked >= 20  # the README states the settings, and they were read


def test_rank_fusion_defaults_are_the_shipped_model():
    """Same hyper-parameters, and the same answer on a campaign."""
    from relimpute.simulate import simulate_campaign

    assert _plain(Fusion().get_params()) == _plain(load_model("fusion").get_params())
    shallow = simulate_campaign(n_topics=4, n_systems=5, depth=30, rng=8).campaign.pooled(5)
    a = Fusion().fit_predict(shallow, rng=2)
    b = load_model("fusion").fit_predict(shallow, rng=2)
    assert a.n_draws == 100
    for pa, pb, da, db in zip(a.p, b.p, a.draws, b.draws):
        np.testing.assert_array_equal(pa, pb)
        np.testing.assert_array_equal(da, db)
    plug = Fusion.plug_in()
    assert plug.n_draws == 0 and plug.run_effect_sd == 0 and plug.weight_sd == 2.0
    assert Fusion.plug_in(n_draws=5).n_draws == 5

