"""Strategies of a calibration study: how judgments are gathered, and which model generalises them.

A strategy pairs a judgment-selection strategy of :mod:`relimpute.selection`
(run on the initial systems until confidence α) with a relevance model of
:mod:`relimpute.relevance` (fitted on the judgments gathered, then used to
estimate every document of all k runs). Carterette (2007, §4.2–4.3) compares:

``mtc``
    MTC selection with p = ½; the uniform prior generalises (§4.2, Algorithm 1).
``rtc``
    The RTC loop (MTC re-estimating p with the expert model every 10
    judgments); the expert model generalises (§3, §4.3 step 4). Both use the
    paper's model (``models/rtc.json``, the class defaults).
``bayes``
    The MTC judgments generalised by the Bayesian hierarchy. It judges
    exactly what ``mtc`` judges, so the paired comparison with ``mtc``
    isolates the model (and the study avoids refitting a PyMC model every 10
    judgments). It is fitted by ADVI; ``bayes-nuts`` fits by NUTS with one
    chain per trial (trials already run in parallel); ``bayes-mc`` fits by NUTS
    (the shipped ``models/bayes.json``: the default model's likelihood, its
    spreads learned) and takes its confidence from Monte Carlo over the
    posterior draws, so parameter uncertainty reaches P(ΔMAP > 0): the full
    posterior against ``fusion-mc``'s Laplace form of the same model.
    ``rtc+bayes`` gathers with RTC instead.
``fusion-mc``
    The MTC judgments generalised by the default rank-fusion model, with the
    confidence from Monte Carlo over its Laplace posterior draws (``mtc+fusion``
    is the same model's plug-in confidence).
``posterior``
    Judged by the RTC loop on the default model (refitted every 10
    judgments) until its posterior predictive confidence reaches α
    (:class:`relimpute.selection.PosteriorSelection`), then generalised and
    scored as ``fusion-mc``.
``llm``
    Judged by the RTC loop on ``fusion-llm`` where the labels leave the comparison
    least sure (:class:`relimpute.selection.LLMSelection`), stopping on its posterior
    predictive confidence; generalised and scored as ``fusion-mc`` with the labels'
    model (without label sources it is the default model).
``ip``
    Incremental pooling with as many judgments as ``mtc`` made in the same
    trial; unjudged documents are nonrelevant (§4.2).
``DESIGN-ESTIMATOR`` (``stratified-ht``, ``stratified-ppi++``, ``pps-ht``, ``pps-ppi++``, ``guided-ht``, ``guided-ppi++``)
    A random sample of the trial's pool with as many judgments as ``mtc`` made,
    drawn with ``judge --design``'s design and read with ``evaluate --estimator``'s
    estimator (``ppi++``: the default model, cross-fitted on the sample, as the
    control variate); P(ΔMAP > 0) is the estimator's normal approximation
    (:mod:`relimpute.calibration.survey`).

New strategies plug in with :func:`register_calibration_strategy`, and any
``"SELECTOR+MODEL"`` name (e.g. ``"mtc+rtc"``) is understood without
registration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._deprecation import deprecated_alias, renamed_kwargs
from .._registry import Registry
from ..relevance import RelevanceModel, get_model


@renamed_kwargs(monte_carlo_draws="n_draws")
@dataclass(frozen=True, slots=True)
class Strategy:
    """A judgment-selection strategy plus the relevance model that generalises its judgments.

    Attributes
    ----------
    name
        The name the study reports.
    selector
        A selection strategy registered in :mod:`relimpute.selection`.
    model
        A relevance model registered in :mod:`relimpute.relevance`, or an
        unfitted :class:`~relimpute.relevance.RelevanceModel` (cloned from its
        hyper-parameters for every trial; ``model_params`` then ignored).
    selector_params, model_params
        Keyword arguments for the selector and the model.
    budget_from
        When set, the strategy is given exactly the number of judgments that
        strategy ``budget_from`` made in the same trial and is not stopped at α
        (IP "with the same number of judgments as MTC", Carterette 2007 §5).
    n_draws
        0 (default): P(ΔMAP > 0) from the engine's exact moments and the
        normal approximation (Carterette 2007 Eq. 1). A positive number: from
        that many Monte Carlo draws, which use the model's joint posterior
        draws of p when it hands them over, so parameter uncertainty widens
        ΔMAP (docs/math/map-difference.md). ``monte_carlo_draws`` until 0.3.0.
    design, estimator
        A survey strategy (:mod:`relimpute.calibration.survey`): instead of a selector,
        judge a sample drawn with this design (``stratified``, ``pps``, ``guided``) and
        read it with this estimator (``ht``, ``ppi++``); ``model`` is then the control
        variate (and the guided design's model), ``selector`` the design's name.
    """

    name: str
    selector: str
    model: str | RelevanceModel
    selector_params: Mapping[str, Any] = field(default_factory=dict)
    model_params: Mapping[str, Any] = field(default_factory=dict)
    budget_from: str | None = None
    n_draws: int = 0
    design: str | None = None
    estimator: str | None = None

    def __post_init__(self) -> None:
        if self.n_draws != 0 and self.n_draws < 2:
            raise ValueError(f"n_draws must be 0 or at least 2, got {self.n_draws}")
        if self.design is not None or self.estimator is not None:
            from .survey import SURVEY_DESIGNS, SURVEY_ESTIMATORS

            if self.design not in SURVEY_DESIGNS or self.estimator not in SURVEY_ESTIMATORS:
                raise ValueError(f"a survey strategy needs a design ({', '.join(SURVEY_DESIGNS)}) "
                                 f"and an estimator ({', '.join(SURVEY_ESTIMATORS)}), got "
                                 f"{self.design!r} and {self.estimator!r}")
            if self.budget_from is None:
                raise ValueError("a survey strategy spends another strategy's judgments: give "
                                 "budget_from (e.g. 'mtc')")


    def make_model(self) -> RelevanceModel:
        """A fresh, unfitted instance of the strategy's relevance model.

        A model given by name (or settings file) takes its shipped settings
        (:func:`relimpute.relevance.load_settings`: ``models/<name>.json``, else
        the class defaults) with ``model_params`` on top.
        """
        if isinstance(self.model, RelevanceModel):
            return type(self.model)(**self.model.get_params())
        settings = _settings(self.model)
        return get_model(settings.model, **{**settings.params, **self.model_params})

    def selector_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of the selector.

        A selector that refits a relevance model itself (the RTC loop: it has
        ``model`` and ``model_params`` hyper-parameters) gets that model's
        shipped settings unless ``selector_params`` gives ``model_params``, so
        the loop and the generalisation use the same model.
        """
        from ..selection import get_strategy as get_selector

        kwargs = dict(self.selector_params)
        if self.design is not None:  # a survey strategy draws a sample: no selector
            return kwargs
        default = get_selector(self.selector)
        if hasattr(default, "model_params") and "model_params" not in kwargs:
            settings = _settings(kwargs.get("model", default.model))
            own = _settings(self.model) if isinstance(self.model, str) else None
            if "model" not in kwargs and own is not None and own.model == settings.model:
                # the strategy's own model (held-out settings included) and its parameters
                settings = own
                kwargs["model_params"] = {**settings.params, **self.model_params}
            else:
                kwargs["model_params"] = dict(settings.params)
            kwargs["model"] = settings.model
        return kwargs


def _settings(name: str):
    from ..relevance import load_settings

    return load_settings(name)


def with_settings_from(strategies: Sequence[Strategy], folder: str | os.PathLike) -> tuple[Strategy, ...]:
    """The strategies with every model named ``NAME`` that has a ``folder/NAME.json``
    taking its settings from that file instead of ``models/`` (held-out settings: a
    study scored on a collection uses settings chosen without it)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"no such settings folder: {folder}")
    from ..relevance.settings import settings_in

    return tuple(
        replace(s, model=settings_in(folder, s.model)) if isinstance(s.model, str) else s
        for s in strategies
    )


_STRATEGIES: Registry[Strategy] = Registry("strategy", discover="relimpute.calibration")


def register_calibration_strategy(strategy: Strategy) -> Strategy:
    """Make ``strategy`` available to studies by its name."""
    if not strategy.name or "," in strategy.name:
        raise ValueError(f"a strategy needs a name without commas, got {strategy.name!r}")
    return _STRATEGIES.register(strategy)


#: the name register_calibration_strategy had until 0.3.0 (deprecated)
register_strategy = deprecated_alias(register_calibration_strategy, "register_strategy")


def available_calibration_strategies() -> list[str]:
    return _STRATEGIES.names()


def get_calibration_strategy(name: str | Strategy) -> Strategy:
    """A registered strategy, or ``"SELECTOR+MODEL"`` built on the fly."""
    if isinstance(name, Strategy):
        return name
    if name in _STRATEGIES:
        return _STRATEGIES[name]
    if name.count("+") == 1 and all(name.split("+")):
        selector, model = name.split("+")
        return Strategy(name=name, selector=selector, model=model)
    raise _STRATEGIES.unknown(name, " or 'SELECTOR+MODEL'")


def resolve_strategies(names: str | list[str | Strategy]) -> tuple[Strategy, ...]:
    """Strategies from a comma-separated string or a list, ordered so budgets come first.

    A strategy whose ``budget_from`` names another one runs after it; a
    ``budget_from`` not among the requested strategies is an error.
    """
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    strategies = [get_calibration_strategy(n) for n in names]
    if not strategies:
        raise ValueError("no strategies given")
    seen = [s.name for s in strategies]
    if len(set(seen)) != len(seen):
        raise ValueError(f"strategies repeated: {seen}")
    for s in strategies:
        if s.budget_from is not None and s.budget_from not in seen:
            raise ValueError(
                f"strategy {s.name!r} takes its budget from {s.budget_from!r}; add it to the study"
            )
    return tuple(sorted(strategies, key=lambda s: s.budget_from is not None))


register_calibration_strategy(Strategy("mtc", selector="mtc", model="uniform", model_params={"prior": 0.5}))
register_calibration_strategy(Strategy("rtc", selector="rtc", model="rtc"))
register_calibration_strategy(
    Strategy("bayes", selector="mtc", model="bayes", model_params={"method": "advi", "return_draws": False})
)
register_calibration_strategy(Strategy("bayes-nuts", selector="mtc", model="bayes", model_params={"chains": 1}))
register_calibration_strategy(
    Strategy(
        "bayes-mc",
        selector="mtc",
        model="bayes",
        model_params={"return_draws": True, "n_draws": 200},
        n_draws=4000,
    )
)
register_calibration_strategy(Strategy("ip", selector="ip", model="nonrelevant", budget_from="mtc"))
#: the default answer: the default model, confidence by Monte Carlo over its posterior draws
_DEFAULT_ANSWER = {"model": "fusion", "model_params": {"n_draws": 200}, "n_draws": 4000}
register_calibration_strategy(Strategy("fusion-mc", selector="mtc", **_DEFAULT_ANSWER))
register_calibration_strategy(Strategy("posterior", selector="posterior", **_DEFAULT_ANSWER))
for _design in ("stratified", "pps", "guided"):
    for _estimator in ("ht", "ppi++"):
        _model = "nonrelevant" if _estimator == "ht" and _design != "guided" else "fusion"
        register_calibration_strategy(Strategy(f"{_design}-{_estimator}", selector=_design,
                                               model=_model, budget_from="mtc", design=_design,
                                               estimator=_estimator))
register_calibration_strategy(
    Strategy("llm", selector="llm", model="fusion-llm", model_params={"fusion": {"n_draws": 200}},
             n_draws=_DEFAULT_ANSWER["n_draws"])  # fmt: skip
)
