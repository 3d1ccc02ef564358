"""Where the relevance of unjudged documents comes from, for the commands that score: the
``--estimate FILE`` that ``relimpute fit -o`` wrote, the uniform ``--prior``, or the ``--model``
fitted here (the labels' model with ``--llm-labels``), and a line on stderr when that model
failed the project's own calibration study.

The file's format (:func:`relimpute.io.write_prob_qrels`) is tab-separated with a
header, ``query_id<TAB>doc_id<TAB>probability``, one line per (topic,
document) the runs retrieved; judged documents hold their labels as 0/1.
A model of graded relevance adds ``p_ge_<g>`` columns, P(grade ≥ g), which graded
measures draw grades from. Headerless ``qid docno p`` lines are read too. Judged documents of the
qrels keep their labels whatever the file says; an unjudged document the
file does not list is an error (the file was fitted to other runs). The model's posterior
draws, when it had them, are in the companion ``FILE.draws.npz`` that ``fit -o`` writes beside
it (:mod:`relimpute.relevance.draws_file`); they are read with the file.

The calibration study: the shipped reusability studies (Carterette 2007 §4.3–4.4:
:data:`SUMMARIES`, the reproduction of RTC and the hierarchy's held-out study among them, and
``benchmarks/results/calibration.json`` for strategies only benchmarked there) measure the
bookmaker W of each strategy's confidence; the target is W >= -0.5 with 95% confidence
(``w_low``). A model whose confidence the studies found over-stated says so, with
the W measured, when a command uses it. The studies live in the repository (source and
editable installs); without them nothing is said.
"""

from __future__ import annotations

from ._labels import LABELS_MODEL


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
    :class:`relimpute.cli._requests.RelevanceSource`): the uniform --prior, the --model (the
    labels' model with --llm-labels, else the default one) fitted to ``campaign`` with
    ``seed``, predicting for ``measures`` (a binary measure reads no grades), or the --estimate
    file; a line on stderr when that model failed the project's calibration study."""
    if source.estimate is None:
        return _fitted(source, campaign, measures, command, seed)
    # with --llm-labels, the documents they add count in R
    return load_estimate(source.estimate, campaign, command)


def _fitted(source, campaign, measures, command: str, seed: int):
    """The uniform --prior, or the --model fitted to ``campaign``
    (:func:`relevance_estimate`), after the calibration warning."""
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


def model_with_labels(labels, model: str | None, option: str = "--model") -> str | None:
    """The model to fit: ``model`` as given without ``--llm-labels`` (``labels``, the files);
    with them, the labels' model in place of the default one, and an error for a model that
    ignores labels."""
    if not labels:
        return model
    from .._defaults import DEFAULT_MODEL
    from ..errors import InputError
    from ..relevance import load_settings

    if model is None or model == DEFAULT_MODEL:
        return LABELS_MODEL
    if load_settings(model).model != LABELS_MODEL:
        raise InputError(
            f"{option} {model} does not read --llm-labels: drop {option} (the default model with "
            f"labels is {LABELS_MODEL}) or name {LABELS_MODEL} or a settings file for it"
        )
    return model


#: W at or above which a strategy's confidence counts as calibrated (examples/calibration)
W_TARGET = -0.5
#: the calibration strategies whose confidence is the model's (uniform: MTC's uniform prior;
#: rtc: the loop and model of Carterette 2007, ``rtc[paper]`` in its reproduction; bayes: its
#: shipped settings, NUTS draws carried into Monte Carlo, ``bayes-mc``)
STRATEGY_OF_MODEL = {"rtc": ("rtc", "rtc[paper]"), "uniform": ("mtc",), "bayes": ("bayes-mc",)}
#: the study summaries read, relative to the repository (the hierarchy's held-out study last)
SUMMARIES = (
    "examples/calibration/*/summary.csv",
    "examples/rtc_paper/results/summary.csv",
    "examples/bayes_calibration/loco/*/summary.csv",
)
#: the strategy of the default answer (the default model, confidence over its posterior draws)
DEFAULT_STRATEGY = "fusion-mc"


def _repository():
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    return root if (root / "examples" / "calibration").is_dir() else None


def _study_name(summary) -> str:
    folder = summary.parent
    return folder.parent.name if folder.name == "results" else folder.name


def measured_w(strategy: str | tuple[str, ...], root=None) -> list[tuple[str, float, float]]:
    """``(study, W, lower 95% bound)`` of ``strategy`` (or any of several names) in every
    shipped study that ran it (``root``: the repository, a :class:`pathlib.Path`)."""
    import csv
    import json

    root = root or _repository()
    if root is None:
        return []
    names = (strategy,) if isinstance(strategy, str) else tuple(strategy)
    found = []
    for pattern in SUMMARIES:  # a later source only for strategies the earlier ones lack
        if found:
            break
        for summary in sorted(root.glob(pattern)):
            try:
                with open(summary, encoding="utf-8", newline="") as handle:
                    rows = [r for r in csv.DictReader(handle) if r.get("strategy") in names]
                found += [(_study_name(summary), float(r["w"]), float(r["w_low"])) for r in rows]
            except (OSError, KeyError, ValueError):
                continue
    if not found:  # strategies only the calibration benchmark ran (bayes)
        bench = root / "benchmarks" / "results" / "calibration.json"
        try:
            headline = json.loads(bench.read_text(encoding="utf-8"))["headline"]
            rows = [headline[name] for name in names if name in headline]
            found += [("dl19 benchmark", float(r["w"]), float(r["w_low"])) for r in rows]
        except (OSError, KeyError, TypeError, ValueError):
            pass
    return found


def calibration_warning(model: str, root=None) -> str | None:
    """The warning for ``model`` (a registered name) when a shipped study found its
    confidence over-stated (W's lower bound below :data:`W_TARGET`), else None."""
    strategy = STRATEGY_OF_MODEL.get(str(model))
    if strategy is None:
        return None
    studies = measured_w(strategy, root)
    failed = [(name, w) for name, w, low in studies if low < W_TARGET]
    if not failed:
        return None
    measured = ", ".join(f"{w:+.2f} on {name}" for name, w in failed)
    default = measured_w(DEFAULT_STRATEGY, root)
    passes = default and all(low >= W_TARGET for _, _, low in default)
    return (
        f"warning: model {model!r} failed the shipped calibration study (W {measured}; "
        f"calibrated is W >= {W_TARGET:g}): its confidence is over-stated"
        + ("; the default model passes" if passes else "")
    )


def warn_if_uncalibrated(model: str | None, command: str) -> None:
    """Print :func:`calibration_warning` for ``model`` on stderr (nothing for None or a
    model the studies pass)."""
    import sys

    message = calibration_warning(model) if model is not None else None
    if message:
        print(f"relimpute {command}: {message}", file=sys.stderr)
