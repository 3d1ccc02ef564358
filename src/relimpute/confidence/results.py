"""Frozen result objects of the confidence engine: per-system scores and pairwise comparisons.

Conventions (used everywhere in relimpute): ΔMAP = MAP_a - MAP_b and
``p_a_better = P(ΔMAP > 0)``. Carterette 2007's confidence P(ΔMAP < 0) is
``1 - p_a_better`` (:attr:`Comparison.p_delta_negative`). Under the normal
approximation (Carterette 2007 §2.1, Eq. 1) ``p_a_better = Φ(E / √Var)``;
when Var = 0 it is 1, 0 or ½ by the sign of E. From Monte Carlo draws it is
the share of draws with ΔMAP > 0, ties counting ½.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .._display import short_repr
from .._normal import normal_cdf
from ..stats import z_value
from .bounds import bound_standard_errors, pair_differences, rounded_bounds

if TYPE_CHECKING:  # the frames are made on demand: compare prints without pandas
    import pandas as pd


class ConfidenceInterval(NamedTuple):
    """Lower and upper bounds (arrays), as scipy.stats results name them."""

    low: np.ndarray
    high: np.ndarray


def prob_positive(mean, var) -> np.ndarray:
    """P(X > 0) for X ~ Normal(mean, var); 1, 0 or ½ by the sign of the mean when var = 0."""
    mean = np.asarray(mean, dtype=float)
    var = np.asarray(var, dtype=float)
    sd = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, mean / np.where(sd > 0, sd, 1.0), 0.0)
    return np.where(sd > 0, normal_cdf(z), 0.5 * (1.0 + np.sign(mean)))


def _check_level(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must lie in (0, 1), got {level}")
    return float(level)


def _interval(mean, var, draws, level: float, axis: int = 0) -> ConfidenceInterval:
    """Normal interval E ± z·sd, or the percentile interval of the draws (along ``axis``)
    when given."""
    level = _check_level(level)
    if draws is not None:
        low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2], axis=axis)
        return ConfidenceInterval(low, high)
    half = z_value(level) * np.sqrt(np.maximum(var, 0.0))
    return ConfidenceInterval(mean - half, mean + half)


#: what ``SystemScores.sources`` adds when the draws carry the model's parameter uncertainty
PARAMETERS = "model parameters (posterior draws)"


@dataclass(frozen=True, slots=True, eq=False)
class SystemScores:
    """Distribution of a measure per system and topic, and of its mean over topics.

    Field names say AP/MAP; for another ``measure`` read them as that measure
    and its mean. A topic a system retrieves nothing for scores 0 with
    variance 0 and counts in the mean (trec_eval ``-c``).

    Attributes
    ----------
    systems, query_ids
        Row and column labels.
    e_ap, var_ap
        ``(S, T)`` mean and variance per system and topic.
    e_map, var_map
        ``(S,)`` mean and variance of the mean over topics (Carterette 2007 Eq. 1;
        from the draws for Monte Carlo, so joint draws across topics count).
    measure, method, ratio
        What was computed: ``method`` is ``"normal"`` (exact moments) or
        ``"monte carlo"``; ``ratio`` the AP ratio treatment (None when unused).
    draws
        ``(B, S)`` per-draw mean over topics (Monte Carlo only), else None.
    sources
        The uncertainty the distributions carry: ``"unjudged documents"`` (topics
        fixed; the probabilities of relevance taken as known), with ``"topics + "``
        in front for a topic bootstrap with a relevance draw inside
        (:mod:`relimpute.confidence.topic_bootstrap`), and with
        :data:`PARAMETERS` behind when Monte Carlo drew the model's posterior, so
        the model's own parameter uncertainty is in the answer. Without it the
        answer is narrower than the posterior's; ``str()`` and ``repr()`` say so.
    estimand
        Which score the distributions are of: ``"complete"``, ``"pool"`` or
        ``"qrels"`` (:mod:`relimpute.confidence.estimands`).
    clusters
        Monte Carlo over posterior draws: how many (draw ``d`` used posterior draw
        ``d mod clusters``, so draws of one cluster are not independent: the Monte Carlo
        error of the bounds counts them as one, :meth:`Comparison.bound_errors`); None when
        every draw is independent, or without draws.
    """

    systems: tuple[str, ...]
    query_ids: tuple[str, ...]
    e_ap: np.ndarray
    var_ap: np.ndarray
    e_map: np.ndarray
    var_map: np.ndarray
    measure: str = "AP"
    method: str = "normal"
    ratio: str | None = "constant"
    draws: np.ndarray | None = None
    sources: str = "unjudged documents"
    estimand: str = "complete"
    clusters: int | None = None

    @property
    def sd_map(self) -> np.ndarray:
        return np.sqrt(self.var_map)

    def ranking(self) -> tuple[str, ...]:
        """Systems ordered by E[MAP], best first (the expected ranking, Carterette 2007 §4.3)."""
        order = np.argsort(-self.e_map, kind="stable")
        return tuple(self.systems[i] for i in order)

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Interval for each system's MAP: normal, or percentile of the Monte Carlo draws."""
        return _interval(self.e_map, self.var_map, self.draws, level)

    def to_frame(self, level: float = 0.95) -> pd.DataFrame:
        """One row per system: ``system, e_map, sd_map, ci_low, ci_high, rank``."""
        import pandas as pd

        ci = self.confidence_interval(level)
        frame = pd.DataFrame(
            {
                "system": list(self.systems),
                "e_map": self.e_map,
                "sd_map": self.sd_map,
                "ci_low": ci.low,
                "ci_high": ci.high,
            }
        )
        frame["rank"] = frame["e_map"].rank(ascending=False, method="min").astype(int)
        return frame.sort_values(["rank", "system"], kind="stable").reset_index(drop=True)

    def topic_frame(self) -> pd.DataFrame:
        """One row per system and topic: ``system, query_id, e_ap, sd_ap``."""
        import pandas as pd

        n_sys, n_top = self.e_ap.shape
        return pd.DataFrame(
            {
                "system": np.repeat(np.array(self.systems, dtype=object), n_top),
                "query_id": np.tile(np.array(self.query_ids, dtype=object), n_sys),
                "e_ap": self.e_ap.ravel(),
                "sd_ap": np.sqrt(self.var_ap).ravel(),
            }
        )

    def __repr__(self) -> str:
        return short_repr(
            self,
            f"measure={self.measure!r}",
            f"{len(self.systems)} systems",
            f"{len(self.query_ids)} topics",
            *self._named(),
            self._how(),
        )

    def __str__(self) -> str:
        head = (
            f"Expected {self.measure} of {len(self.systems)} systems over "
            f"{len(self.query_ids)} topics ({self._estimand()})"
        )
        return (
            head + "\n" + self.to_frame().to_string(index=False, float_format=lambda x: f"{x:.4f}")
        )

    def _how(self) -> str:
        if self.method == "monte carlo":
            how = f"Monte Carlo, {0 if self.draws is None else len(self.draws)} draws"
        else:
            how = "exact moments" + (f", {self.ratio} ratio" if self.ratio else "")
        known = "" if PARAMETERS in self.sources else "; the model's parameters taken as known"
        return f"{how}; uncertainty: {self.sources}{known}"

    def _estimand(self) -> str:
        """The estimand (:mod:`relimpute.confidence.estimands`) and how, for the heads."""
        if self.estimand == "qrels":
            return "estimand qrels: trec_eval on the qrels given, no uncertainty"
        return f"estimand {self.estimand}; {self._how()}"

    def _named(self) -> tuple[str, ...]:
        """What ``repr`` adds: the estimand when it is not the default ``complete``."""
        return () if self.estimand == "complete" else (f"estimand={self.estimand!r}",)


@dataclass(frozen=True, slots=True, eq=False)
class Comparison:
    """Pairwise comparisons of systems: the distribution of ΔMAP = MAP_a - MAP_b.

    Attributes
    ----------
    pairs
        ``(P, 2)`` row indices into ``scores.systems`` of (a, b).
    e_delta_map, var_delta_map
        ``(P,)`` mean and variance of ΔMAP.
    p_a_better
        ``(P,)`` P(ΔMAP > 0) (see the module docstring for ties and Var = 0).
    scores
        The per-system :class:`SystemScores` of the same run set.
    e_delta_ap, var_delta_ap
        ``(P, T)`` per-topic moments of ΔAP (exact path), or None (Monte Carlo).
    """

    pairs: np.ndarray
    e_delta_map: np.ndarray
    var_delta_map: np.ndarray
    p_a_better: np.ndarray
    scores: SystemScores
    e_delta_ap: np.ndarray | None = None
    var_delta_ap: np.ndarray | None = None

    @property
    def systems(self) -> tuple[str, ...]:
        return self.scores.systems

    @property
    def system_a(self) -> tuple[str, ...]:
        return tuple(self.systems[i] for i in self.pairs[:, 0])

    @property
    def system_b(self) -> tuple[str, ...]:
        return tuple(self.systems[i] for i in self.pairs[:, 1])

    @property
    def sd_delta_map(self) -> np.ndarray:
        return np.sqrt(self.var_delta_map)

    @property
    def p_delta_negative(self) -> np.ndarray:
        """Carterette 2007's confidence P(ΔMAP < 0) = 1 - p_a_better."""
        return 1.0 - self.p_a_better

    def probability(self, a: str, b: str) -> float:
        """P(MAP_a > MAP_b) for two compared systems given by name, in either order."""
        index = {name: i for i, name in enumerate(self.systems)}
        if a not in index or b not in index:
            raise KeyError(f"unknown system {a if a not in index else b!r}")
        ia, ib = index[a], index[b]
        hit = np.flatnonzero((self.pairs[:, 0] == ia) & (self.pairs[:, 1] == ib))
        if len(hit):
            return float(self.p_a_better[hit[0]])
        hit = np.flatnonzero((self.pairs[:, 0] == ib) & (self.pairs[:, 1] == ia))
        if len(hit):
            return float(1.0 - self.p_a_better[hit[0]])
        raise KeyError(f"the pair ({a!r}, {b!r}) was not compared")

    def _delta_draws(self) -> np.ndarray | None:
        """``(P, B)`` each pair's draws of ΔMAP (a pair's in one row), or None."""
        draws = self.scores.draws
        if draws is None:
            return None
        return pair_differences(np.ascontiguousarray(draws.T), self.pairs)

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Interval for each ΔMAP: E ± z·sd (normal), or percentiles of the Monte Carlo draws."""
        return _interval(self.e_delta_map, self.var_delta_map, self._delta_draws(), level, axis=1)

    def bound_errors(self, level: float = 0.95) -> ConfidenceInterval | None:
        """Monte Carlo standard error of each pair's interval bounds at ``level``
        (:func:`~relimpute.confidence.bounds.bound_standard_errors`); None for exact moments."""
        draws = self.scores.draws
        if draws is None:
            return None
        clusters = self.scores.clusters or len(draws)
        low, high = bound_standard_errors(draws, self.pairs, _check_level(level), clusters)
        return ConfidenceInterval(low, high)

    def columns(
        self, level: float = 0.95, *, rounded: bool = False,
        errors: ConfidenceInterval | None = None,
    ) -> dict:  # fmt: skip
        """:meth:`to_frame`'s columns, by name: the systems' names as lists, the numbers as
        arrays (the rounded bounds as text), for writers that need no frame."""
        ci = self.confidence_interval(level)
        columns = {
            "system_a": list(self.system_a),
            "system_b": list(self.system_b),
            "e_delta_map": self.e_delta_map,
            "sd_delta_map": self.sd_delta_map,
            "p_a_better": self.p_a_better,
            "ci_low": ci.low,
            "ci_high": ci.high,
        }
        if rounded and self.scores.draws is not None:
            errors = errors if errors is not None else self.bound_errors(level)
            columns["ci_low"] = rounded_bounds(np.asarray(ci.low), errors.low)
            columns["ci_high"] = rounded_bounds(np.asarray(ci.high), errors.high)
        return columns

    def to_frame(
        self, level: float = 0.95, *, rounded: bool = False,
        errors: ConfidenceInterval | None = None,
    ) -> pd.DataFrame:  # fmt: skip
        """``system_a, system_b, e_delta_map, sd_delta_map, p_a_better, ci_low, ci_high``.

        ``rounded``: Monte Carlo bounds as text, each at the decimal of its standard error
        (:meth:`bound_errors`, or ``errors`` when already computed; the last digit shown is
        uncertain by about one unit; :func:`~relimpute.confidence.bounds.bound_decimals`), as
        ``relimpute compare`` prints them; exact bounds keep every digit.
        """
        import pandas as pd

        return pd.DataFrame(self.columns(level, rounded=rounded, errors=errors))

    def beats(self) -> np.ndarray:
        """``(S, S)`` P(row system beats column system), NaN where not compared (the diagonal)."""
        n = len(self.systems)
        out = np.full((n, n), np.nan)
        a, b = self.pairs[:, 0], self.pairs[:, 1]
        out[a, b] = self.p_a_better
        out[b, a] = 1.0 - self.p_a_better
        return out

    def matrix(self) -> pd.DataFrame:
        """:meth:`beats` as an ``S × S`` table, rows and columns named by system."""
        import pandas as pd

        names = pd.Index(list(self.systems), name="system")
        return pd.DataFrame(self.beats(), index=names, columns=list(self.systems))

    def __repr__(self) -> str:
        return short_repr(
            self,
            f"measure={self.scores.measure!r}",
            f"{len(self.pairs)} pairs of {len(self.systems)} systems",
            f"{len(self.scores.query_ids)} topics",
            *self.scores._named(),
            self.scores._how(),
        )

    def __str__(self) -> str:
        frame = self.to_frame()
        head = (
            f"Δ{self.scores.measure} = {self.scores.measure}(a) - {self.scores.measure}(b) for "
            f"{len(frame)} pairs of {len(self.systems)} systems over "
            f"{len(self.scores.query_ids)} topics ({self.scores._estimand()}); "
            "p_a_better = P(Δ > 0)"
        )
        shown = frame if len(frame) <= 20 else frame.head(20)
        body = shown.to_string(index=False, float_format=lambda x: f"{x:.4f}")
        more = (
            "" if len(frame) <= 20 else f"\n... {len(frame) - 20} more pairs (to_frame() has all)"
        )
        return head + "\n" + body + more
