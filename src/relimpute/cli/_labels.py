"""``--llm-labels FILE``: automatic relevance labels as evidence, for the commands that fit a model."""

from __future__ import annotations

import sys

#: the model that reads the labels (relimpute.relevance.fusion_llm.FusionLLM.name)
LABELS_MODEL = "fusion-llm"

LLM_LABELS_HELP = (
    "automatic relevance labels (an LLM's, say) for some (topic, document) pairs: qrels format "
    "(qid iter docno label; graded or 0/1) or probabilistic qrels (query_id doc_id probability; "
    "a `relimpute fit -o` file is one); "
    "repeatable, one source per file. They are taken as evidence whose error is learned from the "
    "human judgments (model " + LABELS_MODEL + ": how often each label value is right, per topic, "
    "with that uncertainty in the answer), never as judgments: a judged document keeps its human "
    "label; the labelled documents are the pool, so in a topic with labels a document neither "
    "judged nor labelled counts nonrelevant, as in qrels (a settings file with "
    "unlabelled=\"runs\" keeps the runs' evidence there). A label on a document neither "
    "the qrels nor any run hold adds it to its topic, unjudged and retrieved by no run (it counts "
    "towards R by its probability: a label file on a deeper pool than the qrels is used whole); "
    "a label on a topic the qrels lack is an error"
)


def add_llm_labels_argument(parser) -> None:
    """``--llm-labels FILE`` (repeatable)."""
    parser.add_argument(
        "--llm-labels", action="append", metavar="FILE", default=None, help=LLM_LABELS_HELP
    )


def attach_llm_labels(paths, campaign, command: str):
    """``campaign`` with the label files ``paths`` of ``--llm-labels`` (checked against it), if
    any."""
    if not paths:
        return campaign
    from ..labels import with_labels

    before = {t.query_id: t.n_docs for t in campaign.topics}
    # a label on a document neither the qrels nor any run hold adds it to its topic (unjudged,
    # retrieved by no run): the labels say it exists, so R counts it
    campaign = with_labels(campaign, paths, unknown_documents="add")
    for source in campaign.labels:
        print(
            f"relimpute {command}: note: {len(source.frame)} {source.scale} labels from "
            f"{source.source} (source {source.name!r}), evidence for {LABELS_MODEL}, not judgments",
            file=sys.stderr,
        )
    added = {t.query_id: t.n_docs - before[t.query_id] for t in campaign.topics}
    if any(added.values()):
        print(
            f"relimpute {command}: note: {sum(added.values())} labelled document(s) that neither "
            f"the qrels nor any run hold added to {sum(n > 0 for n in added.values())} topic(s), "
            "unjudged and retrieved by no run: they count towards R by their probability"
            + ("; the truth (the full qrels) holds them non-relevant" if command == "calibrate" else ""),
            file=sys.stderr,
        )
    return campaign


def strategies_with_labels(labels, strategies: list) -> list:
    """Calibration strategies with ``--llm-labels`` (``labels``, the files): those that
    generalise their judgments with the default model (and judge without refitting it)
    generalise with the labels' model instead, the default model's parameters wrapped in it;
    an error when none does."""
    if not labels:
        return strategies
    from dataclasses import replace

    from .._defaults import DEFAULT_MODEL
    from ..errors import InputError
    from ..relevance import load_settings

    def default_params(strategy):
        """The default model's parameters of a strategy that generalises with it (a settings
        file for it included, as ``--settings-dir`` gives), else None."""
        if not isinstance(strategy.model, str) or strategy.selector in ("rtc", "posterior"):
            return None
        if strategy.model == DEFAULT_MODEL:
            return dict(strategy.model_params)
        settings = load_settings(strategy.model)
        return {**settings.params, **strategy.model_params} if settings.model == DEFAULT_MODEL else None

    swapped = [
        s if (params := default_params(s)) is None
        else replace(s, model=LABELS_MODEL, model_params={"fusion": params})
        for s in strategies
    ]
    if not any(s.model == LABELS_MODEL for s in swapped):
        raise InputError(
            f"--llm-labels: no strategy generalises with the default model ({DEFAULT_MODEL}), "
            f"so none would read the labels; add fusion-mc, or name mtc+{LABELS_MODEL}"
        )
    return swapped
