"""Arguments and loading shared by the subcommands that read qrels and runs."""

from __future__ import annotations

import argparse
import sys
import warnings


def add_campaign_arguments(
    parser, *, runs_required: bool = True, qrels_required: bool = True
) -> None:
    """QRELS, RUN..., --rel-threshold, --by-rank and --duplicates."""
    parser.add_argument(
        "qrels",
        metavar="QRELS",
        nargs=None if qrels_required else "?",
        help="qrels file (qid iter docno rel), plain or .gz, or irds:DATASET_ID (ir_datasets)",
    )
    parser.add_argument(
        "runs",
        metavar="RUN",
        nargs="+" if runs_required else "*",
        help="run files or directories of run files",
    )
    parser.add_argument(
        "--rel-threshold",
        type=int,
        default=None,
        metavar="N",
        help="lowest grade counted relevant (default: rel_threshold in a relimpute.toml beside "
        "QRELS, else 1; TREC DL uses 2)",
    )
    parser.add_argument(
        "--by-rank", action="store_true", help="order runs by their rank column instead of score"
    )
    parser.add_argument(
        "--duplicates",
        choices=("error", "first", "last"),
        default="error",
        help="a document listed twice in a topic of a run or the qrels: stop with an error, or "
        "keep its first or last line (default: %(default)s)",
    )


def add_model_argument(parser, default: str | None, what: str = "relevance model") -> None:
    """--model NAME|PATH: a registered model (shipped settings) or a settings file.

    ``default=None`` leaves ``args.model`` None when the option is not given (the
    command then uses the default model, and can tell whether one was named).
    """
    from ..relevance.settings import DEFAULT_MODEL  # the relevance models: not for evaluate

    parser.add_argument(
        "--model",
        "-M",
        default=default,
        metavar="NAME|PATH",
        help=f"{what}: a registered name (fusion, rtc, uniform, bayes, ...; shipped settings in "
        f"models/NAME.json) or a settings file (default: {default or DEFAULT_MODEL})",
    )


def load_campaign(args, command: str):
    """The campaign the arguments name; the input policies' notes go to stderr."""
    from ..data import Campaign

    with warnings.catch_warnings():  # the notes are printed below instead
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(
            args.qrels,
            args.runs,
            rel_threshold=args.rel_threshold,
            by_rank=args.by_rank,
            duplicates=args.duplicates,
        )
    for note in campaign.notes:
        print(f"relimpute {command}: note: {note}", file=sys.stderr)
    note_rel_threshold(args, command)
    return campaign


def number_between(low: float, high: float, *, open_interval: bool = False):
    """An argparse ``type``: a float in [low, high] (or (low, high)); NaN is refused."""
    brackets = "()" if open_interval else "[]"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        inside = low < value < high if open_interval else low <= value <= high
        if not inside:  # also NaN
            raise argparse.ArgumentTypeError(
                f"{text} is not in {brackets[0]}{low:g}, {high:g}{brackets[1]}"
            )
        return value

    return parse


def integer_at_least(minimum: int):
    """An argparse ``type``: an integer of at least ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise argparse.ArgumentTypeError(f"{text} is not {kind}")
        return value

    return parse


positive_int = integer_at_least(1)
seed_int = integer_at_least(0)


def note_rel_threshold(args, command: str) -> None:
    """Say on stderr when the threshold came from the collection's settings file."""
    from ..collection_settings import resolve_rel_threshold

    threshold, source = resolve_rel_threshold(args.qrels, args.rel_threshold)
    if source is not None:
        print(f"relimpute {command}: note: rel_threshold {threshold} from {source}", file=sys.stderr)
