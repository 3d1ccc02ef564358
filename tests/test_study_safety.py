"""Study folders never lose finished work: a folder holding a study is resumed or refused
(``--overwrite`` starts afresh), an interrupt says what it kept and how to go on, nothing is
written outside ``-o``, the labels' contents name the study, and a batch log shows progress."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from relimpute.studies import folder as _study_folder
from relimpute.studies.folder import StudyFolder
from relimpute.cli import main
from relimpute.errors import InputError
from test_atomic_writers import synthetic_files
from test_study_resume import SRC

SIZE = dict(n_topics=6, n_systems=6, n_docs=100, depth=15, n_families=3, rng=3)
STUDY = {"command": "x", "seed": 1, "arguments": {"n": 1}}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return synthetic_files(tmp_path_factory.mktemp("safety"), **SIZE)


def _calibrate(data, out, *more: str) -> list[str]:
    _, qrels, runs = data
    return ["calibrate", qrels, runs, "--trials", "6", "--k", "3", "--c", "2", "--strategies",
            "mtc", "--seed", "5", "--depth", "10", "-o", str(out), *more]  # fmt: skip


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------ resumed or refused


def test_a_folder_holding_another_study_is_refused_unless_overwrite(tmp_path):
    old = StudyFolder(tmp_path, STUDY)
    old.save("part-0", {"x": 1})
    old.close()  # killed: one finished part
    other = {**STUDY, "seed": 2}
    with pytest.raises(InputError, match=r"holds an unfinished study \(1 finished parts kept\) with "
                       r"other options \(seed: 1 there, 2 now\).*--overwrite.*--resume"):  # fmt: skip
        StudyFolder(tmp_path, other)
    assert (tmp_path / ".resume" / "part-0.json").is_file()
    with pytest.raises(InputError, match="cannot resume: .*--overwrite to start this study afresh"):
        StudyFolder(tmp_path, other, resume=True)
    fresh = StudyFolder(tmp_path, other, overwrite=True)
    assert fresh.discarded == 1 and not fresh.kept()
    (tmp_path / "table.csv").write_text("the other study's")
    fresh.finish([tmp_path / "table.csv"])
    with pytest.raises(InputError, match="holds a complete study with other options"):
        StudyFolder(tmp_path, STUDY)  # a complete study's table is finished work too
    (tmp_path / "table.csv").unlink()
    StudyFolder(tmp_path, STUDY).close()  # its files gone, no parts: nothing left to lose


def test_the_same_complete_study_runs_again_from_its_kept_parts(tmp_path, capsys):
    first = _study_folder.open_study("x", tmp_path, STUDY, False, units="trials")
    first.save("trial-0", {"x": 1})
    first.finish([])
    again = _study_folder.open_study("x", tmp_path, STUDY, False, units="trials")
    assert again.resumed and again.load("trial-0") == {"x": 1}
    assert "is complete: running it again with the 1 finished trials it kept" in capsys.readouterr().err
    again.close()


def test_resume_and_overwrite_go_alone_and_need_the_output(data, tmp_path, capsys):
    with pytest.raises(SystemExit, match="2"):
        main(_calibrate(data, tmp_path / "o", "--resume", "--overwrite"))
    assert "--overwrite: not allowed with argument --resume" in capsys.readouterr().err
    _, qrels, runs = data
    assert main(["power", qrels, runs, "--overwrite"]) == 2
    assert "--overwrite: replaces the study in the --output folder: give that too" in capsys.readouterr().err
    assert main(["bootstrap", qrels, runs, "--overwrite"]) == 2
    assert "--overwrite: goes with --split" in capsys.readouterr().err


def test_an_empty_or_dash_output_is_refused_not_the_current_folder(data, tmp_path, capsys,
                                                                    monkeypatch):
    # -o "$OUT" with OUT unset wrote a whole study into the current folder; -o - a file "-"
    monkeypatch.chdir(tmp_path)
    _, qrels, runs = data
    for argv in (_calibrate(data, ""), _calibrate(data, "-"),
                 ["poolbias", qrels, runs, "--groups", "g.tsv", "--pool-depth", "5", "-o", ""],
                 ["power", qrels, runs, "-o", "-"],
                 ["bootstrap", qrels, runs, "--split", "-o", "-"]):  # fmt: skip
        with pytest.raises(SystemExit, match="2"):
            main(argv)
        err = capsys.readouterr().err
        assert "argument -o/--output: " in err or "argument --output/-o: " in err
    assert os.listdir(tmp_path) == []


def test_calibrate_resume_help_says_the_seed_must_be_given(capsys):
    with pytest.raises(SystemExit):
        main(["calibrate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "folder's seed is used" not in text and "recorded and reused" not in text
    assert "--seed included: give the study's own --seed" in text


# ------------------------------------------------------------------ interrupts and the report


def test_an_interrupt_says_what_is_kept_and_how_to_go_on(data, tmp_path, capsys, monkeypatch):
    from relimpute.calibration import trials

    out, real, calls = tmp_path / "study", trials.run_trial, []

    def stopped_at_the_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(trials, "run_trial", stopped_at_the_third)
    assert main(_calibrate(data, out)) == 130
    err = capsys.readouterr().err
    parts = out / ".resume"
    assert (f"relimpute calibrate: interrupted: 2 of 6 trials finished and are kept in {parts}; "
            "run the same command with --resume to go on") in err  # fmt: skip
    report = (out / "report.md").read_text()
    assert report.startswith("> **UNFINISHED: 2 of 6 trials finished.** This study is running or was stopped")
    monkeypatch.setattr(trials, "run_trial", real)
    assert main([*_calibrate(data, out), "--resume"]) == 0
    assert "2 finished parts kept" in capsys.readouterr().err
    assert "UNFINISHED" not in (out / "report.md").read_text()  # the final report is not marked


def test_an_interrupt_raised_inside_c_code_is_still_an_interrupt(monkeypatch, capsys):
    """A signal that arrives while numba's C code calls back into Python (unpickling a compiled
    function) surfaces as a SystemError caused by the KeyboardInterrupt: the same exit 130."""
    from relimpute.cli import demo

    def wrapped(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise SystemError("_numba_unpickle returned a result with an exception set") \
                from interrupt

    monkeypatch.setattr(demo, "run", wrapped)
    assert main(["demo"]) == 130
    err = capsys.readouterr().err
    assert "relimpute demo: interrupted" in err and "Traceback" not in err
    monkeypatch.setattr(demo, "run", lambda args: 1 / 0)  # any other error stays an error
    with pytest.raises(ZeroDivisionError):
        main(["demo"])


def test_sigterm_stops_a_study_as_ctrl_c_does(data, tmp_path):
    out = tmp_path / "study"
    argv = _calibrate(data, out)
    argv[argv.index("6")] = "400"  # long enough to be stopped mid-study
    entry = "import sys; from relimpute.cli import main; sys.exit(main(sys.argv[1:]))"
    child = subprocess.Popen([sys.executable, "-c", entry, *argv], env={**os.environ, "PYTHONPATH": SRC},
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((out / ".resume").glob("*.json"))) < 2:
        time.sleep(0.01)
    child.send_signal(signal.SIGTERM)
    err = child.communicate(timeout=60)[1]
    kept = len(list((out / ".resume").glob("*.json")))
    assert child.returncode == 130, err
    assert f"interrupted: {kept} of 400 trials finished and are kept in" in err
    assert "Traceback" not in err
    assert (out / "report.md").read_text().startswith(f"> **UNFINISHED: {kept} of 400 trials finished.**")


# ------------------------------------------------------------------ nothing outside -o


@pytest.mark.parametrize("command", ["calibrate", "power"])
def test_a_linked_parts_folder_is_refused_and_its_target_untouched(data, tmp_path, capsys, command):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / ".notes.abcdefgh.tmp").write_text("a file of the user's")
    (target / "trial-0.json").write_text("{}")
    before = _snapshot(target)
    _, qrels, runs = data
    if command == "calibrate":
        out = tmp_path / "study"
        out.mkdir()
        (out / ".resume").symlink_to(target)
        argv, link = _calibrate(data, out), out / ".resume"
    else:
        out = tmp_path / "curves"
        out.mkdir()
        link = out / ".resume"
        link.symlink_to(target)
        argv = ["power", qrels, runs, "--pool-depth", "1,5", "--n-topics", "3", "--repetitions", "2",
                "-o", str(out)]  # fmt: skip
    for more in ([], ["--resume"], ["--overwrite"]):
        assert main([*argv, *more]) == 2
        err = capsys.readouterr().err
        assert f"{link}: is a symbolic link: a study keeps its finished parts only in a folder" in err
        assert "Traceback" not in err
    assert _snapshot(target) == before and sorted(os.listdir(target)) == sorted(before)


def test_a_manifest_whose_study_is_not_an_object_is_refused_cleanly(data, tmp_path, capsys):
    out = tmp_path / "study"
    out.mkdir()
    damaged = {"format": 2, "state": "running", "study": ["not", "an", "object"], "files": []}
    (out / "manifest.json").write_text(json.dumps(damaged))
    assert main([*_calibrate(data, out), "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"{out / 'manifest.json'}: a damaged study manifest" in err and "Traceback" not in err
    assert json.loads((out / "manifest.json").read_text()) == damaged


def test_an_unreadable_manifest_says_what_to_do_even_with_overwrite(data, tmp_path, capsys):
    out = tmp_path / "study"
    out.mkdir()
    (out / "manifest.json").write_text('{"format": 1, "sta')  # cut short: perhaps not ours
    for more in ([], ["--overwrite"]):
        assert main([*_calibrate(data, out), *more]) == 2
        err = capsys.readouterr().err
        assert "cannot read the study's manifest" in err and "remove it, or give another -o" in err
    assert (out / "manifest.json").read_text() == '{"format": 1, "sta'


# ------------------------------------------------------------------ the labels name the study


def test_resume_refuses_labels_whose_contents_changed(data, tmp_path, capsys):
    root, qrels, _ = data
    labels = tmp_path / "L.txt"
    lines = Path(qrels).read_text().splitlines()
    labels.write_text("".join(f"{q} {z} {d} {int(g) > 0:d}\n" for q, z, d, g in (x.split() for x in lines)))
    out = tmp_path / "study"
    argv = _calibrate(data, out, "--llm-labels", str(labels), "-Q")
    argv[argv.index("mtc")] = "mtc+fusion-llm"  # a strategy that reads the labels
    assert main(argv) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["state"] = "running"  # as a killed run leaves it
    (out / "manifest.json").write_text(json.dumps(manifest))
    rows = (x.split() for x in labels.read_text().splitlines())
    flipped = "".join(f"{q} {z} {d} {1 - int(g)}\n" for q, z, d, g in rows)
    labels.write_text(flipped)  # the same file, the same pairs, every label flipped
    assert main([*argv, "--resume"]) == 2
    err = capsys.readouterr().err
    assert "cannot resume: this folder holds another study (other --llm-labels, or other labels in them)" in err


# ------------------------------------------------------------------ progress in a log


def test_a_study_prints_progress_lines_when_stderr_is_not_a_terminal():
    from relimpute.progress import progress_lines

    clock = iter(range(0, 1000)).__next__  # a unit a second
    log = io.StringIO()
    lines = progress_lines(range(200), desc="calibration trials", total=200, stream=log, clock=clock)
    assert list(lines) == list(range(200))
    lines = log.getvalue().splitlines()
    assert len(lines) == 10 and "\r" not in log.getvalue()
    assert lines[0] == "calibration trials: 20/200 done, 20s, about 3m00s left"
    assert lines[-1] == "calibration trials: 200/200 done, 3m20s"
    quick = io.StringIO()  # a study of a few seconds says nothing
    list(progress_lines(range(4), desc="x", total=4, stream=quick, clock=iter(range(10)).__next__))
    assert quick.getvalue() == ""
    slow = io.StringIO()  # a slow unit: a line a minute at least
    minutes = iter(range(0, 10**6, 70)).__next__
    list(progress_lines(range(100), desc="groups", total=100, stream=slow, clock=minutes))
    assert len(slow.getvalue().splitlines()) == 100  # every unit: each took over a minute
    resumed = io.StringIO()  # 6 of 20 kept: it counts from there, the time left from this run's pace
    tens = iter(range(0, 1000, 10)).__next__
    list(progress_lines(range(14), desc="t", total=20, initial=6, stream=resumed, clock=tens))
    assert resumed.getvalue().splitlines()[0] == "t: 8/20 done, 20s, about 2m00s left"


def test_progress_lines_only_off_a_terminal_and_never_quiet(monkeypatch):
    from relimpute import progress as module

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert module.progress(range(3), desc="x", total=3, lines=True).__class__.__name__ == "generator"
    with module.quiet():
        assert module.progress(range(3), desc="x", total=3, lines=True).__class__.__name__ != "generator"
    assert module.progress(range(3), desc="x", total=3).__class__.__name__ != "generator"
