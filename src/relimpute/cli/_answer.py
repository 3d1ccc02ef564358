"""A scoring command's answer as printed, written in one place: compare's table (every pair,
or the matrix, its Monte Carlo bounds at their digits; or the design-based table) under its
estimand line, and the notes on stderr beside an answer: which uncertainty it carries
(compare), why it is narrower than the posterior predictive one, and its title when the answer
is on the labels' pool."""

from __future__ import annotations

import sys

from ._format import emit


def answer_table(command: str, request, result, n_draws: int | None, title: str, estimate):
    """``(table, title, layout)``: compare's answer ``result`` to ``request`` as
    :func:`write_answer` prints it, its notes on stderr (:func:`answer_notes`) first."""
    title = answer_notes(command, request, n_draws, title, estimate)
    table, layout = _table(command, request, result, n_draws)
    return table, title, layout


def write_answer(command: str, request, table, title: str, layout: dict) -> None:
    """Print compare's ``table`` (:func:`answer_table`, or the design-based one) under the
    estimand line ``title``, and the matrix's note on its columns."""
    emit(table, request.format, title=title, **layout)
    if request.matrix and request.format not in ("tsv", "json"):
        print(f"relimpute {command}: columns are numbered as the rows; --format tsv or json "
              "prints full names and all digits", file=sys.stderr)  # fmt: skip


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


def _table(command: str, request, result, n_draws: int | None) -> tuple:
    """The answer's table and its layout (:func:`relimpute.cli._format.emit`'s keywords):
    with --matrix :func:`_matrix`; with --topic-bootstrap its frame, else its columns, each
    Monte Carlo bound rounded to its error when the answer has draws."""
    if request.matrix:
        return _matrix(result, request.format)
    if request.topics:
        return result.to_frame(level=request.confidence), {}
    if result.scores.draws is None or n_draws is None:
        return result.columns(level=request.confidence), {}
    return _bounds_to_their_digits(command, result, n_draws, request.confidence,
                                   request.format), {}


def _matrix(result, fmt: str) -> tuple:
    """P(row beats column) (``result.beats()``) and its layout: numbered columns, two
    decimals and text to the left where people read it; full names and every digit in tsv
    and json."""
    import shutil

    systems = list(result.systems)
    beats = result.beats()
    if fmt in ("tsv", "json"):
        if "system" in systems:  # a run named "system": the frame says how pandas names it
            return result.matrix().reset_index(), {}
        return {"system": systems} | {name: beats[:, j] for j, name in enumerate(systems)}, {}
    numbers = [str(i) for i in range(1, len(systems) + 1)]
    labels = [f"{n:>{len(numbers[-1])}} {name}" for n, name in zip(numbers, systems)]
    width = max(map(len, labels))
    cells = {"system": [label.ljust(width) for label in labels]}
    for number, column in zip(numbers, beats.T.tolist()):
        cells[number] = ["-" if p != p else f"{p:.2f}" for p in column]  # NaN: the diagonal
    line_width = shutil.get_terminal_size((120, 24)).columns if fmt == "table" else None
    return cells, {"justify": "left", "line_width": line_width}


def _bounds_to_their_digits(command: str, result, n_draws: int, level: float,
                            fmt: str) -> dict:
    """The answer's columns with each Monte Carlo bound rounded at the decimal of its Monte Carlo standard
    error (``Comparison.to_frame(rounded=True)``), and a note saying so; tsv and json, read by
    programs, keep every digit and the note gives the error.

    The bounds are tail quantiles: with a model's posterior draws they rest on the few
    draws in the tail, so their last digits would change with the seed.
    """
    import numpy as np

    errors = result.bound_errors(level)
    machine = fmt in ("tsv", "json")  # read by programs: every digit, none rounded
    columns = result.columns(level=level, rounded=not machine, errors=errors)
    worst = max(float(np.max(e, initial=0.0)) for e in errors)
    said = "have" if machine else "are rounded at the decimal of their"
    print(
        f"relimpute {command}: ci_low and ci_high {said} Monte Carlo "
        f"standard error (up to {worst:.2g}"
        + (f", over {n_draws} posterior draws of the model)" if n_draws else ")"),
        file=sys.stderr,
    )
    return columns
