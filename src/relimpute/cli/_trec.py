"""trec_eval's output layout for ``relimpute evaluate --format trec``.

One line per measure and topic, ``name <tab> query_id <tab> value``, the name
padded to 22 characters and values to 4 decimals (counts as integers), as
trec_eval 9 prints them (``te_print_single_meas_s_float``). Each run is one
trec_eval output: with -q its per-topic lines first, then ``runid``,
``num_q`` and the ``all`` line of every measure. Measures are named as
trec_eval names them (``map``, ``P_10``, ``ndcg_cut_10``) where trec_eval has
the measure, otherwise by their relimpute name (``ERR@20``).
"""

from __future__ import annotations

import math

import pandas as pd


def _line(name: str, query_id: str, value) -> str:
    return f"{name:<22}\t{query_id}\t{value}"


def _value(value: float, count: bool) -> str:
    """trec_eval's number: a mean over no topic stays 0 there, as trec_eval leaves it."""
    value = 0.0 if math.isnan(value) else value
    return str(int(round(value))) if count else f"{value:.4f}"


def trec_eval_text(summary: pd.DataFrame, topics: pd.DataFrame | None, measures) -> str:
    """The trec_eval layout of ``evaluate``'s wide tables.

    ``summary`` has ``system, num_q`` and one column per measure; ``topics``
    (or None without -q) ``system, query_id`` and the same measure columns.
    """
    names = [m.trec_eval_name() or str(m) for m in measures]
    counts = [m.aggregate == "sum" for m in measures]
    columns = [str(m) for m in measures]
    by_run = {} if topics is None else dict(tuple(topics.groupby("system", sort=False)))
    lines = []
    for row in summary.to_dict("records"):
        rows = by_run.get(row["system"])
        for topic in [] if rows is None else rows.to_dict("records"):
            for name, column, count in zip(names, columns, counts):
                lines.append(_line(name, topic["query_id"], _value(topic[column], count)))
        lines.append(_line("runid", "all", row["system"]))
        lines.append(_line("num_q", "all", int(row["num_q"])))
        for name, column, count in zip(names, columns, counts):
            lines.append(_line(name, "all", _value(row[column], count)))
    return "\n".join(lines) + "\n"
