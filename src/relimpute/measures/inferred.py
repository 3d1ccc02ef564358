"""Inferred measures of stratified sampled qrels, as NIST's ``sample_eval.pl`` computes them.

xinfAP and infNDCG (Yilmaz, Kanoulas & Aslam, SIGIR 2008) estimate AP and
nDCG when each stratum h of a topic's pool was judged on a uniform random
sample, n_h of its N_h documents (``docs/sampled.md``):

- R̂ = Σ_h r_h N_h / n_h, r_h the sampled relevant documents of stratum h
  (a stratum with no judged document adds nothing);
- at a relevant document at rank k, precision above it is estimated stratum by
  stratum from the documents above it, ``1/k + (d/k) Σ_h (d_h/d) (rel_h + ε)/(smp_h + 3ε)``
  with d the pooled documents above rank k, d_h those of stratum h, smp_h the
  sampled and rel_h the relevant ones among them, ε = 1e-5;
- xinfAP = Σ_h (R̂_h / R̂) · (Σ of those precisions in h) / r_h;
- infNDCG: DCG estimated per stratum from the sampled documents retrieved,
  over an ideal DCG built from R̂ per grade rounded to integers.

iP@k is the inferred number of relevant documents in the top k over k, and
iNumRelRet the inferred number retrieved, Σ_h d_h (rel_h + ε)/(smp_h + 3ε) over the
whole list (so a retrieved stratum none of whose documents was sampled counts a
third of its documents as relevant, as the script does). These are *not* trec_eval's
``infAP`` (Yilmaz & Aslam 2006, one uniform sample: :mod:`.infap`).

:func:`sample_eval` reproduces the script's numbers (its version of 10 Oct
2011), quirks included: ties by docno descending, at most ``max_rank``
documents per topic, leading zeros stripped from the run's topic ids only, its
``-G`` gain mapping applied to the qrels' grades before anything else, and the
ideal DCG's loop that adds one term past ``max_rank`` for every further grade.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

#: ``sample_eval.pl``'s smoothing constants (numerator, denominator).
EPSILON = 1e-5
#: The script's iP cut-offs besides ``max_rank``.
PRECISION_RANKS = (10, 50)
#: The recall levels of the script's interpolated precision.
RECALL_LEVELS = tuple(i / 10 for i in range(11))


def _grade_text(grade: float) -> str:
    """A grade as Perl prints it (the script sorts grades as strings)."""
    return str(int(grade)) if float(grade).is_integer() else repr(float(grade))


class _Topic:
    """One topic's strata: N_h, n_h, r_h and R̂ per grade, from the qrels."""

    def __init__(self, strata: np.ndarray, grades: np.ndarray, max_rank: int):
        self.strata, self.index = np.unique(strata, return_inverse=True)
        h = len(self.strata)
        self.population = np.bincount(self.index, minlength=h).astype(float)
        self.sampled = np.bincount(self.index, weights=grades >= 0, minlength=h)
        self.relevant = np.bincount(self.index, weights=grades > 0, minlength=h)
        seen = self.sampled != 0
        scale = np.divide(self.population, self.sampled, out=np.zeros(h), where=seen)
        self.relevant_by_stratum = np.where(seen, self.relevant * scale, 0.0)
        self.num_rel = float(self.relevant_by_stratum.sum())
        self.ideal_dcg = self._ideal_dcg(grades, scale, max_rank)

    def _ideal_dcg(self, grades: np.ndarray, scale: np.ndarray, max_rank: int) -> float:
        """Ideal DCG over R̂ per grade rounded, grades in the script's (string) order."""
        per_grade: dict[str, float] = {}
        for grade in np.unique(grades[grades > 0]):
            counts = np.bincount(self.index, weights=grades == grade, minlength=len(self.strata))
            per_grade[_grade_text(grade)] = float((counts * scale)[counts > 0].sum())
        ideal, start = 0.0, 0
        for text in sorted(per_grade, reverse=True):
            count = int(per_grade[text] + 0.5)
            if count > 0:  # the script's loop stops after the term at max_rank, or its first term
                last = min(start + count, max(max_rank, start + 1))
                ranks = np.arange(start + 1, last + 1, dtype=float)
                ideal += float((float(text) / (np.log(ranks + 1) / np.log(2))).sum())
            start += count
        return ideal

    def score(self, stratum: np.ndarray, grade: np.ndarray, bounds: np.ndarray,
              max_rank: int) -> dict[str, np.ndarray]:
        """The script's per-topic values for ranked lists (each cut at ``max_rank``), given each
        document's stratum index and grade (-1 and -1 outside the pool); list ``i`` is rows
        ``bounds[i]`` to ``bounds[i + 1]``. One value per list under each name."""
        h, n = len(self.strata), len(bounds) - 1
        k = len(stratum)
        start = np.repeat(bounds[:-1], np.diff(bounds))  # each row's list's first row
        pooled = stratum >= 0
        onehot = np.zeros((k, h))
        onehot[np.flatnonzero(pooled), stratum[pooled]] = 1.0

        def upto(counts):  # cumulative counts within each list (whole numbers: exact)
            total = np.cumsum(counts, axis=0)
            return total - np.vstack([np.zeros((1, h)), total])[start]

        docs_upto = upto(onehot)  # d_h including rank k
        sampled_upto = upto(onehot * (grade >= 0)[:, None])
        relevant_upto = upto(onehot * (grade > 0)[:, None])
        ranks = np.arange(1, k + 1, dtype=float) - start
        rel_ret = (docs_upto * (relevant_upto + EPSILON) / (sampled_upto + 3 * EPSILON)).sum(1)

        out = {"xinfAP": np.zeros(n), "infNDCG": np.zeros(n)}
        rel_ranks = np.flatnonzero(grade > 0)
        if len(rel_ranks):
            above = rel_ranks - 1  # the counts strictly above a relevant document
            inside = (rel_ranks > start[rel_ranks])[:, None]
            d_h = np.where(inside, docs_upto[above], 0.0)
            s_h = np.where(inside, sampled_upto[above], 0.0)
            r_h = np.where(inside, relevant_upto[above], 0.0)
            depth = d_h.sum(1)
            prob = np.divide(d_h, depth[:, None], out=np.zeros_like(d_h), where=depth[:, None] != 0)
            prec_above = (prob * (r_h + EPSILON) / (s_h + 3 * EPSILON)).sum(1)
            rank = ranks[rel_ranks]
            precision = 1 / rank + depth / rank * prec_above
            where = np.searchsorted(bounds, rel_ranks, side="right") * h - h + stratum[rel_ranks]
            sap = np.bincount(where, weights=precision, minlength=n * h).reshape(n, h)
            gain = np.bincount(
                where, weights=grade[rel_ranks] / (np.log(rank + 1) / np.log(2)), minlength=n * h
            ).reshape(n, h)
            if self.num_rel != 0:
                per = np.divide(sap, self.relevant, out=np.zeros((n, h)), where=self.relevant != 0)
                counted = self.sampled != 0
                out["xinfAP"] = (self.relevant_by_stratum[counted] / self.num_rel
                                 * per[:, counted]).sum(1)
            last = bounds[1:] - 1
            depth_all = docs_upto[last].sum(1)
            if self.ideal_dcg != 0:
                seen = sampled_upto[last] != 0
                dcg = np.divide(np.divide(docs_upto[last], depth_all[:, None], out=np.zeros(
                    (n, h)), where=seen) * gain, sampled_upto[last], out=np.zeros((n, h)),
                    where=seen).sum(1)
                out["infNDCG"] = np.where(depth_all != 0, depth_all * dcg / self.ideal_dcg, 0.0)
        length = np.diff(bounds)
        for cut in (*PRECISION_RANKS, max_rank):
            out[f"iP@{cut}"] = rel_ret[bounds[:-1] + np.minimum(cut, length) - 1] / cut
        out["iNumRelRet"] = rel_ret[bounds[1:] - 1]
        out["iNumRel"] = np.full(n, self.num_rel)
        curves = np.array([_interpolated(rel_ret[a:b], ranks[a:b], self.num_rel)
                           for a, b in zip(bounds[:-1], bounds[1:])])
        out.update(zip(_recall_names(), curves.T))
        return out


def _recall_names() -> list[str]:
    return [f"iprec@rec{level:.2f}" for level in RECALL_LEVELS]


def _interpolated(rel_ret: np.ndarray, ranks: np.ndarray, num_rel: float) -> np.ndarray:
    """Inferred interpolated precision at the 11 recall levels, as the script's loop gives it.

    The script walks the ranks upwards from the last, keeping the best precision
    seen, and gives it to the highest recall level not yet served whose cut-off
    exceeds the inferred relevant count at that rank (one level per rank); the
    levels left get the best precision overall.
    """
    cutoffs = [level * num_rel for level in RECALL_LEVELS]
    best_below = np.maximum.accumulate((rel_ret / ranks)[::-1])[::-1]  # best of ranks >= i
    values = np.zeros(len(cutoffs))
    current = len(cutoffs) - 1
    while current >= 0 and cutoffs[current] > rel_ret[-1]:
        current -= 1
    stop = len(ranks)
    while current >= 0:
        under = np.flatnonzero(rel_ret[:stop] < cutoffs[current])
        if not len(under):
            break
        stop = int(under[-1])
        values[current] = best_below[stop]
        current -= 1
    values[: current + 1] = best_below[0]
    return values


def _topic_order(topics) -> list[str]:
    """Topics in the script's numeric order (non-numeric ids after, as strings)."""

    def key(t: str):
        try:
            return (0, float(t), t)
        except ValueError:
            return (1, 0.0, t)

    return sorted(topics, key=key)


class SampledQrels:
    """Sampled qrels prepared once to score many runs (``gains``, ``max_rank``: as
    :func:`sample_eval`)."""

    def __init__(
        self, qrels: pd.DataFrame, *, gains: Mapping[int, float] | None = None, max_rank: int = 1000
    ):
        grades = qrels["relevance"].to_numpy(dtype=float)
        if gains:
            mapped = grades.copy()
            for grade, gain in gains.items():
                mapped[grades == grade] = gain
            grades = mapped
        strata = qrels["stratum"].to_numpy()
        self.max_rank = max_rank
        self.topics: dict[str, _Topic] = {}
        #: per qrels row, then -1 (row -1: outside the pool): the topic's stratum index, grade
        self.stratum = np.full(len(qrels) + 1, -1, dtype=np.int64)
        self.grade = np.append(grades, -1.0)
        docs = _strings(qrels["doc_id"])
        self._docs: dict[str, tuple[pa.Array, np.ndarray]] = {}  # a topic's documents, rows
        for topic, rows in qrels.groupby("query_id", sort=False).indices.items():
            self.topics[str(topic)] = _Topic(strata[rows], grades[rows], max_rank)
            self.stratum[rows] = self.topics[str(topic)].index
            self._docs[str(topic)] = (docs.take(pa.array(rows)), rows)

    def codes(self, topic: str, docs: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """Each of ``docs``' qrels row in ``topic`` (the first, if listed twice; -1 for none)
        and its code among the topic's distinct documents (0, 1, ...), from one hash pass with
        the topic's qrels documents."""
        judged, rows = self._docs.get(topic, (pa.array([], pa.string()), np.zeros(0, int)))
        codes = pc.dictionary_encode(pa.concat_arrays([judged, docs])).indices.to_numpy()
        n = len(judged)
        row_of = np.full(int(codes.max(initial=0)) + 1, -1, dtype=np.int64)
        row_of[codes[:n][::-1]] = rows[::-1]  # reversed: a repeated document's first row
        return row_of[codes[n:]], codes[n:]


def _strings(values) -> pa.Array:
    """Ids as one arrow string array (a pandas column as ``str`` gives it)."""
    if isinstance(values, pd.Series):
        values = values.astype(str)
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = pa.array(values, pa.string())
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.cast(pa.string())


class _Ranked:
    """Runs as the script reads them, ranked in one pass: topics without leading zeros, a
    document's last line, score descending then docno descending (bytes) within a topic.

    ``row`` is the qrels row of each ranked line (-1 outside the pool); run ``j``'s topic
    ``t`` holds ``row[first[j][t]:end[j][t]]``; ``lines[j][t]`` counts its lines in the file.
    ``check(j)`` is called first for each run ``j`` that lists a document twice in a topic.
    """

    def __init__(self, qrels: SampledQrels, runs: list[Mapping[str, object]], check=None):
        sizes = [len(run["score"]) for run in runs]
        bounds = np.r_[0, np.cumsum(sizes)]
        topic = pc.utf8_ltrim(pa.concat_arrays([_strings(r["query_id"]) for r in runs]), "0")
        doc = pa.concat_arrays([_strings(r["doc_id"]) for r in runs])
        score = np.concatenate([np.asarray(r["score"], dtype=float) for r in runs])
        codes = pc.dictionary_encode(topic)
        names, topic = codes.dictionary.to_pylist(), codes.indices.to_numpy()
        # run and topic in one key: run j's topic t is j * len(names) + t
        group = np.repeat(np.arange(len(runs)) * len(names), sizes) + topic
        count = np.bincount(group, minlength=len(runs) * len(names))
        self.lines = [{names[t]: int(c[t]) for t in np.flatnonzero(c)}
                      for c in count.reshape(len(runs), len(names))]
        # topic by topic (small hash tables): the qrels rows, a code per (topic, document)
        # and the order of the lines, by run, then score descending (ties: docno, below)
        by_topic = np.argsort(topic, kind="stable")
        bound = np.r_[0, np.cumsum(np.bincount(topic, minlength=len(names)))]
        row = np.empty(len(score), dtype=np.int64)
        key = np.empty(len(score), dtype=np.int64)
        order = np.empty(len(score), dtype=np.int64)
        offset = 0
        for t, name in enumerate(names):
            lines = by_topic[bound[t]:bound[t + 1]]
            row[lines], code = qrels.codes(name, doc.take(pa.array(lines)))
            key[lines] = offset + code
            offset += int(code.max(initial=-1)) + 1
            order[bound[t]:bound[t + 1]] = lines[np.lexsort((-score[lines], group[lines]))]
        keep = _last_lines(key, bounds, check)
        if keep is not None:  # a document's last line, as a Perl hash
            order = order[np.isin(order, keep)]
        group, score = group[order], score[order]
        tied = (group[1:] == group[:-1]) & (score[1:] == score[:-1])
        if tied.any():  # the rows of each tie by docno descending (bytes, as Perl's cmp)
            in_tie = np.flatnonzero(np.r_[False, tied] | np.r_[tied, False])
            tie = np.cumsum(np.r_[True, ~tied])[in_tie]
            within = pc.sort_indices(pa.table({"g": tie, "d": doc.take(pa.array(order[in_tie]))}),
                                     sort_keys=[("g", "ascending"), ("d", "descending")])
            order[in_tie] = order[in_tie][within.to_numpy()]
        self.row = row[order]
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        self.first: list[dict[str, int]] = [{} for _ in runs]
        self.end: list[dict[str, int]] = [{} for _ in runs]
        for g, start, end in zip(group[starts].tolist(), starts.tolist(),
                                 np.r_[starts[1:], len(order)].tolist()):
            self.first[g // len(names)][names[g % len(names)]] = start
            self.end[g // len(names)][names[g % len(names)]] = end


def _last_lines(key: np.ndarray, bounds: np.ndarray, check) -> np.ndarray | None:
    """The lines to keep (a key's last line in its run) when a run lists a key twice, else
    None. Each run's keys are marked in one table: fewer marks than lines is a repeat."""
    marks = np.zeros(int(key.max(initial=0)) + 1, dtype=bool)
    repeating = []
    for j, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:])):
        marks[key[start:stop]] = True
        if np.count_nonzero(marks) < stop - start:
            repeating.append(j)
        marks[key[start:stop]] = False
    if not repeating:
        return None
    keep = np.ones(len(key), dtype=bool)
    for j in repeating:
        if check is not None:
            check(j)
        lines = key[bounds[j]:bounds[j + 1]][::-1]
        _, last = np.unique(lines, return_index=True)  # first of the reversed: the last line
        keep[bounds[j]:bounds[j + 1]] = False
        keep[bounds[j + 1] - 1 - last] = True
    return np.flatnonzero(keep)


def sample_eval(
    qrels: pd.DataFrame | SampledQrels,
    run: pd.DataFrame | Mapping[str, object],
    *,
    gains: Mapping[int, float] | None = None,
    max_rank: int = 1000,
) -> pd.DataFrame:
    """Score one run on sampled qrels exactly as ``sample_eval.pl -q`` does.

    Parameters
    ----------
    qrels
        ``query_id, doc_id, stratum, relevance`` (:func:`relimpute.io.read_sampled_qrels`;
        relevance ``-1``: in its stratum, not sampled), or a :class:`SampledQrels`
        prepared once for many runs (then ``gains`` and ``max_rank`` are its own).
    run
        ``query_id, doc_id, score`` (:func:`relimpute.io.read_run`), or those columns as
        arrays (:func:`relimpute.io.read_run_columns`: nothing converted to pandas).
    gains
        The script's ``-G`` mapping, grade → gain, applied to the qrels' grades
        first (a grade mapped to 0 is nonrelevant).
    max_rank
        Documents read per topic (the script's ``$maxResultSize``).

    Returns
    -------
    One row per topic both files share, in the script's order, then a row
    ``all``: ``xinfAP``, ``infNDCG``, ``iP@10``, ``iP@50``, ``iP@<max_rank>``,
    ``iNumRelRet``, ``iNumRel``, ``NumRet`` and ``iprec@rec0.00`` ... ``1.00``.
    In ``all`` the measures are means over those topics, ``iNumRelRet`` and
    ``NumRet`` sums over them and ``iNumRel`` the sum over every qrels topic, as
    the script prints them. ``NumRet`` of a topic counts the run's lines, of
    ``all`` the documents read (at most ``max_rank`` a topic).
    """
    if not isinstance(qrels, SampledQrels):
        qrels = SampledQrels(qrels, gains=gains, max_rank=max_rank)
    return sample_eval_runs(qrels, [run])[0]


def sample_eval_runs(qrels: SampledQrels, runs: list, check=None) -> list[pd.DataFrame]:
    """:func:`sample_eval` of each of ``runs`` (frames or columns), ranked and looked up in the
    qrels together, topic by topic (one small hash table a topic for them all). ``check(j)`` is
    called first for each run ``j`` that lists a document twice in a topic (the script keeps
    its last line)."""
    runs = [{name: run[name] for name in ("query_id", "doc_id", "score")} for run in runs]
    ranked = _Ranked(qrels, runs, check)
    stratum, grade = qrels.stratum[ranked.row], qrels.grade[ranked.row]
    values: list[dict[str, dict]] = [{} for _ in runs]  # per run: topic -> its row
    for topic, scorer in qrels.topics.items():  # every run's list of the topic at once
        lists = [(j, first[topic], min(ranked.end[j][topic], first[topic] + qrels.max_rank))
                 for j, first in enumerate(ranked.first) if topic in first]
        if not lists:
            continue
        rows = np.concatenate([np.arange(a, b) for _, a, b in lists])
        table = scorer.score(stratum[rows], grade[rows],
                             np.r_[0, np.cumsum([b - a for _, a, b in lists])], qrels.max_rank)
        for i, (j, a, b) in enumerate(lists):
            values[j][topic] = {name: float(column[i]) for name, column in table.items()}
            values[j][topic].update(NumRet=float(ranked.lines[j][topic]), _read=float(b - a))
    return [_run_table(qrels, values[j]) for j in range(len(runs))]


def _run_table(qrels: SampledQrels, values: dict[str, dict]) -> pd.DataFrame:
    """One run's rows per topic, then ``all`` (:func:`sample_eval`)."""
    index = _topic_order(values)
    rows = [values[topic] for topic in index]
    if not rows:
        raise ValueError("the run and the sampled qrels share no topic")
    columns = list(rows[0])
    values = np.array([list(row.values()) for row in rows])
    total = values.mean(axis=0)
    for name in ("iNumRelRet", "_read"):  # sums over topics, as the script prints them
        total[columns.index(name)] = values[:, columns.index(name)].sum()
    total[columns.index("iNumRel")] = sum(t.num_rel for t in qrels.topics.values())
    total[columns.index("NumRet")] = total[columns.index("_read")]
    keep = [i for i, name in enumerate(columns) if name != "_read"]
    table = pd.DataFrame(
        np.vstack([values, total])[:, keep], columns=[columns[i] for i in keep],
        index=pd.Index([*index, "all"], name="query_id"),
    )  # fmt: skip
    return table
