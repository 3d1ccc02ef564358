"""A model's posterior draws beside its probabilistic qrels: the companion ``FILE.draws.npz``.

``relimpute fit -o FILE`` writes the probabilistic qrels to FILE (text, one line per
document) and, when the model hands over posterior draws (the default model does), their
draws to ``FILE.draws.npz``: a numpy ``.npz`` (a zip of ``.npy`` arrays, no pickles) with

- ``query_ids``: the topics; ``topic`` (int32) and ``doc_id``: the documents with draws
  (those whose draws are not all their ``p``: the unjudged ones);
- ``p``: each one's point probability, as FILE has it (a companion left from another fit
  is refused, not paired with these probabilities);
- ``draws``: ``(n_draws, documents)`` float16, draw ``d`` the same parameter draw in every
  topic (p to 3 significant digits: finer than a Bernoulli draw can tell);
- with a graded model, ``offset`` (float32 per document), ``cut_draws`` ``(topics, n_draws,
  K − 1)`` and optionally ``split_shift``: what each draw splits relevance into grades with
  (:class:`~relimpute.relevance.grades.GradeShares`).

Documents not listed take their ``p`` in every draw; judged ones their label.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import InputError
from .base import LazyDraws, RelevanceEstimate

#: what ``fit -o FILE`` appends to FILE's name for the companion
SUFFIX = ".draws.npz"


def draws_path(path: str | os.PathLike) -> Path:
    """The companion of the probabilistic qrels ``path``."""
    return Path(os.fspath(path) + SUFFIX)


def write_draws(estimate: RelevanceEstimate, path: str | os.PathLike) -> Path | None:
    """Write ``estimate``'s posterior draws beside the probabilistic qrels ``path`` and return
    the companion's path; without draws remove a companion an earlier fit left there (it
    belongs to other probabilities) and return None.

    One topic's draws are in memory at a time: they go column by column (``draws`` is stored
    in Fortran order) to a temporary file, then into the archive, so a campaign of millions of
    documents writes within the memory of its fit."""
    from .._files import atomic_write_stream

    target = draws_path(path)
    if estimate.draws is None:
        if target.is_file():
            target.unlink()
        return None
    with tempfile.TemporaryFile(dir=target.parent) as columns:
        arrays, n_columns = _draws_by_column(estimate, columns)

        def write(stream) -> None:
            with zipfile.ZipFile(stream, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
                for name, value in arrays.items():
                    with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, np.asarray(value), allow_pickle=False)
                with archive.open("draws.npy", "w", force_zip64=True) as member:
                    header = {
                        "descr": np.lib.format.dtype_to_descr(np.dtype(np.float16)),
                        "fortran_order": True,
                        "shape": (estimate.n_draws, n_columns),
                    }
                    np.lib.format.write_array_header_1_0(member, header)
                    columns.seek(0)
                    shutil.copyfileobj(columns, member, 1 << 22)

        return atomic_write_stream(target, write)


def _draws_by_column(estimate: RelevanceEstimate, columns) -> tuple[dict, int]:
    """Each topic's drawn documents' draws (float16, one document's draws after another) into
    the binary file ``columns``; the archive's other arrays and the number of documents."""
    topic, docs, ps, offsets = [], [], [], []
    shares = estimate.grades
    for t, (ids, p) in enumerate(zip(estimate.doc_ids, estimate.p)):
        drawn = np.asarray(estimate.draws[t])
        keep = np.flatnonzero(((p > 0) & (p < 1)) | np.any(drawn != p[None, :], axis=0))
        topic.append(np.full(len(keep), t, dtype=np.int32))
        docs.append(np.asarray(ids)[keep].astype(str))
        ps.append(p[keep])
        columns.write(np.ascontiguousarray(drawn[:, keep].T, dtype=np.float16).tobytes())
        if shares is not None and shares.offset is not None:
            offsets.append(shares.offset[t][keep].astype(np.float32))
    arrays = {
        "query_ids": np.array(estimate.query_ids, dtype=str),
        "topic": np.concatenate(topic),
        "doc_id": np.concatenate(docs),
        "p": np.concatenate(ps),
    }
    if shares is not None and shares.cut_draws is not None:
        arrays["offset"] = np.concatenate(offsets)
        arrays["cut_draws"] = np.stack(shares.cut_draws)
        if shares.split_shift is not None:
            arrays["split_shift"] = np.asarray(shares.split_shift, dtype=float)
    return arrays, len(arrays["p"])


def read_estimate(path: str | os.PathLike, campaign) -> RelevanceEstimate:
    """The estimate ``relimpute fit -o`` wrote to ``path`` (:func:`relimpute.io.read_prob_qrels`)
    aligned to ``campaign`` (:meth:`RelevanceEstimate.from_frame`), with its companion's
    posterior draws (:func:`with_draws`): what ``--estimate FILE`` scores against.

    Documents of the campaign's topics that it lacks are left out (a :class:`LeftOutWarning`);
    an unjudged document of the campaign the file lacks is an error naming its line.
    """
    import warnings

    from ..errors import LeftOutWarning
    from ..io import read_prob_qrels

    frame = read_prob_qrels(path)
    docs = {t.query_id: t.doc_ids for t in campaign.topics}
    ours = frame[frame["query_id"].isin(docs.keys())]
    lacking = sum(
        int((~group["doc_id"].isin(docs[str(q)])).sum()) for q, group in ours.groupby("query_id")
    )
    if lacking:
        warnings.warn(f"{path} lists {lacking} document(s) of these topics that neither the "
                      "qrels nor the runs hold, left out here (R counts the campaign's "
                      "documents)", LeftOutWarning, stacklevel=2)  # fmt: skip
    return with_draws(_aligned(frame, campaign, path), campaign, path)


def _aligned(frame, campaign, path: str | os.PathLike) -> RelevanceEstimate:
    """The probabilistic qrels ``frame`` read from ``path`` aligned to ``campaign``, an error
    naming the line of the document it is about."""
    try:
        return RelevanceEstimate.from_frame(campaign, frame)
    except InputError as exc:
        from ..io.trec import line_naming

        line = line_naming(path, *exc.ids) if hasattr(exc, "ids") else None
        raise InputError(
            f"{exc.problem} (was the file fitted to other runs or qrels?)", str(path), line
        ) from None


def with_draws(estimate: RelevanceEstimate, campaign, path: str | os.PathLike) -> RelevanceEstimate:
    """``estimate`` (read from the probabilistic qrels ``path``, aligned to ``campaign``) with
    the posterior draws of ``path``'s companion, when there is one; else unchanged."""
    companion = draws_path(path)
    if not companion.is_file():
        return estimate
    try:
        with np.load(companion, allow_pickle=False) as data:
            stored = {name: data[name] for name in data.files}
        query_ids, topic, doc_ids = stored["query_ids"], stored["topic"], stored["doc_id"]
        p, drawn = stored["p"], stored["draws"]
        if drawn.ndim != 2 or drawn.shape[1] != len(p) or not len(drawn):
            raise ValueError("its draws do not match its documents")
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"not a companion of posterior draws ({exc})", str(companion)) from None
    where = {q: t for t, q in enumerate(campaign.query_ids)}
    columns = [dict() for _ in campaign.topics]  # per topic: document index -> stored column
    index = [{d: i for i, d in enumerate(t.doc_ids)} for t in campaign.topics]
    for column, (t, doc) in enumerate(zip(topic, doc_ids)):
        ours = where.get(str(query_ids[t]))
        row = None if ours is None else index[ours].get(str(doc))
        if row is None:
            continue
        mine = estimate.p[ours][row]
        if not campaign.topics[ours].judged[row] and abs(p[column] - mine) > 1e-9 * abs(mine):
            raise InputError(  # (1e-9 relative: the file's text rounding, as its own checks)
                f"its probability of document {str(doc)!r} of topic {str(query_ids[t])!r} is not "
                f"{path}'s: "
                f"it was written by another fit; refit with `relimpute fit ... -o {path}`",
                str(companion),
            )
        columns[ours][row] = column
    rows = [np.fromiter(c.keys(), dtype=np.int64, count=len(c)) for c in columns]
    cols = [np.fromiter(c.values(), dtype=np.int64, count=len(c)) for c in columns]
    relevant = campaign.relevant()

    def make(t: int) -> np.ndarray:
        out = np.repeat(estimate.p[t][None, :], len(drawn), axis=0)
        out[:, rows[t]] = drawn[:, cols[t]]
        judged = np.flatnonzero(campaign.topics[t].judged)
        out[:, judged] = relevant[t][judged].astype(float)
        return out

    draws = LazyDraws(campaign.n_topics, len(drawn), make)
    grades = estimate.grades
    if grades is not None and "cut_draws" in stored:
        cuts = stored["cut_draws"]
        offset = []
        for t, topic_data in enumerate(campaign.topics):
            e = np.full(topic_data.n_docs, np.nan)
            e[rows[t]] = stored["offset"][cols[t]]
            offset.append(np.where(topic_data.judged, np.nan, e))
        source = {str(q): t for t, q in enumerate(query_ids)}
        try:
            grades = replace(
                grades,
                offset=tuple(offset),
                # a topic without draws (every document judged) splits as judged
                cut_draws=tuple(
                    cuts[source[q]] if q in source else np.zeros(cuts.shape[1:])
                    for q in campaign.query_ids
                ),
                split_shift=stored.get("split_shift"),
            )
        except ValueError as exc:
            raise InputError(f"its grades do not match {path}'s ({exc})", str(companion)) from None
    return replace(estimate, draws=draws, grades=grades)
