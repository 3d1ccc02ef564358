"""One registry helper for every plug-in kind (issue 27, item 4)."""

from __future__ import annotations

import pytest

from relimpute._registry import Registry


class _Plugin:
    name = "fusion"


def test_register_get_and_names():
    reg = Registry("relevance model")
    assert reg.register(_Plugin) is _Plugin
    reg.register(len, name="bca")
    assert reg.get("fusion") is _Plugin and reg["bca"] is len
    assert reg.names() == ["bca", "fusion"] and "fusion" in reg and len(reg) == 2
    reg.register(_Plugin)  # the same item again is fine


def test_unknown_names_get_a_hint_and_the_list():
    reg = Registry("relevance model")
    reg.register(_Plugin)
    with pytest.raises(KeyError, match=r"unknown relevance model 'fusoin' \(did you mean 'fusion'\?\)"):
        reg.get("fusoin")
    with pytest.raises(KeyError, match="'Fusion' .did you mean 'fusion'"):
        reg.get("Fusion")
    with pytest.raises(KeyError, match=r"'zzz'; available: \['fusion'\]"):
        reg.get("zzz")
    values = Registry("interval method", error=ValueError)
    with pytest.raises(ValueError, match="unknown interval method"):
        values.get("x")


def test_a_name_is_taken_once_and_must_exist():
    reg = Registry("corrector", sort=False)
    reg.register(_Plugin)

    class Other:
        name = "fusion"

    with pytest.raises(ValueError, match="'fusion' is taken"):
        reg.register(Other)
    with pytest.raises(ValueError, match="has no name"):
        reg.register(object())


def test_every_plugin_kind_uses_the_helper():
    from relimpute.bias import base as bias
    from relimpute.calibration import strategies
    from relimpute.measures import _registry as measures
    from relimpute.precision import intervals
    from relimpute.relevance import base as relevance
    from relimpute.selection import base as selection

    kinds = {
        "measure": measures._REGISTRY,
        "relevance model": relevance._REGISTRY,
        "corrector": bias._REGISTRY,
        "selection strategy": selection._REGISTRY,
        "strategy": strategies._STRATEGIES,
        "interval method": intervals.METHODS,
    }
    for kind, registry in kinds.items():
        assert isinstance(registry, Registry) and registry.kind == kind and len(registry) >= 4


def test_no_colliding_public_names():
    """One ``get_strategy``, one ``run_study``, one ``ReducedPool`` in the public API."""
    import relimpute.bias as bias
    import relimpute.bias.pools as pools
    import relimpute.calibration as calibration
    import relimpute.selection as selection

    assert not hasattr(calibration, "get_strategy") and hasattr(selection, "get_strategy")
    assert not hasattr(bias, "run_study") and hasattr(calibration, "run_study")
    assert not hasattr(pools, "ReducedPool") and hasattr(bias, "LeaveOutPool")
    assert bias.get_corrector("reduced").__class__.__name__ == "ReducedPool"


def test_a_plugin_is_one_file_the_registry_discovers(tmp_path, monkeypatch):
    """A registry with ``discover=PACKAGE`` imports the package's public modules before it
    answers a name it lacks or lists names: a new plug-in needs no import elsewhere; a
    private module (``_name``) is not imported."""
    import sys

    package = tmp_path / "plugpkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from relimpute._registry import Registry\nREG = Registry('thing', discover='plugpkg')\n"
    )
    (package / "extra.py").write_text("from . import REG\nREG.register(len, name='extra')\n")
    (package / "_private.py").write_text("raise RuntimeError('private modules are not imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "plugpkg", raising=False)
    import plugpkg

    assert "plugpkg.extra" not in sys.modules  # nothing imported it yet
    assert plugpkg.REG.get("extra") is len
    assert plugpkg.REG.names() == ["extra"] and "plugpkg._private" not in sys.modules
    with pytest.raises(KeyError, match="available: \\['extra'\\]"):
        plugpkg.REG.get("missing")


def _module_name(cls) -> str:
    """The file (or package) a class is defined in, as a registry key would spell it."""
    return cls.__module__.split(".")[2].replace("_", "-")  # relimpute.relevance.<file>[.x]


def test_one_name_per_model_file_key_and_class_agree():
    """Every registered relevance model lives in the file (or package) named after its key,
    and its class is that key in CamelCase: one name per model (issue 27, item 4)."""
    from relimpute.relevance.base import _REGISTRY

    for key, cls in _REGISTRY.items():
        assert _module_name(cls) == key, (key, cls.__module__)
        assert cls.__name__.lower() == key.replace("-", "").lower(), (key, cls.__name__)
    assert {"fusion", "uniform", "nonrelevant", "rtc", "bayes", "fusion-llm"} <= set(_REGISTRY.names())


def test_no_two_public_plugin_classes_share_a_name():
    """No colliding names: the classes of models and selection strategies exported by the
    package are distinct (the RTC model and the RTC selection loop were both ``RTC``)."""
    import relimpute.relevance as relevance
    import relimpute.selection as selection

    models = {n for n in relevance.__all__ if isinstance(getattr(relevance, n), type)}
    selectors = {n for n in selection.__all__ if isinstance(getattr(selection, n), type)}
    assert not models & selectors, models & selectors
