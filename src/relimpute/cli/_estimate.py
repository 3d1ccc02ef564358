"""``--estimate FILE``: read the probabilistic qrels ``relimpute fit -o`` writes.

The format (:func:`relimpute.io.write_prob_qrels`) is tab-separated with a
header, ``query_id<TAB>doc_id<TAB>probability``, one line per (topic,
document) the runs retrieved; judged documents hold their labels as 0/1.
Headerless ``qid docno p`` lines are read too. Judged documents of the
qrels keep their labels whatever the file says; an unjudged document the
file does not list is an error (the file was fitted to other runs).
"""

from __future__ import annotations


def add_estimate_argument(parser) -> None:
    """``--estimate FILE``."""
    parser.add_argument(
        "--estimate",
        metavar="FILE",
        help="probabilistic qrels written by `relimpute fit -o FILE` (query_id, doc_id, "
        "probability; tab-separated with a header): score against them instead of fitting a model",
    )


def load_estimate(path: str, campaign):
    """The :class:`RelevanceEstimate` in ``path``, aligned to ``campaign``'s documents."""
    from ..errors import InputError
    from ..io import read_prob_qrels
    from ..relevance.base import RelevanceEstimate

    frame = read_prob_qrels(path)
    try:
        return RelevanceEstimate.from_frame(campaign, frame)
    except InputError as exc:
        raise InputError(
            f"{exc.problem} (was the file fitted to other runs or qrels?)", path
        ) from None
