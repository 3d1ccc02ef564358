"""Sampling designs: which documents an assessor judges when a sample stands for the pool.

A design's :meth:`draw` takes a campaign (or its :func:`pool_table`) and a seeded generator and
returns the *sample table*, one row per document of the sample's universe:

- ``query_id, doc_id``; ``stratum`` (an integer; :data:`JUDGED_STRATUM` for a document the
  qrels judge already, taken whole); ``inclusion``, its probability π of being drawn, in (0, 1];
- ``drawn`` (in the sample) and ``order`` (the position at which the assessor judges it,
  0, 1, ...; -1 for a document not drawn or judged already); ``relevance`` (the qrels' grade of
  a document judged already, else -1).

:class:`StratifiedDesign` cuts each topic's pool by depth (a document's best rank over the
runs) and draws n_h = round(rate × N_h) of stratum h's N_h documents uniformly without
replacement (π = n_h / N_h, the form ``sample_eval.pl`` reads); the sampled documents of a
stratum are judged in the draw's random order, so those answered are at every moment a
uniform sample of the stratum. :class:`PPSDesign` is statAP's: Poisson sampling of the depth-K
pool with π ∝ the AP-prior weight of the document's ranks (capped at 1, floored), scaled so
that the expected sample is the budget. :class:`ModelGuidedDesign` is Poisson sampling with π ∝
the model's uncertainty about each document's weight in ΔMAP (:mod:`.guided`), asked in the
order of the draw's ``entry`` U/π so that every look at a fraction of it is a Poisson sample
(:mod:`.looks`). All keep the judged documents with π = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from .._deprecation import renamed_kwargs
from .guided import DEFAULT_MODEL, fit_model, guided_uncertainty

#: The stratum of the documents the qrels judge already (π = 1).
JUDGED_STRATUM = 0
SAMPLE_COLUMNS = ("query_id", "doc_id", "stratum", "inclusion", "drawn", "order", "relevance")
#: A model-guided sample's columns: U/π of the draw (< 1 drawn), and the model's p that drew
#: π (the estimators' control variate); NaN for a document judged already.
ENTRY, PREDICTION = "entry", "prediction"
OPTIONAL_COLUMNS = (ENTRY, PREDICTION)
POOL_COLUMNS = ("query_id", "doc_id", "rank", "weight", "relevance")
#: statAP's π floor (Aslam, Pavlu & Yilmaz 2006 keep every document drawable).
DEFAULT_FLOOR = 0.01
#: The model-guided design's floor as a share of the budget's rate: every candidate is drawn
#: with π ≥ this × budget / pool, so that a relevant document the model is sure of keeps a
#: bounded weight 1/π (examples/design_based, "The guided design's floor": chosen on DL 2019).
GUIDED_FLOOR_SHARE = 0.5


class SamplingDesign(Protocol):
    """What a design provides: the sample table of a seeded draw, and the record of itself
    that a journal keeps (a resumed session compares it with the design given)."""

    def draw(self, source, rng: np.random.Generator, systems=None) -> pd.DataFrame:
        """The sample table of ``source`` (a campaign or its :func:`pool_table`)."""

    def spec(self) -> dict:
        """A JSON-ready dict naming the design and its parameters."""


@renamed_kwargs(depth="pool_depth")
def ap_prior(rank: np.ndarray, pool_depth: int) -> np.ndarray:
    """statAP's AP-prior weight of rank r ≤ depth: (1/Z) Σ_{i=r}^{Z} 1/i, Z = ``pool_depth``."""
    tail = np.cumsum((1.0 / np.arange(1, pool_depth + 1))[::-1])[::-1]
    return tail[np.asarray(rank, dtype=int) - 1] / pool_depth


def design_floor(floor: float, floor_share: float, rate: float) -> float:
    """The π floor of a Poisson design at ``rate`` of its pool: max(``floor``,
    ``floor_share`` · ``rate``), a mixture with uniform sampling at that share."""
    return max(floor, floor_share * rate)


def _check_floor(floor: float, floor_share: float) -> None:
    if not 0 < floor <= 1:
        raise ValueError(f"floor {floor:g} is outside (0, 1]")
    if not 0 <= floor_share <= 1:
        raise ValueError(f"floor_share {floor_share:g} is outside [0, 1]")


def pps_inclusion(weight: np.ndarray, expected: float, floor: float = DEFAULT_FLOOR) -> np.ndarray:
    """π = clip(c · weight, floor, 1) with c chosen (bisection) so that Σ π = ``expected``."""
    weight = np.asarray(weight, dtype=float)
    if expected >= len(weight):
        return np.ones(len(weight))
    if floor * len(weight) >= expected:
        return np.full(len(weight), expected / len(weight))
    low, high = 0.0, 1.0
    while np.clip(high * weight, floor, 1).sum() < expected:
        high *= 2
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if np.clip(mid * weight, floor, 1).sum() < expected else (low, mid)
    return np.clip(high * weight, floor, 1)


@renamed_kwargs(depth="pool_depth")
def pool_table(campaign, pool_depth: int, systems=None) -> pd.DataFrame:
    """Every document of the depth-``pool_depth`` pool of ``systems`` (default all) and every judged
    one: ``query_id, doc_id, rank`` (best rank, 0 outside the pool), ``weight`` (the summed
    AP-prior weight of its ranks) and ``relevance`` (the qrels' grade, -1 unjudged)."""
    rows = None if systems is None else campaign.system_rows(systems)
    parts = []
    for t in campaign.topics:
        ranking = (t.ranking if rows is None else t.ranking[rows])[:, :pool_depth]
        ranks = np.broadcast_to(np.arange(1, ranking.shape[1] + 1), ranking.shape)
        docs, at = ranking[ranking >= 0], ranks[ranking >= 0]
        best = np.full(t.n_docs, np.iinfo(np.int32).max)
        np.minimum.at(best, docs, at)
        weight = np.zeros(t.n_docs)
        np.add.at(weight, docs, ap_prior(at, pool_depth))
        keep = (weight > 0) | t.judged
        parts.append(pd.DataFrame({
            "query_id": t.query_id, "doc_id": t.doc_ids[keep].astype(str),
            "rank": np.where(weight > 0, best, 0)[keep], "weight": weight[keep],
            "relevance": np.where(t.judged, t.grades, -1)[keep].astype(int),
        }))  # fmt: skip
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=POOL_COLUMNS)


def _judged(pool: pd.DataFrame) -> pd.DataFrame:
    """The documents judged already: in the sample whole (π = 1), not asked again."""
    judged = pool[pool["relevance"] >= 0]
    return pd.DataFrame({
        "query_id": judged["query_id"], "doc_id": judged["doc_id"], "stratum": JUDGED_STRATUM,
        "inclusion": 1.0, "drawn": True, "order": -1, "relevance": judged["relevance"],
    })  # fmt: skip


def _sample(pool: pd.DataFrame, parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The sample table: the judged documents, then the universe's parts."""
    table = pd.concat([_judged(pool), *parts], ignore_index=True)
    return _typed(table[list(SAMPLE_COLUMNS)])


def _typed(table: pd.DataFrame) -> pd.DataFrame:
    types = {"query_id": str, "doc_id": str, "stratum": int, "inclusion": float, "drawn": bool,
             "order": int, "relevance": int, ENTRY: float, PREDICTION: float}  # fmt: skip
    return table.astype({c: t for c, t in types.items() if c in table.columns})


def _pool(source, pool_depth: int, systems) -> pd.DataFrame:
    return source if isinstance(source, pd.DataFrame) else pool_table(source, pool_depth, systems)


@dataclass(frozen=True)
class StratifiedDesign:
    """Strata of depth ``(first, last, rate)``: the unjudged documents whose best rank lies in
    ``first..last`` make the stratum's population, of which round(rate × N_h) (at least one)
    are drawn uniformly without replacement. Strata must not overlap; a rate lies in (0, 1]."""

    strata: tuple[tuple[int, int, float], ...]

    def __post_init__(self):
        strata = tuple((int(a), int(b), float(r)) for a, b, r in self.strata)
        if not strata:
            raise ValueError("give at least one stratum FIRST-LAST:RATE")
        for first, last, rate in strata:
            if not 1 <= first <= last:
                raise ValueError(f"stratum {first}-{last} is not ranks 1 <= FIRST <= LAST")
            if not 0 < rate <= 1:
                raise ValueError(f"rate {rate:g} of stratum {first}-{last} is outside (0, 1]")
        ordered = sorted(strata)
        for (a, b, _), (c, d, _) in zip(ordered, ordered[1:]):
            if c <= b:
                raise ValueError(f"strata {a}-{b} and {c}-{d} overlap")
        object.__setattr__(self, "strata", tuple(ordered))

    @property
    def pool_depth(self) -> int:
        """The pool the strata cover: to the last stratum's deepest rank."""
        return self.strata[-1][1]

    def spec(self) -> dict:
        """The design as the journal records it."""
        return {"design": "stratified", "strata": [list(s) for s in self.strata]}

    def draw(self, source, rng: np.random.Generator, systems=None) -> pd.DataFrame:
        """The sample table (module docstring), topic by topic, stratum by stratum."""
        pool = _pool(source, self.pool_depth, systems)
        open_ = pool[(pool["relevance"] < 0) & (pool["rank"] > 0)]
        parts = []
        for topic, docs in open_.groupby("query_id", sort=True):
            docs = docs.sort_values(["rank", "doc_id"], kind="stable")
            rank = docs["rank"].to_numpy()
            for h, (first, last, rate) in enumerate(self.strata, start=1):
                members = docs[(rank >= first) & (rank <= last)]
                size = len(members)
                if size == 0:
                    continue
                n = size if rate == 1 else min(size, max(1, int(np.floor(rate * size + 0.5))))
                order = np.full(size, -1)
                order[rng.permutation(size)[:n]] = np.arange(n)
                parts.append(pd.DataFrame({
                    "query_id": topic, "doc_id": members["doc_id"].to_numpy(), "stratum": h,
                    "inclusion": n / size, "drawn": order >= 0,
                    "order": np.where(order >= 0, order + _offset(parts), -1),
                    "relevance": -1,
                }))  # fmt: skip
        return _sample(pool, parts)


def _offset(parts: list[pd.DataFrame]) -> int:
    """Orders already given: the next part's are numbered after them."""
    return sum(int(p["drawn"].sum()) for p in parts)


@renamed_kwargs(depth="pool_depth")
@dataclass(frozen=True)
class PPSDesign:
    """statAP's design: each unjudged document of the depth-``pool_depth`` pool drawn independently
    with π ∝ its AP-prior weight, capped at 1 and floored at max(``floor``, ``floor_share`` ·
    rate) (:func:`design_floor`; statAP's is share 0), so that the expected sample is
    ``budget`` documents (or ``rate`` of the pool) over all topics, each topic expecting its
    share of the pool (π is scaled topic by topic)."""

    budget: int | None = None
    rate: float | None = None
    pool_depth: int = 100
    floor: float = DEFAULT_FLOOR
    floor_share: float = 0.0

    def __post_init__(self):
        if (self.budget is None) == (self.rate is None):
            raise ValueError("give a budget or a rate, not both")
        if self.budget is not None and self.budget < 1:
            raise ValueError(f"budget {self.budget} is not a positive number of judgments")
        if self.rate is not None and not 0 < self.rate <= 1:
            raise ValueError(f"rate {self.rate:g} is outside (0, 1]")
        _check_floor(self.floor, self.floor_share)

    def spec(self) -> dict:
        """The design as the journal records it."""
        return {"design": "pps", "budget": self.budget, "rate": self.rate, "depth": self.pool_depth,
                "floor": self.floor, "floor_share": self.floor_share}  # fmt: skip

    def draw(self, source, rng: np.random.Generator, systems=None) -> pd.DataFrame:
        """The sample table (module docstring): π per topic, one Poisson draw, judged by topic
        in a random order."""
        pool = _pool(source, self.pool_depth, systems)
        open_ = pool[(pool["relevance"] < 0) & (pool["rank"] > 0)]
        total = len(open_)
        rate = self.rate if self.rate is not None else self.budget / max(total, 1)
        if self.budget is not None and self.budget > total:
            raise ValueError(f"budget {self.budget} is larger than the pool: {total} unjudged "
                             f"documents in the depth-{self.pool_depth} pool")
        if rate < self.floor:
            raise ValueError(f"the budget is {rate:.2%} of the pool, below the π floor "
                             f"{self.floor:g}: give a budget of at least "
                             f"{int(np.ceil(self.floor * total))}")
        parts = []
        for topic, docs in open_.groupby("query_id", sort=True):
            docs = docs.sort_values(["rank", "doc_id"], kind="stable")
            pi = pps_inclusion(docs["weight"].to_numpy(), rate * len(docs),
                               design_floor(self.floor, self.floor_share, rate))
            drawn = rng.random(len(docs)) < pi
            order = np.full(len(docs), -1)
            order[rng.permutation(np.flatnonzero(drawn))] = np.arange(int(drawn.sum()))
            parts.append(pd.DataFrame({
                "query_id": topic, "doc_id": docs["doc_id"].to_numpy(), "stratum": 1,
                "inclusion": pi, "drawn": drawn,
                "order": np.where(drawn, order + _offset(parts), -1), "relevance": -1,
            }))  # fmt: skip
        return _sample(pool, parts)


@dataclass(frozen=True)
class ModelGuidedDesign:
    """Poisson sampling of the unjudged documents of the depth-``pool_depth`` pool with π ∝ the
    model's uncertainty about their weight in ΔMAP of ``pairs`` (Zrnic & Candès 2024;
    :mod:`.guided`), ``budget`` documents expected over all topics, each π in [max(``floor``,
    ``floor_share`` · budget / pool), 1] (:func:`design_floor`).
    ``pairs`` names the runs compared (None: every pair of the runs drawn for); ``model`` the
    relevance model (a registered name or settings file) fitted on the judgments given."""

    budget: int
    pool_depth: int = 100
    floor: float = DEFAULT_FLOOR
    model: str = DEFAULT_MODEL
    pairs: tuple[tuple[str, str], ...] | None = None
    floor_share: float = GUIDED_FLOOR_SHARE

    def __post_init__(self):
        if int(self.budget) != self.budget or self.budget < 1:
            raise ValueError(f"budget {self.budget} is not a positive number of judgments")
        _check_floor(self.floor, self.floor_share)
        if self.pairs is not None:
            object.__setattr__(self, "pairs", tuple((str(a), str(b)) for a, b in self.pairs))

    def spec(self) -> dict:
        """The design as the journal records it."""
        return {"design": "guided", "budget": int(self.budget), "depth": self.pool_depth,
                "floor": self.floor, "floor_share": self.floor_share, "model": self.model,
                "pairs": None if self.pairs is None else [list(p) for p in self.pairs]}  # fmt: skip

    def inclusion(self, uncertainty: np.ndarray) -> np.ndarray:
        """π ∝ ``uncertainty`` (one per candidate), floored (:func:`design_floor`), capped at
        1, Σ π = ``budget``."""
        u, total = np.asarray(uncertainty, dtype=float), len(uncertainty)
        if self.budget > total:
            raise ValueError(f"budget {self.budget} is larger than the pool: {total} unjudged "
                             f"documents in the depth-{self.pool_depth} pool")  # fmt: skip
        if self.budget < self.floor * total:
            raise ValueError(f"the budget is {self.budget / total:.2%} of the pool, below the π "
                             f"floor {self.floor:g}: give a budget of at least "
                             f"{int(np.ceil(self.floor * total))}")  # fmt: skip
        if not (u > 0).any():  # the model is sure of every document: uniform
            return np.full(total, self.budget / total)
        floor = design_floor(self.floor, self.floor_share, self.budget / total)
        return pps_inclusion(u, float(self.budget), floor)

    def draw(self, source, rng: np.random.Generator, systems=None, estimate=None) -> pd.DataFrame:
        """The sample table with each document's ``entry`` (U/π: < 1 when drawn; NaN for one
        judged already), drawn documents ordered by it over all topics. ``source`` is the
        campaign; ``estimate`` the model's (None: fitted on the campaign's judgments)."""
        return poisson_draw(self.universe(source, rng, systems, estimate), rng)

    def universe(self, source, rng: np.random.Generator, systems=None, estimate=None):
        """The sample table before the draw: every document of the universe with its π (the
        model fitted from ``rng`` when ``estimate`` is None); :func:`poisson_draw` draws it."""
        if isinstance(source, pd.DataFrame):
            raise TypeError("the model-guided design draws from a campaign (runs and judgments)")
        systems = tuple(source.systems if systems is None else systems)
        if estimate is None:
            estimate = fit_model(source, self.model, rng)
        candidates = guided_uncertainty(source, estimate, systems, self.pool_depth, self.pairs)
        part = pd.DataFrame({
            "query_id": candidates["query_id"], "doc_id": candidates["doc_id"], "stratum": 1,
            "inclusion": self.inclusion(candidates["uncertainty"].to_numpy()), "drawn": False,
            "order": -1, "relevance": -1, ENTRY: np.inf, PREDICTION: candidates["p"],
        })  # fmt: skip
        judged = _judged(pool_table(source, self.pool_depth, systems))
        judged = judged.assign(**{ENTRY: np.nan, PREDICTION: np.nan})
        return _typed(pd.concat([judged, part], ignore_index=True)[[*SAMPLE_COLUMNS,
                                                                     *OPTIONAL_COLUMNS]])


def poisson_draw(universe: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Poisson sampling of the universe's open documents (``entry`` not NaN): U_d uniform,
    entry U_d / π_d, drawn when below 1, asked in the order of the entries."""
    open_ = ~np.isnan(universe[ENTRY].to_numpy())
    pi = universe["inclusion"].to_numpy()[open_]
    entry = rng.random(len(pi)) / pi
    at = np.flatnonzero(entry < 1)
    order = np.full(len(pi), -1)
    order[at[np.argsort(entry[at], kind="stable")]] = np.arange(len(at))
    drawn, orders, entries = (universe[c].to_numpy().copy() for c in ("drawn", "order", ENTRY))
    drawn[open_], orders[open_], entries[open_] = entry < 1, order, entry
    return universe.assign(drawn=drawn, order=orders, **{ENTRY: entries})


def unsampled_topics(sample: pd.DataFrame) -> list[str]:
    """Topics of the sample table with documents left to sample (π < 1) none of which is
    drawn: the sample says nothing of that part of their measures, nor of its variance."""
    open_ = sample["inclusion"].to_numpy() < 1
    part = sample[open_].groupby("query_id", sort=True)["drawn"].any()
    return part.index[~part.to_numpy()].tolist()


def strata_sizes(sample: pd.DataFrame) -> pd.DataFrame:
    """Each stratum of each topic: its ``population`` N_h, the ``drawn`` n_h and π (for a pps
    sample, stratum 1 holds the whole universe and π is the mean)."""
    groups = sample.groupby(["query_id", "stratum"], sort=True)
    return pd.DataFrame({"population": groups.size(), "drawn": groups["drawn"].sum(),
                         "inclusion": groups["inclusion"].mean()})  # fmt: skip


def design_from_spec(spec: dict) -> SamplingDesign:
    """The design a journal records (the designs' ``spec``)."""
    if spec.get("design") == "stratified":
        return StratifiedDesign(tuple(tuple(s) for s in spec["strata"]))
    if spec.get("design") == "pps":
        return PPSDesign(spec.get("budget"), spec.get("rate"), spec.get("depth", 100),
                         spec.get("floor", DEFAULT_FLOOR),
                         spec.get("floor_share", 0.0))  # fmt: skip
    if spec.get("design") == "guided":
        return ModelGuidedDesign(spec["budget"], spec.get("depth", 100),
                                 spec.get("floor", DEFAULT_FLOOR), spec.get("model", DEFAULT_MODEL),
                                 spec.get("pairs"), spec.get("floor_share", 0.0))  # fmt: skip
    raise ValueError(f"unknown design {spec.get('design')!r}")


def sample_record(sample: pd.DataFrame) -> dict:
    """The sample table as JSON-ready columns (for the journal; a model-guided sample's
    ``entry`` and ``prediction`` too, NaN written null)."""
    record = {c: sample[c].tolist() for c in SAMPLE_COLUMNS}
    for c in OPTIONAL_COLUMNS:
        if c in sample.columns:
            record[c] = [None if np.isnan(x) else x for x in sample[c].to_numpy(dtype=float)]
    return record


def sample_from_record(record: dict) -> pd.DataFrame:
    """The sample table back from :func:`sample_record` (KeyError/ValueError when malformed)."""
    columns = [*SAMPLE_COLUMNS, *(c for c in OPTIONAL_COLUMNS if c in record)]
    table = _typed(pd.DataFrame({c: record[c] for c in columns}))  # null: NaN
    pi = table["inclusion"].to_numpy()
    if not ((pi > 0) & (pi <= 1)).all():
        raise ValueError("an inclusion probability outside (0, 1]")
    asked = np.sort(table["order"].to_numpy()[table["order"].to_numpy() >= 0])
    if not np.array_equal(asked, np.arange(len(asked))):
        raise ValueError("the judging order is not 0, 1, 2, ...")
    return table
