"""Inputs people already hold, turned into the ir_measures-style frames relimpute reads.

:meth:`Campaign.from_frames <relimpute.data.Campaign.from_frames>` takes, besides
DataFrames:

- **qrels**: a pytrec_eval-style dict ``{query_id: {doc_id: relevance}}``, or a
  ``ranx.Qrels``;
- **runs**: one *stacked* DataFrame (``query_id, doc_id, score`` plus a run
  column, ``run`` or ``system``; ir_measures' layout with the run name added),
  a mapping ``{name: DataFrame | pytrec_eval dict | ranx.Run}``, or a list of
  named ``ranx.Run`` objects.

:func:`ir_datasets_qrels` reads the qrels of an `ir_datasets
<https://ir-datasets.com>`_ dataset by id (the optional ``ir_datasets`` extra);
:meth:`Campaign.from_files <relimpute.data.Campaign.from_files>` and every
command take it as ``QRELS = irds:<dataset id>``.
"""

from __future__ import annotations

from collections.abc import Mapping

from .errors import InputError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pandas is loaded by the adapters that use it (Campaign.from_files needs none)
    import pandas as pd

#: Prefix of a qrels argument naming an ir_datasets dataset.
IR_DATASETS_PREFIX = "irds:"
#: Columns that name the run of a row in a stacked run DataFrame, in order of preference.
RUN_COLUMNS = ("run", "system")


def _is_ranx(value, kind: str) -> bool:
    return type(value).__name__ == kind and type(value).__module__.startswith("ranx")


def _nested_frame(nested: Mapping, value: str) -> pd.DataFrame:
    """``{query_id: {doc_id: value}}`` as a ``query_id, doc_id, <value>`` frame."""
    import pandas as pd

    rows = [
        (str(query), str(doc), number)
        for query, docs in nested.items()
        for doc, number in docs.items()
    ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", value])


def _as_frame(value, ranx_kind: str, column: str, what: str) -> pd.DataFrame:
    """A DataFrame as it is; a ranx object or ``{query_id: {doc_id: number}}`` as a frame."""
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        return value
    if _is_ranx(value, ranx_kind):
        return _nested_frame(value.to_dict(), column)
    if isinstance(value, Mapping):
        return _nested_frame(value, column)
    raise TypeError(
        f"{what} must be a DataFrame, a {{query_id: {{doc_id: {column}}}}} dict or a "
        f"ranx.{ranx_kind}, got {type(value).__name__}"
    )


def as_qrels_frame(qrels) -> pd.DataFrame:
    """Qrels as a ``query_id, doc_id, relevance`` frame (a DataFrame passes through)."""
    return _as_frame(qrels, "Qrels", "relevance", "qrels")


def as_run_frames(runs) -> dict[str, pd.DataFrame]:
    """Runs as ``{name: query_id, doc_id, score frame}``; see the module docstring."""
    import pandas as pd

    if isinstance(runs, pd.DataFrame):
        return split_stacked_runs(runs)
    if _is_ranx(runs, "Run"):
        runs = [runs]
    if isinstance(runs, (list, tuple)):
        unnamed = [i for i, run in enumerate(runs) if not getattr(run, "name", None)]
        if unnamed:
            raise InputError(
                f"ranx runs need names (ranx.Run(..., name=...)); run {unnamed[0]} has none"
            )
        names = [run.name for run in runs]
        if len(set(names)) != len(names):
            raise InputError(f"two runs share a name: {names}")
        runs = dict(zip(names, runs))
    if not isinstance(runs, Mapping):
        raise TypeError(f"runs must be a mapping, a stacked DataFrame or ranx runs, got {type(runs)}")
    for name, run in runs.items():
        if isinstance(run, Mapping) and run and not isinstance(next(iter(run.values())), Mapping):
            raise InputError(
                f"run {name!r} is not {{query_id: {{doc_id: score}}}}: for one run in "
                "pytrec_eval form, name it: {'name': run}"
            )
    return {str(n): _as_frame(run, "Run", "score", f"run {n!r}") for n, run in runs.items()}


def split_stacked_runs(frame: pd.DataFrame, run_column: str | None = None) -> dict[str, pd.DataFrame]:
    """A stacked run frame (a run column plus ``query_id, doc_id, score``) as one frame per run.

    ``run_column`` defaults to the first of ``run``, ``system`` present; runs
    keep the order of their first row.
    """
    column = run_column or next((c for c in RUN_COLUMNS if c in frame.columns), None)
    if column is None or column not in frame.columns:
        raise InputError(
            f"a stacked run DataFrame needs a run column ({' or '.join(RUN_COLUMNS)}); "
            f"it has {list(frame.columns)}"
        )
    if frame[column].isna().any():
        row = int(frame[column].isna().to_numpy().argmax()) + 1
        raise InputError(f"missing run name in column {column!r}", "<DataFrame>", row)
    return {
        str(name): part.drop(columns=column).reset_index(drop=True)
        for name, part in frame.groupby(column, sort=False)
    }


def ir_datasets_qrels(dataset_id: str) -> pd.DataFrame:
    """The qrels of ir_datasets' ``dataset_id`` as a ``query_id, doc_id, relevance`` frame."""
    import pandas as pd

    try:
        import ir_datasets
    except ImportError:
        raise InputError(
            "reading qrels by dataset id needs ir_datasets: pip install 'relimpute[ir_datasets]'"
        ) from None
    source = IR_DATASETS_PREFIX + dataset_id
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"ir_datasets has no dataset {dataset_id!r}") from None
    if not dataset.has_qrels():
        raise InputError(f"ir_datasets dataset {dataset_id!r} has no qrels")
    try:
        rows = [(q.query_id, q.doc_id, q.relevance) for q in dataset.qrels_iter()]
    except Exception as exc:  # noqa: BLE001 - a download fails in any library's exception
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            f"ir_datasets could not provide the qrels ({type(exc).__name__}: {reason}); check the "
            "network, or download them once and give the qrels file",
            source,
        ) from exc
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
