"""``relimpute judge``: judge the documents MTC picks until the comparison is decided."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..errors import InputError
from ._common import add_campaign_arguments, add_model_argument, load_campaign
from ._vocabulary import add_confidence_argument

COMMAND = "judge"
HELP = "judge documents interactively, chosen by MTC, until the comparison is decided"
DESCRIPTION = """\
Judge documents one at a time, each chosen by a selection strategy (MTC by
default: the document whose label would most change the comparison;
Carterette 2007 Algorithm 1), until the comparison of --pair A B (or of every
pair of the runs given) reaches confidence --confidence.

Keys: r or 1 = relevant, n or 0 = nonrelevant, s = skip, u = undo the last
judgment or skip, q = quit. Every action is appended to the journal (JSONL)
and flushed to disk before the next document is shown; run the same command
again to resume exactly where the session stopped. Write the initial qrels
plus the session's judgments with --export-qrels OUT.
"""

KEYS = {
    "r": "relevant",
    "1": "relevant",
    "n": "nonrelevant",
    "0": "nonrelevant",
    "s": "skip",
    "u": "undo",
    "q": "quit",
}
CHECKED = ("qrels", "runs", "systems", "strategy", "depth", "rel_threshold", "prior", "model")


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
    add_confidence_argument(parser, "stop when every pair is this sure", old=("--alpha",))
    parser.add_argument("--budget", type=int, help="stop after this many judgments in total")
    parser.add_argument("--depth", type=int, metavar="K", help="truncate every run at rank K (default: full depth)")
    parser.add_argument(
        "--strategy",
        default="mtc",
        choices=("mtc", "rtc", "ip", "depth", "mtf"),
        help="selection strategy (default: %(default)s); rtc is MTC with p re-estimated by "
        "--model every 10 judgments; the pooling orders ip, depth (k = 100) and mtf stop at "
        "--budget or when their pool is exhausted, not at --confidence",
    )
    add_model_argument(parser, "rtc", what="relevance model of --strategy rtc")
    parser.add_argument(
        "--prior", type=float, default=0.5, help="MTC's probability for unjudged documents"
    )
    parser.add_argument(
        "--export-qrels",
        metavar="OUT",
        help="write initial qrels + journal judgments to OUT and exit",
    )


def run(args) -> int:
    from ..io import read_qrels, write_qrels
    from ..selection.journal import Journal, export_qrels, read_records

    if args.export_qrels:
        if not Path(args.journal).is_file():
            raise InputError("no journal to export", args.journal)
        journal = Journal(args.journal, {}, read_records(args.journal))
        frame = export_qrels(read_qrels(args.qrels), journal.judgments())
        write_qrels(frame, args.export_qrels)
        print(
            f"wrote {len(frame)} judgments ({len(journal.judgments())} from the journal) to {args.export_qrels}"
        )
        return 0
    if not args.runs:
        raise InputError("give at least one run (or --export-qrels OUT)")
    return _interactive(args)


def _settings(args, systems) -> dict:
    return {
        "qrels": str(Path(args.qrels).resolve()),
        "runs": [str(Path(r).resolve()) for r in args.runs],
        "systems": list(systems),
        "strategy": args.strategy,
        "depth": args.depth,
        "rel_threshold": args.rel_threshold,
        "prior": args.prior if args.strategy == "mtc" else None,
        "model": args.model if args.strategy == "rtc" else None,
    }


def _build(campaign, systems, args):
    from ..selection import SelectionSession

    params = {"mtc": {"prior": args.prior}, "rtc": {"model": args.model}}.get(args.strategy, {})
    alpha = args.confidence if args.strategy in ("mtc", "rtc") else None
    return SelectionSession(
        campaign,
        args.strategy,
        systems,
        alpha=alpha,
        budget=args.budget,
        depth=args.depth,
        **params,
    )


def _replay(session, actions):
    for action in actions:
        try:
            if action.relevance is None:
                session.skip(action.query_id, action.doc_id)
            else:
                session.judge(action.query_id, action.doc_id, action.relevance)
        except (KeyError, ValueError) as exc:
            raise InputError(f"cannot replay this journal line: {exc}", None, action.line) from None


def _interactive(args) -> int:
    from ..selection.journal import Journal

    campaign = load_campaign(args, COMMAND)
    args.rel_threshold = campaign.rel_threshold  # resolved: explicit, relimpute.toml, or 1
    systems = tuple(args.pair) if args.pair else campaign.systems
    missing = [s for s in systems if s not in campaign.systems]
    if missing:
        raise InputError(f"unknown run(s) {missing}; have {list(campaign.systems)}")
    texts = _load_texts(args.docs) if args.docs else {}
    journal = Journal.open(args.journal, _settings(args, systems), check=CHECKED)
    actions = journal.actions()
    session = _build(campaign, systems, args)
    _replay(session, actions)
    out = sys.stdout
    what = f"{systems[0]} vs {systems[1]}" if len(systems) == 2 else f"{len(systems)} runs"
    resumed = f", resumed with {len(actions)} action(s)" if actions else ""
    print(
        f"judging for {what}, {campaign.n_topics} topics; journal {args.journal}{resumed}", file=out
    )
    relevant_grade = max(1, args.rel_threshold)
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
        print(f"\n[{session.n_judged + 1}] topic {query_id}  document {doc_id}", file=out)
        if doc_id in texts:
            print(texts[doc_id], file=out)
        key = _ask(out)
        if key == "quit":
            print(f"stopped; {session.n_judged} judgment(s) saved in {args.journal}", file=out)
            return 0
        if key == "relevant" or key == "nonrelevant":
            grade = relevant_grade if key == "relevant" else 0
            journal.judge(query_id, doc_id, grade)
            session.judge(query_id, doc_id, grade)
        elif key == "skip":
            journal.skip(query_id, doc_id)
            session.skip(query_id, doc_id)
        elif not journal.actions():
            print("nothing to undo", file=out)
        else:
            journal.undo()
            session = _build(campaign, systems, args)
            _replay(session, journal.actions())
            print("undone", file=out)


_FINISHED = {
    "confidence": "confidence {alpha} reached: done",
    "budget": "judgment budget reached: done",
    "exhausted": "nothing left to judge: done",
}


def _status(session, out) -> None:
    pairs = session.pairs_frame()
    worst = pairs.loc[pairs["confidence"].idxmin()]
    undecided = int((pairs["confidence"] < (session.stopping.alpha or 1.0)).sum())
    print(
        f"judged {session.n_judged}; confidence {worst['confidence']:.3f} "
        f"(P({worst['system_a']} better than {worst['system_b']}) = {worst['p_a_better']:.3f}, "
        f"E[dMAP] = {worst['e_delta_map']:+.4f}); {undecided} of {len(pairs)} pair(s) undecided",
        file=out,
    )


def _ask(out) -> str:
    while True:
        out.write("relevant? [r/1] yes  [n/0] no  [s] skip  [u] undo  [q] quit > ")
        out.flush()
        line = sys.stdin.readline()
        if line == "":  # end of input: quit, everything is already saved
            out.write("\n")
            return "quit"
        key = line.strip().lower()
        if key in KEYS:
            return KEYS[key]
        print(f"{key!r} is not a key: answer r, n, s, u or q", file=out)


def _load_texts(path: str) -> dict[str, str]:
    """``doc_id -> text`` from TSV (``doc_id<TAB>text``) or JSONL (``doc_id``, ``text``)."""
    texts = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            if line.lstrip().startswith("{"):
                try:
                    record = json.loads(line)
                    texts[str(record["doc_id"])] = str(record["text"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise InputError(
                        "expected a JSON object with doc_id and text", path, number
                    ) from None
            else:
                doc_id, sep, text = line.rstrip("\n").partition("\t")
                if not sep:
                    raise InputError("expected 'doc_id<TAB>text'", path, number)
                texts[doc_id] = text
    return texts
