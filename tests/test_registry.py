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
