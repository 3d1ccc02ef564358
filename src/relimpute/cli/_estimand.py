"""``--estimand`` and ``--pool-depth`` of the commands that score: which MAP a table prints.

The engine does the work (:mod:`relimpute.confidence.estimands`); this module builds
the engine and says on stderr what was inferred.
"""

from __future__ import annotations

import sys


def refuse_estimand(estimand: str, command: str, takes: tuple[str, ...], why: str) -> None:
    """An error naming which estimands ``command`` (or this path of it) gives, and why."""
    from ..errors import InputError

    if estimand not in takes:
        raise InputError(
            f"{command} cannot give {estimand}: {why}; it gives {' and '.join(takes)}",
            "--estimand",
        )


def estimand_engine(estimand, campaign, command: str, **options):
    """The :class:`ConfidenceEngine` of ``estimand`` (:class:`relimpute.cli._requests.Estimand`;
    ``options``: ratio, depth), with a note on stderr when the pool depth is inferred."""
    from ..confidence import ConfidenceEngine
    from ..confidence.estimands import judged_pool_depth

    pool_depth = estimand.pool_depth
    if estimand.name == "pool" and pool_depth is None:
        pool_depth = judged_pool_depth(campaign)
        print(
            f"relimpute {command}: note: pool depth {pool_depth}, the depth most runs are judged "
            "to on every topic (--pool-depth K sets it)",
            file=sys.stderr,
        )
    return ConfidenceEngine(estimand=estimand.name, pool_depth=pool_depth, **options)
