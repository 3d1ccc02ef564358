"""Measure objects, their registry, and the ir_measures-style name parser.

A measure is named like ir_measures names it: ``Family(param=value,...)@cutoff``
with both parts optional where the family allows, e.g. ``AP``, ``P@10``,
``Rprec``, ``RBP(p=0.8)``, ``nDCG@10``, ``nDCG``, ``Judged@10``. Binary
measures accept ``rel=N`` to override the campaign's relevance threshold
(``AP(rel=2)``), as in ir_measures.

Each measure module defines a :class:`Measure` subclass and calls
:func:`register` on it at the bottom of its file (habit 1 of the style guide:
declare, then register).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._ranked import check_ranking, check_values

GAINS = ("linear", "exponential")

_NAME = re.compile(
    r"^(?P<family>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?:\((?P<params>[^()]*)\))?"
    r"(?:@(?P<cutoff>[^@]+))?$"
)


@dataclass(frozen=True)
class Param:
    """One measure parameter: its type, default and allowed range (open/closed)."""

    kind: type
    default: float | int | None
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False

    def convert(self, family: str, name: str, text: str) -> float | int:
        try:
            value = self.kind(text)
        except ValueError:
            raise ValueError(
                f"{family}: parameter {name}={text!r} is not a valid {self.kind.__name__}"
            ) from None
        too_low = self.low is not None and (
            value <= self.low if self.open_low else value < self.low
        )
        too_high = self.high is not None and (
            value >= self.high if self.open_high else value > self.high
        )
        if too_low or too_high:
            left = "(" if self.open_low else "["
            right = ")" if self.open_high else "]"
            raise ValueError(
                f"{family}: parameter {name}={text} is outside {left}{self.low}, {self.high}{right}"
            )
        return value


#: The ``rel`` parameter of binary measures (None = the campaign's threshold).
REL = Param(int, None)


@dataclass(frozen=True)
class Measure:
    """A measure family with its cutoff and parameters fixed.

    Subclasses set ``family``, ``cutoff_rule`` (``"none"``, ``"optional"`` or
    ``"required"``), ``parameters`` and implement ``_score``. Build instances
    with :func:`parse_measure`; ``str(measure)`` is the canonical name.

    Attributes
    ----------
    cutoff
        The rank cutoff ``k`` (``@k``), or None.
    params
        Parameters as sorted ``(name, value)`` pairs: those given, plus the
        defaults that are not None (so ``RBP`` is ``RBP(p=0.8)``).
    """

    cutoff: int | None = None
    params: tuple[tuple[str, float | int], ...] = ()

    family: ClassVar[str] = ""
    description: ClassVar[str] = ""
    cutoff_rule: ClassVar[str] = "none"
    parameters: ClassVar[Mapping[str, Param]] = {}

    def __post_init__(self) -> None:
        if self.cutoff is None and self.cutoff_rule == "required":
            raise ValueError(f"{self.family} needs a cutoff, e.g. {self.family}@10")
        if self.cutoff is not None and self.cutoff_rule == "none":
            raise ValueError(f"{self.family} takes no cutoff (got @{self.cutoff})")
        if self.cutoff is not None and (not isinstance(self.cutoff, int) or self.cutoff < 1):
            raise ValueError(
                f"{self.family}: cutoff must be a positive integer, got {self.cutoff!r}"
            )
        for name, _ in self.params:
            if name not in self.parameters:
                allowed = ", ".join(sorted(self.parameters)) or "none"
                raise ValueError(f"{self.family}: unknown parameter {name!r} (allowed: {allowed})")

    @classmethod
    def syntax(cls) -> str:
        """How the family is written, e.g. ``P@k`` or ``RBP(p=0.8)[@k]``."""
        shown = [f"{k}={v.default}" for k, v in cls.parameters.items() if v.default is not None]
        text = cls.family + (f"({','.join(shown)})" if shown else "")
        return text + {"none": "", "optional": "[@k]", "required": "@k"}[cls.cutoff_rule]

    def param(self, name: str) -> float | int | None:
        """The value of a parameter: as given, else its default."""
        return dict(self.params).get(name, self.parameters[name].default)

    def threshold(self, rel_threshold: int) -> int:
        """The relevance threshold in force: ``rel=`` if given, else ``rel_threshold``."""
        rel = self.param("rel") if "rel" in self.parameters else None
        return rel_threshold if rel is None else int(rel)

    def score(
        self,
        ranking: np.ndarray,
        labels: np.ndarray,
        *,
        judged: np.ndarray | None = None,
        rel_threshold: int = 1,
        gain: str = "linear",
    ) -> np.ndarray:
        """Score every system of one topic.

        Parameters
        ----------
        ranking
            ``(S, D)`` padded document indices (a ``TopicData.ranking``).
        labels
            ``(n,)`` graded labels, or ``(B, n)`` per draw; booleans are
            grades 0/1 (use ``rel_threshold=1`` with them).
        judged
            ``(n,)`` bool judged mask. Binary measures count only judged
            documents as relevant when it is given; ``Judged@k`` and the RBP
            residual read it (without it every document counts as judged).
        rel_threshold
            Minimum grade that is relevant for binary measures.
        gain
            ``"linear"`` or ``"exponential"`` gains for nDCG.

        Returns
        -------
        ndarray
            ``(S,)`` or ``(B, S)`` float64 scores.
        """
        labels = check_values(labels, "labels")
        ranking = check_ranking(ranking, labels.shape[-1])
        if judged is not None:
            judged = np.asarray(judged, dtype=bool)
            if judged.shape != labels.shape[-1:]:
                raise ValueError(f"judged must have shape {labels.shape[-1:]}, got {judged.shape}")
        if gain not in GAINS:
            raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
        return self._score(ranking, labels, judged, rel_threshold, gain)

    def relevant(
        self, labels: np.ndarray, judged: np.ndarray | None, rel_threshold: int
    ) -> np.ndarray:
        """Binary relevance: grade at least the threshold (and judged, when known)."""
        relevant = labels >= self.threshold(rel_threshold)
        return relevant if judged is None else relevant & judged

    def _score(self, ranking, labels, judged, rel_threshold, gain) -> np.ndarray:
        raise NotImplementedError

    def __str__(self) -> str:
        text = self.family
        if self.params:
            text += "(" + ",".join(f"{k}={v}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text

    def __repr__(self) -> str:
        return f"<measure {self}>"


_REGISTRY: dict[str, type[Measure]] = {}


def register(cls: type[Measure]) -> type[Measure]:
    """Make a measure family parseable by its ``family`` name (bottom of its module)."""
    if not cls.family:
        raise ValueError(f"{cls.__name__} has no family name")
    _REGISTRY[cls.family] = cls
    return cls


def available_measures() -> list[str]:
    """The registered families as written, e.g. ``["AP[@k]", ..., "P@k", ...]``."""
    return [_REGISTRY[f].syntax() for f in sorted(_REGISTRY, key=str.lower)]


def describe_measures() -> list[tuple[str, str]]:
    """``(syntax, description)`` of every registered family, for help texts."""
    return [
        (_REGISTRY[f].syntax(), _REGISTRY[f].description) for f in sorted(_REGISTRY, key=str.lower)
    ]


def parse_measure(name: str | Measure) -> Measure:
    """Parse an ir_measures-style name such as ``"P@10"`` or ``"RBP(p=0.8)"``.

    Raises
    ------
    ValueError
        For malformed names, unknown families (listing the known ones), unknown
        or out-of-range parameters, and missing or unexpected cutoffs.
    """
    if isinstance(name, Measure):
        return name
    text = str(name).strip()
    match = _NAME.match(text.replace(" ", ""))
    if not match:
        raise ValueError(
            f"cannot parse measure name {text!r}; expected e.g. AP, P@10, RBP(p=0.8), nDCG@10"
        )
    family = match["family"]
    cls = _REGISTRY.get(family)
    if cls is None:
        by_lower = {f.lower(): f for f in _REGISTRY}
        hint = (
            f" (did you mean {by_lower[family.lower()]!r}?)" if family.lower() in by_lower else ""
        )
        raise ValueError(
            f"unknown measure {family!r}{hint}; known measures: {', '.join(available_measures())}"
        )
    cutoff = None
    if match["cutoff"] is not None:
        if not match["cutoff"].isdigit() or int(match["cutoff"]) < 1:
            raise ValueError(f"{family}: cutoff must be a positive integer, got @{match['cutoff']}")
        cutoff = int(match["cutoff"])
    params = {k: p.default for k, p in cls.parameters.items() if p.default is not None}
    given: set[str] = set()
    if match["params"]:
        for item in match["params"].split(","):
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise ValueError(f"{family}: parameters are written name=value, got {item!r}")
            if key not in cls.parameters:
                allowed = ", ".join(sorted(cls.parameters)) or "none"
                raise ValueError(f"{family}: unknown parameter {key!r} (allowed: {allowed})")
            if key in given:
                raise ValueError(f"{family}: parameter {key!r} given twice")
            given.add(key)
            params[key] = cls.parameters[key].convert(family, key, value)
    return cls(cutoff=cutoff, params=tuple(sorted(params.items())))


def parse_measures(names) -> list[Measure]:
    """Parse one name or an iterable of names/measures, keeping order and dropping repeats."""
    if isinstance(names, (str, Measure)):
        names = [names]
    out: list[Measure] = []
    for name in names:
        measure = parse_measure(name)
        if measure not in out:
            out.append(measure)
    if not out:
        raise ValueError("no measures given")
    return out
