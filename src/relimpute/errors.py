"""Errors raised on bad input: every one names the file, the line and the problem."""

from __future__ import annotations


class InputError(ValueError):
    """A problem in a user's file or table, located to its source and line.

    Parameters
    ----------
    problem
        What is wrong, in words a user can act on.
    source
        The file path (or ``"<DataFrame>"`` for in-memory tables).
    line
        The 1-based line number in the file (or row number in a table), if known.
    """

    def __init__(self, problem: str, source: str | None = None, line: int | None = None):
        self.problem = problem
        self.source = source
        self.line = line
        where = source or "<input>"
        if line is not None:
            where = f"{where}, line {line}"
        super().__init__(f"{where}: {problem}")


class ConvergenceWarning(UserWarning):
    """A fitted model's inference did not meet its convergence checks (R-hat, ESS, divergences)."""
