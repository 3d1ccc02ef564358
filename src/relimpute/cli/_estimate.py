"""``--estimate FILE``: read the probabilistic qrels ``relimpute fit -o`` writes; and the
relevance estimate a command scores against, that file, ``--prior`` or a fitted ``--model``.

The format (:func:`relimpute.io.write_prob_qrels`) is tab-separated with a
header, ``query_id<TAB>doc_id<TAB>probability``, one line per (topic,
document) the runs retrieved; judged documents hold their labels as 0/1.
A model of graded relevance adds ``p_ge_<g>`` columns, P(grade ≥ g), which graded
measures draw grades from. Headerless ``qid docno p`` lines are read too. Judged documents of the
qrels keep their labels whatever the file says; an unjudged document the
file does not list is an error (the file was fitted to other runs). The model's posterior
draws, when it had them, are in the companion ``FILE.draws.npz`` that ``fit -o`` writes beside
it (:mod:`relimpute.relevance.draws_file`); they are read with the file.
"""

from __future__ import annotations


def add_estimate_argument(parser) -> None:
    """``--estimate FILE``."""
    parser.add_argument(
        "--estimate",
        metavar="FILE",
        help="probabilistic qrels written by `relimpute fit -o FILE` (query_id, doc_id, "
        "probability; tab-separated with a header), with the model's posterior draws in "
        "FILE.draws.npz beside it when fit wrote them: score against them instead of fitting a "
        "model",
    )


def load_estimate(path: str, campaign, command: str = "relimpute"):
    """The :class:`RelevanceEstimate` in ``path``, aligned to ``campaign``'s documents
    (:func:`relimpute.relevance.draws_file.read_estimate`); a note when the file lists
    documents of the campaign's topics that the campaign lacks (left out)."""
    import sys
    import warnings

    from ..errors import LeftOutWarning
    from ..relevance.draws_file import read_estimate

    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LeftOutWarning)
            return read_estimate(path, campaign)
    finally:  # the note before an error in the file, as it comes first; other warnings as such
        for note in caught:
            if not issubclass(note.category, LeftOutWarning):
                warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)
                continue
            print(f"relimpute {command}: note: {note.message}: if it was fitted with "
                  "--llm-labels, give the same --llm-labels here to count them", file=sys.stderr)


def relevance_estimate(source, campaign, measures, command: str, seed: int):
    """The relevance estimate a command scores against (``source``: a
    :class:`relimpute.cli._requests.RelevanceSource`): the --estimate file, the uniform
    --prior, or the --model (the labels' model with --llm-labels, else the default one)
    fitted to ``campaign`` with ``seed``, predicting for ``measures`` (a binary measure reads
    no grades); a line on stderr when that model failed the project's calibration study."""
    from ._calibration_check import warn_if_uncalibrated
    from ._labels import model_with_labels

    if source.estimate is not None:  # with --llm-labels, the documents they add count in R
        return load_estimate(source.estimate, campaign, command)
    uniform = source.prior is not None  # the labels' model, or an error, before the warning
    name = None if uniform else model_with_labels(source.labels, source.model)
    warn_if_uncalibrated(("uniform" if source.prior == 0.5 else None) if uniform else source.model,
                         command)  # fmt: skip
    if uniform:
        from ..relevance import Uniform  # only here: the default answer loads no other model

        return Uniform(prior=source.prior).fit_predict(campaign)
    from .._defaults import DEFAULT_MODEL  # a model's settings: not loaded for a --prior
    from ..confidence import predict_for
    from ..progress import stage
    from ..relevance import load_model

    name = name or DEFAULT_MODEL
    with stage(f"relimpute {command}: fitting {name}"):
        model = load_model(name)
        model.fit(campaign, rng=seed)
        return predict_for(model, campaign, measures)
