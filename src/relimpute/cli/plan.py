"""``relimpute plan``: which pool depth and number of topics to buy with a judging budget."""

from __future__ import annotations


from ..errors import InputError
from ._common import finite_at_least, flag_names, positive_int
from ._format import add_format_argument, emit

COMMAND = "plan"
HELP = "given a judging budget, the depth and number of topics with most power at bias below alpha"
DESCRIPTION = """\
Read power curves written by `relimpute power --output OUT` (OUT/curves.tsv) and list
the designs (strategy, depth, number of topics) whose judging effort fits
--budget and whose bias stays below --max-bias, most powerful first
(Cormack & Lynam 2007: many shallow topics usually beat few deep ones).

example:
  relimpute power qrels.txt runs/ --pool-depth 1,2,5,10,20 --n-topics 10,20,40 -o curves
  relimpute plan curves/curves.tsv --budget 5000 --measure MAP

exit status: 0 on success, 2 on bad input (a budget below one topic's pool,
a file that is not a curves table).
"""

COLUMNS = {
    "strategy",
    "measure",
    "depth",
    "n_topics",
    "effort",
    "effort_per_topic",
    "power",
    "bias",
}


def add_arguments(parser) -> None:
    parser.add_argument(
        "curves", metavar="CURVES.tsv", help="curves from `relimpute power --output`"
    )
    parser.add_argument("--budget", type=finite_at_least(0), required=True, help="total judgments available")
    parser.add_argument("-m", "--measure", default="MAP", metavar="MEASURE", help="a measure of the curves, as `power` named it (default: %(default)s)")
    parser.add_argument(
        "--max-bias",
        type=finite_at_least(0),
        default=0.05,
        help="largest acceptable bias (default: %(default)s)",
    )
    parser.add_argument(
        "--top", type=positive_int, default=10, help="show this many designs (default: %(default)s)"
    )
    add_format_argument(parser)


def run(args) -> int:
    from .._files import read_input_table

    curves = read_input_table(args.curves, "curves table")  # before the slow imports below
    missing = COLUMNS - set(curves.columns)
    if missing:
        raise InputError(
            f"not a curves table from `relimpute power`: missing {sorted(missing)}", args.curves
        )
    _numbers(curves, args.curves)
    from ..precision.power import plan_design

    try:
        with flag_names(budget="--budget"):
            plan = plan_design(curves, args.budget, measure=args.measure, max_bias=args.max_bias)
    except InputError as exc:  # about the file's content unless it names an option
        if exc.source is not None:
            raise
        raise InputError(exc.problem, args.curves) from None
    if plan.empty:
        raise InputError(
            f"no design fits {args.budget:g} judgments with bias below {args.max_bias}",
            source="--budget",
        )
    show_plan(plan.head(args.top), args.budget, args.max_bias, args.format)
    return 0


#: the columns that count things: printed as integers
WHOLE = ("depth", "n_topics")


def show_plan(plan, budget: float, max_bias: float, fmt: str, command: str = COMMAND) -> None:
    """The designs, most powerful first, and one line on stderr naming the best of them."""
    import sys

    if plan.empty:  # (plan refuses before: power --budget)
        if fmt != "table":  # a table would read "Empty DataFrame"
            emit(plan, fmt)
        print(
            f"relimpute {command}: no design fits {budget:,.0f} judgments with bias below "
            f"{max_bias:g}",
            file=sys.stderr,
        )
        return
    emit(plan, fmt)
    best = plan.iloc[0]
    print(
        f"relimpute {command}: the best design for {budget:,.0f} judgments: "
        f"{int(best['n_topics'])} topics, depth {int(best['depth'])}, strategy {best['strategy']} "
        f"({best['effort']:,.0f} judgments; power {best['power']:.2f}, bias {best['bias']:.3f} "
        f"on {best['measure']})",
        file=sys.stderr,
    )


def _numbers(curves, path: str) -> None:
    """The numeric columns of the curves as numbers, in place (:data:`WHOLE` as integers), or
    InputError naming the file line of the first value that is not a finite number, or not a
    whole one (power and bias may be missing: `relimpute power` leaves them empty where no pair
    was significant)."""
    import numpy as np
    import pandas as pd

    for column in sorted(COLUMNS - {"strategy", "measure"}):
        values = pd.to_numeric(curves[column], errors="coerce").astype(float)
        missing_allowed = column in ("power", "bias")
        given = curves[column].notna().to_numpy()
        wrong = ~np.isfinite(values.to_numpy()) & (given if missing_allowed else True)
        whole = column in WHOLE
        if whole:
            wrong |= np.isfinite(values.to_numpy()) & (values.to_numpy() % 1 != 0)
        bad = np.flatnonzero(wrong)
        if len(bad):
            line = curves.attrs["lines"][bad[0]]
            shown = curves[column].iloc[bad[0]]
            kind = "whole" if whole else "finite"
            raise InputError(f"{column} {str(shown)!r} is not a {kind} number", path, line)
        curves[column] = values.astype(np.int64) if whole else values
