"""Errors raised on bad input: every one names the file, the line and the problem."""

from __future__ import annotations


class InputError(ValueError):
    """A problem in a user's file or table, located to its source and line.

    Parameters
    ----------
    problem
        What is wrong, in words a user can act on.
    source
        The file path (or ``"<DataFrame>"`` for in-memory tables); None when the
        problem is in the command's options, which the message then names.
    line
        The 1-based line number in the file (or row number in a table), if known.
    """

    def __init__(self, problem: str, source: str | None = None, line: int | None = None):
        self.problem = problem
        self.source = source
        self.line = line
        where = [part for part in (source, None if line is None else f"line {line}") if part]
        super().__init__(f"{', '.join(where)}: {problem}" if where else problem)


class ConvergenceWarning(UserWarning):
    """A fitted model's inference did not meet its convergence checks (R-hat, ESS, divergences)."""


class LeftOutWarning(UserWarning):
    """Rows of a file a reader left out (they name what the campaign lacks), said once."""
