"""Measure objects, their registry, and the name parser (ir_measures and trec_eval names).

A measure is named like ir_measures names it: ``Family(param=value,...)@cutoff``
with both parts optional where the family allows, e.g. ``AP``, ``P@10``,
``Rprec``, ``RBP(p=0.8)``, ``nDCG@10``, ``nDCG``, ``Judged@10``. Binary
measures accept ``rel=N`` to override the campaign's relevance threshold
(``AP(rel=2)``), as in ir_measures. ir_measures' other family names are
accepted too (``MAP``, ``NDCG``, ``MRR``, ``Recall``, ...), and so are
trec_eval's names (``map``, ``P_10``, ``ndcg_cut_10``, ``recip_rank``,
``recall_100``, ...): each family declares them. An unknown name gets a
"did you mean" hint (:mod:`difflib`).

Each measure module defines a :class:`Measure` subclass and calls
:func:`register_measure` on it at the bottom of its file with the names it answers to
(habit 1 of docs/contributing.md: declare, then register).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._deprecation import deprecated_alias
from .._registry import Registry
from ._ranked import check_ranking, check_values

GAINS = ("linear", "exponential")

_TREC_EVAL_CUT = re.compile(r"^(?P<stem>[A-Za-z_]+?)_(?P<cutoff>\d+)$")
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
        if value != value or value in (float("inf"), float("-inf")):  # NaN passes every bound
            raise ValueError(f"{family}: parameter {name}={text} is not a finite number")
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

    Subclasses set ``parameters`` and implement ``_score``; :func:`register_measure`
    declares ``family``, ``cutoff_rule`` (``"none"``, ``"optional"`` or ``"required"``)
    and the names below (or reads them from the class). Build instances
    with :func:`parse_measure`; ``str(measure)`` is the canonical name.

    Names: ``aliases`` are other ir_measures family names (``MAP`` for AP);
    ``trec_eval`` is trec_eval's name of the measure without a cutoff
    (``map``) and ``trec_eval_cut`` the stem of its cut version (``map_cut``
    for ``map_cut_10``). ``aggregate`` says how topics combine into a run's
    score: ``"mean"``, or ``"sum"`` for counts, as trec_eval's ``all`` rows.

    What the confidence engine needs (docs/math/ for the formulas):
    ``moments`` is ``"linear"`` for a measure ``M = Σ_i w(r(i)) X_i`` whose
    :meth:`rank_weights` give ``w`` (exact mean and variance under
    independent Bernoulli relevance), ``"ratio"`` for AP (Carterette 2007,
    §2.1), None when only Monte Carlo applies; ``graded`` says the measure
    reads grades (gains), not binary relevance.

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
    aliases: ClassVar[tuple[str, ...]] = ()
    trec_eval: ClassVar[str | None] = None
    trec_eval_cut: ClassVar[str | None] = None
    aggregate: ClassVar[str] = "mean"
    moments: ClassVar[str | None] = None
    graded: ClassVar[bool] = False

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

    def trec_eval_name(self) -> str | None:
        """trec_eval's name for this measure (``map_cut_10``), or None when it has none.

        A measure with parameters other than its defaults has none: trec_eval
        sets the relevance level once, with ``-l``, not per measure.
        """
        defaults = {k: p.default for k, p in self.parameters.items() if p.default is not None}
        if dict(self.params) != defaults:
            return None
        if self.cutoff is None:
            return self.trec_eval
        return None if self.trec_eval_cut is None else f"{self.trec_eval_cut}_{self.cutoff}"

    def exact_moments(self) -> str | None:
        """``"linear"``, ``"ratio"`` or None: how the engine gets this measure's exact moments.

        None as well when ``rel=`` overrides the threshold: the engine's
        probabilities are of relevance at the campaign's threshold.
        """
        return None if dict(self.params).get("rel") is not None else self.moments

    def rank_weights(self, depth: int) -> np.ndarray:
        """``(depth,)`` weight ``w(r)`` of ranks 1..depth of a linear measure."""
        raise TypeError(f"{self} is not linear in relevance: it has no rank weights")

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


_REGISTRY: Registry[type[Measure]] = Registry("measure", error=ValueError, discover="relimpute.measures")
_FAMILY_NAMES: dict[str, type[Measure]] = {}  # families and their aliases
_TREC_EVAL: dict[str, type[Measure]] = {}  # trec_eval names without a cutoff
_TREC_EVAL_STEMS: dict[str, type[Measure]] = {}  # stems of trec_eval's cut names


class BinaryMeasure(Measure):
    """A measure of binary relevance: a grade of at least ``rel=`` (default: the threshold in
    force) is relevant. Subclasses score that mask in ``_binary_score``, or name the module's
    function ``_kernel(ranking, relevant, k=cutoff)`` that does."""

    parameters: ClassVar[Mapping[str, Param]] = {"rel": REL}
    _kernel: ClassVar[Callable[..., np.ndarray] | None] = None

    def _score(self, ranking, labels, judged, rel_threshold, gain):
        return self._binary_score(ranking, self.relevant(labels, judged, rel_threshold))

    def _binary_score(self, ranking: np.ndarray, relevant: np.ndarray) -> np.ndarray:
        if self._kernel is None:
            raise NotImplementedError(f"{type(self).__name__} has no _kernel or _binary_score")
        return self._kernel(ranking, relevant, k=self.cutoff)


class GradedMeasure(Measure):
    """A measure of the grades: unjudged documents grade 0. Subclasses score the grades in
    ``_graded_score``, or name the module's function ``_kernel(ranking, grades, k, gain=)``."""

    graded = True
    _kernel: ClassVar[Callable[..., np.ndarray] | None] = None

    def _score(self, ranking, labels, judged, rel_threshold, gain):
        if judged is not None:
            labels = np.where(judged, labels, 0)
        return self._graded_score(ranking, labels, gain)

    def _graded_score(self, ranking: np.ndarray, grades: np.ndarray, gain: str) -> np.ndarray:
        if self._kernel is None:
            raise NotImplementedError(f"{type(self).__name__} has no _kernel or _graded_score")
        return self._kernel(ranking, grades, self.cutoff, gain=gain)


#: what :func:`register_measure` may declare: the names a family answers to and how it is written
NAMES = ("family", "cutoff_rule", "aliases", "trec_eval", "trec_eval_cut")


def register_measure(cls: type[Measure], **names) -> type[Measure]:
    """Make a measure family parseable by all its names (bottom of its module).

    ``names`` declares them here, where the registry reads them, e.g.
    ``register_measure(RR, family="RR", cutoff_rule="optional", aliases=("MRR",),
    trec_eval="recip_rank")`` (:data:`NAMES`; see :class:`Measure`); a name not given is
    the class's attribute (a subclass inherits its parent's).
    """
    unknown = set(names) - set(NAMES)
    if unknown:
        raise TypeError(f"register_measure() declares {NAMES}, not {sorted(unknown)}")
    for key, value in names.items():
        setattr(cls, key, value)
    if not cls.family:
        raise ValueError(f"{cls.__name__} has no family name")
    names = [
        (_FAMILY_NAMES, cls.family),
        *((_FAMILY_NAMES, alias) for alias in cls.aliases),
        (_TREC_EVAL, cls.trec_eval),
        (_TREC_EVAL_STEMS, cls.trec_eval_cut),
    ]
    for table, name in names:
        if name is not None and table.get(name, cls) is not cls:
            raise ValueError(f"measure name {name!r} is taken by {table[name].__name__}")
    _REGISTRY.register(cls, name=cls.family)
    for table, name in names:
        if name is not None:
            table[name] = cls
    return cls


#: the name register_measure had until 0.3.0 (deprecated)
register = deprecated_alias(register_measure, "register")


def measure_families() -> list[type[Measure]]:
    """The registered measure classes, by family name (case-insensitive)."""
    return [_REGISTRY[f] for f in sorted(_REGISTRY.names(), key=str.lower)]


def available_measures() -> list[str]:
    """The registered families as written, e.g. ``["AP[@k]", ..., "P@k", ...]``."""
    return [cls.syntax() for cls in measure_families()]


def describe_measures() -> list[tuple[str, str]]:
    """``(syntax, description)`` of every registered family, for help texts."""
    return [(cls.syntax(), cls.description) for cls in measure_families()]


def name_table() -> list[tuple[str, str, str]]:
    """``(syntax, other ir_measures names, trec_eval names)`` of every family, for docs."""
    rows = []
    for cls in measure_families():
        trec = [cls.trec_eval, None if cls.trec_eval_cut is None else f"{cls.trec_eval_cut}_k"]
        rows.append(
            (cls.syntax(), ", ".join(cls.aliases), ", ".join(n for n in trec if n is not None))
        )
    return rows


def _trec_eval_measure(text: str) -> Measure | None:
    """The measure a trec_eval name (``map``, ``P_10``, ``ndcg_cut_10``) stands for, or None."""
    if text in _TREC_EVAL:
        return _TREC_EVAL[text]()
    match = _TREC_EVAL_CUT.match(text)
    if match and match["stem"] in _TREC_EVAL_STEMS and int(match["cutoff"]) >= 1:
        return _TREC_EVAL_STEMS[match["stem"]](cutoff=int(match["cutoff"]))
    return None


#: a cutoff written without its ``@``: ``P10``, ``ndcg10``
_GLUED_CUTOFF = re.compile(r"^(?P<stem>[A-Za-z]+?)_?(?P<cutoff>[1-9][0-9]*)$")


def _unknown(
    family: str, cutoff: str | None = None, params: str | None = None, name: str | None = None
) -> ValueError:
    """The error for measure ``name`` of unknown ``family``, with a "did you mean" hint when a
    name is close: whole names that parse, the cutoff kept (``map@10``: ``map_cut_10`` or
    ``MAP@10``; ``P10``: ``P@10`` or ``P_10``)."""
    known = [*_FAMILY_NAMES, *_TREC_EVAL, *(f"{stem}_k" for stem in _TREC_EVAL_STEMS)]
    by_lower: dict[str, str] = {}
    for spelling in known:  # family names first: they win over a trec_eval name with their spelling
        by_lower.setdefault(spelling.lower(), spelling)
    close = by_lower.get(family.lower())
    glued = None if cutoff is not None else _GLUED_CUTOFF.match(family)
    if close is None and glued and glued["stem"].lower() in by_lower:
        close, cutoff = by_lower[glued["stem"].lower()], glued["cutoff"]
    if close is None:  # the closest spelling, keeping case if that finds one
        import difflib

        matches = difflib.get_close_matches(family, known, n=1, cutoff=0.6)
        matches = matches or [
            by_lower[m] for m in difflib.get_close_matches(family.lower(), by_lower, n=1)
        ]
        close = matches[0] if matches else None
    names = [] if close is None else _spelled(close, family, cutoff, params)
    if names:  # the hint alone keeps the message one readable line
        return ValueError(
            f"unknown measure {name or family!r}; did you mean {' or '.join(map(repr, names))}?"
        )
    return ValueError(
        f"unknown measure {name or family!r}; known measures: {', '.join(available_measures())} "
        "(or their trec_eval names: map, P_10, ndcg_cut_10, recip_rank, ...)"
    )


def _spelled(close: str, typed: str, cutoff: str | None, params: str | None) -> list[str]:
    """The names to suggest for the known name ``close``: itself without a cutoff; with one,
    the ir_measures and trec_eval names that parse, trec_eval's first if ``typed`` is one."""
    if cutoff is None or not cutoff.isdigit() or int(cutoff) < 1:
        return [close]
    cls = _FAMILY_NAMES.get(close) or _TREC_EVAL.get(close)
    cls = cls or _TREC_EVAL_STEMS[close.removesuffix("_k")]
    family = close if close in _FAMILY_NAMES else cls.family
    names = [f"{family}{f'({params})' if params else ''}@{cutoff}"]
    if cls.trec_eval_cut is not None and not params:
        names.append(f"{cls.trec_eval_cut}_{cutoff}")
    if typed in _TREC_EVAL or typed in _TREC_EVAL_STEMS:
        names.reverse()
    return [n for n in names if _parses(n)] or [close]


def _parses(name: str) -> bool:
    try:
        parse_measure(name)
    except ValueError:
        return False
    return True


def parse_measure(name: str | Measure) -> Measure:
    """Parse a measure name: ir_measures style (``"P@10"``, ``"RBP(p=0.8)"``,
    ``"MAP"``) or trec_eval's (``"P_10"``, ``"ndcg_cut_10"``, ``"map"``).

    Raises
    ------
    ValueError
        For malformed names, unknown families (listing the known ones, with a
        "did you mean" hint), unknown or out-of-range parameters, and missing
        or unexpected cutoffs.
    """
    if isinstance(name, Measure):
        return name
    text = str(name).strip()
    trec_eval = _trec_eval_measure(text)
    if trec_eval is not None:
        return trec_eval
    match = _NAME.match(text.replace(" ", ""))
    if not match:
        raise ValueError(
            f"cannot parse measure name {text!r}; expected e.g. AP, P@10, RBP(p=0.8), nDCG@10"
        )
    family = match["family"]
    cls = _FAMILY_NAMES.get(family)
    if cls is None:
        raise _unknown(family, match["cutoff"], match["params"], text)
    family = cls.family
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
