"""``relimpute judge``: judge the documents that decide the comparison, until it is decided."""

from __future__ import annotations

import os
import sys

from ..errors import InputError
from ._common import (
    add_campaign_arguments,
    add_model_argument,
    add_seed_argument,
    check_run_names,
    load_campaign,
    output_file,
    positive_int,
)
from ._judge_journal import (
    CHECKED,
    LABEL_STRATEGIES,
    check_same_qrels,
    grade_scale,
    journal_settings,
)
from ._judge_terminal import (
    ANSWERS_FORMAT,
    Answers,
    answer_keys,
    check_terminal,
    load_texts,
    printable_id,
    record,
    show_and_ask,
)
from ._judge_sample import (
    SAMPLE_DESCRIPTION,
    add_sample_arguments,
    check_sample_options,
    export_sample,
    judge_sample,
    refuse_sample_journal,
)
from ._labels import add_llm_labels_argument
from ._relevance import model_with_labels, warn_if_uncalibrated
from ._estimand import refuse_estimand
from ._vocabulary import (
    add_confidence_argument,
    add_depth_argument,
    add_estimand_argument,
    add_prior_argument,
)

COMMAND = "judge"
_WHY_COMPLETE = "its strategies judge until confident about the complete MAP"
HELP = "judge documents until the comparison is decided (the default model's confidence)"
DESCRIPTION = """\
Judge documents one at a time until the comparison of --pair A B (or of every
pair of the runs given) reaches confidence --confidence. By default the
confidence judge states and stops on is the default model's, the one
`relimpute compare` prints: the model 'fusion' refitted on the judgments every
10 judgments, Monte Carlo over its posterior draws (--seed as compare's), and
the next document is the one whose label would most change E[dMAP] under it
(MTC's weight, Carterette 2007 Algorithm 1). --prior P (or --strategy mtc:
P = 0.5) is MTC's uniform prior instead: every unjudged document relevant with
probability P, whatever the runs say, and the normal approximation.

Documents are shown by topic and document id; give --docs FILE (TSV
'doc_id<TAB>text' or JSONL {doc_id, text}) to read their text at the prompt.

Keys: on graded qrels (any grade above 1, or --rel-threshold above 1) the
assessor types the grade, 0 up to the collection's highest (e.g. 0-3 on TREC
DL), and the journal stores it as given; on binary qrels r or 1 = relevant,
n or 0 = nonrelevant. s = skip, u = undo the last judgment or skip, q = quit.
Standard input must be a terminal; to pipe the answers in, give --answers -
(or read them from a file: --answers FILE), one answer a line, as typed at the
prompt, optionally after the topic and document it answers ('QUERY_ID DOC_ID
ANSWER', checked against the document shown); a wrong answer stops with an
error naming its line, the answers before it saved.
Every action is appended to the journal (JSONL) and flushed to disk before
the next document is shown; run the same command again to resume exactly
where the session stopped. The journal records the strategy, the scale and
--rel-threshold, and is locked while a session runs (a second session on it
stops with an error). Write the initial qrels plus the session's judgments
with --export-qrels OUT (the qrels must be the ones the session used; the
runs are read from where the journal names them, unless given).
""" + SAMPLE_DESCRIPTION

#: the strategies that refit a model, so read --llm-labels
UNIFORM_PRIOR = (
    "relimpute judge: MTC's uniform prior: every unjudged document relevant with p = {prior}, "
    "whatever the runs say, confidence by the normal approximation (E[R] over the compared "
    "runs); without --prior and --strategy mtc, judge states the default model's confidence, "
    "compare's"
)


def add_arguments(parser) -> None:
    add_campaign_arguments(parser, runs_required=False)
    parser.add_argument(
        "--pair", nargs=2, metavar=("A", "B"), help="the two runs to compare (default: every pair)"
    )
    parser.add_argument(
        "--docs", help="document texts: TSV 'doc_id<TAB>text' or JSONL {doc_id, text}"
    )
    parser.add_argument(
        "--journal", default="relimpute-judge.jsonl", help="journal file (default: %(default)s)"
    )
    add_confidence_argument(parser, "stop when every pair is this sure")
    parser.add_argument("--budget", type=positive_int, help="stop after this many judgments in "
                        "total (--design pps: the sample's expected size)")
    add_depth_argument(parser)
    parser.add_argument(
        "--answers",
        metavar="FILE",
        help="read the answers from FILE, or '-' for a pipe, instead of the terminal: "
        + ANSWERS_FORMAT,
    )
    add_seed_argument(parser, "the model's fits and the Monte Carlo draws, as compare's --seed, "
                      "and of --design's sample")
    parser.add_argument(
        "--strategy",
        default=None,
        choices=("posterior", "mtc", "rtc", "llm", "ip", "depth", "mtf"),
        help="selection strategy (default: posterior; mtc with --prior); mtc is MTC's uniform "
        "prior (--prior, default 0.5) with the normal approximation; rtc is MTC with p "
        "re-estimated by "
        "--model every 10 judgments, stopping on its posterior predictive confidence when the "
        "model returns posterior draws (fusion) and on its point estimate otherwise; posterior refits the default "
        "model every 10 judgments and stops on its posterior predictive confidence (Monte Carlo "
        "over its draws, the confidence `compare` states); llm is the posterior loop on the model "
        "with --llm-labels, judging first where the labels and the runs leave it least sure; the pooling orders ip, depth "
        "(k = 100) and mtf stop at --budget or when their pool is exhausted, not at --confidence",
    )
    add_estimand_argument(parser, what=" the strategies judge towards (complete only)")
    add_model_argument(parser, "rtc", what="relevance model of --strategy rtc (and llm: a settings file for fusion-llm)")
    add_llm_labels_argument(parser)
    add_prior_argument(
        parser,
        "MTC's uniform prior: every unjudged document relevant with probability P, in [0, 1] "
        "(implies --strategy mtc; its default 0.5)",
    )
    parser.add_argument(
        "--export-qrels",
        type=output_file(),
        metavar="OUT",
        help="write initial qrels + journal judgments to OUT and exit (a sample's journal: "
        "the sample, -f)",
    )
    add_sample_arguments(parser)


def run(args) -> int:
    refuse_estimand(args.estimand, COMMAND, ("complete",), _WHY_COMPLETE)
    check_sample_options(args)
    if args.export_qrels:
        return _export(args)
    if not args.runs:
        raise InputError("give at least one run (or --export-qrels OUT)")
    if args.design is not None:
        return judge_sample(args)
    _resolve_strategy(args)
    if args.pair and args.pair[0] == args.pair[1]:
        raise InputError(f"--pair needs two different runs, got {args.pair[0]!r} twice")
    if args.strategy == "llm" and not args.llm_labels:
        raise InputError("--strategy llm chooses with automatic labels: give them with --llm-labels FILE")
    if args.llm_labels:  # the labels are evidence for the model the RTC loop refits
        if args.strategy not in LABEL_STRATEGIES:
            raise InputError(
                "--llm-labels needs --strategy llm or rtc, the strategies that refit a model on the judgments"
            )
        args.model = model_with_labels(args.llm_labels, None if args.model == "rtc" else args.model)
    return _interactive(args)


def _resolve_strategy(args) -> None:
    """--strategy's default: the default model's answer (posterior), MTC with --prior."""
    if args.strategy is None:
        args.strategy = "mtc" if args.prior is not None else "posterior"
    if args.strategy == "mtc":
        args.prior = 0.5 if args.prior is None else args.prior
    elif args.prior is not None:
        raise InputError(
            "--prior is MTC's uniform prior and goes with --strategy mtc, "
            f"not --strategy {args.strategy}"
        )


def _export(args) -> int:
    from .._files import check_output_path
    from ..io import read_qrels, write_qrels
    from ..selection.journal import Journal, export_qrels

    check_output_path(args.export_qrels)
    journal = Journal.read(args.journal)
    if (written := export_sample(args, journal)) is not None:
        return written
    initial = read_qrels(args.qrels)
    check_same_qrels(journal, args.qrels)
    judgments = journal.judgments()
    _check_replayable(args, journal)
    frame = export_qrels(initial, judgments)
    write_qrels(frame, args.export_qrels)
    print(
        f"wrote {len(frame)} judgments ({len(judgments)} from the journal) to {args.export_qrels}"
    )
    return 0


def _check_replayable(args, journal) -> None:
    """Refuse to export what resuming refuses: a journal line judging or skipping a document
    no session could have shown (unknown, judged already, retrieved by no compared run)."""
    from ..selection.base import SelectionState

    header, where = journal.header, str(journal.path)
    args.runs = args.runs or header.get("runs")
    gone = [r for r in args.runs or [] if not os.path.exists(r)]
    if not args.runs or gone:
        named = f"names the run {gone[0]}, which is gone" if gone else "names no runs"
        raise InputError(
            f"this journal {named}: give the runs the session judged after QRELS", where, 1
        )
    if args.rel_threshold is None:
        args.rel_threshold = header.get("rel_threshold")
    from ._requests import CampaignInputs

    campaign = load_campaign(CampaignInputs.from_args(args, COMMAND), COMMAND)
    systems = header.get("systems") or campaign.systems
    check_run_names(systems, campaign.systems, "the journal's systems")
    _replay(_Documents(SelectionState(campaign.truncated(header.get("depth")), systems)), journal,
            journal.actions())  # fmt: skip


class _Documents:
    """A journal replayed on the documents alone, without a strategy (what export checks);
    a repeated judgment with the same grade passes, as the export merges it."""

    def __init__(self, state):
        self.state = state
        self.judged: dict[tuple[str, str], int] = {}

    def judge(self, query_id: str, doc_id: str, grade: int) -> None:
        if self.judged.get((query_id, doc_id)) != grade:
            self.state.record(*self.state.candidate(query_id, doc_id), int(grade))
            self.judged[query_id, doc_id] = grade

    def skip(self, query_id: str, doc_id: str) -> None:
        self.state.exclude(*self.state.candidate(query_id, doc_id))


def _build(campaign, systems, args):
    from ..selection import SelectionSession

    # rtc stops on the posterior predictive confidence when its model returns draws; the
    # confidence shown is the posterior's at every refit (screen=None), compare's on the
    # judgments so far: the same seed at every refit, E[R] over every run given
    as_compare = {"seed": args.seed, "evaluated": "all"}
    params = {
        "mtc": {"prior": args.prior},
        "rtc": {"model": args.model, "stop_on": "auto", **as_compare},
        "posterior": {"screen": None, **as_compare},
        "llm": {"model": args.model, "screen": None, **as_compare},
    }.get(args.strategy, {})
    stop_at = args.confidence if args.strategy in ("mtc", "rtc", "posterior", "llm") else None
    return SelectionSession(
        campaign,
        args.strategy,
        systems,
        confidence=stop_at,
        budget=args.budget,
        depth=args.depth,
        rng=args.seed,  # a resumed journal recomputes the same confidences
        **params,
    )


def _replay(session, journal, actions):
    for action in actions:
        try:
            if action.relevance is None:
                session.skip(action.query_id, action.doc_id)
            else:
                session.judge(action.query_id, action.doc_id, action.relevance)
        except (KeyError, ValueError) as exc:
            raise InputError(
                f"cannot replay this journal line: {exc.args[0]}", str(journal.path), action.line
            ) from None


def _interactive(args) -> int:
    from ..selection.journal import Journal

    from ._requests import CampaignInputs

    campaign = load_campaign(CampaignInputs.from_args(args, COMMAND), COMMAND)
    args.rel_threshold = campaign.rel_threshold  # resolved: explicit, relimpute.toml, or 1
    systems = tuple(args.pair) if args.pair else campaign.systems
    check_run_names(systems, campaign.systems, "--pair")
    texts = load_texts(args.docs) if args.docs else None
    if args.strategy == "rtc":
        warn_if_uncalibrated(args.model, COMMAND)
    scale = grade_scale(campaign)
    settings = journal_settings(args, systems, scale)
    _check_journal_strategy(args.journal, settings)
    check_terminal(args.answers)  # (after the inputs' own errors)
    with Journal.open(args.journal, settings, check=CHECKED) as journal:
        return _session(args, campaign, systems, journal, texts)


def _check_journal_strategy(path: str, settings: dict) -> None:
    """Refuse to resume a journal of another strategy, saying which options resume it."""
    from ..selection.journal import Journal

    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return
    header = Journal.read(path).header
    refuse_sample_journal(header, path)
    strategy, prior = header.get("strategy"), header.get("prior")
    if strategy in (None, settings["strategy"]) and prior == settings["prior"]:
        return
    given = f"--strategy {strategy}" + (f" --prior {prior}" if prior is not None else "")
    old_default = " (MTC's uniform prior, judge's default before relimpute 0.3.0)"
    what = old_default if strategy == "mtc" else ""
    raise InputError(
        f"this journal was judged with {given}{what}; give {given} to resume it, "
        "or another --journal to judge with these settings",
        path,
        1,
    )


def _session(args, campaign, systems, journal, texts) -> int:
    """The judging loop: propose, ask, record in the journal, until a stopping rule holds."""
    actions = journal.actions()
    session = _build(campaign, systems, args)
    if getattr(session.strategy, "stop_on_", None) == "model":
        from ._answer import narrower_note

        why = f"--model {args.model} returns no posterior draws and --strategy rtc stops on its point estimate"
        print(narrower_note(COMMAND, why), file=sys.stderr)
    if args.strategy == "mtc":
        print(UNIFORM_PRIOR.format(prior=args.prior), file=sys.stderr)
    _replay(session, journal, actions)
    out = sys.stdout
    names = [printable_id(s) for s in systems]
    what = f"{names[0]} vs {names[1]}" if len(names) == 2 else f"{len(names)} runs"
    resumed = f", resumed with {len(actions)} action(s)" if actions else ""
    print(
        f"judging for {what}, {campaign.n_topics} topics; journal {args.journal}{resumed}", file=out
    )
    if texts is None:
        print("documents are shown by id: give --docs FILE (TSV 'doc_id<TAB>text' or JSONL) "
              "to read their text here", file=out)  # fmt: skip
    answers = Answers(args.answers) if args.answers else None
    keys, prompt, hint = answer_keys(journal.scale, args.rel_threshold)
    while True:
        _status(session, out)
        reason = session.stop_reason()
        if reason is None:
            proposal = session.propose()
            if proposal is None:
                reason = "exhausted"
        if reason is not None:
            print(_FINISHED[reason].format(alpha=args.confidence), file=out)
            return 0
        query_id, doc_id = proposal
        print(f"\n[{session.n_judged + 1}] topic {printable_id(query_id)}  "
              f"document {printable_id(doc_id)}", file=out)  # fmt: skip
        key = show_and_ask(out, texts, args.docs, keys, prompt, hint, answers, proposal)
        if key == "quit":
            print(f"stopped; {session.n_judged} judgment(s) saved in {args.journal}", file=out)
            return 0
        if record(key, journal, session, proposal):
            continue
        if not journal.actions():
            print("nothing to undo", file=out)
        else:
            journal.undo()
            session = _build(campaign, systems, args)
            _replay(session, journal, journal.actions())
            print("undone", file=out)


_FINISHED = {
    "confidence": "confidence {alpha} reached: done",
    "budget": "judgment budget reached: done",
    "exhausted": "nothing left to judge: done",
}


def _status(session, out) -> None:
    pairs = session.pairs_frame()
    worst = pairs.loc[pairs["confidence"].idxmin()]
    undecided = int((pairs["confidence"] < (session.stopping.confidence or 1.0)).sum())
    print(
        f"judged {session.n_judged}; confidence {worst['confidence']:.3f} "
        f"(P({printable_id(worst['system_a'])} better than {printable_id(worst['system_b'])}) = "
        f"{worst['p_a_better']:.3f}, "
        f"E[dMAP] = {worst['e_delta_map']:+.4f}); {undecided} of {len(pairs)} pair(s) undecided",
        file=out,
    )
