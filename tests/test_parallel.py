"""Studies on local processes and on a Dask cluster (issue 29): the same bytes as a serial run,
whatever runs the units and in whichever order they finish; a killed worker's unit rerun; the
progress bar fed as units complete; clear errors without dask or a scheduler.

The cluster of these tests is a ``distributed.LocalCluster`` on 127.0.0.1 with
``processes=False`` (two single-thread workers in this process: starting worker processes costs
seconds on a busy CI machine), reached over TCP as a remote one is; the local processes are
joblib's (loky). The killed-worker test needs a worker process to kill, so it starts one
cluster of two worker processes.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

import cloudpickle  # noqa: E402  (after the skip: distributed brings it)
import joblib  # noqa: E402

from relimpute.studies import parallel  # noqa: E402
from relimpute.cli import main  # noqa: E402
from relimpute.errors import InputError  # noqa: E402
from test_atomic_writers import synthetic_files  # noqa: E402
from test_study_resume import _same_report  # noqa: E402

# workers (threads, loky processes or Dask worker processes) need not find this file on their path
cloudpickle.register_pickle_by_value(sys.modules[__name__])

SIZE = dict(n_topics=8, n_systems=8, n_docs=120, depth=20, n_families=4, rng=3)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return synthetic_files(tmp_path_factory.mktemp("parallel"), **SIZE)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                                  host="127.0.0.1", dashboard_address=":0") as local:  # fmt: skip
        assert local.scheduler_address.startswith("tcp://127.0.0.1:")
        yield local


def _late_first(unit: int, *, offset: int) -> int:
    """Unit 0 finishes well after the others (on two workers, the others overtake it; a
    second long enough for them on a machine busy with other tests)."""
    time.sleep(1.0 if unit == 0 else 0.0)
    return offset + unit


def test_results_come_back_in_the_units_order_on_every_path(cluster):
    seen = []

    def record(index, result):
        seen.append(index)

    want = [10, 11, 12, 13]
    assert parallel.map_units(_late_first, range(4), shared={"offset": 10}, progress=False) == want
    assert parallel.map_units(_late_first, range(4), shared={"offset": 10}, jobs=2, progress=False) == want
    with distributed.Client(cluster.scheduler_address) as client:
        client.wait_for_workers(2)  # both there, so that units 1-3 can overtake unit 0
        got = parallel.map_units(_late_first, range(4), shared={"offset": 10}, client=client,
                                 progress=False, on_result=record)  # fmt: skip
        with joblib.parallel_config(backend="dask"):  # the ambient joblib backend (jobs=None)
            ambient = parallel.map_units(_late_first, range(4), shared={"offset": 10}, jobs=None,
                                         progress=False)  # fmt: skip
    assert got == want and ambient == want
    assert sorted(seen) == [0, 1, 2, 3] and seen != [0, 1, 2, 3]  # saved as they finished
    assert parallel._in_this_process(None)  # no joblib backend set: this process
    with joblib.parallel_config(backend="loky", n_jobs=2):
        assert not parallel._in_this_process(None)
    # an address works as a client too (connected for the call)
    assert parallel.map_units(_late_first, [3], shared={"offset": 1}, client=cluster.scheduler_address,
                              progress=False) == [4]  # fmt: skip


def test_progress_over_a_cluster_counts_units_as_they_complete(cluster, monkeypatch):
    import relimpute.progress

    shown = {}

    def bar(iterable, *, desc, total=None, unit="it", delay=0.0, **options):
        shown.update(desc=desc, total=total, unit=unit, items=[])
        for item in iterable:
            shown["items"].append(item[0])
            yield item

    monkeypatch.setattr(relimpute.progress, "progress", bar)
    with distributed.Client(cluster.scheduler_address) as client:
        parallel.map_units(_late_first, range(4), shared={"offset": 0}, client=client, desc="trials",
                           unit="trial")  # fmt: skip
    assert shown["desc"] == "trials" and shown["total"] == 4 and shown["unit"] == "trial"
    assert sorted(shown["items"]) == [0, 1, 2, 3] and shown["items"] != [0, 1, 2, 3]  # as done


def _commands(data, out: Path) -> dict[str, list[str]]:
    root, qrels, runs = data
    return {
        "poolbias": ["poolbias", qrels, runs, "--groups", str(root / "groups.tsv"), "--pool-depth", "5",
                     "--correctors", "reduced,lipani", "-m", "P@5", "-m", "AP", "--common-topics", "3",
                     "--common-repeats", "5", "--seed", "4", "-o", str(out / "bias")],
        "power": ["power", qrels, runs, "--pool-depth", "1,3,5", "--n-topics", "3,6",
                  "--repetitions", "4", "--seed", "1", "-o", str(out / "power")],
        "bootstrap": ["bootstrap", qrels, runs, "--split", "--splits", "3", "--resamples", "20",
                      "--seed", "3", "--format", "tsv"],
    }  # fmt: skip


def _outputs(data, out: Path, extra: list[str], capsys) -> dict[str, bytes]:
    found = {}
    for name, argv in _commands(data, out).items():
        assert main([*argv, *extra]) == 0, name
        found[f"{name} stdout"] = capsys.readouterr().out.encode()
    for path in sorted(out.rglob("*")):  # the report files, not the resume parts (their timings)
        if path.is_file() and path.name != "manifest.json" and ".resume" not in path.parts:
            found[str(path.relative_to(out))] = path.read_bytes()
    return found


def test_studies_write_the_same_bytes_serially_on_two_processes_and_on_a_cluster(data, tmp_path, cluster,
                                                                                  capsys):
    serial = _outputs(data, tmp_path / "serial", [], capsys)
    assert {"bias/estimates.tsv", "power/curves.tsv", "bootstrap stdout"} <= set(serial)
    assert serial["bootstrap stdout"].count(b"\n") > 3 * 4  # three splits' blocks
    processes = _outputs(data, tmp_path / "processes", ["--jobs", "2"], capsys)
    assert processes == serial
    on_cluster = _outputs(data, tmp_path / "cluster", ["--scheduler", cluster.scheduler_address], capsys)
    assert on_cluster == serial


def test_calibrate_interrupted_on_a_cluster_resumes_to_the_serial_report(data, tmp_path, cluster,
                                                                         monkeypatch, capsys):
    """The client dies (here: Ctrl-C once two trials are saved) while the cluster runs the study;
    ``--resume`` on the cluster runs only the others and writes the serial run's report."""
    import gc

    from relimpute.studies.folder import StudyFolder

    _, qrels, runs = data
    argv = ["calibrate", qrels, runs, "--trials", "5", "--k", "3", "--c", "2", "--strategies", "mtc",
            "--seed", "9", "--depth", "10", "--quiet", "-o"]  # fmt: skip
    assert main([*argv, str(tmp_path / "serial")]) == 0
    out = tmp_path / "cluster"
    on_cluster = [*argv, str(out), "--scheduler", cluster.scheduler_address]
    save, saved = StudyFolder.save, []

    def save_then_die(folder, key, payload):
        save(folder, key, payload)
        saved.append(key)
        if len(saved) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(StudyFolder, "save", save_then_die)
    assert main(on_cluster) == 130
    monkeypatch.undo()
    gc.collect()  # the interrupted run's folder lock goes, as with its process
    assert len(list((out / ".resume").glob("*.json"))) == 2
    capsys.readouterr()
    assert main([*on_cluster, "--resume"]) == 0
    assert "2 finished parts kept" in capsys.readouterr().err
    _same_report(tmp_path / "serial", out, {"trials.csv": ["seconds"]})
    trials = pd.read_csv(out / "trials.csv")
    assert list(trials["trial"]) == list(range(5))


def _die_once(unit: int, *, marker: str) -> tuple[int, int]:
    """Unit 1 kills the worker process running it the first time (no exception: the process ends)."""
    if unit == 1 and not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()))
        os._exit(1)
    return unit * unit, os.getpid()


def _settings(dask_worker) -> dict:
    import dask

    return {"profiled": "profile" in dask_worker.periodic_callbacks, "trim": os.environ.get("MALLOC_TRIM_THRESHOLD_"),
            "tick": dask.config.get("distributed.admin.tick.interval")}  # fmt: skip


def test_a_killed_worker_does_not_lose_the_study_on_a_cluster_of_ours(tmp_path, monkeypatch):
    """``--scheduler local`` (worker processes, as the commands start them): a unit whose worker
    dies runs again on another; the workers run with relimpute's settings (no profiler, no
    malloc trimming, a slow tick: parallel.LOCAL_CLUSTER_CONFIG), this process's environment
    is left as it was."""
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    marker = str(tmp_path / "killed")
    with parallel.cluster(parallel.LOCAL, 2) as client:
        client.wait_for_workers(2)
        settings = list(client.run(_settings).values())
        found = parallel.map_units(_die_once, range(4), shared={"marker": marker}, client=client,
                                   progress=False)  # fmt: skip
    assert [square for square, _ in found] == [0, 1, 4, 9]
    killed = int(Path(marker).read_text())
    assert found[1][1] != killed  # unit 1 ran again, in another process
    assert settings == [{"profiled": False, "trim": None, "tick": "1s"}] * 2
    assert "MALLOC_TRIM_THRESHOLD_" not in os.environ


def test_without_dask_or_a_scheduler_the_command_says_so(data, monkeypatch, capsys):
    _, qrels, runs = data
    argv = ["power", qrels, runs, "--pool-depth", "1", "--n-topics", "3", "--repetitions", "2"]
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    assert main([*argv, "--scheduler", "tcp://127.0.0.1:8786"]) == 2
    err = capsys.readouterr().err
    assert "--scheduler" in err and "pip install 'relimpute[dask]'" in err and "Traceback" not in err
    with pytest.raises(InputError, match=r"relimpute\[dask\]"):
        with parallel.cluster("local", 2):
            pass


def test_a_unit_that_fails_fails_the_study():
    with pytest.raises(ZeroDivisionError):
        parallel.map_units(_divide, [1, 0, 2], progress=False)


def _divide(unit: int) -> float:
    return 1 / unit


def _interrupt_after(monkeypatch, count: int) -> list[str]:
    """Ctrl-C (KeyboardInterrupt) in the client once ``count`` finished units are saved."""
    from relimpute.studies.folder import StudyFolder

    save, saved = StudyFolder.save, []

    def save_then_die(folder, key, payload):
        save(folder, key, payload)
        saved.append(key)
        if len(saved) == count:
            raise KeyboardInterrupt

    monkeypatch.setattr(StudyFolder, "save", save_then_die)
    return saved


@pytest.mark.parametrize(("name", "units", "resumed_on"), [("power", 12, ["--jobs", "2"]), ("bootstrap", 3, [])])
def test_power_and_split_studies_interrupted_then_resumed_write_the_uninterrupted_bytes(
        data, tmp_path, cluster, monkeypatch, capsys, name, units, resumed_on):  # fmt: skip
    """Each finished design / split is kept in the --output folder as it ends; a study whose
    client dies on the cluster goes on (here on other workers) with --resume, runs only the
    others, and writes the table an uninterrupted serial run writes."""
    import gc
    import json

    from relimpute.studies import runner

    table = "curves.tsv" if name == "power" else "split.tsv"
    serial = tmp_path / "serial"
    argv = _commands(data, tmp_path)[name]
    argv = argv[:-2] if name == "power" else argv  # without its -o
    assert main([*argv, "-o", str(serial)]) == 0
    want = capsys.readouterr().out
    out = tmp_path / "resumed"
    saved = _interrupt_after(monkeypatch, 2)
    assert main([*argv, "-o", str(out), "--scheduler", cluster.scheduler_address]) == 130
    monkeypatch.undo()
    gc.collect()  # the interrupted run's folder lock goes, as with its process
    assert not (out / table).exists() and len(saved) == 2
    assert sorted(p.name for p in (out / ".resume").glob("*.json")) == sorted(f"{k}.json" for k in saved)
    assert json.loads((out / "manifest.json").read_text())["state"] == "running"
    capsys.readouterr()
    ran = []
    monkeypatch.setattr(runner, "map_units", _counting(runner.map_units, ran))
    assert main([*argv, "-o", str(out), "--resume", *resumed_on]) == 0
    resumed = capsys.readouterr()
    assert "2 finished parts kept" in resumed.err
    assert ran == [units - 2]  # the saved units were not run again
    assert resumed.out == want and (out / table).read_bytes() == (serial / table).read_bytes()
    assert json.loads((out / "manifest.json").read_text())["state"] == "complete"
    assert len(list((out / ".resume").glob("*.json"))) == units  # kept: a rerun reuses them


def _counting(map_units, ran: list[int]):
    def counted(function, units, **options):
        ran.append(len(units))
        return map_units(function, units, **options)

    return counted


def test_resume_refuses_a_study_with_other_options_naming_the_option(data, tmp_path, capsys):
    _, qrels, runs = data
    curves, table = tmp_path / "power" / "curves.tsv", tmp_path / "split" / "split.tsv"
    power = ["power", qrels, runs, "--pool-depth", "1,3", "--n-topics", "3", "--repetitions", "2", "-o", str(curves.parent)]
    split = ["bootstrap", qrels, runs, "--split", "--splits", "2", "--resamples", "10", "-o", str(table.parent)]
    assert main(power) == 0 and main(split) == 0
    before = curves.read_bytes(), table.read_bytes()
    capsys.readouterr()
    for argv, option, there, now in ((power, "--pool-depth", "1,3", "1,3,5"), (split, "--resamples", "10", "12")):
        changed = [*argv[: argv.index(option) + 1], now, *argv[argv.index(option) + 2 :]]
        assert main([*changed, "--resume"]) == 2
        err = capsys.readouterr().err
        assert "cannot resume: this folder holds another study" in err and "Traceback" not in err
        shown = (f"[{there.replace(',', ', ')}]", f"[{now.replace(',', ', ')}]") if "," in there else (there, now)
        assert f"{option}: {shown[0]} there, {shown[1]} now" in err
    assert main([*power[:-2], "--resume"]) == 2
    assert "--resume: goes on with the study in the --output folder" in capsys.readouterr().err
    assert main(["bootstrap", qrels, runs, "-o", str(table.parent)]) == 2
    assert "--output: goes with --split" in capsys.readouterr().err
    assert (curves.read_bytes(), table.read_bytes()) == before  # a refused run writes nothing


def test_topic_parts_on_a_cluster_equal_the_serial_answer(cluster):
    # each part's fit and draws are seeded from (seed, part): where the parts run cannot move a
    # digit of the comparison (the default model's Monte Carlo, two parts on two workers)
    import numpy as np

    from relimpute.confidence.parts import compare_in_parts
    from relimpute.simulate import simulate_campaign

    campaign = simulate_campaign(**SIZE).campaign.pooled(3)
    serial = compare_in_parts(campaign, 2, n_draws=200, seed=4, progress=False)
    with distributed.Client(cluster.scheduler_address) as client:
        remote = compare_in_parts(campaign, 2, n_draws=200, seed=4, scheduler=client, progress=False)
    np.testing.assert_array_equal(serial.scores.draws, remote.scores.draws)
    np.testing.assert_array_equal(serial.p_a_better, remote.p_a_better)
