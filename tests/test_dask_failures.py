"""A Dask scheduler that accepts and never answers, answers in another protocol, has no
workers, loses them or dies mid-study: a one-line message and exit status 2 within a bounded
wait, never a hang or a traceback, and the parts finished before are kept for ``--resume``.

Every server here is one the test starts on 127.0.0.1; ``RELIMPUTE_DASK_WAIT=1`` shortens
each wait to a second. A command runs in a thread given a deadline, so a hang fails the test.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from relimpute.studies import parallel  # noqa: E402
from relimpute.studies.folder import StudyFolder  # noqa: E402
from relimpute.cli import main  # noqa: E402
from relimpute.errors import InputError  # noqa: E402
from test_atomic_writers import synthetic_files  # noqa: E402

SIZE = dict(n_topics=8, n_systems=8, n_docs=120, depth=20, n_families=4, rng=3)
#: a command given this long has hung (the waits are 1 s; a first command imports much)
DEADLINE = 60.0


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return synthetic_files(tmp_path_factory.mktemp("dask-failures"), **SIZE)


@pytest.fixture(autouse=True)
def short_waits(monkeypatch):
    monkeypatch.setenv("RELIMPUTE_DASK_WAIT", "1")


def _power(data, *extra) -> list[str]:
    _, qrels, runs = data
    return ["power", qrels, runs, "--pool-depth", "1,3,5", "--n-topics", "3,6", "--repetitions", "4",
            "--seed", "1", "--rel-threshold", "1", *extra]  # fmt: skip


def _within(seconds: float, function, *args):
    """``function(*args)`` run in a thread; fails the test when it has not returned in ``seconds``."""
    outcome = {}

    def run():
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # noqa: BLE001  (raised again in the test's thread)
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@contextmanager
def _server(answer: bytes | None):
    """A server on 127.0.0.1 that accepts every connection, reads, then sends ``answer`` (None:
    never a byte) and keeps the connection open; yields its tcp:// address."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:  # closed: the test is over
                return
            accepted.append(connection)
            if answer is not None:
                connection.recv(65536)
                connection.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        for connection in accepted:
            connection.close()


def _connect(address: str) -> None:
    with parallel.cluster(address):
        pass


def _run(argv, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = _within(DEADLINE, main, argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def test_a_port_that_accepts_and_never_answers_is_given_up_on(data, capsys):
    with _server(None) as address:
        started = time.monotonic()
        with pytest.raises(InputError, match="no answer in 1 s"):
            _within(DEADLINE, _connect, address)
        assert time.monotonic() - started < 6  # the wait, a second's grace, a busy machine's delay
        code, err = _run([*_power(data), "--scheduler", address], capsys)
    assert code == 2
    assert f"--scheduler: cannot reach the Dask scheduler at {address} (no answer in 1 s)" in err


def test_what_is_not_a_scheduler_is_named_so(data, capsys, monkeypatch):
    """An HTTP server (a dashboard's port), a Dask worker, an unknown scheme, a bad wait."""
    with _server(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n") as address:
        code, err = _run([*_power(data), "--scheduler", address], capsys)
    assert code == 2 and f"{address} is not a Dask scheduler (its answer is not Dask's protocol" in err
    assert "dashboard on 8787" in err and err.count("\n") == 1
    with distributed.LocalCluster(n_workers=1, processes=False, protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=":0") as local:  # fmt: skip
        worker = next(iter(local.scheduler.workers))
        code, err = _run([*_power(data), "--scheduler", worker], capsys)
    assert code == 2 and f"{worker} is not a Dask scheduler (a Dask worker answered" in err
    code, err = _run([*_power(data), "--scheduler", "htp://127.0.0.1:8786"], capsys)
    assert code == 2 and "'htp://127.0.0.1:8786' is not a Dask scheduler address (unknown" in err
    monkeypatch.setenv("RELIMPUTE_DASK_WAIT", "soon")
    code, err = _run([*_power(data), "--scheduler", "tcp://127.0.0.1:8786"], capsys)
    assert code == 2 and "RELIMPUTE_DASK_WAIT: 'soon' is not a positive number of seconds" in err


def test_a_cluster_without_workers_is_told_and_sent_nothing(data, capsys):
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=":0") as local:  # fmt: skip
        address = local.scheduler_address
        code, err = _run([*_power(data), "--scheduler", address], capsys)
        assert not local.scheduler.tasks  # the campaign was not sent
    assert code == 2
    assert f"--scheduler: the Dask cluster at {address} has no workers (waited 1 s)" in err
    assert "RELIMPUTE_DASK_WAIT" in err


def _after_saves(monkeypatch, count: int, action) -> list[str]:
    """``action()`` in the client once ``count`` finished units are saved."""
    save, saved = StudyFolder.save, []

    def save_then(folder, key, payload):
        save(folder, key, payload)
        saved.append(key)
        if len(saved) == count:
            action()

    monkeypatch.setattr(StudyFolder, "save", save_then)
    return saved


def _kept_as_counted(out: Path, saved: list[str], err: str) -> list[str]:
    """The finished parts kept in the folder ``out`` are those saved, and the message counts them."""
    study = out
    kept = sorted(p.stem for p in (study / ".resume").glob("*.json"))
    assert kept == sorted(saved) and 0 < len(kept) < 12
    are = "part is" if len(kept) == 1 else "parts are"
    assert f"after {len(kept)} of 12 parts; the {len(kept)} finished {are} kept in the --output " \
           "folder: rerun with --resume" in err  # fmt: skip
    assert json.loads((study / "manifest.json").read_text())["state"] == "running"
    return kept


def _resumes_to_the_serial_file(data, tmp_path, out: Path, saved: list[str], err: str, capsys) -> None:
    """The parts kept are those the message counts; --resume (here in this process) runs the
    others and writes what an uninterrupted serial run writes."""
    kept = _kept_as_counted(out, saved, err)
    serial = tmp_path / "serial"
    assert main(_power(data, "-o", str(serial))) == 0
    capsys.readouterr()
    assert main(_power(data, "-o", str(out), "--resume")) == 0
    assert f"{len(kept)} finished parts kept" in capsys.readouterr().err
    assert (out / "curves.tsv").read_bytes() == (serial / "curves.tsv").read_bytes()


def test_workers_that_all_leave_stop_the_study_and_keep_what_finished(data, tmp_path, monkeypatch, capsys):
    import gc

    out = tmp_path / "curves"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                                  host="127.0.0.1", dashboard_address=":0") as local:  # fmt: skip
        address = local.scheduler_address
        saved = _after_saves(monkeypatch, 1, lambda: local.scale(0))
        code, err = _run([*_power(data), "-o", str(out), "--scheduler", address], capsys)
    monkeypatch.undo()
    gc.collect()  # the stopped run's folder lock goes, as with its process
    assert code == 2
    assert f"--scheduler: the Dask cluster at {address} has had no workers for 1 s, after " in err
    _resumes_to_the_serial_file(data, tmp_path, out, saved, err, capsys)


SCHEDULER = """
import distributed, sys, time
with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                              host="127.0.0.1", dashboard_address=":0") as local:
    print(local.scheduler_address, flush=True)
    time.sleep(600)
"""


@pytest.fixture
def doomed_scheduler():
    """A scheduler and its worker in a process of their own (this test's relimpute on its path)."""
    import relimpute

    source = str(Path(relimpute.__file__).parents[1])
    path = os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))
    process = subprocess.Popen([sys.executable, "-c", SCHEDULER], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": path})  # fmt: skip
    try:
        yield process, process.stdout.readline().strip()
    finally:
        process.kill()
        process.wait()
        process.stdout.close()


def test_a_scheduler_that_dies_stops_the_study_and_keeps_what_finished(data, tmp_path, monkeypatch, capsys,
                                                                        doomed_scheduler):
    import gc

    process, address = doomed_scheduler
    assert address.startswith("tcp://127.0.0.1:")
    out = tmp_path / "curves"
    saved = _after_saves(monkeypatch, 1, process.kill)
    code, err = _run([*_power(data), "-o", str(out), "--scheduler", address], capsys)
    monkeypatch.undo()
    gc.collect()
    assert code == 2 and err.count("\n") == 1
    assert f"--scheduler: lost the Dask scheduler at {address} after " in err
    _kept_as_counted(out, saved, err)


def test_a_study_lost_before_any_part_finished_says_to_run_it_again():
    from types import SimpleNamespace

    from relimpute.studies._dask import Watch

    client = SimpleNamespace(scheduler=SimpleNamespace(address="tcp://127.0.0.1:1"), status="closed")
    with pytest.raises(InputError, match=r"at tcp://127.0.0.1:1 after 0 of 3 parts; none had finished"):
        Watch(client, 3).first_worker()


@pytest.mark.parametrize("command", ["calibrate", "poolbias", "power", "bootstrap"])
def test_the_help_says_dask_exchanges_pickles_and_how_long_it_waits(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "Dask exchanges pickled Python objects" in shown and "over TLS (tls://)" in shown
    assert "RELIMPUTE_DASK_WAIT seconds (default 20)" in shown
    docs = (Path(__file__).parents[1] / "docs" / "distributed.md").read_text(encoding="utf-8")
    assert "Dask exchanges pickled Python objects" in docs and "RELIMPUTE_DASK_WAIT" in docs
