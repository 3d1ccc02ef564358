"""One vocabulary across subcommands, and the old spellings that still work.

- ``QRELS RUN...`` are positional everywhere.
- ``--confidence P`` is the one name for a confidence level: the level of
  ``compare``'s intervals, the confidence ``judge`` and ``calibrate`` judge
  until, the call ``demo`` counts as confident, and (as 1 − P) the
  significance level of ``evaluate --baseline``.
- ``--systems NAME...`` selects runs by name (the name of a run file, the
  ``system`` column of every table and the ``systems=`` argument in Python).
- ``--depth K`` truncates every run at rank K.
- ``--rel-threshold N`` defaults to the collection's ``relimpute.toml``, else 1.
- ``--quiet`` turns progress bars off (they are shown only on a terminal).

Old spellings (``--alpha``, ``--level``, ``--confident``, ``calibrate --runs
--qrels``, ...) are accepted with a note on stderr naming the new one.
"""

from __future__ import annotations

import argparse
import sys


class _Deprecated(argparse.Action):
    """Store the value as the new option would, with a note naming the new spelling."""

    def __init__(self, option_strings, dest, new: str, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(
            f"relimpute: note: {option_string} is deprecated; use {self.new}", file=sys.stderr
        )
        setattr(namespace, self.dest, True if self.nargs == 0 else values)


def add_deprecated(parser, old: str, new: str, dest: str, **kwargs) -> None:
    """Accept ``old`` as a deprecated spelling of ``new`` (storing into ``dest``)."""
    parser.add_argument(
        old,
        dest=dest,
        action=_Deprecated,
        new=new,
        default=argparse.SUPPRESS,
        help=f"deprecated spelling of {new}",
        **kwargs,
    )


def confidence_level(text: str) -> float:
    """An argparse type: a probability strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {value}")
    return value


def add_confidence_argument(parser, help: str, *, old: tuple[str, ...] = ()) -> None:
    """``--confidence P`` (default 0.95), and the command's old spellings of it."""
    parser.add_argument(
        "--confidence",
        type=confidence_level,
        default=0.95,
        metavar="P",
        help=f"{help} (default: %(default)s)",
    )
    for spelling in old:
        add_deprecated(parser, spelling, "--confidence", "confidence", type=confidence_level)


def add_quiet_argument(parser) -> None:
    """``--quiet``: no progress bars (they go to stderr, and only when it is a terminal)."""
    parser.add_argument(
        "--quiet",
        "-Q",
        action="store_true",
        help="no progress bars (shown on stderr only when it is a terminal)",
    )
