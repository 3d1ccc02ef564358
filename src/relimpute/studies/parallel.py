"""Where a study's independent units run: in this process, on local processes, or on a Dask cluster.

A study is a map over natural units (a calibration trial, a pool-bias group, a power grid
cell, a split of the corpus). :func:`map_units` runs ``function(unit, **shared)`` for every
unit and returns the results **in the units' order**, whatever ran them and in whichever
order they finished, so a study's output depends on its seed alone: every unit carries its
own seed (drawn in this process before anything is sent), never a generator shared between
units.

Three ways to run, chosen by the arguments:

``client`` (a ``distributed.Client``, or a scheduler address)
    The ``shared`` objects (the campaign, the strategies, ...) go to the scheduler once, as
    one task's argument, and each worker fetches that task's result once (from the worker
    that holds it); each task carries only its unit. A task whose worker dies is run again
    on another worker by the scheduler (up to ``distributed.scheduler.allowed-failures``
    deaths, default 3), the shared task too when every worker holding it died (scattered
    data could not be made again); a task that raises is retried ``retries`` times
    (``Client.submit(retries=)``).
``jobs`` (an int other than 1; -1 = all cores)
    joblib on local processes (loky); the shared objects are pickled once per batch of tasks.
``jobs=None``
    The ambient joblib backend (``with joblib.parallel_config(backend=..., n_jobs=...)``;
    e.g. ``backend="dask"`` inside a ``distributed.Client``); in this process when none is set.

Progress is one bar over the units as they complete, on every path
(:func:`relimpute.progress.progress`: done / total, rate, time left; plain lines when
standard error is not a terminal). ``on_result`` sees each
result in this process as it arrives (a study saves its finished units there, so a client
that dies loses none of them: :func:`relimpute.studies.run`). Dask is imported only when a client is used.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import InputError

#: how often a task that raised is run again on a cluster (a dead worker's tasks are rerun anyway)
RETRIES = 1
#: the ``--scheduler`` value that starts a cluster of ``--jobs`` worker processes on this machine
LOCAL = "local"
#: Dask settings of the clusters relimpute starts (``local``); a running cluster keeps its own
#: (docs/distributed.md says how to give them to ``dask worker``). Dask's defaults suit
#: interactive work watched on its dashboard; a study's units are long and nobody watches:
LOCAL_CLUSTER_CONFIG = {
    # the statistical profiler: every worker walks its task's stack 100 times a second
    "distributed.worker.profile.enabled": False,
    # the event-loop health tick of every scheduler, nanny and worker: 50 a second each
    "distributed.admin.tick.interval": "1s",
    # process, network and disk counters for the dashboard (none is started without bokeh)
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.system-monitor.disk": False,
    # the memory limit is checked once a second, not ten times
    "distributed.worker.memory.monitor-interval": "1s",
    # glibc then returns freed memory at once and maps every large array anew: page faults
    # on each of numpy's temporaries (about 7% more CPU on a fusion-mc trial)
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
}


class _Shared:
    """The objects every unit needs, sent as one piece (Dask does not look inside it)."""

    __slots__ = ("values",)

    def __init__(self, values: Mapping[str, Any]):
        self.values = dict(values)


def _keep(shared: _Shared) -> _Shared:
    return shared


def _call(function: Callable, shared: _Shared, index: int, unit: Any) -> tuple[int, Any]:
    return index, function(unit, **shared.values)


def map_units(
    function: Callable,
    units: Sequence[Any],
    *,
    shared: Mapping[str, Any] | None = None,
    jobs: int | None = 1,
    client=None,
    desc: str = "tasks",
    unit: str = "it",
    progress: bool = True,
    on_result: Callable[[int, Any], None] | None = None,
    retries: int = RETRIES,
    already: int = 0,
) -> list[Any]:
    """``[function(u, **shared) for u in units]``, run as the module docstring says.

    ``function`` must be importable by name on the workers (a module-level function).
    ``on_result(index, result)`` is called in this process as each unit finishes (in the
    order they finish); the list returned is in the order of ``units``. ``already`` units
    of the study finished before (a resumed study): the progress counts from there.
    """
    from ..progress import progress as progress_bar
    from ..progress import quiet

    if isinstance(client, str):
        with cluster(client, jobs) as connected:
            return map_units(function, units, shared=shared, jobs=jobs, client=connected, desc=desc,
                             unit=unit, progress=progress, on_result=on_result, retries=retries,
                             already=already)  # fmt: skip
    units = list(units)
    holder = _Shared(shared or {})
    if not units:
        return []
    if client is not None:
        finished = _on_cluster(function, holder, units, client, retries, desc)
    elif _in_this_process(jobs):
        finished = (_call(function, holder, i, u) for i, u in enumerate(units))
    else:
        finished = _on_joblib(function, holder, units, jobs)
    results: dict[int, Any] = {}
    with quiet(not progress):
        bar = progress_bar(finished, total=already + len(units), desc=desc, unit=unit, lines=True,
                           initial=already)  # fmt: skip
    try:
        for index, result in bar:
            results[index] = result
            if on_result is not None:
                on_result(index, result)
    finally:
        close = getattr(finished, "close", None)
        if close is not None:  # a failure or an interrupt: cancel what is still queued
            close()
    return [results[i] for i in range(len(units))]


def _in_this_process(jobs: int | None) -> bool:
    if jobs is not None:
        return jobs == 1
    from joblib.parallel import get_active_backend

    backend, n_jobs = get_active_backend()
    return n_jobs in (None, 1) and type(backend).__name__ in ("LokyBackend", "SequentialBackend")


def _on_joblib(function, holder, units, jobs) -> Iterator[tuple[int, Any]]:
    from joblib import Parallel, delayed

    options = {} if jobs is None else {"n_jobs": jobs}
    tasks = (delayed(_call)(function, holder, i, u) for i, u in enumerate(units))
    return Parallel(return_as="generator_unordered", **options)(tasks)


def _on_cluster(function, holder, units, client, retries, desc) -> Iterator[tuple[int, Any]]:
    import dask

    from ._dask import Watch

    watch = Watch(client, len(units))
    watch.first_worker()  # nothing is sent to a cluster without workers
    token = uuid.uuid4().hex[:8]
    name = desc.replace(" ", "-")
    # the shared objects as a task's result rather than scattered: a worker fetches it once (from
    # a peer), and the scheduler can make it again when the workers holding it die
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "64GiB"}):
        held = client.submit(_keep, holder, key=f"{name}-shared-{token}", pure=False)
    futures = [
        client.submit(_call, function, held, i, u, key=f"{name}-{i}-{token}", pure=False,
                      retries=retries)  # fmt: skip
        for i, u in enumerate(units)
    ]
    try:
        yield from watch.results(futures)
    finally:  # the study failed or was interrupted: the cluster stops working for it
        if not watch.lost:
            client.cancel([*futures, held])


def _connect(address: str, jobs: int | None):
    """A ``(client, cluster)`` for ``address`` (``local``: a new cluster on 127.0.0.1)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError(
            "a Dask cluster needs dask.distributed: pip install 'relimpute[dask]'", "--scheduler"
        ) from None
    if address == LOCAL:
        import os

        import dask

        cores = os.cpu_count() or 1
        workers = cores if jobs is None else jobs if jobs > 0 else max(1, cores + 1 + jobs)
        with dask.config.set(LOCAL_CLUSTER_CONFIG):  # read as the scheduler, nannies and workers start
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1",
                                   dashboard_address=":0", processes=True)  # fmt: skip
        return Client(cluster), cluster
    from ._dask import connect, wait_seconds

    return connect(address, wait_seconds()), None


@contextmanager
def cluster(address: str | None, jobs: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` for the scheduler at ``address`` while the block runs (None:
    no cluster, yields None); ``"local"`` starts ``jobs`` worker processes here and stops them
    after. Raises InputError when dask.distributed is missing, or no scheduler answers at
    ``address`` in ``RELIMPUTE_DASK_WAIT`` seconds (default 20; :mod:`._dask`, which
    also bounds a study's waits for workers)."""
    if address is None:
        yield None
        return
    from ._dask import close

    client, local = _connect(address, jobs)
    try:
        yield client
    finally:
        close(client)
        if local is not None:
            local.close()
