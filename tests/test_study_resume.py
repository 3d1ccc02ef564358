"""Study folders: a manifest naming the study, ``--resume`` after a SIGKILL giving the report of
an uninterrupted run, and a folder holding another study refused."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from relimpute import _files
from relimpute.studies.folder import StudyFolder, frame_from_json, frame_to_json
from relimpute.cli import main
from relimpute.errors import InputError
from test_atomic_writers import synthetic_files

SRC = str(Path(_files.__file__).resolve().parents[1])


SIZE = dict(n_topics=10, n_systems=10, n_docs=150, depth=25, n_families=5, rng=7)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return synthetic_files(tmp_path_factory.mktemp("resume"), **SIZE)


def _calibrate(data, out) -> list[str]:
    _, qrels, runs = data
    return ["calibrate", qrels, runs, "--trials", "12", "--k", "3", "--c", "2", "--strategies",
            "mtc", "--seed", "11", "--depth", "10", "--quiet", "-o", str(out)]  # fmt: skip


def _poolbias(data, out) -> list[str]:
    root, qrels, runs = data
    return ["poolbias", qrels, runs, "--groups", str(root / "groups.tsv"), "--pool-depth", "5",
            "--correctors", "reduced,lipani", "-m", "P@5", "-m", "AP", "--common-topics", "3",
            "--common-repeats", "60", "--seed", "4", "-o", str(out)]  # fmt: skip


def _kill_when(argv: list[str], parts: Path, at_least: int) -> int:
    """Run ``relimpute ARGV`` in a child, SIGKILL it once ``parts`` holds ``at_least`` finished
    parts; return how many there were (fewer than all: the kill came mid-study)."""
    env = {**os.environ, "PYTHONPATH": SRC}
    entry = "import sys; from relimpute.cli import main; sys.exit(main(sys.argv[1:]))"
    child = subprocess.Popen([sys.executable, "-c", entry, *argv], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and child.poll() is None:
            if parts.is_dir() and len(list(parts.glob("*.json"))) >= at_least:
                break
            time.sleep(0.005)
        assert child.poll() is None, "the study ended before it could be killed"
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    return len(list(parts.glob("*.json")))


def _same_report(a: Path, b: Path, volatile: dict[str, list[str]]) -> None:
    """Every file of ``a`` equal to ``b``'s byte for byte, but for the columns ``volatile``
    names (timings: they differ between two uninterrupted runs too)."""
    names = sorted(p.name for p in a.iterdir() if p.is_file())
    assert names == sorted(p.name for p in b.iterdir() if p.is_file())
    for name in names:
        if name in volatile:
            left, right = (pd.read_csv(f / name).drop(columns=volatile[name]) for f in (a, b))
            pd.testing.assert_frame_equal(left, right)
        elif name == "manifest.json":
            assert json.loads((a / name).read_text())["study"] == json.loads((b / name).read_text())["study"]
        else:
            assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_calibrate_killed_then_resumed_writes_the_uninterrupted_report(data, tmp_path, capsys):
    out, again = tmp_path / "killed", tmp_path / "uninterrupted"
    done = _kill_when(_calibrate(data, out), out / ".resume", at_least=2)
    assert 2 <= done < 12
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["state"] == "running" and manifest["study"]["seed"] == 11
    # the report says the study is unfinished (the kill may come between a part and the line)
    first = (out / "report.md").read_text().splitlines()[0]
    assert re.fullmatch(rf"> \*\*UNFINISHED: ({done - 1}|{done}) of 12 trials finished\.\*\* .*--resume\.", first)
    assert main(_calibrate(data, out)) == 2  # the obvious rerun: refused, nothing dropped
    err = capsys.readouterr().err
    assert f"holds this study, unfinished ({done} finished trials kept): add --resume" in err
    assert "--overwrite" in err and len(list((out / ".resume").glob("*.json"))) == done
    assert main([*_calibrate(data, out), "--resume"]) == 0
    assert f"resuming the study in {out}: {done} finished parts kept" in capsys.readouterr().err
    assert main([*_calibrate(data, again), "--resume"]) == 0  # nothing there: from the start
    assert "nothing to resume" in capsys.readouterr().err
    _same_report(out, again, {"trials.csv": ["seconds"]})
    assert json.loads((out / "manifest.json").read_text())["state"] == "complete"
    trials = pd.read_csv(out / "trials.csv")
    assert list(trials["trial"]) == list(range(12))  # each trial once, in order


def test_poolbias_killed_then_resumed_writes_the_uninterrupted_tables(data, tmp_path):
    out, again = tmp_path / "killed", tmp_path / "uninterrupted"
    done = _kill_when(_poolbias(data, out), out / ".resume", at_least=1)
    assert 1 <= done < 5
    assert main([*_poolbias(data, out), "--resume"]) == 0
    assert main(_poolbias(data, again)) == 0
    _same_report(out, again, {})  # the common-topic draws go on where the kill stopped them


def test_resume_refuses_a_folder_holding_another_study(data, tmp_path, capsys):
    out = tmp_path / "study"
    folder = StudyFolder(out, {"command": "poolbias", "seed": 4, "arguments": {"depth": 5}})
    folder.finish([])
    argv = _poolbias(data, out)
    assert main([*argv, "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"{out / 'manifest.json'}: cannot resume: this folder holds another study" in err
    assert "depth" not in err or "there" in err
    assert main(["calibrate", *_calibrate(data, out)[1:], "--resume"]) == 2
    assert "a poolbias study, not a calibrate one" in capsys.readouterr().err


def test_a_long_option_that_differs_is_shown_where_it_differs(tmp_path):
    # two strategy lists with one long first item: their first 60 characters are the same
    first = {"name": "mtc", "selector": "mtc", "model": {"model": "uniform", "prior": 0.5}}
    StudyFolder(tmp_path, {"command": "x", "seed": 1, "arguments": {"s": [first]}}).finish([])
    with pytest.raises(InputError, match="cannot resume") as refused:
        StudyFolder(tmp_path, {"command": "x", "seed": 1,
                               "arguments": {"s": [first, {"name": "fusion-mc"}]}}, resume=True)
    assert "{'name': 'fusion-mc'}] now" in str(refused.value)


def test_a_resumed_study_without_seed_takes_the_folders_seed(tmp_path):
    study = {"command": "calibrate", "seed": None, "arguments": {"trials": 3}}
    first = StudyFolder(tmp_path, study)
    seed = first.study["seed"]
    assert isinstance(seed, int)
    first.save("trial-0", {"x": 1.5})
    first.close()  # as a killed run's lock goes with its process
    again = StudyFolder(tmp_path, study, resume=True)
    assert again.study["seed"] == seed and again.load("trial-0") == {"x": 1.5}
    again.close()
    with pytest.raises(InputError, match=f"seed: {seed} there, 5 now"):
        StudyFolder(tmp_path, {**study, "seed": 5}, resume=True)
    fresh = StudyFolder(tmp_path, study, overwrite=True)  # a new seed, the old parts gone
    assert fresh.load("trial-0") is None and not (tmp_path / ".resume" / "trial-0.json").exists()


def test_a_new_study_removes_the_files_of_the_one_it_replaces(tmp_path):
    old = StudyFolder(tmp_path, {"command": "x", "seed": 1, "arguments": {}})
    for name in ("a.csv", "only_old.csv"):
        (tmp_path / name).write_text("old")
    old.finish([tmp_path / "a.csv", tmp_path / "only_old.csv"])
    (tmp_path / "mine.txt").write_text("a file of the user's")
    new = StudyFolder(tmp_path, {"command": "x", "seed": 2, "arguments": {}}, overwrite=True)
    running = json.loads((tmp_path / "manifest.json").read_text())
    assert running["state"] == "running" and running["stale"] == ["a.csv", "only_old.csv"]
    (tmp_path / "a.csv").write_text("new")
    new.finish([tmp_path / "a.csv"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [".resume", "a.csv", "manifest.json", "mine.txt"]
    assert json.loads((tmp_path / "manifest.json").read_text())["files"] == ["a.csv"]


def test_a_folder_with_a_foreign_manifest_is_not_overwritten(tmp_path):
    (tmp_path / "manifest.json").write_text('{"name": "my package"}')
    with pytest.raises(InputError, match="not a relimpute study manifest"):
        StudyFolder(tmp_path, {"command": "x", "seed": 1, "arguments": {}})
    assert (tmp_path / "manifest.json").read_text() == '{"name": "my package"}'


def test_read_study_refuses_an_unfinished_folder(tmp_path):
    from relimpute.calibration.report import read_study

    StudyFolder(tmp_path, {"command": "calibrate", "seed": 1, "arguments": {}})
    with pytest.raises(InputError, match="did not finish"):
        read_study(tmp_path)


def test_saved_frames_come_back_exactly():
    frame = pd.DataFrame(
        {"name": ["a", "NA", ""], "x": [0.1 + 0.2, float("nan"), 1e-300], "n": [1, 2, 3],
         "flag": [True, False, True]}
    )  # fmt: skip
    back = frame_from_json(json.loads(json.dumps(frame_to_json(frame))))
    pd.testing.assert_frame_equal(back, frame)
    assert back["x"].iloc[0] == 0.1 + 0.2


def test_a_study_removes_the_temporaries_a_killed_run_left_in_its_folder(tmp_path):
    """For files that were never finished too (their target does not exist)."""
    study = {"command": "x", "seed": 1, "arguments": {}}
    StudyFolder(tmp_path, study)
    dead = ".rlp-0123abcd-999999999-k3j_x9aa.tmp"  # pid above any kernel's pid_max
    alive = f".rlp-0123abcd-{os.getpid()}-k3j_x9aa.tmp"
    for folder in (tmp_path, tmp_path / ".resume"):
        for name in (dead, alive):
            (folder / name).write_text("part")
    StudyFolder(tmp_path, study, resume=True)
    for folder in (tmp_path, tmp_path / ".resume"):
        assert sorted(p.name for p in folder.glob("*.tmp")) == [alive]


def test_a_second_run_on_a_busy_study_folder_is_refused(tmp_path):
    study = {"command": "x", "seed": 1, "arguments": {}}
    first = StudyFolder(tmp_path, study)
    with pytest.raises(InputError, match="another relimpute run is writing a study"):
        StudyFolder(tmp_path, study, resume=True)
    first.save("trial-0", {})
    first.close()
    fresh = StudyFolder(tmp_path, study, overwrite=True)  # the first one's parts: dropped, and counted
    assert fresh.discarded == 1
    fresh.save("trial-0", {})
    fresh.finish([])
    assert StudyFolder(tmp_path, study).discarded == 0  # a finished study's parts: not a loss
    assert StudyFolder(tmp_path, study, resume=True).resumed
