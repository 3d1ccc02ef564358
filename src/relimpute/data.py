"""The in-memory campaign: runs and judgments as per-topic integer arrays.

A :class:`Campaign` is what every kernel in relimpute works on. For each topic
it keeps a document index over the union of all runs' and qrels' documents,
each run's ranking as a row of document indices (trec_eval order: score
descending compared at trec_eval's float32 precision, ties by docno
descending in byte order; padded with ``-1``), and the judgments as a mask
plus graded labels (qrels label ``-1`` = pooled but unjudged). What reading
and building a campaign costs, against a bare pyarrow parse of the same files,
is measured by ``benchmarks/bench_load.py``.

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

from ._deprecation import renamed_kwargs
from .io.assembly import UNJUDGED, Aligned, align_frames
from .io.campaign import Judgments, read_campaign
from .io.writing import write_qrels, write_run

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded by the methods that make or take DataFrames
    import pandas as pd


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

    def retrieved(
        self, systems: Sequence[int] | None = None, depth: int | None = None
    ) -> np.ndarray:
        """``(n,)`` bool: retrieved by any of ``systems`` (all when None) within rank ``depth``
        (every rank when None): with a depth, the topic's depth-``depth`` pool."""
        rows = self.ranking if systems is None else self.ranking[np.asarray(systems, dtype=int)]
        if depth is not None:
            rows = rows[:, :depth]
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
    labels
        Automatic relevance labels (:class:`relimpute.labels.LabelSource`), evidence for
        the models that read them, never judgments; attach with
        :func:`relimpute.labels.with_labels`.
    sample
        Sampled qrels (:func:`~relimpute.io.read_sampled_qrels`, :func:`~.io.read_inclusion_qrels`).
    rel_threshold_from
        The collection's settings file ``rel_threshold`` came from (``relimpute.toml`` beside
        the qrels, read by :meth:`from_files`), else None.
    dropped
        The topics the runs retrieve that the qrels lack (dropped, as trec_eval does).
    """

    systems: tuple[str, ...]
    topics: tuple[TopicData, ...]
    rel_threshold: int = 1
    notes: tuple[str, ...] = field(default=())
    labels: tuple = field(default=())
    sample: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    rel_threshold_from: Path | None = field(default=None, repr=False, compare=False)
    dropped: tuple[str, ...] = field(default=(), repr=False, compare=False)

    # ------------------------------------------------------------------ building

    @classmethod
    def from_files(
        cls,
        qrels: str | os.PathLike | Judgments,
        runs: str | os.PathLike | Iterable[str | os.PathLike],
        *,
        rel_threshold: int | None = None,
        by_rank: bool = False,
        duplicates: str = "error",
        memory_per_byte: float | None = None,
    ) -> Campaign:
        """Read qrels and runs (files or directories) into a campaign.

        Every file is validated by :mod:`relimpute.io` (errors name the file and line);
        ``duplicates`` is the policy for both runs and qrels. ``rel_threshold=None`` takes the
        collection's (``relimpute.toml`` beside the qrels), else 1. ``qrels`` may be sampled
        (five columns: :attr:`sample`) or ``"irds:<id>"`` (:func:`~.adapters.ir_datasets_qrels`),
        or the :class:`~relimpute.io.campaign.Judgments` that
        :func:`~relimpute.io.campaign.read_judgments` read (not read again; its threshold).
        ``memory_per_byte``: first refuse files whose size times this would not fit in memory
        (:func:`~relimpute.io.memory.check_fits`); all read by :mod:`relimpute.io.campaign`.
        """
        judgments, aligned, notes = read_campaign(
            qrels, runs, rel_threshold=rel_threshold, by_rank=by_rank, duplicates=duplicates,
            memory_per_byte=memory_per_byte,
        )  # fmt: skip
        return replace(cls._assemble(aligned, judgments.rel_threshold, notes),
                       sample=judgments.sample, rel_threshold_from=judgments.threshold_from)

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
        aligned = align_frames(qrels, runs, by_rank=by_rank, validate=validate)
        return cls._assemble(aligned, rel_threshold)

    @classmethod
    def _assemble(
        cls, aligned: Aligned, rel_threshold: int, notes: list[str] | None = None
    ) -> Campaign:
        """The campaign of aligned topics, with notes (issued as warnings) on what was dropped
        (after the ``notes`` given)."""
        if not aligned.names:
            raise ValueError("a campaign needs at least one run")
        notes = list(notes or [])
        topics = [TopicData(**fields) for fields in aligned.topics]
        if aligned.dropped:
            notes.append(
                f"{len(aligned.dropped)} topic(s) retrieved by {aligned.n_dropping_runs} run(s) "
                f"but absent from the qrels were dropped, as trec_eval does "
                f"({_listing(sorted(aligned.dropped))})"
            )
        for s, name in enumerate(aligned.names):
            missing = [tp.query_id for tp in topics if tp.depth[s] == 0]
            if missing:
                notes.append(
                    f"run {name!r}: retrieves nothing for {len(missing)} qrels topic(s) "
                    f"({_listing(missing)})"
                )
        for note in notes:
            warnings.warn(note, stacklevel=2)
        return cls(
            systems=tuple(aligned.names),
            topics=tuple(topics),
            rel_threshold=rel_threshold,
            notes=tuple(notes),
            dropped=tuple(aligned.dropped),
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

    def system_rows(self, systems: Sequence[str] | Sequence[int]) -> np.ndarray:
        """Row indices of systems given by name or already as row indices."""
        if len(systems) and not isinstance(systems[0], str):
            return np.asarray(systems, dtype=int)
        return self.system_index(list(systems)) if len(systems) else np.zeros(0, dtype=int)

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

    def with_documents(self, documents: Mapping[str, Iterable[str]]) -> Campaign:
        """The campaign with more documents: ``documents`` maps a topic id to document ids,
        each added to its topic unjudged (grade 0) and retrieved by no run, as a document the
        full qrels judge and no run retrieves is once its judgment is hidden
        (:meth:`with_judged`); documents the topic holds already are left as they are.

        A topic whose documents are in docno order (as :meth:`from_files` builds them) keeps
        that order, the rankings renumbered: the campaign equals the one built from qrels
        that list the added documents, their judgments then hidden. Raises KeyError naming
        a topic the campaign lacks.
        """
        import pandas as pd

        unknown = sorted(set(map(str, documents)) - set(self.query_ids))
        if unknown:
            raise KeyError(f"unknown topic(s) {_listing(unknown)}")
        wanted = {str(q): docs for q, docs in documents.items()}
        topics = []
        for t in self.topics:
            new = pd.Index(list(dict.fromkeys(map(str, wanted.get(t.query_id, ())))), dtype=object)
            new = new[~new.isin(t.doc_ids)]
            if not len(new):
                topics.append(t)
                continue
            doc_ids = np.concatenate([t.doc_ids, new.to_numpy(dtype=object)])
            order = np.arange(len(doc_ids))
            if np.all(t.doc_ids[:-1] < t.doc_ids[1:]):  # docno order: kept
                order = np.argsort(doc_ids.astype(str), kind="stable")
            index_of = np.empty(len(order), dtype=np.int32)
            index_of[order] = np.arange(len(order), dtype=np.int32)
            ranking = _renumbered(t.ranking, index_of)
            n_new = len(new)
            topics.append(
                replace(
                    t,
                    doc_ids=doc_ids[order],
                    grades=np.concatenate([t.grades, np.zeros(n_new, np.int16)])[order],
                    judged=np.concatenate([t.judged, np.zeros(n_new, bool)])[order],
                    ranking=ranking,
                )
            )
        return replace(self, topics=tuple(topics))

    @renamed_kwargs(depth="pool_depth")
    def pooled(
        self, pool_depth: int, systems: Sequence[str] | Sequence[int] | None = None
    ) -> Campaign:
        """The campaign knowing only the judgments of the depth-``pool_depth`` pool of ``systems``.

        A document stays judged when it is judged now and some system (of ``systems``, names
        or row indices, default all) ranks it within the top ``pool_depth`` for the topic;
        every other judgment is hidden (TREC pooling, Cormack & Lynam 2007 §1; leaving runs
        out of the pool, Webber & Park 2009 §2.2).
        """
        pool_depth = _positive_depth(pool_depth)
        rows = None if systems is None else self.system_rows(systems)
        return self.with_judged([t.retrieved(rows, pool_depth) & t.judged for t in self.topics])

    def truncated(self, depth: int | None, *, shrink: bool = False) -> Campaign:
        """Every ranking cut at rank ``depth`` (None = the campaign unchanged).

        By default the document index is kept: documents retrieved only below
        the cut stay in their topic as unretrieved documents, so per-document
        arrays of the full campaign still line up (Carterette 2007 §4.3 cuts
        runs at rank 100). With ``shrink`` a topic keeps only the documents some
        run retrieves within ``depth``, every judged document and every document a label
        source names (both count in R even when no run retrieves them,
        docs/math/average-precision.md): the same scores, smaller arrays.
        """
        if depth is None:
            return self
        depth = _positive_depth(depth)
        from .labels import labelled_documents

        named = labelled_documents(self) if shrink else None
        topics = []
        for i, t in enumerate(self.topics):
            ranking = t.ranking[:, :depth]
            cut = np.minimum(t.depth, depth).astype(np.int32)
            if not shrink:
                topics.append(replace(t, ranking=ranking, depth=cut))
                continue
            keep = t.judged.copy() if named is None else t.judged | named[i]
            keep[ranking[ranking >= 0]] = True
            new_index = np.cumsum(keep) - 1
            ranking = _renumbered(ranking, new_index)
            topics.append(
                replace(
                    t,
                    doc_ids=t.doc_ids[keep],
                    grades=t.grades[keep],
                    judged=t.judged[keep],
                    ranking=ranking,
                    depth=cut,
                )
            )
        return replace(self, topics=tuple(topics))

    # ------------------------------------------------------------------ tables

    def qrels_frame(self) -> pd.DataFrame:
        """The judgments as an ir_measures qrels DataFrame."""
        import pandas as pd

        parts = [
            pd.DataFrame({"query_id": t.query_id, "doc_id": t.doc_ids[t.judged],
                          "relevance": t.grades[t.judged]})
            for t in self.topics
        ]  # fmt: skip
        return pd.concat(parts, ignore_index=True)

    def run_frame(self, system: str) -> pd.DataFrame:
        """One system's ranking as an ir_measures run DataFrame (score = -rank)."""
        import pandas as pd

        s = int(self.system_index(system)[0])
        parts = []
        for t in self.topics:
            row = t.ranking[s, : t.depth[s]]
            parts.append(pd.DataFrame({"query_id": t.query_id, "doc_id": t.doc_ids[row],
                                       "score": -np.arange(1, len(row) + 1, dtype=float)}))
        return pd.concat(parts, ignore_index=True)

    @renamed_kwargs(directory="folder")
    def to_files(self, folder: str | os.PathLike, *, compress: bool = False) -> tuple[Path, Path]:
        """Write the campaign as TREC files: ``qrels.txt`` and ``runs/<system>.txt``.

        The exact inverse of :meth:`from_files`: topics, document index,
        rankings, judgments and system names come back. The pooled-but-unjudged
        documents, and every unjudged document no run retrieves (to keep the
        index), are written to the qrels with label ``-1``; scores are minus the rank. ``compress``
        writes ``.gz`` files. Returns the qrels path and the runs directory,
        which must not already hold files.
        """
        import pandas as pd

        root = Path(folder)
        runs_dir = root / "runs"
        if runs_dir.is_dir() and any(runs_dir.iterdir()):
            raise FileExistsError(f"{runs_dir} already holds files; write to an empty directory")
        empty = [name for name, n in zip(self.systems, self.coverage().sum(axis=1)) if n == 0]
        if empty:
            raise ValueError(f"systems {empty} retrieve nothing; a TREC run file cannot be empty")
        suffix = ".txt.gz" if compress else ".txt"
        qrels_path = root / f"qrels{suffix}"
        labels = [
            pd.DataFrame({"query_id": t.query_id, "doc_id": t.doc_ids,
                          "relevance": np.where(t.judged, t.grades, UNJUDGED)})
            [t.judged | (t.grades == UNJUDGED) | ~t.retrieved()]
            for t in self.topics
        ]  # fmt: skip
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


def _renumbered(ranking: np.ndarray, new_index: np.ndarray) -> np.ndarray:
    """``ranking`` with each document index ``d`` replaced by ``new_index[d]`` (``-1`` kept)."""
    return np.where(ranking >= 0, new_index[np.maximum(ranking, 0)], -1).astype(np.int32)


def _positive_depth(depth: int) -> int:
    if int(depth) != depth or depth < 1:
        raise ValueError(f"depth must be a positive integer, got {depth!r}")
    return int(depth)


def _listing(items: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (", ..." if len(items) > limit else "")


def load_campaign(
    qrels: str | os.PathLike, runs: str | os.PathLike | Iterable[str | os.PathLike], **kwargs
) -> Campaign:
    """Shorthand for :meth:`Campaign.from_files`."""
    return Campaign.from_files(qrels, runs, **kwargs)
