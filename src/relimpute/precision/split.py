"""The split-corpus validation of corpus-bootstrap intervals (Cormack & Lynam 2006, §6-8).

The documents are split into halves A and B by an MD5 hash of the docno;
every run and the qrels are restricted to each half, as if A and B were two
independent corpora from the same population. Intervals computed on one
half are checked against the other half's value: a 95% normal interval
should hold it 2Φ(1.96/√2) − 1 ≈ 83.5% of the time, half the misses below
and half above. Both directions are counted ("B w.r.t. A": intervals from A,
values from B; and the reverse), as in the paper's Tables 1-4.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._deprecation import renamed_kwargs
from ..data import Campaign
from ..relevance.base import as_generator
from ._nanstats import nan_sd
from .intervals import DEFAULT_EPSILON, ap_intervals, other_sample_coverage
from .means import mean_intervals
from .resample import CorpusBootstrap, corpus_bootstrap
from .small_r import DEFAULT_NEAR, small_r_corrected

AP_METHODS = ("normal", "logit", "percentile", "bca")
CORRECTED_METHODS = ("normal", "logit")
POSITIONS = ("below", "in", "above")


def in_half_a(doc_ids: Sequence[str], salt: str = "") -> np.ndarray:
    """``(n,)`` bool: the document falls in half A (lowest bit of MD5(salt + docno) is 0).

    The empty salt is the paper's split; other salts give other random splits.
    """
    return np.array(
        [hashlib.md5(f"{salt}{d}".encode()).digest()[-1] % 2 == 0 for d in doc_ids], dtype=bool
    )


def restrict_to_documents(campaign: Campaign, keep: Sequence[np.ndarray]) -> Campaign:
    """The campaign on a sub-corpus: rankings keep only ``keep[t]`` documents (order kept),
    and only those documents stay judged. The document index is unchanged."""
    if len(keep) != campaign.n_topics:
        raise ValueError(f"need one mask per topic ({campaign.n_topics}), got {len(keep)}")
    topics = []
    for topic, mask in zip(campaign.topics, keep):
        ranking = topic.ranking
        kept = (ranking >= 0) & mask[np.maximum(ranking, 0)]
        depth = kept.sum(axis=1).astype(np.int32)
        packed = np.full((ranking.shape[0], int(depth.max(initial=0))), -1, dtype=ranking.dtype)
        for s in range(ranking.shape[0]):
            packed[s, : depth[s]] = ranking[s][kept[s]]
        topics.append(
            replace(
                topic,
                ranking=packed,
                depth=depth,
                judged=topic.judged & mask,
                grades=np.where(mask, topic.grades, 0).astype(topic.grades.dtype),
            )
        )
    return replace(campaign, topics=tuple(topics))


def split_halves(campaign: Campaign, salt: str = "") -> tuple[Campaign, Campaign]:
    """The campaign restricted to half A and to half B of the documents."""
    masks = [in_half_a(t.doc_ids, salt) for t in campaign.topics]
    return (
        restrict_to_documents(campaign, masks),
        restrict_to_documents(campaign, [~m for m in masks]),
    )


@dataclass(frozen=True, slots=True, eq=False)
class SplitValidation:
    """Intervals from one half against the other half's values.

    Attributes
    ----------
    lists
        One row per direction, interval method, system and topic: ``r_from``
        (R on the interval's half), ``ap_from``, ``sd_from`` (bootstrap),
        ``low``, ``high``, ``ap_other``, ``sd_other`` and ``position``
        (below / in / above).
    means
        The same per system for MAP and L-MAP (bootstrap and parametric),
        with ``standard_error_other``.
    salt
        The split's salt ("" is the paper's MD5 split).
    level, predicted
        Nominal level and the model's predicted in-interval share.
    n_resamples
        Bootstrap corpora per half.
    """

    lists: pd.DataFrame
    means: pd.DataFrame
    level: float
    predicted: float
    n_resamples: int
    salt: str = ""

    def ap_table(self, min_relevant: int = 0) -> pd.DataFrame:
        """Shares below / in / above per direction and method (Tables 1-2), lists with R > min."""
        rows = self.lists[self.lists["r_from"] > min_relevant]
        return _shares(rows, ["method"])

    def mean_table(self) -> pd.DataFrame:
        """Shares below / in / above for MAP and L-MAP (Tables 3-4)."""
        return _shares(self.means, ["measure", "method"])

    def variance_ratio(self) -> pd.DataFrame:
        """Observed over predicted variance of the halves' difference, per measure.

        ``mean((x_other − x_from)²) / mean(sd_from² + sd_other²)`` over one
        direction's lists (AP) or systems (MAP, L-MAP); 1 when the bootstrap
        standard errors are right on average.
        """
        lists = self.lists[
            (self.lists["method"] == "normal") & (self.lists["direction"] == "B w.r.t. A")
        ]
        rows = [
            (
                "AP",
                "bootstrap",
                lists["ap_other"] - lists["ap_from"],
                lists["sd_from"],
                lists["sd_other"],
            )
        ]
        means = self.means[self.means["direction"] == "B w.r.t. A"]
        for (measure, method), group in means.groupby(["measure", "method"]):
            rows.append(
                (
                    measure,
                    method,
                    group["value_other"] - group["value_from"],
                    group["standard_error"],
                    group["standard_error_other"],
                )
            )
        return pd.DataFrame(
            [
                {
                    "measure": measure,
                    "method": method,
                    "variance_ratio": float(np.mean(diff**2) / np.mean(sd_a**2 + sd_b**2)),
                    "mean_difference": float(np.mean(diff)),
                }
                for measure, method, diff, sd_a, sd_b in rows
            ]
        )

    def to_frame(self) -> pd.DataFrame:
        return self.lists

    def __str__(self) -> str:
        table = self.ap_table()
        inside = table.groupby("method")["in"].mean()
        listing = ", ".join(f"{m} {v:.1%}" for m, v in inside.items())
        return (
            f"SplitValidation({self.level:.0%} intervals, predicted {self.predicted:.1%} inside; "
            f"measured {listing})"
        )


def _shares(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    counts = (
        frame.groupby([*keys, "direction"])["position"]
        .value_counts(normalize=True)
        .unstack(fill_value=0.0)
        .reindex(columns=list(POSITIONS), fill_value=0.0)
    )
    counts["n"] = frame.groupby([*keys, "direction"]).size()
    return counts.reset_index().rename_axis(columns=None)


def _position(value, low, high) -> np.ndarray:
    return np.select([value < low, value > high], ["below", "above"], "in")


def split_validation(
    campaign: Campaign,
    n_resamples: int = 2000,
    *,
    level: float = 0.95,
    epsilon: float = DEFAULT_EPSILON,
    near: float = DEFAULT_NEAR,
    rng: int | np.random.Generator | None = None,
    progress: bool | None = None,
    salt: str = "",
) -> SplitValidation:
    """Run the split-corpus validation on ``campaign`` (``salt`` picks the split).

    Lists count when the run retrieves something for the topic and both
    halves have relevant documents (AP defined on both).
    """
    generator = as_generator(rng)
    halves = split_halves(campaign, salt)
    boots = [
        corpus_bootstrap(half, n_resamples, rng=generator, progress=progress) for half in halves
    ]
    usable = campaign.coverage() & (boots[0].n_relevant > 0) & (boots[1].n_relevant > 0)
    if not usable.any():
        raise ValueError("no topic has relevant documents in both halves of the corpus")
    list_parts, mean_parts = [], []
    for name, source, other, half in (
        ("B w.r.t. A", boots[0], boots[1], halves[0]),
        ("A w.r.t. B", boots[1], boots[0], halves[1]),
    ):
        depth = np.stack([t.depth for t in half.topics], axis=1)
        list_parts += _list_rows(name, source, other, usable, depth, level, epsilon, near)
        mean_parts += _mean_rows(name, source, other, usable, level, epsilon)
    return SplitValidation(
        lists=pd.concat(list_parts, ignore_index=True),
        means=pd.concat(mean_parts, ignore_index=True),
        level=float(level),
        predicted=other_sample_coverage(level),
        n_resamples=int(n_resamples),
        salt=salt,
    )


def split_salt(index: int) -> str:
    """The salt of split ``index`` of a split study: the paper's split (no salt) first."""
    return "" if index == 0 else f"split-{index}"


@renamed_kwargs(client="scheduler", checkpoint="folder")
def split_study(
    campaign: Campaign,
    n_splits: int,
    n_resamples: int = 2000,
    *,
    seed: int | None = None,
    jobs: int | None = 1,
    scheduler=None,
    progress: bool | None = None,
    folder=None,
    **options,
) -> list[SplitValidation]:
    """:func:`split_validation` on ``n_splits`` splits of the documents: the paper's MD5 split
    (resamples seeded by ``seed``, as :func:`split_validation` with ``rng=seed``), then salted
    ones (:func:`split_salt`; split ``i`` seeded by ``[seed, i]``), in that order whatever runs
    them (``jobs``, ``scheduler``: :func:`relimpute.studies.run`). ``options`` go to
    :func:`split_validation` (level, epsilon, near). ``folder`` (the study's output
    folder, a path) keeps each split as it finishes and gets the table (``split.tsv``:
    :func:`split_table`); splits it already holds are not run again, so a killed study
    resumes with the same result."""
    from ..studies import run

    study = CorpusSplits(campaign, n_splits, n_resamples, seed=seed, options=options)
    return run(study, folder, jobs=jobs, scheduler=scheduler, resume=True, progress=progress is None or progress)


@dataclass(frozen=True, eq=False)
class CorpusSplits:
    """The split-corpus validation as a :class:`relimpute.studies.Study`: one unit per split
    (the arguments are :func:`split_study`'s; ``options`` go to :func:`split_validation`)."""

    campaign: Campaign
    n_splits: int
    n_resamples: int = 2000
    seed: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    command = "bootstrap --split"
    unit = "split"
    report = None
    #: the file of the table in the study's folder
    TABLE = "split.tsv"

    def __post_init__(self) -> None:
        if int(self.n_splits) != self.n_splits or self.n_splits < 1:
            raise ValueError(f"n_splits must be a positive integer, got {self.n_splits!r}")

    def with_seed(self, seed: int) -> CorpusSplits:
        return replace(self, seed=seed % 2**63)

    def identity(self) -> dict:
        from ..studies import study_identity

        # keyed by the command's options, so a refused --resume names the one that changed
        names = {"level": "--confidence", "epsilon": "--epsilon"}
        arguments = {"--splits": self.n_splits, "--resamples": self.n_resamples,
                     **{names.get(k, k): v for k, v in self.options.items()}}  # fmt: skip
        return study_identity(self.command, self.seed, arguments, self.campaign)

    def units(self) -> list[list]:
        return [[split_salt(i), self.seed if i == 0 else [self.seed, i]] for i in range(int(self.n_splits))]

    def run_unit(self, unit) -> SplitValidation:
        salt, seed = unit
        rng = np.random.default_rng(seed)
        return split_validation(self.campaign, self.n_resamples, rng=rng, salt=salt, progress=False,
                                **self.options)  # fmt: skip

    def encode(self, result: SplitValidation) -> dict:
        from ..studies import frame_to_json

        return {"lists": frame_to_json(result.lists), "means": frame_to_json(result.means), "level": result.level,
                "predicted": result.predicted, "n_resamples": result.n_resamples, "salt": result.salt}  # fmt: skip

    def decode(self, data) -> SplitValidation:
        from ..studies import frame_from_json

        frames = {name: frame_from_json(data[name]) for name in ("lists", "means")}
        return SplitValidation(**{**data, **frames})

    def combine(self, results: list[SplitValidation]) -> list[SplitValidation]:
        return results

    def write(self, result: list[SplitValidation], folder: Path) -> list[Path]:
        from .._files import write_table

        path = Path(folder) / self.TABLE
        write_table(split_table(result), path, sep="\t", index=False, float_format="%.6g")
        return [path]


def split_table(results: Sequence[SplitValidation]) -> pd.DataFrame:
    """Shares below / in / above of AP (per interval method) and of MAP and L-MAP, per
    direction: one block per split (column ``split``, 0 the paper's) when there are several."""
    columns = ["measure", "method", "direction", "below", "in", "above", "n"]
    frames = []
    for number, result in enumerate(results):
        frame = pd.concat([result.ap_table().assign(measure="AP"), result.mean_table()], ignore_index=True)
        frames.append(frame[columns] if len(results) == 1 else frame[columns].assign(split=number))
    table = pd.concat(frames, ignore_index=True)
    return table if len(results) == 1 else table[["split", *columns]]


def _list_rows(direction, source: CorpusBootstrap, other, usable, depth, level, epsilon, near):
    rows = []
    s, t = np.nonzero(usable)
    sd_from, sd_other = nan_sd(source.replicates)[s, t], nan_sd(other.replicates)[s, t]
    for method in AP_METHODS:
        intervals = ap_intervals(source, method, level=level, epsilon=epsilon)
        variants = [intervals]
        if method in CORRECTED_METHODS:
            variants.append(small_r_corrected(intervals, source, depth, near=near))
        for iv in variants:
            low, high = iv.low[s, t], iv.high[s, t]
            value = other.observed[s, t]
            rows.append(
                pd.DataFrame(
                    {
                        "direction": direction,
                        "method": iv.method,
                        "system": np.asarray(source.systems)[s],
                        "query_id": np.asarray(source.query_ids)[t],
                        "r_from": source.n_relevant[t],
                        "ap_from": source.observed[s, t],
                        "sd_from": sd_from,
                        "low": low,
                        "high": high,
                        "ap_other": value,
                        "sd_other": sd_other,
                        "position": _position(value, low, high),
                    }
                )
            )
    return rows


def _mean_rows(direction, source: CorpusBootstrap, other, usable, level, epsilon):
    rows = []
    for measure in ("MAP", "L-MAP"):
        for method in ("bootstrap", "parametric"):
            here = mean_intervals(
                source, measure, method, level=level, epsilon=epsilon, include=usable
            )
            there = mean_intervals(
                other, measure, method, level=level, epsilon=epsilon, include=usable
            )
            frame = here.to_frame().rename(columns={"estimate": "value_from"})
            frame.insert(0, "direction", direction)
            frame["value_other"] = there.estimate
            frame["standard_error_other"] = there.standard_error
            frame["position"] = _position(there.estimate, here.low, here.high)
            rows.append(frame)
    return rows
