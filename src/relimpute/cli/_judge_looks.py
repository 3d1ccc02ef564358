"""``relimpute judge --design guided --looks K``: stop judging a sample early, keeping coverage.

At each of K looks (the fractions 1/K, ..., 1 of the design) the documents answered are the
Poisson sample with π · f (:func:`relimpute.selection.looks.look_sample`); the model-assisted
estimate of ΔMAP of every pair asked (:func:`relimpute.confidence.survey.estimate`, the
design's model as control variate) gets an interval at level 1 − (1 − P)/K, and judging stops
at the first look where every pair's interval excludes 0 (or, with ``--margin``, lies within
±margin). Bonferroni keeps the interval of the stop at ≥ P whatever look it is.
"""

from __future__ import annotations

import sys

from ..errors import InputError


LOOKS_HELP = (
    "with --design guided: look at the estimate of dMAP K times (at 1/K, 2/K, ..., 1 of the "
    "sample), each interval at 1 - (1 - --confidence)/K, and stop at the first look where every "
    "pair's interval excludes 0 (Bonferroni: the interval of the stop covers at --confidence)"
)
MARGIN_HELP = ("with --looks: a pair whose dMAP interval lies within (-EPS, EPS) is decided too "
               "(equivalence shown)")


def add_looks_arguments(parser) -> None:
    from ._common import positive_int

    parser.add_argument("--looks", type=positive_int, metavar="K", help=LOOKS_HELP)
    parser.add_argument("--margin", type=float, metavar="EPS", help=MARGIN_HELP)


def check_looks_options(args) -> None:
    """--looks goes with --design guided; --margin with --looks."""
    if args.looks is not None and args.design != "guided":
        raise InputError("--looks reads a model-guided sample as it is judged: give --design "
                         "guided (a stratified or pps sample is asked topic by topic, so its "
                         "prefix is no probability sample of the whole)")  # fmt: skip
    if args.margin is not None:
        if args.looks is None:
            raise InputError("--margin is the equivalence margin of --looks: give --looks K")
        if not args.margin > 0:
            raise InputError(f"--margin must be positive, got {args.margin}")


def looks_spec(args) -> dict | None:
    """What the journal records of the rule (resuming with another rule is refused)."""
    if getattr(args, "looks", None) is None:
        return None
    return {"count": args.looks, "confidence": args.confidence, "margin": args.margin}


class LookChecker:
    """The looks of one session: :meth:`after` says, after ``answered`` documents of the
    order, whether a look is complete and, if so, prints it and whether judging stops."""

    def __init__(self, spec: dict, sample, campaign, systems, pair):
        from ..selection.looks import Looks

        self.looks = Looks(spec["count"], spec["confidence"], spec["margin"])
        self.sample, self.campaign = sample, campaign
        names = list(systems)
        self.pairs = [tuple(pair)] if pair else [(a, b) for i, a in enumerate(names)
                                                  for b in names[i + 1:]]  # fmt: skip
        self.runs = {name: campaign.run_frame(name) for name in names}
        self.seen: set[int] = set()

    def rule(self) -> str:
        return self.looks.rule()

    def after(self, answered: dict, out=sys.stdout) -> bool:
        """True: stop judging (the look just completed decides every pair)."""
        from ..selection.looks import look_index

        n = sum(1 for grade in answered.values() if grade is not None)
        k = look_index(self.sample, len(answered), self.looks)
        if k is None or k in self.seen:
            return False
        self.seen.add(k)
        if n < len(answered):
            print(f"look {k + 1}/{self.looks.count}: {len(answered) - n} document(s) skipped; "
                  "a Poisson sample missing documents has no known probabilities, so this "
                  "look cannot stop judging", file=out)  # fmt: skip
            return False
        table = self._estimate(answered, self.looks.at[k])
        for row in table.itertuples():
            print(f"look {k + 1}/{self.looks.count} ({self.looks.at[k]:.0%} of the design, "
                  f"{n} answered): dMAP {row.run} - {row.run_b} = {row.estimate:+.4f}, "
                  f"{100 * self.looks.level:.4g}% interval [{row.low:+.4f}, {row.high:+.4f}] "
                  f"(model-assisted estimate of dMAP with every document of the sample's "
                  f"universe judged): {row.verdict}", file=out)  # fmt: skip
        empty = table.attrs.get("empty")
        if empty:
            print(f"look {k + 1}: {len(empty)} topic(s) have documents left to sample and none "
                  f"in the look's sample "
                  f"({', '.join(empty[:5])}{', ...' if len(empty) > 5 else ''}): that part of "
                  "their dAP is "
                  "the model's prediction alone, with no estimate of its variance, so this look "
                  "cannot stop judging", file=out)  # fmt: skip
            return False
        decided = bool((table["verdict"] != "open").all())
        if decided:
            print(f"decided at look {k + 1}/{self.looks.count}: stopping ({self.rule()})",
                  file=out)  # fmt: skip
        return decided

    def _estimate(self, answered: dict, fraction: float):
        import numpy as np

        from ..confidence.survey import estimate
        from ..selection.designs import PREDICTION, unsampled_topics
        from ..selection.looks import look_sample

        sample = self.sample
        keys = zip(sample["query_id"], sample["doc_id"])
        grades = [answered.get(k, -1) for k in keys]
        judged = sample.assign(relevance=np.where(sample["order"] >= 0, grades,
                                                  sample["relevance"]))  # fmt: skip
        look = look_sample(judged, fraction)
        control = look.loc[look[PREDICTION].notna(), ["query_id", "doc_id"]].assign(
            p=look.loc[look[PREDICTION].notna(), PREDICTION])
        table = estimate(look.drop(columns=["stratum"]), self.runs, pairs=self.pairs,
                         control=control, estimator="model-assisted", level=self.looks.level,
                         rel_threshold=self.campaign.rel_threshold, sampling="poisson",
                         control_name="the design's model")  # fmt: skip
        table = table[(table["query_id"] == "all") & (table["run_b"] != "")].copy()
        table["verdict"] = self.looks.verdict(table["low"], table["high"])
        table.attrs["empty"] = unsampled_topics(look)
        return table
