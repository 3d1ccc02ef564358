"""What a judging journal records of its session and checks on resuming (``relimpute judge``)."""

from __future__ import annotations

import os

from ..errors import InputError

LABEL_STRATEGIES = ("llm", "rtc")
IR_DATASETS_PREFIX = "irds:"  # relimpute.adapters' (that module loads pandas)
CHECKED = (
    "qrels",
    "qrels_sha256",
    "runs",
    "systems",
    "strategy",
    "depth",
    "rel_threshold",
    "scale",
    "prior",
    "model",
    "seed",
)
#: the strategies whose stated confidence is a fitted model's (compare's, with --seed)
MODEL_STRATEGIES = ("posterior", "rtc", "llm")


def check_same_qrels(journal, qrels: str) -> None:
    """Refuse to export a journal together with qrels other than the ones it was judged on."""
    recorded = journal.header.get("qrels_sha256")
    if recorded is not None:
        same = recorded == qrels_sha256(qrels)
    else:  # journals written before digests were recorded, and irds: qrels
        same = journal.header.get("qrels") == qrels_name(qrels)
    if not same:
        raise InputError(
            f"this journal was judged on the qrels {journal.header.get('qrels')}, "
            f"and {qrels} is not that file; export with the qrels the session used",
            str(journal.path),
        )


def qrels_sha256(path: str) -> str | None:
    """The digest of a qrels file (None for ``irds:`` qrels, which are no file)."""
    import hashlib

    from .._files import read_input

    if path.startswith(IR_DATASETS_PREFIX):
        return None
    return hashlib.sha256(read_input(path, "qrels file")).hexdigest()


def qrels_name(qrels: str) -> str:
    """How a journal names its qrels: the real path of a file, or the ``irds:`` id as given."""
    return qrels if qrels.startswith(IR_DATASETS_PREFIX) else os.path.realpath(qrels)


def grade_scale(campaign) -> tuple[int, int]:
    """Grades an assessor may give: 0 up to the collection's highest grade (at least the
    relevance threshold and 1), so that a judgment reads as the collection's own do."""
    judged = [int(t.grades[t.judged].max()) for t in campaign.topics if t.judged.any()]
    return 0, max(1, campaign.rel_threshold, *judged)


def journal_settings(args, systems, scale) -> dict:
    """What a journal records of the session, checked when it is resumed (:data:`CHECKED`)."""
    return {
        "qrels": qrels_name(args.qrels),
        "qrels_sha256": qrels_sha256(args.qrels),
        "runs": [os.path.realpath(r) for r in args.runs],
        "systems": list(systems),
        "strategy": args.strategy,
        "depth": args.depth,
        "rel_threshold": args.rel_threshold,
        "scale": list(scale),
        "prior": args.prior if args.strategy == "mtc" else None,
        "model": args.model if args.strategy in LABEL_STRATEGIES else None,
        "seed": args.seed if args.strategy in MODEL_STRATEGIES else None,
    }
