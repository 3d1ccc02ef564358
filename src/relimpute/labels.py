"""Automatic relevance labels (an LLM's, say) as evidence, never as judgments.

A label file gives, for some (topic, document) pairs, the label a labeller
other than the campaign's assessors assigned: graded (``0``-``3``, UMBRELA),
binary (``0``/``1``) or a probability of relevance. It is read with the
library's own readers (:func:`relimpute.io.read_qrels` for the qrels format
``qid iter docno label``, :func:`relimpute.io.read_prob_qrels` for the
probabilistic-qrels format ``query_id doc_id probability``), so a bad line gets
the same error, naming file and line, as a bad qrels line.

What the labels are taken to mean: evidence whose error is learned from the
human judgments at hand (:class:`relimpute.relevance.fusion_llm.FusionLLM`),
never a judgment; a judged document keeps its human label whatever the label
file says. The label values become categories (each grade, or one of
:data:`PROBABILITY_BINS` bins of a probability), and the model learns
P(relevant | category) per source.

Attach sources to a campaign with :func:`with_labels` (the campaign keeps them
through :meth:`~relimpute.data.Campaign.with_judged` and
:meth:`~relimpute.data.Campaign.subset`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is imported where label files are read: scoring needs none
    import pandas as pd

#: edges of the categories of probability labels (a label p falls in the bin with
#: ``edges[k] <= p < edges[k + 1]``, 1.0 in the last)
PROBABILITY_BINS: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
#: most distinct grades a graded label file may use (more looks like scores, not labels)
MAX_GRADES = 10


@dataclass(frozen=True, eq=False)
class LabelSource:
    """One labeller's labels: ``(topic, document) → category``.

    Attributes
    ----------
    name
        The source's name (by default the file's name without ``.gz`` and its last suffix).
    scale
        ``"graded"``, ``"binary"`` or ``"probability"``.
    categories
        What each category code stands for: the grades, or the probability bins
        (``"[0.2, 0.4)"``).
    frame
        ``query_id, doc_id, category`` (int codes into ``categories``), one row per pair.
    source
        Where the labels came from (a path, or ``"<DataFrame>"``).
    line_numbers
        The line of the file each row of ``frame`` was read from (None: not read from a file),
        for errors to point at.
    """

    name: str
    scale: str
    categories: tuple[str, ...]
    frame: pd.DataFrame
    source: str = "<DataFrame>"
    line_numbers: np.ndarray | None = dataclasses.field(default=None, repr=False)

    @property
    def n_categories(self) -> int:
        return len(self.categories)

    def align(self, campaign) -> list[np.ndarray]:
        """Per topic of ``campaign``, ``(n,)`` int category codes of its documents (-1: no label)."""
        out = []
        for topic in campaign.topics:
            codes = np.full(topic.n_docs, -1, dtype=np.int64)
            found = self._by_topic.get(topic.query_id)
            if found is not None:
                import pandas as pd

                at = pd.Index(topic.doc_ids).get_indexer(found[0])
                codes[at[at >= 0]] = found[1][at >= 0]
            out.append(codes)
        return out

    @functools.cached_property
    def _by_topic(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per topic, its labelled document ids and their category codes (the last label of a
        pair given twice), computed once: :meth:`align` runs at every confidence computation."""
        frame = self.frame.drop_duplicates(["query_id", "doc_id"], keep="last")
        return {
            str(q): (group["doc_id"].to_numpy(dtype=object), group["category"].to_numpy(np.int64))
            for q, group in frame.groupby("query_id", sort=False)
        }

    def __repr__(self) -> str:
        return (
            f"LabelSource({self.name!r}, {self.scale}, {len(self.frame)} labels, "
            f"categories {list(self.categories)})"
        )


def read_labels(source: str | os.PathLike | pd.DataFrame, *, name: str | None = None) -> LabelSource:
    """Read a label file (qrels or probabilistic-qrels format; module docstring).

    A file with four fields per line is qrels (integer labels: ``binary`` when they
    are all 0 or 1, else ``graded``); three fields, probabilistic qrels
    (``probability``). A DataFrame has ``relevance`` or ``probability`` beside the ids.

    Raises
    ------
    InputError
        Naming the file and line: a line the readers refuse, a grade below 0 (qrels'
        "unjudged" -1 is no label), more than :data:`MAX_GRADES` distinct grades.
    """
    from .io.qrels import read_label_file

    where = str(source) if isinstance(source, (str, os.PathLike)) else "<DataFrame>"
    if name is None:
        name = _source_name(where)
    form, table, lines = read_label_file(source)
    if form == "probability":
        edges = np.asarray(PROBABILITY_BINS)
        category = np.clip(np.searchsorted(edges, table["probability"], side="right") - 1, 0, len(edges) - 2)
        names = tuple(f"[{a:g}, {b:g}{']' if b == 1 else ')'}" for a, b in zip(edges[:-1], edges[1:]))
        return _source(name, "probability", names, table, category, where, lines)
    grades = table["relevance"].to_numpy()
    if (grades < 0).any():
        i = int(np.flatnonzero(grades < 0)[0])
        raise InputError(
            f"label {grades[i]} for topic {table['query_id'].iat[i]!r}, document "
            f"{table['doc_id'].iat[i]!r}: labels are grades >= 0 (a pair with no label is left out)",
            where,
            None if lines is None else int(lines[i]),
        )
    values = np.unique(grades)
    if len(values) > MAX_GRADES:
        _, first = np.unique(grades, return_index=True)
        i = int(np.sort(first)[MAX_GRADES])  # the first label beyond MAX_GRADES distinct ones
        raise InputError(
            f"{len(values)} distinct labels ({values.min()} to {values.max()}): a label scale has at "
            f"most {MAX_GRADES} grades; give probabilities in the probabilistic-qrels format instead",
            where,
            None if lines is None else int(lines[i]),
        )
    scale = "binary" if set(values) <= {0, 1} else "graded"
    values = np.arange(2) if scale == "binary" else values
    category = np.searchsorted(values, grades)
    return _source(name, scale, tuple(str(v) for v in values), table, category, where, lines)


def _source_name(where: str) -> str:
    """A file's name without ``.gz`` and its last suffix (``binary-llama3.2.txt.gz`` →
    ``binary-llama3.2``); ``labels`` for a DataFrame."""
    if where == "<DataFrame>":
        return "labels"
    name = Path(where).name
    name = name[: -len(".gz")] if name.endswith(".gz") else name
    return Path(name).stem or name


def _source(name, scale, categories, table, category, where, lines) -> LabelSource:
    import pandas as pd

    frame = pd.DataFrame(
        {"query_id": table["query_id"], "doc_id": table["doc_id"], "category": np.asarray(category, np.int64)}
    )
    return LabelSource(name=name, scale=scale, categories=categories, frame=frame, source=where,
                       line_numbers=lines)  # fmt: skip


def _line_of(source: LabelSource, row: int) -> int | None:
    """The line of the file ``source`` was read from that holds its row ``row`` (to point an
    error at it), else None."""
    return None if source.line_numbers is None else int(source.line_numbers[row])


def check_labels(campaign, source: LabelSource, *, unknown_documents: str = "error") -> LabelSource:
    """``source`` checked against ``campaign``: :class:`InputError` (naming file and line) if
    it labels a topic the campaign lacks (most likely a file for another collection, or ids
    spelled differently) or, with ``unknown_documents="error"``, a document it lacks;
    ``"drop"`` sets such labels aside and returns the source without them. (``"add"``, in
    :func:`with_labels`, adds the documents to the campaign first.)"""
    _check_topics(campaign, source)
    docs = {t.query_id: set(t.doc_ids.tolist()) for t in campaign.topics}
    frame = source.frame
    known = np.fromiter(
        (d in docs[q] for q, d in zip(frame["query_id"], frame["doc_id"])), bool, len(frame)
    )
    if not known.all() and unknown_documents == "drop":
        lines = None if source.line_numbers is None else source.line_numbers[known]
        return dataclasses.replace(source, frame=frame[known].reset_index(drop=True),
                                   line_numbers=lines)  # fmt: skip
    if not known.all():
        i = int(np.flatnonzero(~known)[0])
        q, d = frame["query_id"].iat[i], frame["doc_id"].iat[i]
        raise InputError(
            f"label for document {d!r} of topic {q!r}, which neither the qrels nor any run hold "
            f"({int((~known).sum())} such label(s)); with_labels(unknown_documents='add') adds such "
            f"documents to the campaign, 'drop' sets their labels aside",
            source.source,
            _line_of(source, i),
        )
    return source


def _check_topics(campaign, source: LabelSource) -> None:
    """:class:`InputError` naming file and line when ``source`` labels a topic ``campaign`` lacks."""
    frame = source.frame
    missing_topic = ~frame["query_id"].isin(campaign.query_ids).to_numpy()
    if missing_topic.any():
        i = int(np.flatnonzero(missing_topic)[0])
        q = frame["query_id"].iat[i]
        n = int(frame.loc[missing_topic, "query_id"].nunique())
        raise InputError(
            f"labels for topic {q!r}, which the campaign lacks ({n} such topic(s)); the campaign's "
            f"topics are {_listing(campaign.query_ids)}",
            source.source,
            _line_of(source, i),
        )


def labelled_documents(campaign) -> list[np.ndarray] | None:
    """Per topic of ``campaign``, ``(n,)`` bool: the documents some label source of the campaign
    names; None when it carries none. They count towards R (the campaign knows they exist:
    :func:`relimpute.confidence.counted_documents`) whether or not a run retrieves them."""
    if not campaign.labels:
        return None
    masks = [np.zeros(t.n_docs, dtype=bool) for t in campaign.topics]
    for source in campaign.labels:
        for mask, codes in zip(masks, source.align(campaign)):
            mask |= codes >= 0
    return masks


def _listing(items: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items)} topics)" if len(items) > limit else "")


#: what :func:`with_labels` does with a label on a document the campaign lacks
UNKNOWN_DOCUMENTS = ("add", "drop", "error")


def with_labels(
    campaign, sources: Iterable[LabelSource | str | os.PathLike], *, unknown_documents: str = "add"
):
    """``campaign`` carrying the label ``sources`` (read from paths when given paths), each
    checked against it (:func:`check_labels`); names must differ.

    A label on a document of a known topic that neither the qrels nor any run hold (a label
    file for a deeper pool than the human judgments, say): ``"add"`` (the default) adds the
    document to its topic, unjudged and retrieved by no run
    (:meth:`~relimpute.data.Campaign.with_documents`), so that R counts it as it counts every
    labelled document (:func:`labelled_documents`); ``"drop"`` sets the label aside;
    ``"error"`` raises :class:`InputError` naming file and line. A label on a topic the
    campaign lacks is an error whatever the policy.
    """
    if unknown_documents not in UNKNOWN_DOCUMENTS:
        raise ValueError(f"unknown_documents must be one of {UNKNOWN_DOCUMENTS}, got {unknown_documents!r}")
    read = [s if isinstance(s, LabelSource) else read_labels(s) for s in sources]
    every = (*campaign.labels, *read)
    names = [s.name for s in every]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        where = " and ".join(s.source for s in every if s.name == twice)
        raise InputError(
            f"two label sources named {twice!r} ({where}): a source is named by its file's name "
            "without the suffix, so rename one of the files"
        )
    if unknown_documents == "add" and read:
        for source in read:  # an unknown topic is an error before anything is added
            _check_topics(campaign, source)
        campaign = campaign.with_documents(_named_documents(read))
    read = [check_labels(campaign, s, unknown_documents=unknown_documents) for s in read]
    return dataclasses.replace(campaign, labels=(*campaign.labels, *read))


def _named_documents(sources: Sequence[LabelSource]) -> dict[str, list[str]]:
    """Per topic, the documents the ``sources`` label (first appearance order)."""
    import pandas as pd

    frame = pd.concat([s.frame[["query_id", "doc_id"]] for s in sources], ignore_index=True)
    return {str(q): group["doc_id"].tolist() for q, group in frame.groupby("query_id", sort=False)}
