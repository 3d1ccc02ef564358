"""``relimpute fit``: fit a relevance model to partial qrels and write probabilistic qrels."""

from __future__ import annotations

import sys

from .._defaults import DEFAULT_MODEL
from ._common import (
    add_campaign_arguments,
    add_model_argument,
    add_seed_argument,
    load_campaign,
    output_file,
)
from ._format import add_format_argument, emit
from ._labels import add_llm_labels_argument
from ._relevance import model_with_labels, warn_if_uncalibrated
from ._vocabulary import add_quiet_argument

COMMAND = "fit"
HELP = "fit a relevance model (fusion by default; rtc, bayes, ...) to partial qrels and runs; write probabilistic qrels"
DESCRIPTION = """\
Learn, from the judged documents of QRELS and the rankings of the RUNs, the
probability that every (topic, document) the runs retrieve is relevant, and
write it as probabilistic qrels to --output: tab-separated, a header line
"query_id doc_id probability", then one line per (topic, document) the runs
retrieved (judged documents keep their labels as 0/1 at --rel-threshold).
When the model has posterior draws (the default model does), they go beside
it to FILE.draws.npz (numpy; docs/inputs.md), so that intervals read from
the file are as wide as the posterior's. `relimpute evaluate --estimate FILE`
and `relimpute compare --estimate FILE` read both back (so a slow fit is done
once). The model is a registered
name (its shipped settings in models/<name>.json, else the class defaults)
or the path of a settings file (JSON: model, params, provenance).

Prints one row per topic: documents, judged, judged relevant and the
expected number of relevant documents (sum of p); standard error says
which model and settings file were used, the fitted parameters and what
was written. With -o - the probabilistic qrels go to standard output
instead, without the table.

examples:
  relimpute fit qrels.txt runs/ -o estimate.tsv --rel-threshold 2
  relimpute evaluate qrels.txt runs/ --rel-threshold 2 -m AP --estimate estimate.tsv
  relimpute fit --model rtc qrels.txt runs/ -o estimate.tsv --rel-threshold 2
  relimpute fit --model models/rtc.json qrels.txt a.run b.run -o est.tsv --format tsv
  relimpute fit qrels.txt runs/ -o - --rel-threshold 2 | gzip > estimate.tsv.gz

exit status: 0 on success, 2 on bad input (the message names file and line).
"""


def add_arguments(parser) -> None:
    add_campaign_arguments(parser)
    add_model_argument(parser, DEFAULT_MODEL)
    add_llm_labels_argument(parser)
    parser.add_argument(
        "--output",
        "-o",
        type=output_file(),
        required=True,
        help="where to write the probabilistic qrels: a file, or - for standard output "
        "(a file named - is ./-)",
    )
    add_seed_argument(parser, "the model's randomness")
    add_quiet_argument(parser)
    add_format_argument(parser)


def run(args) -> int:
    import pandas as pd

    from .._files import check_output_path
    from ..io import write_prob_qrels
    from ..progress import stage
    from ..relevance import load_settings
    from ..relevance.draws_file import write_draws

    to_stdout = args.output == "-"
    if not to_stdout:
        check_output_path(args.output)  # before the fit, not after it
    model = model_with_labels(args.llm_labels, args.model)
    settings = load_settings(model)
    warn_if_uncalibrated(model, COMMAND)
    from ._requests import CampaignInputs

    campaign = load_campaign(CampaignInputs.from_args(args, COMMAND), COMMAND)
    with stage(f"relimpute {COMMAND}: fitting {model or 'the model'}"):
        estimate = settings.build().fit_predict(campaign, rng=args.seed)
    frame = estimate.to_frame()
    with stage(f"relimpute {COMMAND}: writing {'the estimate' if to_stdout else args.output}"):
        write_prob_qrels(frame, sys.stdout if to_stdout else args.output)
        companion = None if to_stdout else write_draws(estimate, args.output)
    if companion is not None:
        print(
            f"relimpute fit: the model's {estimate.n_draws} posterior draws in {companion} "
            "(evaluate and compare --estimate read them for their intervals)",
            file=sys.stderr,
        )
    defaults = settings.source == "<class defaults>"
    settings_from = "its class defaults" if defaults else f"settings {settings.source}"
    print(
        f"relimpute fit: model {settings.model} ({settings_from}), "
        f"fitted {_describe(estimate.params)}",
        file=sys.stderr,
    )
    judged = sum(int(t.judged.sum()) for t in campaign.topics)
    print(
        f"relimpute fit: wrote {'standard output' if to_stdout else args.output} ({len(frame):,} "
        f"documents of {len(campaign.topics)} topics, {judged:,} of them judged)",
        file=sys.stderr,
    )
    if to_stdout:
        return 0  # standard output holds the estimate, not the table
    relevant = campaign.relevant()
    summary = pd.DataFrame(
        {
            "query_id": list(campaign.query_ids),
            "n_docs": [t.n_docs for t in campaign.topics],
            "n_judged": [int(t.judged.sum()) for t in campaign.topics],
            "n_relevant_judged": [int(r.sum()) for r in relevant],
            "expected_relevant": [float(p.sum()) for p in estimate.p],
        }
    )
    emit(summary, args.format)
    return 0


def _describe(params) -> str:
    """Scalars as ``k=v``; arrays by their range."""
    parts = []
    for key, value in params.items():
        if isinstance(value, (int, float)):
            parts.append(f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}")
        elif isinstance(value, tuple) and all(isinstance(v, float) for v in value):
            parts.append(f"{key}=({', '.join(f'{v:.4g}' for v in value)})")
        elif hasattr(value, "dtype") and value.size and value.dtype.kind == "f":
            parts.append(f"{key}=[{value.min():.3g} .. {value.max():.3g}]")
    return ", ".join(parts) or "(no parameters)"
