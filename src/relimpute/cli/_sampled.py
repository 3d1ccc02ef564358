"""Inferred measures of sampled qrels on the command line (``evaluate -m xinfAP``)."""

from __future__ import annotations

import sys
import warnings

from ..errors import InputError

#: NIST's inferred measures (sample_eval.pl), by the names relimpute prints; the script's
#: own names (infAP is trec_eval's one-sample measure here, so the script's is xinfAP)
INFERRED = ("xinfAP", "infNDCG", "iP@10", "iP@50", "iP@1000", "iNumRel", "iNumRelRet")
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
    from .._reading import is_sampled_qrels, read_qrels
    from ..measures import parse_measures

    sampled = is_sampled_qrels(args.qrels)
    given = args.measures or ([inferred_measure(m) for m in DEFAULT_INFERRED] if sampled else [])
    if not split_measures(given)[1]:
        return None
    if not sampled:
        if not str(args.qrels).startswith("irds:"):  # an unreadable file: its own problem named
            read_qrels(args.qrels, duplicates=args.duplicates)
        raise InputError(
            "inferred measures (xinfAP, infNDCG, iP@k, iNumRel) need sampled qrels "
            "(five columns: topic iter docno stratum rel); trec_eval's one-sample "
            "inferred AP on ordinary qrels is -m infAP",
            str(args.qrels),
        )
    modelled = args.estimate is not None or args.llm_labels or args.baseline is not None
    if modelled or getattr(args, "estimand", None) not in (None, "qrels"):
        raise InputError("inferred measures (xinfAP, ...) are NIST's estimates from the sample "
                         "alone: give them without --estimate, --llm-labels, --baseline or "
                         "--estimand complete|pool")
    if args.format == "trec":
        raise InputError("-f trec prints trec_eval's measures only: use -f tsv for xinfAP, ...")
    return given or parse_measures(default_measures)


def read_design(args, command: str):
    """``(sampled qrels, relevance threshold)`` read from the command's qrels, notes on stderr."""
    from ..collection_settings import resolve_rel_threshold
    from ..io import read_sampled_qrels
    from ._common import grades_warning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sample = read_sampled_qrels(args.qrels)
    for note in caught:
        print(f"relimpute {command}: note: {note.message}", file=sys.stderr)
    threshold, settings = resolve_rel_threshold(args.qrels, args.rel_threshold)
    given = "--rel-threshold" if args.rel_threshold is not None else settings is not None
    judged = sample["relevance"].to_numpy()
    message = grades_warning(judged[judged >= 0], threshold, given=given, qrels=args.qrels)
    if message:  # a threshold above every grade: refused, as for any qrels
        print(f"relimpute {command}: {message}", file=sys.stderr)
    return sample, threshold


def inferred_table(sample, rel_threshold: int, args, names: list[Inferred]):
    """Rows ``system`` (and ``query_id`` with ``--per-topic``) of the inferred measures.

    A grade below the relevance threshold counts as nonrelevant (the
    script's ``-G`` mapping of it to 0); infNDCG's gains are the grades. The runs
    are read as the script reads them: scores compared as doubles, ties by docno
    descending (:func:`relimpute.measures.inferred.sample_eval`).
    """
    import pandas as pd

    from ..io import read_runs
    from ..measures.inferred import SampledQrels, sample_eval

    design = SampledQrels(sample, gains={grade: 0 for grade in range(1, rel_threshold)})
    frames = []
    for system, run in read_runs(args.runs, duplicates=args.duplicates).items():
        scores = sample_eval(design, run)
        if not args.per_topic:
            scores = scores.loc[["all"]]
        frames.append(scores[list(names)].rename_axis("query_id").reset_index()
                      .assign(system=system))
    table = pd.concat(frames, ignore_index=True)
    return table if args.per_topic else table.drop(columns="query_id")
