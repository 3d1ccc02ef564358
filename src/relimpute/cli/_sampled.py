"""Inferred measures of sampled qrels on the command line (``evaluate -m xinfAP``)."""

from __future__ import annotations

from ..errors import InputError

#: NIST's inferred measures (sample_eval.pl), by the names relimpute prints; the script's
#: own names (infAP is trec_eval's one-sample measure here, so the script's is xinfAP)
INFERRED = ("xinfAP", "infNDCG", "iP@10", "iP@50", "iP@1000", "iNumRel", "iNumRelRet")
SCRIPT_NAMES = {"iP10": "iP@10", "iP50": "iP@50", "iP1000": "iP@1000",
                "inum_rel": "iNumRel", "inum_rel_ret": "iNumRelRet"}
#: What evaluate prints of sampled qrels when no -m is given (NIST's headline measures)
DEFAULT_INFERRED = ("xinfAP", "infNDCG", "iP@10", "iNumRel")
#: Measures that add up over topics rather than average
SUMMED = ("iNumRel", "iNumRelRet")


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


def inferred_table(campaign, args, names: list[Inferred], *, per_topic: bool):
    """Rows ``system`` (and ``query_id``) with the inferred measures, read from the run files.

    A grade below the campaign's relevance threshold counts as nonrelevant (the
    script's ``-G`` mapping of it to 0); infNDCG's gains are the grades. The runs
    are read again (not taken from the campaign) so that their order is the
    script's: scores compared as doubles, ties by docno descending.
    """
    import pandas as pd

    from ..io import read_runs
    from ..measures.inferred import SampledQrels, sample_eval

    if campaign.sample is None:
        raise InputError(
            f"{', '.join(names)}: inferred measures need sampled qrels "
            "(five columns: topic iter docno stratum rel); trec_eval's one-sample "
            "inferred AP on ordinary qrels is -m infAP"
        )
    # grades under the relevance threshold count as nonrelevant: sample_eval.pl -G 1=0 for 2
    gains = {grade: 0 for grade in range(1, campaign.rel_threshold)}
    design = SampledQrels(campaign.sample, gains=gains)
    runs = read_runs(args.runs, duplicates=args.duplicates)
    frames = []
    for system in campaign.systems:
        scores = sample_eval(design, runs[system])
        if not per_topic:
            scores = scores.loc[["all"]]
        frames.append(scores[list(names)].rename_axis("query_id").reset_index()
                      .assign(system=system))
    table = pd.concat(frames, ignore_index=True)
    if not per_topic:
        table = table.drop(columns="query_id")
    return table


def join_inferred(summary, table, keys: list[str]):
    """``summary`` with the inferred columns of ``table`` added on ``keys``."""
    return summary.merge(table, on=keys, how="left", validate="one_to_one")
