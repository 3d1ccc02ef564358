"""The TREC text formats as names and orders: the columns of runs, qrels and probabilistic
qrels (and their other common spellings), trec_eval's order of a run, and the line of a
qrels-like file that names a (topic, document), to point an error at it.
"""

from __future__ import annotations

import os
import re

import numpy as np

from .._files import read_bytes

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded for DataFrames only: reading files needs none
    import pandas as pd

RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
PROB_QRELS_COLUMNS = ("query_id", "doc_id", "probability")
#: optional probabilistic-qrels columns after those three: ``p_ge_<grade>`` = P(grade ≥ grade)
GRADE_COLUMN = re.compile(r"p_ge_(-?\d+)")

#: Other common spellings of the ir_measures column names, mapped automatically.
COLUMN_ALIASES = {
    **dict.fromkeys(("qid", "query", "topic"), "query_id"),
    **dict.fromkeys(("docno", "docid", "doc"), "doc_id"),
    **dict.fromkeys(("rel", "label", "judgment"), "relevance"),
    **dict.fromkeys(("p", "prob", "p_rel"), "probability"),
    "sim": "score",
}


def trec_scores(scores: pd.Series | np.ndarray) -> np.ndarray:
    """Scores as trec_eval compares them: rounded to float32, returned as float64.

    trec_eval stores a run's scores as C ``float`` (``trec_format.h``:
    ``float sim``), so scores that differ only beyond float32 precision tie
    and are ordered by docno.
    """
    with np.errstate(over="ignore"):
        return np.asarray(scores, dtype=np.float64).astype(np.float32).astype(np.float64)


def sort_trec(run: pd.DataFrame, *, by_rank: bool = False) -> pd.DataFrame:
    """Order a run as trec_eval does: per topic, score descending, ties by docno descending.

    Scores are compared at trec_eval's float32 precision (:func:`trec_scores`).
    With ``by_rank`` the rank column orders the documents instead (ties by
    docno descending), for runs whose scores are not meant to be used.
    """
    key = run["rank"].to_numpy() if by_rank else -trec_scores(run["score"])
    order = run.assign(_key=key).sort_values(
        ["query_id", "_key", "doc_id"], ascending=[True, True, False], kind="stable"
    )
    return order.drop(columns="_key").reset_index(drop=True)


def line_naming(path: str | os.PathLike, query: str, doc: str) -> int | None:
    """The first line of a qrels-like file naming ``query`` and ``doc`` (to point an error
    at it), else None."""
    for number, line in enumerate(read_bytes(path).decode("utf-8", "replace").splitlines(), 1):
        fields = line.split()
        if len(fields) >= 3 and fields[0] == query and doc in fields[1:3]:
            return number
    return None
