"""Read and write TREC runs, qrels and probabilistic qrels.

Files may be plain or gzip-compressed (detected by content, not name), with
LF, CRLF or CR line endings and an optional UTF-8 byte-order mark; fields are
separated by any run of ASCII whitespace: space, tab, vertical tab and form
feed (C ``isspace``, as trec_eval reads; a no-break space or other Unicode
space is part of an id), and blank lines are skipped. Every
problem is reported as an :class:`~relimpute.errors.InputError` naming the
file, the line and what is wrong:

- a line with the wrong number of columns;
- a score (or probability) that is not a finite number;
- a relevance label that is not an integer, or outside ``grade_range``;
- a duplicate (see below);
- an empty file, a file that is not UTF-8 text, unreadable or truncated gzip.

Tables come back with the ir_measures column names: ``query_id, doc_id,
score`` for runs, ``query_id, doc_id, relevance`` for qrels and ``query_id,
doc_id, probability`` for probabilistic qrels, ids as strings. DataFrames are
accepted in the same form; other common spellings (``qid``, ``docno``,
``rel``, ...; :data:`COLUMN_ALIASES`) are renamed automatically, and
``columns={"their_name": "query_id", ...}`` maps any others.

Duplicate policy (``duplicates=``), for a document twice in one topic of a
run or a (topic, document) twice in qrels:

``"error"`` (default)
    stop with an error naming both lines. Qrels lines that repeat a
    judgment with the *same* label are harmless and are merged silently;
    only conflicting labels are an error.
``"first"`` / ``"last"``
    keep the line that comes first / last in the file.
``"max"`` (qrels and probabilistic qrels)
    keep the highest label.

Parsing is done by pyarrow's CSV reader on a fast path (one consistent
separator, no blank lines); anything else goes through a line-by-line path
that finds the exact offending line, so both give the same tables and the
same errors.

Writers write to a temporary file beside the target and rename it into
place, so an interrupted write never leaves a truncated file.
:func:`sort_trec` orders a run as trec_eval does (scores compared as C
``float``, :func:`trec_scores`; ties by docno descending).

Modules, by idea: :mod:`.trec` (the formats' columns and trec_eval's order), :mod:`.fields`
(fields typed and checked as a file kind says, with the pyarrow kernels they call),
:mod:`.parsing` (the one door of every file kind: its bytes split into those fields), :mod:`.qrels` (every form of qrels), :mod:`.runs` (runs and run folders), :mod:`.writing`
(the writers), :mod:`.assembly` (qrels and runs aligned per topic) and :mod:`.campaign` (a
campaign's files read and aligned in one pass, for :class:`relimpute.data.Campaign`).
"""

from __future__ import annotations

from .fields import as_string_array
from .qrels import (
    DEFAULT_GRADE_RANGE,
    DUPLICATE_POLICIES,
    INCLUSION_QRELS_COLUMNS,
    is_inclusion_qrels,
    read_inclusion_qrels,
    read_prob_qrels,
    read_qrels,
    read_sampled_qrels,
)
from .runs import (
    NOT_RUN_FILES,
    read_run,
    read_run_columns,
    read_runs,
    run_files,
    run_name,
    skipped_note,
)
from .trec import (
    COLUMN_ALIASES,
    PROB_QRELS_COLUMNS,
    QRELS_COLUMNS,
    RUN_COLUMNS,
    sort_trec,
    trec_scores,
)
from .writing import (
    write_inclusion_qrels,
    write_prob_qrels,
    write_qrels,
    write_run,
    write_sampled_qrels,
)

__all__ = [
    "COLUMN_ALIASES",
    "DEFAULT_GRADE_RANGE",
    "DUPLICATE_POLICIES",
    "INCLUSION_QRELS_COLUMNS",
    "NOT_RUN_FILES",
    "PROB_QRELS_COLUMNS",
    "QRELS_COLUMNS",
    "RUN_COLUMNS",
    "as_string_array",
    "is_inclusion_qrels",
    "read_inclusion_qrels",
    "read_prob_qrels",
    "read_qrels",
    "read_run",
    "read_run_columns",
    "read_sampled_qrels",
    "read_runs",
    "run_files",
    "run_name",
    "skipped_note",
    "sort_trec",
    "trec_scores",
    "write_inclusion_qrels",
    "write_prob_qrels",
    "write_qrels",
    "write_run",
    "write_sampled_qrels",
]
