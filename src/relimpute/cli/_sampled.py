"""Inferred measures of sampled qrels on the command line (``evaluate -m xinfAP``, ``statAP``)."""

from __future__ import annotations

from ..errors import InputError

#: NIST's inferred measures (sample_eval.pl), by the names relimpute prints; the script's
#: own names (infAP is trec_eval's one-sample measure here, so the script's is xinfAP)
INFERRED = ("xinfAP", "infNDCG", "iP@10", "iP@50", "iP@1000", "iNumRel", "iNumRelRet", "statAP")
#: The Horvitz–Thompson estimates (:mod:`relimpute.measures.statap`), of either sampled form
STATISTICAL = ("statAP",)
SCRIPT_NAMES = {"iP10": "iP@10", "iP50": "iP@50", "iP1000": "iP@1000",
                "inum_rel": "iNumRel", "inum_rel_ret": "iNumRelRet"}
#: What evaluate prints of sampled qrels when no -m is given (NIST's headline measures)
DEFAULT_INFERRED = ("xinfAP", "infNDCG", "iP@10", "iNumRel")


class Inferred(str):
    """A measure name of :data:`INFERRED`, told apart from parsed measures."""


def inferred_measure(text: str) -> Inferred | None:
    """The inferred measure ``text`` names (either spelling), else None."""
    name = SCRIPT_NAMES.get(text.strip(), text.strip())
    return Inferred(name) if name in INFERRED else None


def split_measures(measures) -> tuple[list, list[Inferred]]:
    """(ordinary measures, inferred measures), in the order given."""
    return (
        [m for m in measures if not isinstance(m, Inferred)],
        [m for m in measures if isinstance(m, Inferred)],
    )


def inferred_request(args, default_measures) -> list | None:
    """The measures to print when some are inferred ones (NIST's, by default, for sampled
    qrels), else None; refuses what cannot go with them."""
    from ..io.qrels import qrels_form, read_qrels
    from ..measures import parse_measures

    form = qrels_form(args.qrels)
    inclusion = form == "inclusion"
    sampled = form != "trec"
    default = STATISTICAL if inclusion else DEFAULT_INFERRED
    modelled = args.estimate is not None or args.llm_labels or args.baseline is not None
    modelled = modelled or getattr(args, "estimand", None) not in (None, "qrels")
    by_default = sampled and not modelled  # a model's answer asked for: not NIST's estimates
    given = args.measures or ([inferred_measure(m) for m in default] if by_default else [])
    inferred = split_measures(given)[1]
    if not inferred:
        return None
    if not sampled:
        if not str(args.qrels).startswith("irds:"):  # an unreadable file: its own problem named
            read_qrels(args.qrels, duplicates=args.duplicates)
        raise InputError(
            "inferred measures (xinfAP, infNDCG, iP@k, iNumRel, statAP) need sampled qrels "
            "(five columns: topic iter docno stratum rel, or a header line 'query_id doc_id "
            "relevance inclusion_probability'); trec_eval's one-sample inferred AP on "
            "ordinary qrels is -m infAP",
            str(args.qrels),
        )
    stratified = [m for m in inferred if m not in STATISTICAL]
    if inclusion and stratified:
        raise InputError(f"{stratified[0]} needs stratified sampled qrels (topic iter docno "
                         "stratum rel); qrels with inclusion probabilities give -m statAP",
                         str(args.qrels))
    if modelled:
        raise InputError("inferred measures (xinfAP, ...) are NIST's estimates from the sample "
                         "alone: give them without --estimate, --llm-labels, --baseline or "
                         "--estimand complete|pool")
    if args.format == "trec":
        raise InputError("-f trec prints trec_eval's measures only: use -f tsv for xinfAP, ...")
    return given or parse_measures(default_measures)


def inferred_title(names) -> str:
    """The estimand line of a table of inferred measures."""
    parts = []
    if any(m not in STATISTICAL for m in names):
        parts.append("the sampled pool's measures, inferred from the sample as sample_eval.pl "
                     "(xinfAP ...)")
    if any(m in STATISTICAL for m in names):
        parts.append("the sampled universe's AP, Horvitz-Thompson estimates from the sample "
                     "(statAP)")
    return "estimand: " + "; ".join(parts)


def inferred_table(sample, rel_threshold: int, args, names: list[Inferred]):
    """Rows ``system`` (and ``query_id`` with ``--per-topic``) of the inferred measures.

    A grade below the relevance threshold counts as nonrelevant (the
    script's ``-G`` mapping of it to 0); infNDCG's gains are the grades. The runs
    are read as the script reads them: scores compared as doubles, ties by docno
    descending (:func:`relimpute.measures.inferred.sample_eval`).
    """
    import pandas as pd

    from ..io import read_run
    from ..measures.inferred import SampledQrels, sample_eval_runs
    from ..measures.statap import StatDesign, stat_eval

    nist = [m for m in names if m not in STATISTICAL]
    design = SampledQrels(sample, gains={grade: 0 for grade in range(1, rel_threshold)}) \
        if nist else None
    stat = StatDesign(sample, rel_threshold=rel_threshold) if "statAP" in names else None
    frames, means = [], []
    for batch in _run_batches(args.runs, args.duplicates, frames=stat is not None):
        paths = [path for _, path, _ in batch]

        def refuse(j, paths=paths):  # a document listed twice: the reader's error names lines
            read_run(paths[j], duplicates=args.duplicates)

        tables = sample_eval_runs(design, [run for *_, run in batch], refuse) if nist else [
            stat_eval(stat, run) for *_, run in batch]
        for (system, _, run), scores in zip(batch, tables):
            if nist and stat is not None:
                scores = scores.join(stat_eval(stat, run)[["statAP"]], how="left")
            if args.per_topic:
                frames.append(scores[list(names)].rename_axis("query_id").reset_index()
                              .assign(system=system))
            else:  # the "all" row alone, one table at the end
                last = dict(zip(scores.columns, scores.to_numpy()[-1].tolist()))  # "all"
                means.append({"system": system, **{name: last[name] for name in names}})
    return pd.concat(frames, ignore_index=True) if args.per_topic else pd.DataFrame(means)


#: Fewest run lines ranked and looked up in the qrels together (topic by topic)
BATCH_LINES = 1 << 20


def _run_batches(runs, duplicates: str, *, frames: bool):
    """Lists of ``(system, path, run)`` of about :data:`BATCH_LINES` lines, read in order:
    frames (``frames``, for statAP, or a policy for duplicates) or the columns the ordinary
    evaluate reads (no pandas; a document listed twice is left to the caller)."""
    from ..io import read_run, read_run_columns, run_files

    batch, lines = [], 0
    for system, path in run_files(runs):
        run = read_run(path, duplicates=duplicates) if frames or duplicates != "error" else \
            read_run_columns(path)[0]
        batch.append((system, path, run))
        lines += len(run["score"])
        if lines >= BATCH_LINES:
            yield batch
            batch, lines = [], 0
    if batch:
        yield batch
