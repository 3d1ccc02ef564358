"""The notes a scoring command prints on stderr beside its answer, written in one place: which
uncertainty the answer carries (compare), why it is narrower than the posterior predictive one,
and its title when the answer is on the labels' pool."""

from __future__ import annotations

import sys


def answer_notes(command: str, request, n_draws: int | None, title: str, estimate) -> str:
    """Print compare's notes on ``request``'s answer (:func:`uncertainty_note`,
    :func:`point_estimate_note`; ``n_draws``: the estimate's posterior draws, None: no
    estimate) and return the estimand line ``title`` on the labels' pool of ``estimate``."""
    print(uncertainty_note(command, request.estimand.name, request.topics), file=sys.stderr)
    narrower = point_estimate_note(command, request, n_draws)
    if narrower:
        print(narrower, file=sys.stderr)
    return labels_pool_title(title, estimate)


def uncertainty_note(command: str, estimand: str, topics: bool) -> str:
    """The line on stderr saying which uncertainty the answer carries."""
    if estimand == "qrels":
        return (
            f"relimpute {command}: --estimand qrels: trec_eval's numbers on these qrels "
            "(unjudged = nonrelevant), no uncertainty from unjudged documents"
            + (" (topic sampling only)" if topics else "")
        )
    if topics:
        return (
            f"relimpute {command}: the uncertainty here is topic sampling and the relevance of "
            "unjudged documents together (sd_topics, sd_judgments: each source alone)"
        )
    return (
        f"relimpute {command}: the uncertainty here is the relevance of unjudged documents, on "
        "these topics; add --topic-bootstrap for topic sampling too, or test topics alone with "
        "`relimpute evaluate --baseline RUN`"
    )


def point_estimate_note(command: str, request, n_draws: int | None) -> str | None:
    """One line when the answer ignores the model's own uncertainty (it is then narrower
    than the posterior predictive answer the default model gives); ``n_draws``: the
    estimate's posterior draws (None: no estimate)."""
    source = request.relevance
    if source.prior is not None or n_draws is None:
        return None  # a fixed prior (or the qrels) has no parameters to be unsure of
    pool = request.estimand.name == "pool"
    if request.normal or (pool and n_draws):
        why = (f"{'--normal' if request.normal else '--estimand pool'} uses the model's point "
               "estimate of p")
    elif n_draws == 0:
        why = (
            file_without_draws(source.estimate)
            if source.estimate is not None
            else f"the model {source.model!r} gives a point estimate only"
        )
    else:
        return None
    return narrower_note(command, why)


def narrower_note(command: str, why: str) -> str:
    """The line a command prints when its answer leaves out the model's own uncertainty."""
    return (
        f"relimpute {command}: note: {why}, so the uncertainty of the model's own parameters is "
        "not in this answer, which is narrower than the posterior's"
    )


def file_without_draws(path: str) -> str:
    """Why an --estimate file gives a point estimate only."""
    from ..relevance.draws_file import SUFFIX

    return (
        f"{path} holds one probability per document and no posterior draws (no {path}{SUFFIX} "
        "beside it)"
    )


def on_labels_pool(estimate) -> bool:
    """Whether ``estimate`` takes the labelled documents as the pool (fusion-llm's default):
    a document neither judged nor labelled is then nonrelevant, as in qrels."""
    return estimate is not None and estimate.params.get("unlabelled") == "nonrelevant"


def labels_pool_title(title: str, estimate) -> str:
    """The estimand line ``title`` (``estimand: complete (...)``) saying so when the answer is
    on the labels' pool."""
    if not on_labels_pool(estimate) or not title.endswith(")"):
        return title
    return title[:-1] + ("; on the labels' pool: a document neither judged nor labelled is "
                         "nonrelevant, as in qrels)")
