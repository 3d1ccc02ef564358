"""Which group submitted each run, and whether the run contributed to the pool.

A groups table is TSV with a header holding ``run``, ``group`` and optionally
``pooled`` (``yes``/``no``; every run is pooled when the column is absent).
:func:`read_groups` is its one reader: names are kept as written (a run named
``NA`` stays ``NA``), and errors name the file and line. Leave-one-group-out
studies (Webber & Park 2009 §3; Lipani et al. 2016 §4.1) remove a whole group
at a time, because runs of one group share most of their documents; the
reusability study draws one run per group (Carterette 2007 §4.3); power
curves pool only the pooled runs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from .errors import InputError

_YES = {"yes", "y", "true", "1"}
_NO = {"no", "n", "false", "0"}


@dataclass(frozen=True, slots=True)
class RunGroups:
    """Run → group and pooled flag, in the table's order.

    Attributes
    ----------
    runs, groups
        One entry per run.
    pooled
        One bool per run: did the run contribute to the official pool.
    source
        Where the table came from (for error messages).
    """

    runs: tuple[str, ...]
    groups: tuple[str, ...]
    pooled: tuple[bool, ...]
    source: str = "<table>"

    def group_of(self, run: str) -> str:
        return self.groups[self.runs.index(run)]

    def run_to_group(self) -> dict[str, str]:
        """Run → group, in table order."""
        return dict(zip(self.runs, self.groups))

    def pooled_runs(self, among: Sequence[str] | None = None) -> tuple[str, ...]:
        """The pooled runs, in table order (restricted to ``among`` when given)."""
        keep = None if among is None else set(among)
        return tuple(r for r, p in zip(self.runs, self.pooled) if p and (keep is None or r in keep))

    def members(self, group: str, *, pooled_only: bool = False) -> tuple[str, ...]:
        return tuple(
            r
            for r, g, p in zip(self.runs, self.groups, self.pooled)
            if g == group and (p or not pooled_only)
        )

    def group_names(self) -> tuple[str, ...]:
        """Groups in order of first appearance."""
        return tuple(dict.fromkeys(self.groups))

    def check_runs(self, runs: Sequence[str]) -> None:
        """Every run must be in the table (InputError naming the missing ones)."""
        missing = [r for r in runs if r not in set(self.runs)]
        if missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise InputError(
                f"{len(missing)} run(s) missing from the groups table: {shown}", self.source
            )

    def unpooled_groups(self, runs: Sequence[str]) -> list[str]:
        """The groups with runs among ``runs`` but no pooled run among them."""
        present = set(runs)
        return [
            g
            for g in self.group_names()
            if any(r in present for r in self.members(g))
            and not any(r in present for r in self.members(g, pooled_only=True))
        ]

    def check_pooled_groups(self, runs: Sequence[str]) -> None:
        """Every group of ``runs`` needs a pooled run among them (else leaving it out is empty)."""
        empty = self.unpooled_groups(runs)
        if empty:
            raise InputError(
                f"group(s) with no pooled run among the given runs: {', '.join(empty)} "
                "(leave-one-group-out needs at least one pooled run per group)",
                self.source,
            )

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "run": list(self.runs),
                "group": list(self.groups),
                "pooled": ["yes" if p else "no" for p in self.pooled],
            }
        )


def read_groups(path: str | os.PathLike, *, need_group: bool = True) -> RunGroups:
    """Read a groups table (module docstring); errors name the file and line.

    With ``need_group=False`` (a caller that reads only the pooled flags) the
    ``group`` column may be absent: each run is then its own group.
    """
    from ._files import read_input_table

    return groups_from_frame(
        read_input_table(path, "groups table", dtype=str, keep_default_na=False),
        os.fspath(path), need_group=need_group,
    )


def groups_from_frame(
    frame: pd.DataFrame, source: str = "<DataFrame>", *, need_group: bool = True
) -> RunGroups:
    """Validate a ``run, group[, pooled]`` table (rows numbered as file lines, header = 1)."""
    if not need_group and "group" not in frame.columns and "run" in frame.columns:
        frame = frame.assign(group=frame["run"])
    missing = {"run", "group"} - set(frame.columns)
    if missing:
        raise InputError(
            "groups table needs columns run and group (and optionally pooled); "
            f"missing {sorted(missing)}",
            source,
        )
    runs, groups, pooled = [], [], []
    seen: set[str] = set()
    has_flag = "pooled" in frame.columns
    for i, row in enumerate(frame.itertuples(index=False), start=2):
        run, group = str(row.run).strip(), str(row.group).strip()
        if not run or not group:
            raise InputError("empty run or group name", source, i)
        if run in seen:
            raise InputError(f"run {run!r} listed twice", source, i)
        seen.add(run)
        flag = True
        if has_flag:
            text = str(row.pooled).strip().lower()
            if text not in _YES | _NO:
                raise InputError(f"pooled must be yes or no, got {row.pooled!r}", source, i)
            flag = text in _YES
        runs.append(run)
        groups.append(group)
        pooled.append(flag)
    return RunGroups(tuple(runs), tuple(groups), tuple(pooled), source)
