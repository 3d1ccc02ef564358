"""``relimpute judge --design``: judge a sample drawn once, and export it for the estimators
of sampled judgments (``docs/sampled.md``, "Judging a sample")."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import InputError
from ._common import positive_int
from ._judge_looks import add_looks_arguments, check_looks_options, looks_spec

SAMPLE_DESCRIPTION = """
Judging a sample (--design): instead of choosing documents until the
comparison is decided, judge a sample of the pool drawn once with --seed.
--design stratified --strata 1-10:1,11-100:0.1 cuts each topic's pool by a
document's best rank over the runs and draws round(rate x N) of each
stratum's N documents uniformly (NIST's design: xinfAP); --design pps
--budget N draws each document of the depth-100 pool (--pool-depth K)
independently with a probability proportional to statAP's AP-prior weight
of its ranks (at least 0.01, at most 1), N documents expected in all
(statAP). Documents the qrels judge already stay judged, with probability 1
(stratum 0), and are not asked. Topic by topic, stratum by stratum, the
sampled documents are asked in the draw's random order. The journal records
the design, the seed and every document of the sample's universe with its
stratum and probability; resuming keeps that draw, and another design or
seed is refused. --export-qrels OUT writes the sample: stratified as the
five columns sample_eval.pl reads (-f sampled), pps as qrels with inclusion
probabilities (-f inclusion, which a stratified sample may use too);
-f qrels writes ordinary qrels.
--design guided --budget N draws each document of the pool independently
with a probability proportional to the default model's (--model's)
uncertainty about its weight in dMAP of --pair A B (or of every pair), the
model fitted on the qrels given, at least 0.01, N documents expected in all
(active inference, Zrnic & Candes 2024); its documents are asked in the
draw's order over all topics, so --looks K can read the model-assisted
estimate of dMAP at 1/K, ..., 1 of the sample and stop as soon as every
pair's interval (each at 1 - (1 - --confidence)/K, Bonferroni) excludes 0
(or lies within --margin): the interval of the stop still covers at
--confidence. It is exported as a pps sample is.
"""
DESIGNS = ("stratified", "pps", "guided")
EXPORT_FORMATS = ("sampled", "inclusion", "qrels")
DEFAULT_POOL_DEPTH = 100


def strata(text: str):
    """An argparse ``type``: ``FIRST-LAST:RATE,...`` as a :class:`StratifiedDesign`."""
    from ..selection.designs import StratifiedDesign

    parts = []
    for item in text.split(","):
        ranks, _, rate = item.strip().partition(":")
        first, _, last = ranks.partition("-")
        try:
            parts.append((int(first), int(last or first), float(rate)))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{item.strip()!r} is not FIRST-LAST:RATE (e.g. 1-10:1,11-100:0.1)"
            ) from None
    try:
        return StratifiedDesign(tuple(parts))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_sample_arguments(parser) -> None:
    parser.add_argument(
        "--design", choices=DESIGNS,
        help="judge a sample drawn once (--seed) instead of choosing documents: stratified "
        "(--strata), statAP's pps or the model-guided guided (--budget N expected, over the "
        "--pool-depth pool)",
    )  # fmt: skip
    parser.add_argument(
        "--strata", type=strata, metavar="FIRST-LAST:RATE,...",
        help="strata of --design stratified by best rank, each sampled at its rate in (0, 1], "
        "e.g. 1-10:1,11-100:0.1",
    )  # fmt: skip
    parser.add_argument(
        "--pool-depth", type=positive_int, metavar="K",
        help=f"the pool --design pps samples: every document ranked within K by a run "
        f"(default {DEFAULT_POOL_DEPTH})",
    )  # fmt: skip
    parser.add_argument(
        "--floor-share", type=float, metavar="S",
        help="the π floor of --design pps or guided as a share of the budget's rate: every "
        "document of the pool is drawn with π ≥ S × budget / pool (default: guided 0.5, pps 0, "
        "statAP's)",
    )  # fmt: skip
    parser.add_argument(
        "--format", "-f", choices=EXPORT_FORMATS,
        help="what --export-qrels writes for a sample's journal: sampled (five columns, the "
        "default of a stratified sample), inclusion (with inclusion probabilities, pps's "
        "and guided's default) or qrels",
    )  # fmt: skip
    add_looks_arguments(parser)


def check_sample_options(args) -> None:
    """Refuse options that do not go with the design asked for (or with none)."""
    check_looks_options(args)
    if args.design is None:
        for option, value in (("--strata", args.strata), ("--pool-depth", args.pool_depth),
                              ("--floor-share", args.floor_share)):  # fmt: skip
            if value is not None:
                raise InputError(f"{option} goes with --design (a sample to judge)")
        if args.format is not None and not args.export_qrels:
            raise InputError("--format chooses what --export-qrels writes: give --export-qrels OUT")
        return
    if args.export_qrels:
        return  # the journal says which design it judged
    given = {"--strategy": args.strategy, "--prior": args.prior, "--llm-labels": args.llm_labels,
             "--format": args.format, "--depth": args.depth}  # fmt: skip
    for option, value in given.items():
        if value is not None:
            raise InputError(f"{option} does not go with --design: a sample is judged whole, "
                             "in the order drawn, to its strata's or --pool-depth's depth")
    if args.design == "stratified":
        if args.strata is None:
            raise InputError("--design stratified needs --strata FIRST-LAST:RATE,... "
                             "(e.g. 1-10:1,11-100:0.1)")  # fmt: skip
        for option, value in (("--budget", args.budget), ("--pool-depth", args.pool_depth),
                              ("--floor-share", args.floor_share)):  # fmt: skip
            if value is not None:
                raise InputError(f"{option} does not go with --design stratified: --strata "
                                 "gives the depths and the size of the sample")  # fmt: skip
    else:
        if args.strata is not None:
            raise InputError(f"--strata goes with --design stratified, not {args.design}")
        if args.budget is None:
            raise InputError(f"--design {args.design} needs --budget N, the number of "
                             "judgments expected")  # fmt: skip
        if args.floor_share is not None and not 0 <= args.floor_share <= 1:
            raise InputError(f"--floor-share {args.floor_share:g} is outside [0, 1]: the share "
                             "of the budget's rate every document is drawn with at least")


def _design(args):
    from ..selection.designs import ModelGuidedDesign, PPSDesign

    if args.design == "stratified":
        return args.strata
    pool_depth = args.pool_depth or DEFAULT_POOL_DEPTH
    share = {} if args.floor_share is None else {"floor_share": args.floor_share}
    if args.design == "guided":
        model = "fusion" if args.model in (None, "rtc") else args.model
        return ModelGuidedDesign(args.budget, pool_depth=pool_depth, model=model,
                                 pairs=[tuple(args.pair)] if args.pair else None,
                                 **share)  # fmt: skip
    return PPSDesign(budget=args.budget, pool_depth=pool_depth, **share)


def design_options(spec: dict, seed) -> str:
    """The options that draw the sample a journal records."""
    if spec["design"] == "stratified":
        text = ",".join(f"{a}-{b}:{r:g}" for a, b, r in spec["strata"])
        return f"--design stratified --strata {text} --seed {seed}"
    given = f"--budget {spec['budget']} --pool-depth {spec['depth']} --seed {seed}"
    from ..selection.designs import design_from_spec

    design = design_from_spec(spec)  # a journal written before the floor share records 0
    if design.floor_share != type(design).floor_share:  # not the design's default
        given += f" --floor-share {design.floor_share:g}"
    if spec["design"] == "guided":
        pair = f" --pair {' '.join(spec['pairs'][0])}" if spec.get("pairs") else ""
        return f"--design guided {given} --model {spec['model']}{pair}"
    return f"--design pps {given}"


def refuse_sample_journal(header: dict, path: str) -> None:
    """Refuse to resume a sample's journal without its design (judge's strategies)."""
    if header.get("design") is not None:
        options = design_options(header["design"], header.get("seed"))
        raise InputError(f"this journal judges a sample: give {options} to resume it, or another "
                         "--journal", path, 1)  # fmt: skip


def _drawn(args, campaign, systems, design):
    """The journal's sample and design record when resuming (its design and seed checked), else
    a new draw and ``design``'s record."""
    import numpy as np

    from ..selection.designs import design_from_spec, sample_from_record
    from ..selection.journal import Journal

    path = args.journal
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        header = Journal.read(path).header
        if header.get("design") is None:
            raise InputError(f"this journal judges with --strategy {header.get('strategy')}, "
                             "not a sample: give another --journal to judge one", path, 1)
        spec, seed = header["design"], header.get("seed")
        if header.get("looks") != looks_spec(args):
            raise InputError(f"this journal's sample is judged with the stopping rule "
                             f"{_looks_text(header.get('looks'))}, not "
                             f"{_looks_text(looks_spec(args))}: a rule fixed before judging is "
                             "what keeps its coverage; give the journal's", path, 1)  # fmt: skip
        if design_from_spec(spec).spec() != design.spec() or seed != args.seed:
            given = design_options(design.spec(), args.seed)
            raise InputError(f"this journal's sample was drawn with {design_options(spec, seed)}, "
                             f"not {given}; give those to resume it, or another --journal",
                             path, 1)  # fmt: skip
        return sample_from_record(header["sample"]), spec  # as recorded: the journal's settings
    try:
        return design.draw(campaign, np.random.default_rng(args.seed), systems), design.spec()
    except ValueError as exc:
        text = str(exc)
        raise InputError(f"--{text}" if text.startswith("budget ") else f"--budget {args.budget}: "
                         + text) from None


def _looks_text(spec) -> str:
    if spec is None:
        return "none (no --looks)"
    margin = f" --margin {spec['margin']:g}" if spec.get("margin") is not None else ""
    return f"--looks {spec['count']} --confidence {spec['confidence']:g}{margin}"


def _unsampled_note(sample) -> None:
    from ..selection.designs import unsampled_topics

    empty = unsampled_topics(sample)
    if empty:
        print(f"relimpute judge: {len(empty)} topic(s) have documents left to sample (π < 1) "
              f"and none of them drawn ({', '.join(empty[:5])}{', ...' if len(empty) > 5 else ''}"
              "): the sample says nothing of that part of their measures, nor of its variance "
              "(the model-assisted estimate there is the model's alone); a larger --budget "
              "draws more", file=sys.stderr)  # fmt: skip


def judge_sample(args) -> int:
    """Draw (or take back from the journal) the sample, then ask its documents in order."""
    from ..selection.designs import sample_record
    from ..selection.journal import Journal
    from ._common import check_run_names, load_campaign
    from ._judge_terminal import check_terminal, load_texts
    from ._judge_journal import CHECKED, grade_scale, journal_settings

    from ._requests import CampaignInputs

    campaign = load_campaign(CampaignInputs.from_args(args, "judge"), "judge")
    args.rel_threshold = campaign.rel_threshold
    systems = tuple(args.pair) if args.pair else campaign.systems
    check_run_names(systems, campaign.systems, "--pair")
    texts = load_texts(args.docs) if args.docs else None
    design = _design(args)
    sample, spec = _drawn(args, campaign, systems, design)
    _unsampled_note(sample)
    args.strategy = "sample"
    settings = {**journal_settings(args, systems, grade_scale(campaign)), "seed": args.seed,
                "design": spec, "sample": sample_record(sample)}  # fmt: skip
    if looks_spec(args) is not None:
        settings["looks"] = looks_spec(args)
    check_terminal(args.answers)
    looks = None
    if args.looks is not None:
        from ._judge_looks import LookChecker

        looks = LookChecker(looks_spec(args), sample, campaign, systems, args.pair)
    with Journal.open(args.journal, settings, check=(*CHECKED, "design")) as journal:
        return _session(args, journal, sample, texts, looks)


class _Answers(dict):
    """``(topic, doc) -> grade`` (None: skipped), judged and skipped as a session is."""

    def judge(self, query_id: str, doc_id: str, grade: int) -> None:
        self[query_id, doc_id] = grade

    def skip(self, query_id: str, doc_id: str) -> None:
        self[query_id, doc_id] = None


def _answered(journal, sample) -> _Answers:
    """``(topic, doc) -> grade`` (None: skipped) of the journal's actions in force, each checked
    to be a document of the sample the assessor is asked."""
    shown = sample[sample["order"] >= 0]
    asked = set(zip(shown["query_id"], shown["doc_id"]))
    answered = _Answers()
    for action in journal.actions():
        key = (action.query_id, action.doc_id)
        if key not in asked:
            raise InputError(f"cannot replay this journal line: document {action.doc_id!r} of "
                             f"topic {action.query_id!r} is not in the sample drawn",
                             str(journal.path), action.line)  # fmt: skip
        answered[key] = action.relevance
    return answered


def _session(args, journal, sample, texts, looks=None) -> int:
    from ._judge_terminal import Answers, printable_id, record, show_and_ask
    from ._judge_terminal import answer_keys

    out = sys.stdout
    asked = sample[sample["order"] >= 0].sort_values("order")
    queue = list(zip(asked["query_id"], asked["doc_id"], asked["stratum"], asked["inclusion"]))
    answered = _answered(journal, sample)
    known = int(((sample["order"] < 0) & sample["drawn"]).sum())
    resumed = f", resumed with {len(answered)} answered" if answered else ""
    print(f"judging a {journal.header['design']['design']} sample: {len(queue)} documents to ask "
          f"over {sample['query_id'].nunique()} topics ({known} judged already, probability 1); "
          f"journal {args.journal}{resumed}", file=out)  # fmt: skip
    if looks is not None:
        print(f"stopping rule: {looks.rule()}", file=out)
        if looks.after(answered, out):
            return 0
    answers = Answers(args.answers) if args.answers else None
    keys, prompt, hint = answer_keys(journal.scale, args.rel_threshold)
    at = 0  # every document before queue[at] is answered
    while True:
        at = next((i for i in range(at, len(queue)) if queue[i][:2] not in answered), len(queue))
        if at == len(queue):
            print("every sampled document is answered: done (write the sample with "
                  "--export-qrels OUT)", file=out)  # fmt: skip
            return 0
        query_id, doc_id, stratum, pi = queue[at]
        print(f"\n[{len(answered) + 1}/{len(queue)}] topic {printable_id(query_id)}  "
              f"document {printable_id(doc_id)}  (stratum {stratum}, probability {pi:.4g})",
              file=out)  # fmt: skip
        key = show_and_ask(out, texts, args.docs, keys, prompt, hint, answers, (query_id, doc_id))
        if key == "quit":
            print(f"stopped; {len(answered)} answer(s) saved in {args.journal}", file=out)
            return 0
        if record(key, journal, answered, (query_id, doc_id)):
            if looks is not None and looks.after(answered, out):
                return 0
            continue
        if not journal.actions():
            print("nothing to undo", file=out)
        else:
            journal.undo()
            answered, at = _answered(journal, sample), 0
            print("undone", file=out)


def export_sample(args, journal) -> int | None:
    """Write a sample's journal (None: the journal judges no sample; ``--format`` checked)."""
    spec = journal.header.get("design")
    if spec is None:
        if args.format not in (None, "qrels"):
            raise InputError(f"-f {args.format} writes a sample; this journal judges with "
                             f"--strategy {journal.header.get('strategy')}: export it as qrels",
                             str(journal.path), 1)  # fmt: skip
        return None
    from ..selection.designs import sample_from_record
    from ._judge_journal import check_same_qrels

    check_same_qrels(journal, args.qrels)
    sample = sample_from_record(journal.header["sample"])
    journal.judgments()  # a document judged twice with two grades (a hand edit) is an error
    answered = _answered(journal, sample)
    form = args.format or ("sampled" if spec["design"] == "stratified" else "inclusion")
    if form == "qrels":
        return _write_qrels(args, journal)
    if form == "sampled" and spec["design"] != "stratified":
        raise InputError(f"-f sampled writes one probability per stratum; this journal's "
                         f"{spec['design']} sample has one per document: export it with -f "
                         "inclusion")  # fmt: skip
    keys = list(zip(sample["query_id"], sample["doc_id"]))
    grades = [answered.get(k) for k in keys]
    asked = (sample["order"] >= 0).to_numpy()
    open_ = [i for i in range(len(keys)) if asked[i] and grades[i] is None]
    if open_ and spec["design"] != "stratified":
        q, d = keys[open_[0]]
        raise InputError(f"{len(open_)} sampled document(s) are not answered (first: document "
                         f"{d!r} of topic {q!r}): judge them (the same command resumes) or undo "
                         "their skips before exporting; a Poisson sample missing documents has "
                         "no known inclusion probabilities", str(journal.path))  # fmt: skip
    relevance = sample["relevance"].to_numpy().copy()
    for i in range(len(keys)):
        if asked[i]:
            relevance[i] = -1 if grades[i] is None else grades[i]
    table = sample.assign(relevance=relevance)
    if open_:
        done = table[asked].assign(answered=relevance[asked] >= 0)
        empty = int((~done.groupby(["query_id", "stratum"])["answered"].any()).sum())
        print(f"relimpute judge: {len(open_)} sampled document(s) are not answered (skipped or "
              "not yet judged) and are written -1, not sampled: each stratum's sample is the "
              "documents answered, still a uniform sample of it as long as the skips are "
              "unrelated to relevance (a stratum is asked in the draw's random order)"
              + (f"; {empty} strata with none answered add nothing to the estimates: judge "
                 "them before reporting" if empty else ""), file=sys.stderr)  # fmt: skip
    _write_sample(table, form, spec["design"], args.export_qrels)
    from_journal = sum(g is not None for g in answered.values())
    print(f"wrote {len(table)} documents ({int((relevance >= 0).sum())} judged, {from_journal} "
          f"of them in the journal) to {args.export_qrels}")  # fmt: skip
    return 0


def _write_sample(table, form: str, design: str, path) -> None:
    from ..io import write_inclusion_qrels, write_sampled_qrels
    from ..measures.statap import strata_inclusion

    if form == "sampled":
        write_sampled_qrels(table, path)
        return
    if design == "stratified":  # π of each stratum: the documents answered of its N
        drawn = table["inclusion"].to_numpy()
        pi = strata_inclusion(table)["inclusion"].to_numpy()
        table = table.assign(inclusion=[p if p > 0 else q for p, q in zip(pi, drawn)])
        print("relimpute judge: -f inclusion takes the stratified sample as Poisson (two "
              "documents of a stratum drawn independently): statAP on it differs a little from "
              "statAP on the five-column form, which knows the draw was without replacement",
              file=sys.stderr)  # fmt: skip
    write_inclusion_qrels(table, path)


def _write_qrels(args, journal) -> int:
    from ..io import read_qrels, write_qrels
    from ..selection.journal import export_qrels

    judgments = journal.judgments()
    frame = export_qrels(read_qrels(args.qrels), judgments)
    write_qrels(frame, args.export_qrels)
    print(f"wrote {len(frame)} judgments ({len(judgments)} from the journal) to "
          f"{args.export_qrels}")  # fmt: skip
    return 0
