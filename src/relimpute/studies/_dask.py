"""Reaching a Dask scheduler and watching its cluster while a study runs, every wait bounded.

Dask itself waits without end for a peer that accepts a connection and never answers, for a
worker on a cluster that has none, and reads an HTTP answer as a frame length (MemoryError).
Here each wait lasts at most :func:`wait_seconds` (``RELIMPUTE_DASK_WAIT``, default 20 s) and
ends in an :class:`~relimpute.errors.InputError` that says what happened; a study that loses its
scheduler or all its workers says how many parts finished (kept for ``--resume``).
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import InputError

#: seconds to wait for a scheduler's answer, for a first worker, and with no worker mid-study
WAIT = 20.0
#: the environment variable that changes :data:`WAIT`
WAIT_VARIABLE = "RELIMPUTE_DASK_WAIT"
OPTION = "--scheduler"


def wait_seconds() -> float:
    """``RELIMPUTE_DASK_WAIT`` in seconds (a positive number), else :data:`WAIT`."""
    text = os.environ.get(WAIT_VARIABLE, "").strip()
    if not text:
        return WAIT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{text!r} is not a positive number of seconds", WAIT_VARIABLE)
    return value


def connect(address: str, wait: float):
    """A ``distributed.Client`` of the scheduler at ``address``; InputError within ``wait`` s
    (and a second's grace) when there is none."""
    from distributed import Client

    _check_address(address)
    _probe(address, wait)
    try:
        return _bounded(wait + 5, lambda: Client(address, timeout=wait))
    except Exception as exc:  # the scheduler went since the probe, or refused this client
        problem = f"cannot connect to the Dask scheduler at {address} ({_reason(exc)})"
        raise InputError(problem, OPTION) from None


def close(client) -> None:
    """Close ``client``; after a lost scheduler, without the traceback Dask logs when its
    attempt to reconnect is cancelled."""
    import logging

    log = logging.getLogger("distributed.client")
    level = log.level
    if client.status != "running":
        log.setLevel(logging.CRITICAL)
    try:
        client.close()
    finally:
        log.setLevel(level)


def _check_address(address: str) -> None:
    """Refuse an address Dask cannot use before any connection (an unknown scheme, TLS unset)."""
    from distributed.comm import parse_address
    from distributed.comm.registry import get_backend
    from distributed.security import Security

    try:
        scheme, _ = parse_address(address)
        get_backend(scheme)
    except ValueError as exc:
        raise InputError(f"{address!r} is not a Dask scheduler address ({exc})", OPTION) from None
    if scheme == "tls" and Security().get_connection_args("client").get("ssl_context") is None:
        raise InputError(
            f"{address} needs TLS certificates in Dask's configuration (distributed.comm.tls.client "
            "and .ca-file, or DASK_DISTRIBUTED__COMM__TLS__... variables)", OPTION,
        )  # fmt: skip


def _probe(address: str, wait: float) -> None:
    """Ask ``address`` who it is, for at most ``wait`` seconds (Dask's connect waits for a
    silent peer's handshake without end)."""
    def ask():
        return asyncio.run(asyncio.wait_for(_identity(address, wait), wait + 1))

    try:
        identity = _bounded(wait + 5, ask)
    except OSError as error:  # TimeoutError is one
        why = "" if isinstance(error, TimeoutError) else f": {_reason(error)}"
        problem = f"cannot reach the Dask scheduler at {address} (no answer in {wait:g} s{why})"
        raise InputError(problem, OPTION) from None
    except Exception:  # an HTTP answer read as a frame length: MemoryError, and others
        raise InputError(
            f"{address} is not a Dask scheduler (its answer is not Dask's protocol; a scheduler "
            "listens on port 8786 by default, its dashboard on 8787)", OPTION,
        ) from None  # fmt: skip
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind != "Scheduler":
        who = f"a Dask {kind.lower()} answered: give its scheduler's address" if kind else "it answered"
        raise InputError(f"{address} is not a Dask scheduler ({who})", OPTION)


def _bounded(seconds: float, function: Callable[[], Any]) -> Any:
    """``function()`` run in a daemon thread: its value or its exception; TimeoutError when it
    has not returned in ``seconds`` (the thread is then left to itself)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = function()
        except BaseException as exc:  # noqa: BLE001  (raised again in the caller's thread)
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="relimpute-dask-connect", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise TimeoutError(f"no answer in {seconds:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


async def _identity(address: str, wait: float):
    from distributed.core import rpc
    from distributed.security import Security

    arguments = Security().get_connection_args("client")
    async with rpc(address, timeout=wait, connection_args=arguments) as remote:
        return await remote.identity()


def _reason(error: BaseException) -> str:
    """The innermost cause of ``error``, in words (``connection refused``)."""
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__
    text = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return text[:1].lower() + text[1:]


class Watch:
    """A study's ``total`` parts on ``client``'s cluster: its results as they finish, stopped
    with InputError when the scheduler is lost or no worker has been there for ``wait`` s."""

    def __init__(self, client, total: int, wait: float | None = None):
        self.client, self.total = client, total
        self.wait = wait_seconds() if wait is None else wait
        self.address = client.scheduler.address
        self.done = 0
        self.lost = False
        self._seen = time.monotonic()
        self._checked = 0.0

    def first_worker(self) -> None:
        """Return once the cluster has a worker; InputError after ``wait`` seconds without one."""
        deadline = time.monotonic() + self.wait
        while not self._workers():
            if time.monotonic() > deadline:
                raise InputError(
                    f"the Dask cluster at {self.address} has no workers (waited {self.wait:g} s): "
                    f"start some (dask worker {self.address}), or wait longer with "
                    f"{WAIT_VARIABLE}=SECONDS", OPTION,
                )  # fmt: skip
            time.sleep(min(0.2, self.wait / 10))
        self._seen = time.monotonic()

    def results(self, futures: Iterable) -> Iterator[Any]:
        """Each future's result in the order they finish."""
        from distributed import CancelledError, as_completed

        finished = as_completed(futures)
        while True:
            if finished.has_ready():
                future = next(finished)
                try:
                    result = future.result(timeout=self.wait)
                except TimeoutError:
                    if future.status == "error":  # the unit's own
                        raise
                    finished.add(future)  # its worker left with the result: it is run again
                    continue
                except (CancelledError, OSError) as exc:
                    if future.status != "error" and self._gone(exc):  # not the unit's own error
                        raise self._lost() from None
                    raise
                self.done += 1
                yield result
            elif finished.is_empty():
                return
            else:
                self._check()
                time.sleep(0.1)  # as often as Dask's own as_completed looks

    def _gone(self, error: BaseException) -> bool:
        """Whether ``error`` (a result that could not be fetched) means the scheduler is gone."""
        if isinstance(error, OSError) or self.client.status != "running":
            return True
        return getattr(error, "reason", None) == "scheduler-connection-lost"

    def _check(self) -> None:
        now = time.monotonic()
        if now - self._checked < min(5.0, self.wait / 4):
            return
        self._checked = now
        workers = self._workers()
        if workers is None or workers:
            self._seen = now
        elif now - self._seen > self.wait:
            raise InputError(
                f"the Dask cluster at {self.address} has had no workers for {self.wait:g} s, after "
                f"{self._parts()}", OPTION,
            )  # fmt: skip

    def _workers(self) -> int | None:
        """How many workers the scheduler has (None: it did not answer in time, being busy)."""
        if self.client.status != "running":
            raise self._lost()
        try:
            return len(self.client.nthreads(callback_timeout=self.wait))
        except TimeoutError:  # a dead connection is Dask's to notice (TCP keepalive), and it does
            return None
        except OSError:
            raise self._lost() from None

    def _lost(self) -> InputError:
        self.lost = True
        return InputError(f"lost the Dask scheduler at {self.address} after {self._parts()}", OPTION)

    def _parts(self) -> str:
        if not self.done:
            return f"0 of {self.total} parts; none had finished: run it again"
        kept = "part is" if self.done == 1 else "parts are"
        return (f"{self.done} of {self.total} parts; the {self.done} finished {kept} kept in "
                "the --output folder: rerun with --resume")  # fmt: skip
