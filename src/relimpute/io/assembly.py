"""Campaign assembly: qrels and runs as :mod:`relimpute.io` reads them, aligned per topic.

:class:`relimpute.data.Campaign` is built from what :func:`align_files` and :func:`align_frames`
return: per qrels topic, the fields of a :class:`~relimpute.data.TopicData` (document index in
docno order, grades, judged mask, rankings in trec_eval order). Reading flows one way:
:mod:`relimpute.io` reads, this module aligns, :mod:`relimpute.data` holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ..errors import InputError
from .fields import as_string_array, cast, dictionary_encode, from_numpy, not_equal, sort_distinct
from .fields import strings_to_numpy, take, to_numpy, unique
from .qrels import read_qrels
from .runs import read_run, read_run_columns
from .trec import trec_scores

if TYPE_CHECKING:  # qrels and runs come as DataFrames or (files) as columns: no pandas import
    import pandas as pd

UNJUDGED = -1  # qrels label for a pooled-but-unjudged document
_PAIR_CELLS = 1 << 24  # (system, document) cells one pass of _repeating_systems marks
_BATCH_ROWS = 1 << 20  # fewest run rows whose document ids _DocIds codes together


@dataclass(frozen=True, slots=True)
class Aligned:
    """Runs and qrels aligned per topic.

    Attributes
    ----------
    names
        The run names, in the order of the rankings' rows.
    topics
        Per qrels topic (query-id order), the fields of a ``TopicData``.
    dropped
        The topics runs retrieve that the qrels do not judge (dropped, as trec_eval does).
    n_dropping_runs
        How many runs retrieve for a dropped topic.
    """

    names: list[str]
    topics: list[dict]
    dropped: list[str]
    n_dropping_runs: int


def align_files(
    qrels: pd.DataFrame, files: list[tuple[str, Path]], *, by_rank: bool, duplicates: str
) -> Aligned:
    """Align the run ``files`` (name, path) with the ``qrels`` that
    :func:`~relimpute.io.read_qrels` returned; errors name the file and line."""
    judged = _Judgments.of(qrels)
    parts: list[_RunRows] = []
    # One run file in memory at a time: each is reduced to its rows, then dropped. A
    # document listed twice in a topic is found by _align (it codes documents per topic
    # anyway) and reported by reading that file again, so errors come in the order of
    # reading run by run: a run's duplicate before a later run's error.
    from ..progress import progress

    failed = None
    for _, path in progress(files, desc="reading runs", unit="run"):
        try:
            parts.append(_file_rows(path, judged, by_rank=by_rank, duplicates=duplicates))
        except InputError as error:  # an earlier run's duplicate first: the runs read so far
            failed = error
            break
    topics, repeating = _align(judged, parts)
    aligned = _aligned([name for name, _ in files], judged, parts, topics)
    _raise_first_duplicate(files, repeating, by_rank)
    if failed is not None:
        raise failed
    return aligned


def align_frames(
    qrels: pd.DataFrame, runs: Mapping[str, pd.DataFrame], *, by_rank: bool, validate: bool
) -> Aligned:
    """Align run frames with a qrels frame (checked by :mod:`relimpute.io` with ``validate``)."""
    if validate:
        qrels = read_qrels(qrels)
        runs = {name: read_run(frame, keep_rank=by_rank) for name, frame in runs.items()}
    return align_read_frames(qrels, runs, by_rank=by_rank)


def align_read_frames(
    qrels: pd.DataFrame, runs: Mapping[str, pd.DataFrame], *, by_rank: bool
) -> Aligned:
    """Align run frames with a qrels frame as :func:`~relimpute.io.read_qrels` and
    :func:`~relimpute.io.read_run` returned them."""
    judged = _Judgments.of(qrels)
    parts = [_frame_rows(run, judged, by_rank=by_rank) for run in runs.values()]
    topics, _ = _align(judged, parts)  # validated frames list no document twice in a topic
    return _aligned([str(name) for name in runs], judged, parts, topics)


def _aligned(names: list[str], judged: _Judgments, parts: list[_RunRows], topics) -> Aligned:
    n_judged = len(judged.topic_ids)
    return Aligned(
        names=names, topics=topics,
        dropped=judged.extra_topics(),
        n_dropping_runs=sum(bool((part.topics >= n_judged).any()) for part in parts),
    )


class _DocIds:
    """Document ids coded per topic as they are read, so that no run keeps its strings.

    Each topic has a dictionary of the ids met in it (qrels first, then the
    runs in reading order), grown in batches: a topic's ids read since the
    last batch are joined after its dictionary so far into one array and
    encoded, which keeps every earlier code (the hash table numbers values in
    the order it meets them); one array, not a chunk per run, as the encoder
    pays per chunk. A batch is coded once it holds as many rows as
    the dictionaries (and at least ``_BATCH_ROWS``), so every id is hashed
    about twice at most, and the strings are let go. Hash tables come from the
    system allocator, which gives them back (arrow's default pool would keep
    them). The qrels' codes go into the array :meth:`code` returned; the runs'
    are kept per topic (:meth:`run_codes`), so that the build can let each
    topic's go once it is built.
    """

    def __init__(self) -> None:
        self._ids: list[pa.Array | None] = []  # per topic code
        self._runs: list[list[np.ndarray]] = []  # per topic code: the runs' codes, by batch
        # (ids, the array to fill or None for a run's, topic codes, bounds) since the last batch
        self._pending: list[tuple[pa.Array, np.ndarray | None, np.ndarray, np.ndarray]] = []
        self._n_ids = 0
        self._pending_rows = 0

    def code(self, ids: pa.Array, topics: np.ndarray, bounds: np.ndarray) -> np.ndarray:
        """int32 codes of ``ids`` (the qrels'), whose rows ``bounds[i]`` to ``bounds[i + 1]``
        are of topic ``topics[i]``; each is its topic's. Filled in by the next batch, at the
        latest by :meth:`dictionaries`."""
        codes = np.empty(len(ids), dtype=np.int32)
        self._add(ids, codes, topics, bounds)
        return codes

    def add_run(self, ids: pa.Array, topics: np.ndarray, bounds: np.ndarray) -> None:
        """Code the ids of a run, laid out as for :meth:`code`."""
        self._add(ids, None, topics, bounds)

    def dictionaries(self, n_topics: int) -> list[pa.Array]:
        """The ids met in each of the first ``n_topics`` topics (position = code); they are
        then let go."""
        self._flush()
        empty = pa.nulls(0, pa.string())
        found = [empty if t >= len(self._ids) or d is None else d for t, d in enumerate(self._ids)]
        self._ids = []
        return (found + [empty] * n_topics)[:n_topics]

    def run_codes(self, topic: int) -> np.ndarray:
        """The codes of the runs' rows of ``topic``, in the order the runs were added; they
        are then let go."""
        self._flush()
        if topic >= len(self._runs) or not self._runs[topic]:
            return np.zeros(0, dtype=np.int32)
        runs, self._runs[topic] = self._runs[topic], []
        return np.concatenate(runs)

    def _add(self, ids: pa.Array, codes: np.ndarray | None, topics: np.ndarray, bounds) -> None:
        self._pending.append((ids, codes, topics, bounds))
        self._pending_rows += len(ids)
        if self._pending_rows >= max(self._n_ids, _BATCH_ROWS):
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        n_topics = max(
            [len(self._ids)] + [int(t.max()) + 1 for *_, t, _ in self._pending if len(t)]
        )
        self._ids.extend([None] * (n_topics - len(self._ids)))
        self._runs.extend([] for _ in range(n_topics - len(self._runs)))
        by_topic: list[list[tuple[pa.Array, np.ndarray | None]]] = [[] for _ in range(n_topics)]
        for ids, codes, topics, bounds in self._pending:
            for t, lo, hi in zip(topics.tolist(), bounds[:-1].tolist(), bounds[1:].tolist()):
                if hi > lo:
                    target = None if codes is None else codes[lo:hi]
                    by_topic[t].append((ids.slice(lo, hi - lo), target))
        self._pending, self._pending_rows = [], 0
        for t, pending in enumerate(by_topic):
            if not pending:
                continue
            known = self._ids[t]
            chunks = ([] if known is None else [known]) + [ids for ids, _ in pending]
            # files parse to 32-bit-offset strings; DataFrames and big files give large ones (as
            # do the qrels, cast to the runs' type)
            wide = (known is not None and pa.types.is_large_string(known.type)) or any(
                pa.types.is_large_string(ids.type) for ids, codes in pending if codes is None
            )
            doc_type = pa.large_string() if wide else pa.string()
            pool = pa.system_memory_pool()
            try:
                values = pa.concat_arrays([cast(c, doc_type) for c in chunks], memory_pool=pool)
            except pa.ArrowInvalid:  # over 2 GB of ids in one topic: 64-bit offsets
                chunks = [cast(c, pa.large_string()) for c in chunks]
                values = pa.concat_arrays(chunks, memory_pool=pool)
            encoded = dictionary_encode(values, pool)
            coded = to_numpy(encoded.indices)
            n_known = 0 if known is None else len(known)
            if not np.array_equal(coded[:n_known], np.arange(n_known)):  # never
                raise AssertionError("document codes changed between batches")
            end, runs = n_known, []
            for ids, codes in pending:
                if codes is None:
                    runs.append(coded[end : end + len(ids)])
                else:
                    codes[:] = coded[end : end + len(ids)]
                end += len(ids)
            if runs:
                self._runs[t].append(np.concatenate(runs))
            self._ids[t] = encoded.dictionary
            self._n_ids += len(self._ids[t]) - n_known


@dataclass(frozen=True, slots=True)
class _Judgments:
    """The qrels as the build reads them: topics coded, rows grouped by topic.

    ``codes`` gives each topic id a code: the qrels topics in query-id order
    (``0 .. len(topic_ids) - 1``), then the topics that only runs retrieve, in
    the order they are met (they are dropped, but a duplicate in them is still
    an error). ``docs`` codes the document ids of the qrels and of the runs
    (:class:`_RunRows` codes its documents through it).
    """

    topic_ids: list[str]
    codes: dict[str, int]
    docs: _DocIds
    doc: np.ndarray  # int32 document codes (each its topic's, of ``docs``), grouped by topic
    labels: np.ndarray  # int64, in the same order
    bounds: np.ndarray  # topic t's rows: bounds[t] to bounds[t + 1]

    @classmethod
    def of(cls, qrels: pd.DataFrame) -> _Judgments:
        query = as_string_array(qrels["query_id"])
        topic_ids = sorted(set(unique(query).to_pylist()))
        codes = {q: i for i, q in enumerate(topic_ids)}
        topic = _codes(query, codes)
        by_topic = np.argsort(topic, kind="stable")
        bounds = np.searchsorted(topic[by_topic], np.arange(len(topic_ids) + 1))
        docs = _DocIds()
        doc = take(as_string_array(qrels["doc_id"]), from_numpy(by_topic))
        return cls(
            topic_ids=topic_ids,
            codes=codes,
            docs=docs,
            doc=docs.code(doc, np.arange(len(topic_ids)), bounds),
            labels=np.asarray(qrels["relevance"], dtype=np.int64)[by_topic],
            bounds=bounds,
        )

    def extra_topics(self) -> list[str]:
        """The topics runs retrieve that the qrels do not judge."""
        return list(self.codes)[len(self.topic_ids) :]


@dataclass(frozen=True, slots=True)
class _RunRows:
    """One run reduced to what the build needs, its rows grouped by topic, in each topic by
    trec_eval's ranking key (score descending, or rank ascending) but not yet by docno."""

    tied: np.ndarray  # bool: the row's ranking key equals the previous row's (same topic)
    topics: np.ndarray  # the topic code of each group of rows
    bounds: np.ndarray  # group i's rows: bounds[i] to bounds[i + 1]

    @classmethod
    def of(cls, query: pa.Array, doc: pa.Array, order: np.ndarray, judged: _Judgments) -> _RunRows:
        """The rows of a run; runs list a topic's lines together, and are grouped if not.
        ``order`` is trec_eval's ranking key (ascending = ranked first)."""
        starts = _group_starts(query)
        if len(unique(take(query, from_numpy(starts)))) < len(starts):  # a topic twice
            rows = from_numpy(np.argsort(_codes(query, judged.codes), kind="stable"))
            query, doc, order = take(query, rows), take(doc, rows), order[to_numpy(rows)]
            starts = _group_starts(query)
        topics = _codes(take(query, from_numpy(starts)), judged.codes)
        bounds = np.r_[starts, len(query)]
        ranked, tied = _key_order(order, bounds)
        if ranked is not None:
            doc = take(doc, from_numpy(ranked))
        judged.docs.add_run(doc, topics, bounds)  # the build gets the codes from there
        return cls(tied=tied, topics=topics, bounds=bounds)


def _key_order(order: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """The permutation sorting rows by group (``bounds``), then ``order`` ascending, stably
    (None when they are sorted already: runs list their lines in rank order); and which
    rows, so sorted, tie with the previous one of their group.

    ``order`` compares as in :func:`_trec_order` (float32 by its monotone bits)."""
    rank = _monotone_bits(order) if order.dtype == np.float32 else _dense_rank(order)
    same_group = np.ones(max(len(rank) - 1, 0), dtype=bool)
    same_group[bounds[1:-1] - 1] = False  # row i + 1 starts a group
    permutation = None
    if not ((rank[1:] >= rank[:-1]) | ~same_group).all():
        n_ranks = int(rank.max(initial=0)) + 1
        group = np.repeat(np.arange(len(bounds) - 1, dtype=np.int64), np.diff(bounds))
        if (len(bounds) - 1) * n_ranks >= 2**63:
            permutation = np.lexsort((rank, group))
        else:
            permutation = np.argsort(group * n_ranks + rank, kind="stable")
        rank = rank[permutation]
    tied = np.zeros(len(rank), dtype=bool)
    np.equal(rank[1:], rank[:-1], out=tied[1:])
    tied[1:] &= same_group
    return permutation, tied


def _group_starts(ids: pa.Array) -> np.ndarray:
    """Index of the first row of every stretch of equal ids (no hashing: neighbours compared)."""
    if not len(ids):
        return np.zeros(0, dtype=np.int64)
    changed = not_equal(ids.slice(1), ids.slice(0, len(ids) - 1))
    return np.r_[0, np.flatnonzero(to_numpy(changed)) + 1]


def _score_order(score: np.ndarray | pd.Series) -> np.ndarray:
    """trec_eval's ranking key of scores: minus the score at its float32 precision, as float32."""
    return -trec_scores(score).astype(np.float32)


def _frame_rows(run: pd.DataFrame, judged: _Judgments, *, by_rank: bool) -> _RunRows:
    """The rows of a run frame (as :func:`~relimpute.io.read_run` returns them)."""
    order = run["rank"].to_numpy(dtype=float) if by_rank else _score_order(run["score"])
    query, doc = as_string_array(run["query_id"]), as_string_array(run["doc_id"])
    return _RunRows.of(query, doc, order, judged)


def _file_rows(path: Path, judged: _Judgments, *, by_rank: bool, duplicates: str) -> _RunRows:
    """The rows of a run file, checked as :func:`~relimpute.io.read_run` checks them, except
    that under ``duplicates="error"`` a document twice in a topic is left to :func:`_align`."""
    if duplicates != "error":  # keeping one line of each duplicate: the full reader
        run = read_run(path, duplicates=duplicates, keep_rank=by_rank)
        return _frame_rows(run, judged, by_rank=by_rank)
    columns, _ = read_run_columns(path, keep_rank=by_rank)
    order = columns["rank"].astype(float) if by_rank else _score_order(columns["score"])
    return _RunRows.of(columns["query_id"], columns["doc_id"], order, judged)


def _raise_first_duplicate(
    files: list[tuple[str, Path]], repeating: set[int], by_rank: bool
) -> None:
    """Raise the duplicate error of the first of the ``repeating`` runs (its file read again
    by :func:`~relimpute.io.read_run`, which names the lines)."""
    if repeating:
        read_run(files[min(repeating)][1], keep_rank=by_rank)


def _align(judged: _Judgments, runs: list[_RunRows]) -> tuple[list[dict], set[int]]:
    """Every qrels topic's documents, judgments and rankings; and the runs that list a
    document twice in a topic (any topic, dropped ones included).

    Documents come coded per topic (:class:`_DocIds`); each topic's codes are
    renumbered so that they order as docnos do (byte order of UTF-8, trec_eval's
    strcmp order).
    """
    n_judged, n_runs = len(judged.topic_ids), len(runs)
    first = np.zeros((len(judged.codes), n_runs), dtype=np.int64)
    end = np.zeros_like(first)
    for s, run in enumerate(runs):
        first[run.topics, s], end[run.topics, s] = run.bounds[:-1], run.bounds[1:]
    dictionaries = judged.docs.dictionaries(len(judged.codes))
    sizes = [len(d) for d in dictionaries]
    topics: list[dict] = []
    repeating: set[int] = set()
    for t in range(len(judged.codes)):
        systems = np.flatnonzero(end[t] > first[t])
        counts = end[t, systems] - first[t, systems]
        run_codes = judged.docs.run_codes(t)  # the runs' rows, by system
        if t >= n_judged:  # dropped: only checked for duplicates
            repeating.update(_repeating_systems(np.repeat(systems, counts), run_codes, sizes[t]))
            continue
        labelled = slice(judged.bounds[t], judged.bounds[t + 1])
        dictionary, dictionaries[t] = dictionaries[t], None
        by_docno = sort_distinct(dictionary)  # the topic's codes in docno order
        code_of = np.empty(len(by_docno), dtype=np.int32)
        code_of[by_docno] = np.arange(len(by_docno), dtype=np.int32)
        doc_codes = code_of[np.concatenate([run_codes, judged.doc[labelled]])]
        del run_codes
        n_rows = int(counts.sum())
        run_doc, judged_doc = doc_codes[:n_rows], doc_codes[n_rows:]
        system = np.repeat(systems, counts)
        repeating.update(_repeating_systems(system, run_doc, len(by_docno)))
        # rows come by system, then ranking key: only ties are left to order, by docno
        tied = [runs[s].tied[first[t, s] : end[t, s]] for s in systems]
        tied = np.concatenate(tied) if tied else np.zeros(0, dtype=bool)
        ranked = run_doc
        if tied.any():  # sort the rows of every tie by docno (a system's first row never ties)
            in_tie = np.flatnonzero(tied | np.append(tied[1:], False))
            tie = np.cumsum(~tied)[in_tie]
            docs = run_doc[in_tie]
            ranked = run_doc.copy()
            unordered = np.zeros(len(in_tie), dtype=np.float32)
            ranked[in_tie] = docs[_trec_order(tie, unordered, docs, len(by_docno))]
        depth = np.zeros(n_runs, dtype=np.int32)
        depth[systems] = counts
        ranking = np.full((n_runs, int(depth.max(initial=0))), -1, dtype=np.int32)
        position = np.arange(n_rows) - np.repeat(np.cumsum(counts) - counts, counts)
        ranking[system, position] = ranked
        labels = judged.labels[labelled]
        grades = np.zeros(len(by_docno), dtype=np.int16)
        grades[judged_doc] = labels
        known = np.zeros(len(by_docno), dtype=bool)
        known[judged_doc[labels != UNJUDGED]] = True
        topics.append(
            dict(
                query_id=str(judged.topic_ids[t]),
                doc_ids=strings_to_numpy(take(dictionary, from_numpy(by_docno))),
                grades=grades,
                judged=known,
                ranking=ranking,
                depth=depth,
            )
        )
    return topics, repeating


def _repeating_systems(system: np.ndarray, doc: np.ndarray, n_docs: int) -> list[int]:
    """The systems that list a document twice, given rows ordered by system.

    Marks the rows' (system, document) cells in a table of as many systems at
    a time as fit in ``_PAIR_CELLS``: fewer cells marked than rows means a pair
    repeats. Linear time, no sort.
    """
    found: list[int] = []
    if not len(system):
        return found
    per_pass = max(1, _PAIR_CELLS // max(n_docs, 1))
    for lowest in range(int(system[0]), int(system[-1]) + 1, per_pass):
        lo, hi = np.searchsorted(system, [lowest, lowest + per_pass])
        cells = (system[lo:hi] - lowest) * n_docs + doc[lo:hi]
        marked = np.zeros(min(per_pass, int(system[-1]) + 1 - lowest) * n_docs, dtype=bool)
        marked[cells] = True
        if np.count_nonzero(marked) < hi - lo:
            pairs, counts = np.unique(cells, return_counts=True)
            found.extend((np.unique(pairs[counts > 1] // n_docs) + lowest).tolist())
    return found


def _trec_order(group: np.ndarray, order: np.ndarray, doc: np.ndarray, n_docs: int) -> np.ndarray:
    """Permutation sorting rows by group, then ``order`` ascending, then ``doc`` descending.

    Equivalent to ``np.lexsort((-doc, order, group))`` but a single integer
    sort: ``order`` is replaced by integers that sort the same (for float32, its
    bits made monotone; otherwise its dense rank) and the three keys are packed
    into one int64 when they fit (they do for any realistic campaign; otherwise
    lexsort is used).
    """
    rank = _monotone_bits(order) if order.dtype == np.float32 else _dense_rank(order)
    n_ranks = int(rank.max(initial=0)) + 1
    n_groups = int(group.max(initial=0)) + 1
    if n_groups * n_ranks * n_docs >= 2**63:
        return np.lexsort((-doc, order, group))
    # key = (group * n_ranks + rank) * n_docs + (n_docs - 1 - doc), built in place
    key = group.astype(np.int64)
    key *= n_ranks
    key += rank
    del rank
    key *= n_docs
    key += n_docs - 1
    key -= doc
    return np.argsort(key, kind="stable")


def _monotone_bits(values: np.ndarray) -> np.ndarray:
    """Non-negative int64 that sort as the float32 ``values`` (-0.0 and 0.0 alike)."""
    bits = (values + np.float32(0)).view(np.uint32)  # + 0 makes -0.0 into 0.0
    keys = np.where(bits >> 31 == 1, ~bits, bits | np.uint32(1 << 31)).astype(np.int64)
    return keys - keys.min() if len(keys) else keys


def _dense_rank(values: np.ndarray) -> np.ndarray:
    """int64 rank of every value among the distinct values (equal values, equal rank)."""
    n = len(values)
    by_value = np.argsort(values, kind="stable")
    sorted_values = values[by_value]
    new_value = np.zeros(n, dtype=np.int64)
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=new_value[1:], casting="unsafe")
    rank = np.empty(n, dtype=np.int64)
    rank[by_value] = np.cumsum(new_value, out=new_value)
    return rank


def _codes(ids: pa.Array, position: dict[str, int]) -> np.ndarray:
    """int32 codes of string ids from ``position``, which gets a new code for an unknown id."""
    encoded = dictionary_encode(ids)
    known = [position.setdefault(v, len(position)) for v in encoded.dictionary.to_pylist()]
    return np.array(known, dtype=np.int32)[to_numpy(encoded.indices)]
