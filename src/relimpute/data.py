"""The in-memory campaign: runs and judgments as per-topic integer arrays.

A :class:`Campaign` is what every kernel in relimpute works on. For each topic
it keeps a document index over the union of all runs' and qrels' documents,
each run's ranking as a row of document indices (trec_eval order: score
descending compared at trec_eval's float32 precision, ties by docno
descending in byte order; padded with ``-1``), and the judgments as a mask
plus graded labels (qrels label ``-1`` = pooled but unjudged). Reading and
building the 37 DL 2019 runs (1.4 M lines) takes under 2 s of CPU
(``benchmarks/bench_load.py``).

Topic policy (as trec_eval): the topics are those of the qrels, ordered by
query id. Topics that runs retrieve for but the qrels do not judge are
dropped; one entry of :attr:`Campaign.notes` lists them (and is issued as a
``UserWarning``). A qrels topic that a run does not retrieve for becomes an
empty ranking (depth 0) for that run, noted per run; measures then either
skip it for that run (trec_eval's default) or score it 0 (trec_eval ``-c``),
see :mod:`relimpute.measures`. A qrels topic whose lines are all ``-1`` is
kept with nothing judged.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .io import (
    as_string_array,
    read_qrels,
    read_run,
    run_files,
    trec_scores,
    write_qrels,
    write_run,
)

UNJUDGED = -1  # qrels label for a pooled-but-unjudged document


@dataclass(frozen=True, slots=True, eq=False)
class TopicData:
    """One topic of a campaign.

    Attributes
    ----------
    query_id
        The topic id.
    doc_ids
        ``(n,)`` document ids: the union of every run's and the qrels' documents.
    grades
        ``(n,)`` int16 graded labels where ``judged``; elsewhere ``-1`` for a
        document the qrels list as pooled but unjudged (label ``-1``), else 0.
    judged
        ``(n,)`` bool, True where the document has a label.
    ranking
        ``(S, D)`` int32 document indices, one row per system in rank order,
        padded with ``-1`` after the system's last document.
    depth
        ``(S,)`` int32 number of documents each system retrieved (0 = none).
    """

    query_id: str
    doc_ids: np.ndarray
    grades: np.ndarray
    judged: np.ndarray
    ranking: np.ndarray
    depth: np.ndarray

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)

    def relevant(self, threshold: int) -> np.ndarray:
        """``(n,)`` bool: judged with a grade of at least ``threshold``."""
        return self.judged & (self.grades >= threshold)

    def retrieved(self, systems: Sequence[int] | None = None) -> np.ndarray:
        """``(n,)`` bool: retrieved by any of ``systems`` (all when None)."""
        rows = self.ranking if systems is None else self.ranking[np.asarray(systems, dtype=int)]
        mask = np.zeros(self.n_docs, dtype=bool)
        docs = rows[rows >= 0]
        mask[docs] = True
        return mask

    def ranks(self, system: int) -> np.ndarray:
        """``(n,)`` int32 1-based rank of every document in ``system`` (0 = not retrieved)."""
        out = np.zeros(self.n_docs, dtype=np.int32)
        row = self.ranking[system, : self.depth[system]]
        out[row] = np.arange(1, len(row) + 1, dtype=np.int32)
        return out


@dataclass(frozen=True, slots=True, eq=False)
class Campaign:
    """Runs and judgments of one test collection, aligned per topic.

    Build one with :meth:`from_files` or :meth:`from_frames`; select with
    :meth:`subset`; change what is known with :meth:`with_judged`.

    Attributes
    ----------
    systems
        Run names, in the order of the rows of every ``TopicData.ranking``.
    topics
        One :class:`TopicData` per qrels topic, ordered by query id.
    rel_threshold
        Minimum grade that counts as relevant for binary measures and models.
    notes
        What the topic and input policies did (dropped topics, empty rankings).
    """

    systems: tuple[str, ...]
    topics: tuple[TopicData, ...]
    rel_threshold: int = 1
    notes: tuple[str, ...] = field(default=())

    # ------------------------------------------------------------------ building

    @classmethod
    def from_files(
        cls,
        qrels: str | os.PathLike,
        runs: str | os.PathLike | Iterable[str | os.PathLike],
        *,
        rel_threshold: int | None = None,
        by_rank: bool = False,
        duplicates: str = "error",
    ) -> Campaign:
        """Read qrels and runs (files or directories) into a campaign.

        Every file is validated by :mod:`relimpute.io` (errors name the file and
        line); ``duplicates`` is the policy for both runs and qrels.
        ``rel_threshold=None`` takes the collection's (``relimpute.toml`` beside
        the qrels, :mod:`relimpute.collection_settings`), else 1. ``qrels`` may
        be ``"irds:<dataset id>"``: the qrels of an ir_datasets dataset
        (:func:`relimpute.adapters.ir_datasets_qrels`).
        """
        from .adapters import IR_DATASETS_PREFIX, ir_datasets_qrels
        from .collection_settings import resolve_rel_threshold

        rel_threshold, _ = resolve_rel_threshold(qrels, rel_threshold)
        if isinstance(qrels, str) and qrels.startswith(IR_DATASETS_PREFIX):
            qrels = ir_datasets_qrels(qrels[len(IR_DATASETS_PREFIX) :])
        qrels_frame = read_qrels(qrels, duplicates=duplicates)  # small: fail fast
        if isinstance(runs, Mapping):
            return cls.from_frames(qrels_frame, runs, rel_threshold=rel_threshold, by_rank=by_rank)
        # one run file in memory at a time: each is reduced to its arrays, then dropped
        stream = (
            (name, read_run(path, duplicates=duplicates, keep_rank=by_rank))
            for name, path in run_files(runs)
        )
        return cls._build(qrels_frame, stream, rel_threshold=rel_threshold, by_rank=by_rank)

    @classmethod
    def from_frames(
        cls,
        qrels: pd.DataFrame,
        runs: Mapping[str, pd.DataFrame],
        *,
        rel_threshold: int = 1,
        by_rank: bool = False,
        validate: bool = True,
    ) -> Campaign:
        """Align qrels and runs given as ir_measures-style DataFrames (or what people hold).

        ``qrels`` has ``query_id, doc_id, relevance``; each run has ``query_id,
        doc_id, score`` (and ``rank`` when ``by_rank``). Also accepted
        (:mod:`relimpute.adapters`): pytrec_eval-style dicts and ranx ``Qrels``
        / ``Run`` objects, and one stacked run DataFrame with a ``run`` (or
        ``system``) column. With ``validate`` (the
        default) the frames go through :func:`~relimpute.io.read_qrels` and
        :func:`~relimpute.io.read_run` first (column aliases, numbers,
        duplicates); pass ``validate=False`` only for frames those readers
        returned.
        """
        from .adapters import as_qrels_frame, as_run_frames

        qrels, runs = as_qrels_frame(qrels), as_run_frames(runs)
        if validate:
            qrels = read_qrels(qrels)
            runs = {name: read_run(frame, keep_rank=by_rank) for name, frame in runs.items()}
        return cls._build(qrels, runs.items(), rel_threshold=rel_threshold, by_rank=by_rank)

    @classmethod
    def _build(
        cls,
        qrels: pd.DataFrame,
        runs: Iterable[tuple[str, pd.DataFrame]],
        *,
        rel_threshold: int,
        by_rank: bool,
    ) -> Campaign:
        """The campaign of validated frames; ``runs`` is consumed once, a run at a time."""
        notes: list[str] = []

        q_query = as_string_array(qrels["query_id"])
        topic_ids = np.array(sorted(set(pc.unique(q_query).to_pylist())), dtype=object)
        topic_pos = {q: i for i, q in enumerate(topic_ids)}
        qrel_topic = _codes(q_query, topic_pos)
        q_rel = qrels["relevance"].to_numpy(dtype=np.int64)

        # Per run: topic codes, document ids and trec_eval's ordering key. No run-sized
        # string array is concatenated and codes are int32: loading's peak memory is set here.
        topic_parts, doc_parts, order_parts, lengths = [], [], [], []
        names, dropped = [], set()
        for name, run in runs:
            names.append(str(name))
            query = as_string_array(run["query_id"])
            codes = _codes(query, topic_pos)
            if (codes < 0).any():
                dropped.update(query.filter(pa.array(codes < 0)).unique().to_pylist())
            topic_parts.append(codes)
            doc_parts.append(as_string_array(run["doc_id"]))
            order = run["rank"].to_numpy(dtype=float) if by_rank else -trec_scores(run["score"])
            order_parts.append(order)
            lengths.append(len(run))
            del run, query
        if not names:
            raise ValueError("a campaign needs at least one run")
        systems = tuple(names)
        run_topic = np.concatenate(topic_parts)
        run_sys = np.repeat(np.arange(len(systems), dtype=np.int32), lengths)
        run_order = np.concatenate(order_parts)
        del order_parts
        stray = run_topic < 0
        if stray.any():
            dropped = sorted(dropped)
            n_runs = len(np.unique(run_sys[stray]))
            notes.append(
                f"{len(dropped)} topic(s) retrieved by {n_runs} run(s) but absent from the "
                f"qrels were dropped, as trec_eval does ({_listing(dropped)})"
            )
        del topic_parts

        # One code per document id, sorted so that codes order as docnos do
        # (byte order of UTF-8, which is trec_eval's strcmp order). One hash table over
        # the runs' chunks and the qrels gives every chunk the same dictionary.
        encoded = _encode_shared(
            pa.chunked_array([*doc_parts, as_string_array(qrels["doc_id"])], type=pa.large_string())
        )
        del doc_parts
        dictionary = encoded.chunk(0).dictionary
        vocab_order = pc.sort_indices(dictionary).to_numpy()
        doc_rank = np.empty(len(vocab_order), dtype=np.int32)
        doc_rank[vocab_order] = np.arange(len(vocab_order), dtype=np.int32)
        doc_codes = np.concatenate([doc_rank[c.indices.to_numpy()] for c in encoded.chunks])
        doc_vocab = dictionary.take(pa.array(vocab_order)).to_numpy(zero_copy_only=False)
        del encoded, dictionary
        n_run_rows = len(run_topic)
        run_doc, qrel_doc = doc_codes[:n_run_rows], doc_codes[n_run_rows:]
        if stray.any():
            keep = ~stray
            run_topic, run_sys, run_order, run_doc = (
                run_topic[keep], run_sys[keep], run_order[keep], run_doc[keep]
            )

        # trec_eval order: per (topic, system), float32 score descending, ties by docno descending.
        perm = _trec_order(run_topic * len(systems) + run_sys, run_order, run_doc, len(doc_vocab))
        del run_order
        run_topic, run_sys, run_doc = run_topic[perm], run_sys[perm], run_doc[perm]
        del perm
        group_start = np.r_[True, (run_topic[1:] != run_topic[:-1]) | (run_sys[1:] != run_sys[:-1])]
        starts = np.flatnonzero(group_start).astype(np.int32)
        group_sizes = np.diff(np.r_[starts, len(run_doc)])
        position = np.arange(len(run_doc), dtype=np.int32) - np.repeat(starts, group_sizes)

        n_sys = len(systems)
        topic_run_bounds = np.searchsorted(run_topic, np.arange(len(topic_ids) + 1))
        qrel_order = np.argsort(qrel_topic, kind="stable")
        qrel_bounds = np.searchsorted(qrel_topic[qrel_order], np.arange(len(topic_ids) + 1))

        topics = []
        # Per topic, its documents in docno order and every row's index among them, by
        # marking codes in one vocabulary-sized table (no sort, no search).
        present = np.zeros(len(doc_vocab), dtype=bool)
        local_of = np.empty(len(doc_vocab), dtype=np.int32)
        for t, query_id in enumerate(topic_ids):
            lo, hi = topic_run_bounds[t], topic_run_bounds[t + 1]
            qsel = qrel_order[qrel_bounds[t] : qrel_bounds[t + 1]]
            present[run_doc[lo:hi]] = True
            present[qrel_doc[qsel]] = True
            docs_here = np.flatnonzero(present)
            present[docs_here] = False
            local_of[docs_here] = np.arange(len(docs_here), dtype=np.int32)
            local = local_of[run_doc[lo:hi]]
            sys_here, pos_here = run_sys[lo:hi], position[lo:hi]
            depth = np.bincount(sys_here, minlength=n_sys).astype(np.int32)
            ranking = np.full((n_sys, int(depth.max(initial=0))), -1, dtype=np.int32)
            ranking[sys_here, pos_here] = local
            grades = np.zeros(len(docs_here), dtype=np.int16)
            judged = np.zeros(len(docs_here), dtype=bool)
            qlocal = local_of[qrel_doc[qsel]]
            labels = q_rel[qsel]
            known = labels != UNJUDGED
            grades[qlocal] = labels
            judged[qlocal[known]] = True
            topics.append(
                TopicData(
                    query_id=str(query_id),
                    doc_ids=np.asarray(doc_vocab[docs_here], dtype=object),
                    grades=grades,
                    judged=judged,
                    ranking=ranking,
                    depth=depth,
                )
            )
        for s, name in enumerate(systems):
            missing = [tp.query_id for tp in topics if tp.depth[s] == 0]
            if missing:
                notes.append(
                    f"run {name!r}: retrieves nothing for {len(missing)} qrels topic(s) "
                    f"({_listing(missing)})"
                )
        for note in notes:
            warnings.warn(note, stacklevel=2)
        return cls(
            systems=systems, topics=tuple(topics), rel_threshold=rel_threshold, notes=tuple(notes)
        )

    # ------------------------------------------------------------------ views

    @property
    def query_ids(self) -> tuple[str, ...]:
        return tuple(t.query_id for t in self.topics)

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    def system_index(self, names: str | Sequence[str]) -> np.ndarray:
        """Row indices of systems given by name (raises KeyError naming the unknown one)."""
        if isinstance(names, str):
            names = [names]
        lookup = {s: i for i, s in enumerate(self.systems)}
        try:
            return np.array([lookup[n] for n in names], dtype=int)
        except KeyError as exc:
            raise KeyError(f"unknown system {exc.args[0]!r}; have {list(self.systems)}") from None

    def relevant(self) -> list[np.ndarray]:
        """Per topic, ``(n,)`` bool: judged relevant at :attr:`rel_threshold`."""
        return [t.relevant(self.rel_threshold) for t in self.topics]

    def coverage(self) -> np.ndarray:
        """``(S, T)`` bool: does the system retrieve anything for the topic."""
        return np.stack([t.depth > 0 for t in self.topics], axis=1)

    def subset(
        self, systems: Sequence[str] | None = None, topics: Sequence[str] | None = None
    ) -> Campaign:
        """A campaign restricted to some systems and/or topics (document index kept)."""
        topic_list = self.topics
        if topics is not None:
            wanted = set(map(str, topics))
            unknown = wanted - set(self.query_ids)
            if unknown:
                raise KeyError(f"unknown topic(s) {sorted(unknown)}")
            topic_list = tuple(t for t in self.topics if t.query_id in wanted)
        if systems is None:
            return replace(self, topics=topic_list)
        rows = self.system_index(systems)
        new_topics = []
        for t in topic_list:
            depth = t.depth[rows]
            new_topics.append(
                replace(t, ranking=t.ranking[rows, : int(depth.max(initial=0))], depth=depth)
            )
        return replace(self, systems=tuple(self.systems[i] for i in rows), topics=tuple(new_topics))

    def with_judged(self, judged: Sequence[np.ndarray]) -> Campaign:
        """The same campaign knowing only the judgments where ``judged[t]`` is True.

        Used to hide labels (simulation from full qrels): a document can only
        be kept judged if it is judged here.
        """
        if len(judged) != self.n_topics:
            raise ValueError(f"need one mask per topic ({self.n_topics}), got {len(judged)}")
        topics = []
        for t, mask in zip(self.topics, judged):
            mask = np.asarray(mask, dtype=bool)
            if mask.shape != t.judged.shape:
                raise ValueError(f"topic {t.query_id}: mask shape {mask.shape} != {t.judged.shape}")
            if (mask & ~t.judged).any():
                raise ValueError(f"topic {t.query_id}: cannot mark unjudged documents as judged")
            topics.append(
                replace(
                    t,
                    judged=mask,
                    grades=np.where(mask | (t.grades == UNJUDGED), t.grades, 0).astype(np.int16),
                )
            )
        return replace(self, topics=tuple(topics))

    # ------------------------------------------------------------------ tables

    def qrels_frame(self) -> pd.DataFrame:
        """The judgments as an ir_measures qrels DataFrame."""
        parts = [
            pd.DataFrame(
                {
                    "query_id": t.query_id,
                    "doc_id": t.doc_ids[t.judged],
                    "relevance": t.grades[t.judged],
                }
            )
            for t in self.topics
        ]
        return pd.concat(parts, ignore_index=True)

    def run_frame(self, system: str) -> pd.DataFrame:
        """One system's ranking as an ir_measures run DataFrame (score = -rank)."""
        s = int(self.system_index(system)[0])
        parts = []
        for t in self.topics:
            row = t.ranking[s, : t.depth[s]]
            parts.append(
                pd.DataFrame(
                    {
                        "query_id": t.query_id,
                        "doc_id": t.doc_ids[row],
                        "score": -np.arange(1, len(row) + 1, dtype=float),
                    }
                )
            )
        return pd.concat(parts, ignore_index=True)

    def to_files(
        self, directory: str | os.PathLike, *, compress: bool = False
    ) -> tuple[Path, Path]:
        """Write the campaign as TREC files: ``qrels.txt`` and ``runs/<system>.txt``.

        The exact inverse of :meth:`from_files`: topics, document index,
        rankings, judgments and system names come back. The pooled-but-unjudged
        documents, and every unjudged document no run retrieves (to keep the
        index), are written to the qrels with label ``-1``; scores are minus the rank. ``compress``
        writes ``.gz`` files. Returns the qrels path and the runs directory,
        which must not already hold files.
        """
        root = Path(directory)
        runs_dir = root / "runs"
        if runs_dir.is_dir() and any(runs_dir.iterdir()):
            raise FileExistsError(f"{runs_dir} already holds files; write to an empty directory")
        empty = [name for name, n in zip(self.systems, self.coverage().sum(axis=1)) if n == 0]
        if empty:
            raise ValueError(f"systems {empty} retrieve nothing; a TREC run file cannot be empty")
        suffix = ".txt.gz" if compress else ".txt"
        qrels_path = root / f"qrels{suffix}"
        labels = [
            pd.DataFrame(
                {
                    "query_id": t.query_id,
                    "doc_id": t.doc_ids,
                    "relevance": np.where(t.judged, t.grades, UNJUDGED),
                }
            )[t.judged | (t.grades == UNJUDGED) | ~t.retrieved()]
            for t in self.topics
        ]
        write_qrels(pd.concat(labels, ignore_index=True), qrels_path)
        for name in self.systems:
            write_run(self.run_frame(name), runs_dir / f"{name}{suffix}", tag=name)
        return qrels_path, runs_dir

    def __repr__(self) -> str:
        n_docs = sum(t.n_docs for t in self.topics)
        n_judged = sum(int(t.judged.sum()) for t in self.topics)
        return (
            f"Campaign({self.n_systems} systems, {self.n_topics} topics, {n_docs} documents, "
            f"{n_judged} judged, rel_threshold={self.rel_threshold})"
        )


def _trec_order(group: np.ndarray, order: np.ndarray, doc: np.ndarray, n_docs: int) -> np.ndarray:
    """Permutation sorting rows by group, then ``order`` ascending, then ``doc`` descending.

    Equivalent to ``np.lexsort((-doc, order, group))`` but a single integer
    sort: ``order`` (e.g. minus the score) is replaced by its dense rank and
    the three keys are packed into one int64 when they fit (they do for any
    realistic campaign; otherwise lexsort is used).
    """
    n = len(order)
    by_order = np.argsort(order, kind="stable")  # fast: runs arrive mostly sorted
    sorted_order = order[by_order]
    new_value = np.zeros(n, dtype=np.int64)
    np.not_equal(sorted_order[1:], sorted_order[:-1], out=new_value[1:], casting="unsafe")
    del sorted_order
    rank = np.empty(n, dtype=np.int64)
    rank[by_order] = np.cumsum(new_value, out=new_value)
    del by_order, new_value
    n_ranks = int(rank.max(initial=0)) + 1
    n_groups = int(group.max(initial=0)) + 1
    if n_groups * n_ranks * n_docs >= 2**63:
        return np.lexsort((-doc, order, group))
    # key = (group * n_ranks + rank) * n_docs + (n_docs - 1 - doc), built in place: the
    # arrays here are as long as the whole campaign, so temporaries set the peak memory
    key = group.astype(np.int64)
    key *= n_ranks
    key += rank
    del rank
    key *= n_docs
    key += n_docs - 1
    key -= doc
    return np.argsort(key, kind="stable")


def _encode_shared(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """Dictionary-encode chunks with one dictionary for all of them.

    pyarrow's encoder gives every chunk the same dictionary already; that is
    checked by buffer address (cheap), and only otherwise are the dictionaries
    unified (costly: it compares and remaps every chunk).
    """
    encoded = values.dictionary_encode()

    def identity(dictionary: pa.Array) -> tuple:
        return len(dictionary), [b.address if b else None for b in dictionary.buffers()]

    first = identity(encoded.chunk(0).dictionary)
    if all(identity(c.dictionary) == first for c in encoded.chunks):
        return encoded
    return encoded.unify_dictionaries()


def _codes(ids: pa.Array, position: Mapping[str, int]) -> np.ndarray:
    """Map string ids to integer positions (-1 for ids not in ``position``)."""
    encoded = ids.dictionary_encode()
    lookup = np.array([position.get(v, -1) for v in encoded.dictionary.to_pylist()], dtype=np.int32)
    return lookup[encoded.indices.to_numpy()] if len(lookup) else np.zeros(0, dtype=np.int32)


def _listing(items: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (", ..." if len(items) > limit else "")


def load_campaign(
    qrels: str | os.PathLike, runs: str | os.PathLike | Iterable[str | os.PathLike], **kwargs
) -> Campaign:
    """Shorthand for :meth:`Campaign.from_files`."""
    return Campaign.from_files(qrels, runs, **kwargs)
