"""Arguments and loading shared by the subcommands that read qrels and runs."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import warnings
from contextlib import contextmanager

from .._defaults import DEFAULT_MODEL  # light: --help loads no model


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




@contextmanager
def flag_names(**flags: str):
    """Within the block, an InputError the library raises naming a Python parameter
    (``source="depth"``) names the command's flag instead (``depth="--depth"``)."""
    from ..errors import InputError

    try:
        yield
    except InputError as exc:
        if exc.source not in flags:
            raise
        raise InputError(exc.problem, flags[exc.source], exc.line) from None


def check_run_names(names, systems, option: str) -> None:
    """Raise InputError naming ``option`` when a name in ``names`` is not a run of ``systems``,
    with the closest run names (``bm25base``: did you mean bm25base_p?) and the runs."""
    import difflib

    from ..errors import InputError

    unknown = [n for n in names if n not in systems]
    if not unknown:
        return
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, systems, n=3, cutoff=0.6)  # closest first
        close += sorted((s for s in systems if s.startswith(name)), key=len)
        if close:
            hints.append(f"{name}: did you mean {' or '.join(dict.fromkeys(close[:3]))}?")
    shown = ", ".join(systems[:10]) + (f", ... ({len(systems)} runs)" if len(systems) > 10 else "")
    hint = f" ({'; '.join(hints)})" if hints else ""
    raise InputError(f"unknown run(s) {', '.join(unknown)}{hint}; the runs are {shown}", option)


def chosen_runs(chosen, names, option: str) -> list[str]:
    """The runs ``option`` names (``chosen``), checked against the runs' ``names`` (each
    once), else every run: at least two, as a comparison needs."""
    from ..errors import InputError

    systems = list(chosen)
    if systems:
        check_run_names(systems, names, option)
        if len(set(systems)) != len(systems):
            raise InputError(f"{option} lists a run twice")
    systems = systems or list(names)
    if len(systems) < 2:
        raise InputError("need at least two runs to compare")
    return systems


def add_model_argument(parser, default: str | None, what: str = "relevance model") -> None:
    """--model NAME|PATH: a registered model (shipped settings) or a settings file.

    ``default=None`` leaves ``args.model`` None when the option is not given (the
    command then uses the default model, and can tell whether one was named).
    """
    parser.add_argument(
        "--model",
        "-M",
        default=default,
        metavar="NAME|PATH",
        help=f"{what}: a registered name (fusion, rtc, uniform, bayes, ...; shipped settings in "
        f"models/NAME.json) or a settings file, a path ending in .json or holding a / "
        f"(default: {default or DEFAULT_MODEL})",
    )


def load_campaign(inputs, command: str, judgments=None):
    """The campaign ``inputs`` (:class:`relimpute.cli._requests.CampaignInputs`) name, refused at
    once if its files would not fit in memory (:mod:`relimpute.io.memory`); the input policies'
    notes go to stderr. ``judgments``: the qrels already read
    (:func:`relimpute.io.campaign.read_judgments`), not read again."""
    from ..data import Campaign
    from ..io.memory import FIT_BYTES_PER_INPUT_BYTE, READ_BYTES_PER_INPUT_BYTE
    from ..progress import stage

    per_byte = FIT_BYTES_PER_INPUT_BYTE if inputs.fits else READ_BYTES_PER_INPUT_BYTE
    # reading the runs shows its own bar (relimpute.io.assembly); the stage covers the qrels
    # before it and aligning the runs after it
    with warnings.catch_warnings(), stage(f"relimpute {command}: reading the qrels and runs"):
        warnings.simplefilter("ignore")  # the notes are printed below instead
        # the threshold is resolved once, with the qrels: given, else the collection's
        # settings file (campaign.rel_threshold_from), else 1
        campaign = Campaign.from_files(judgments or inputs.qrels, inputs.runs,
                                       rel_threshold=inputs.rel_threshold, by_rank=inputs.by_rank,
                                       duplicates=inputs.duplicates, memory_per_byte=per_byte)
    for note in campaign.notes:
        print(f"relimpute {command}: note: {note}", file=sys.stderr)
    from ._labels import attach_llm_labels

    campaign = attach_llm_labels(inputs.llm_labels, campaign, command)
    threshold, source = campaign.rel_threshold, campaign.rel_threshold_from
    if source is not None:
        note = f"rel_threshold {threshold} from {source}"
        print(f"relimpute {command}: note: {note}", file=sys.stderr)
    given = "--rel-threshold" if inputs.rel_threshold is not None else source is not None
    message = threshold_warning(campaign, given=given, qrels=inputs.qrels)
    if message:
        print(f"relimpute {command}: {message}", file=sys.stderr)
    return campaign


def threshold_warning(campaign, *, given: str | bool, qrels: str = "qrels") -> str | None:
    """One line when the relevance threshold looks wrong for the qrels' grades, else None.

    Wrong: no judged document reaches it (every measure 0: an InputError naming the ``qrels``
    file and the top grade when the threshold was ``given``, by ``--rel-threshold`` or
    a settings file; trec_eval's -l would print zeros), or every judged document does though
    the qrels grade them differently; suspicious: graded qrels (top grade 3 or more, as TREC
    DL's 0-3) read at the default 1 when no threshold was ``given`` (TREC DL counts 2 and above).
    """
    import numpy as np

    grades = [t.grades[t.judged] for t in campaign.topics]
    grades = np.concatenate(grades) if grades else np.zeros(0, dtype=int)
    return grades_warning(grades, campaign.rel_threshold, given=given, qrels=qrels)


def grades_warning(grades, threshold: int, *, given: str | bool, qrels: str = "qrels"):
    """:func:`threshold_warning` on the judged grades themselves (sampled qrels: no campaign)."""
    from ..errors import InputError

    if not len(grades):
        return None
    low, top = int(grades.min()), int(grades.max())
    scale = f"the qrels' grades run from {low} to {top}"
    if threshold > top and given:
        option = given if isinstance(given, str) else "rel_threshold"
        raise InputError(
            f"no judged document is relevant at {option} {threshold}: the highest grade in the "
            f"qrels is {top} (every measure would be 0); give a threshold of {top} or below",
            qrels,
        )
    if threshold > top:
        return (
            f"warning: no judged document is relevant at rel_threshold {threshold} ({scale}): "
            "every measure will be 0; check --rel-threshold"
        )
    if threshold <= low < top:
        return (
            f"warning: every judged document is relevant at rel_threshold {threshold} ({scale}); "
            "check --rel-threshold"
        )
    if not given and threshold == 1 and top >= 3:
        return (
            f"note: {scale} and rel_threshold is the default 1; TREC DL counts 2 and above as "
            "relevant: if so here, give --rel-threshold 2 (or rel_threshold = 2 in a "
            "relimpute.toml beside the qrels)"
        )
    return None


def number_between(low: float, high: float, *, open_interval: bool = False):
    """An argparse ``type``: a float in [low, high] (or (low, high)); NaN is refused."""
    brackets = "()" if open_interval else "[]"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        inside = low < value < high if open_interval else low <= value <= high
        if not inside or not math.isfinite(value):  # also NaN
            if high == math.inf:
                raise argparse.ArgumentTypeError(f"{text} is not a finite number >= {low:g}")
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
#: The seed of every command's randomness unless --seed is given: the same call gives the
#: same answer (another seed shows the Monte Carlo error).
DEFAULT_SEED = 2007


def add_seed_argument(parser, what: str, *, default: int = DEFAULT_SEED) -> None:
    """``--seed N`` (an integer >= 0, default :data:`DEFAULT_SEED`)."""
    parser.add_argument(
        "--seed",
        type=seed_int,
        default=default,
        help=f"seed of {what} (default: %(default)s, so the same call gives the same answer; "
        "another seed shows the Monte Carlo error)",
    )


def jobs_int(text: str) -> int:
    """An argparse ``type`` for ``--jobs``: a positive number of workers, or -1 (all cores),
    -2 (all but one), ... as joblib counts; 0 is refused."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value == 0:
        raise argparse.ArgumentTypeError("0 workers: give a positive number, or -1 for all cores")
    return value


def add_parallel_arguments(parser, units: str) -> None:
    """``--jobs N`` and ``--scheduler ADDRESS``: where a study's ``units`` run
    (:mod:`relimpute.parallel`; the results do not depend on it)."""
    parser.add_argument(
        "--jobs", type=jobs_int, default=1,
        help=f"run the {units} on N local processes (-1 = all cores; default 1); with "
        "--scheduler local, the number of workers",
    )  # fmt: skip
    parser.add_argument(
        "--scheduler", metavar="ADDRESS",
        help=f"run the {units} on the Dask cluster whose scheduler listens at ADDRESS (e.g. "
        "tcp://10.0.0.5:8786), or 'local' for a cluster of --jobs worker processes on this "
        "machine; needs pip install 'relimpute[dask]'. Dask exchanges pickled Python objects, "
        "which run where they arrive: use only a scheduler you trust, over TLS (tls://) or a "
        "trusted network. Waits RELIMPUTE_DASK_WAIT seconds (default 20) for an answer or a "
        "worker (docs: distributed.md)",
    )  # fmt: skip


def add_study_output(parser, table: str, units: str, only: str = "") -> None:
    """``--output OUT``, the study's folder (``table``, ``manifest.json`` and each finished unit
    in ``OUT/.resume/``: :func:`relimpute.studies.run`), with ``--resume`` and ``--overwrite``."""
    parser.add_argument(
        "--output", "-o", type=output_folder, metavar="OUT",
        help=f"{only}write the study into folder OUT: {table}, manifest.json, and each finished "
        f"{units[:-1]} in OUT/.resume/ as it ends, for --resume",
    )  # fmt: skip
    add_resume_arguments(
        parser,
        f"{only}go on with the study a stopped run left in --output: the {units} it finished "
        f"are kept, the others run, and it writes the {table} an uninterrupted run writes; refused "
        "if that study had other runs, qrels, options or --seed",
        f"{only}start afresh in --output though it holds a study (another one, or this one "
        f"unfinished): its finished {units} are dropped; without --resume or this, such a folder is "
        "refused and nothing is lost",
    )


def check_study_output(args, table: str) -> None:
    """``--resume`` and ``--overwrite`` of :func:`add_study_output` need ``--output``, and
    ``--output`` names a folder: a ``.tsv`` file (0.2's form) is refused, saying what to give."""
    from ..errors import InputError

    for given, option, does in ((args.resume, "--resume", "goes on with"),
                                (args.overwrite, "--overwrite", "replaces")):  # fmt: skip
        if given and not args.output:
            raise InputError(f"{does} the study in the --output folder: give that too", option)
    path = args.output
    if path and (os.path.isfile(path) or (path.lower().endswith(".tsv") and not os.path.isdir(path))):
        name = os.path.basename(path)
        stem = os.path.splitext(name)[0] or "study"
        kept = os.path.join(os.path.dirname(path), f".{name}.study")
        earlier = (f"; the study kept in {kept} was written by relimpute 0.2: go on with it "
                   "using that release") if os.path.isdir(kept) else ""  # fmt: skip
        raise InputError(
            f"{path} names a file: --output is the study's folder since 0.3.0 ({table} is written in it, "
            f"with manifest.json and the finished parts); give a folder, e.g. -o {stem}{earlier}",
            "--output",
        )


def add_resume_arguments(parser, resume: str, overwrite: str) -> None:
    """``--resume`` (go on with the study kept in the output) or ``--overwrite`` (start
    afresh there), not both; with neither, an output holding finished work is refused."""
    either = parser.add_mutually_exclusive_group()
    either.add_argument("--resume", action="store_true", help=resume)
    either.add_argument("--overwrite", action="store_true", help=overwrite)


def finite_at_least(low: float):
    """An argparse ``type``: a finite float of at least ``low`` (NaN and infinities refused)."""
    return number_between(low, float("inf"), open_interval=False)


def positive_int_list(text: str) -> list[int]:
    """An argparse ``type``: comma-separated positive integers (``1,2,5,10``)."""
    parse = integer_at_least(1)
    values = [parse(v.strip()) for v in text.split(",") if v.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"{text!r} holds no number")
    return values


def output_folder(text: str) -> str:
    """An argparse ``type``: a folder a study is written into (``.`` for this one; never ``''``,
    an unset variable's, nor ``-``: a study is files, not standard output)."""
    if not text.strip() or text == "-":
        raise argparse.ArgumentTypeError(f"{text!r} names no folder; give one (. for this folder)")
    return text


def output_file(*suffixes: str):
    """An argparse ``type``: a file path to write (not ``name/``, which names a folder), with
    one of ``suffixes`` when given (``--plot out`` would otherwise write ``out.png``)."""

    def parse(text: str) -> str:
        if not text or text.endswith(("/", os.sep)):
            raise argparse.ArgumentTypeError(f"{text!r} names a folder; give a file name")
        if suffixes and os.path.splitext(text)[1].lower() not in suffixes:
            raise argparse.ArgumentTypeError(
                f"{text!r}: give a file name ending in {', '.join(suffixes)}"
            )
        return text

    return parse


def measure_option(text: str):
    """An argparse ``type`` for ``-m``: the measure ``text`` names; a bad name stops the command
    with one line naming the option (OptionError: no usage block)."""
    from ..measures import parse_measure
    from . import OptionError

    try:
        return parse_measure(text)
    except ValueError as exc:
        raise OptionError(f"-m {text}: {exc}{measure_hint(text)}") from None


_TREC_EVAL_DOTTED = re.compile(r"^([A-Za-z_]+)\.([0-9]+(?:,[0-9]+)*)$")


def measure_hint(text: str) -> str:
    """A hint for trec_eval's ``-m P.10`` (``-m P.5,10``) spelling of measures, else ``""``."""
    found = _TREC_EVAL_DOTTED.match(text.strip())
    if not found:
        return ""
    family, cutoffs = found.groups()
    names = " ".join(f"-m {family}_{k}" for k in cutoffs.split(","))
    return f" (trec_eval's -m {text.strip()} is written {names} here)"
