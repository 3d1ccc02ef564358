"""Issue 26, round two: every bad input a message (exit 2, naming file, line or option), never a
traceback or a hang; option values refused when parsed; readers refuse FIFOs through one helper."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from relimpute import _files
from relimpute.cli import main
from relimpute.errors import InputError
from relimpute.io import read_prob_qrels, read_qrels

QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n2 0 d4 0\n"
RUNS = {
    "a": "1 Q0 d1 1 3 a\n1 Q0 d2 2 2 a\n1 Q0 d5 3 1 a\n2 Q0 d3 1 1 a\n2 Q0 d4 2 0.5 a\n",
    "b": "1 Q0 d2 1 3 b\n1 Q0 d1 2 2 b\n2 Q0 d4 1 1 b\n2 Q0 d3 2 0.5 b\n",
}


@pytest.fixture
def collection(write_collection):
    return write_collection(QRELS, RUNS)


def _run(argv, capsys):
    """``(exit code, stderr)`` of the CLI, argparse's SystemExit included; a traceback fails."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


# --------------------------------------------------------------------------- option values


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bootstrap", "{q}", "{r}", "--seed", "-1"], "argument --seed: -1 is not an integer >= 0"),
        (["power", "{q}", "{r}", "--repetitions", "0"], "argument --repetitions: 0 is not a pos"),
        (["power", "{q}", "{r}", "--pool-depth", "1,0"], "argument --pool-depth: 0 is not a positive"),
        (["power", "{q}", "{r}", "--confidence", "nan"], "argument --confidence: must lie strictly"),
        (["calibrate", "{q}", "{r}", "-o", "x", "--jobs", "0"], "argument --jobs: 0 workers"),
        (["calibrate", "{q}", "{r}", "-o", "x", "--cap", "nan"], "argument --cap: nan is not in"),
        (["calibrate", "{q}", "{r}", "-o", "x", "--k", "1"], "argument --k: 1 is not an integer"),
        (["poolbias", "{q}", "{r}", "--groups", "g", "--pool-depth", "5", "-o", "o", "--mc-draws", "0"],
         "argument --mc-draws: 0 is not an integer >= 2"),  # fmt: skip
        (["evaluate", "{q}", "{r}", "-m", "RBP(p=nan)"], "RBP: parameter p=nan is not a finite"),
        (["evaluate", "{q}", "{r}", "-m", "RBP(p=inf)"], "RBP: parameter p=inf is not a finite"),
        (["evaluate", "{q}", "{r}", "--permutations", "0"], "argument --permutations: 0 is not"),
        (["compare", "{q}", "{r}", "--depth", "0"], "argument --depth: 0 is not a positive"),
        (["plan", "c.tsv", "--budget", "inf"], "argument --budget: inf is not a finite number"),
        (["fit", "{q}", "{r}", "-o", "newdir/"], "argument --output/-o: 'newdir/' names a folder"),
        (["power", "{q}", "{r}", "--plot", "adir"], "argument --plot: 'adir': give a file name"),
    ],
)
def test_option_values_are_refused_when_parsed(collection, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(collection)  # the old code wrote adir.png and newdir here
    # each used to reach numpy, joblib or the measure and end in a traceback (or, for fit -o
    # newdir/ and --plot adir, write a file the user did not name); now argparse stops at once
    argv = [a.format(q=collection / "qrels.txt", r=collection / "runs") for a in argv]
    code, err = _run(argv, capsys)
    assert code == 2 and message in err
    assert not (collection / "newdir").exists()


def test_trec_eval_dotted_measure_gets_a_hint(collection, capsys):
    code, err = _run(["evaluate", collection / "qrels.txt", collection / "runs", "-m", "P.5,10"],
                     capsys)  # fmt: skip
    assert code == 2 and "trec_eval's -m P.5,10 is written -m P_5 -m P_10 here" in err


# --------------------------------------------------------------------------- files


def test_symlink_loop_as_qrels(collection, capsys):
    loop = collection / "loop"
    loop.symlink_to(loop)  # used to raise RuntimeError in Path.resolve (relimpute.toml lookup)
    code, err = _run(["evaluate", loop, collection / "runs"], capsys)
    assert code == 2 and f"{loop}: cannot read file: a loop of symbolic links" in err


def test_unreadable_settings_file(collection, capsys, monkeypatch):
    toml = collection / "relimpute.toml"
    toml.write_text("rel_threshold = 1\n")
    real_open = os.open

    def refuse(path, *args, **kwargs):  # root reads anything: fail as for a user
        if os.fspath(path) == str(toml):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    code, err = _run(["evaluate", collection / "qrels.txt", collection / "runs"], capsys)
    assert code == 2 and f"{toml}: cannot read settings file: Permission denied" in err
    toml.unlink()
    toml.mkdir()  # a folder in its place used to be ignored silently
    code, err = _run(["evaluate", collection / "qrels.txt", collection / "runs"], capsys)
    assert code == 2 and f"{toml}: is a directory, not a regular file" in err


def test_missing_gz_gets_a_hint(collection, capsys):
    (collection / "qrels.txt").rename(collection / "qrels.txt.gz")
    code, err = _run(["evaluate", collection / "qrels.txt", collection / "runs"], capsys)
    assert code == 2 and "No such file or directory (did you mean " in err
    assert str(collection / "qrels.txt.gz") in err


@pytest.mark.parametrize("what", ["empty", "header"])
def test_empty_groups_and_curves_tables(collection, capsys, what):
    table = collection / "t.tsv"
    table.write_text("" if what == "empty" else "\n\n")  # pandas: EmptyDataError
    runs = [collection / "qrels.txt", collection / "runs"]
    for argv, name in (
        (["plan", table, "--budget", "10"], "curves table"),
        (["poolbias", *runs, "--groups", table, "--pool-depth", "1", "-o", collection / "o"],
         "groups table"),  # fmt: skip
        (["power", *runs, "--groups", table], "groups table"),
        (["calibrate", *runs, "--groups", table, "-o", collection / "c"], "groups table"),
    ):
        code, err = _run(argv, capsys)
        assert code == 2 and f"{table}: {name} is empty" in err, err


def _special(kind: str, path: Path):
    if kind == "fifo":
        os.mkfifo(path)
        return None
    if kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        return server
    path.symlink_to("/dev/zero")  # a device: reading it would never end
    return None


@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
def test_no_reader_waits_on_a_fifo_socket_or_device(collection, capsys, kind):
    special = collection / "special"
    held = _special(kind, special)
    q, r = collection / "qrels.txt", collection / "runs"
    cases = [
        ["evaluate", special, r],
        ["evaluate", q, special],
        ["evaluate", q, r, "--estimate", special],
        ["judge", q, r, "--docs", special, "--journal", collection / "j.jsonl", "--answers", "-"],
        ["judge", q, r, "--journal", special, "--answers", "-"],
        ["judge", q, "--journal", special, "--export-qrels", collection / "x"],
        ["poolbias", q, r, "--groups", special, "--pool-depth", "1", "-o", collection / "o"],
        ["power", q, r, "--groups", special],
        ["plan", special, "--budget", "10"],
        ["calibrate", q, r, "--groups", special, "-o", collection / "c"],
        ["fit", q, r, "--model", special, "-o", collection / "e.tsv"],
    ]
    old = signal.signal(signal.SIGALRM, lambda *a: pytest.fail("a reader waited on " + kind))
    signal.alarm(120)
    try:
        for argv in cases:
            code, err = _run(argv, capsys)
            assert code == 2 and f"{special}: is a " in err and "not a regular file" in err, (
                argv,
                err,
            )
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        if held is not None:
            held.close()


def test_read_input_checks_the_opened_descriptor(tmp_path, monkeypatch):
    # a path swapped for a FIFO between the check and the open must not block
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: real_stat(tmp_path if p == str(fifo)
                                                                   else p))  # fmt: skip
    monkeypatch.setattr(_files, "_kind", lambda mode, real=_files._kind: real(mode)
                        if mode != real_stat(tmp_path).st_mode else None)  # fmt: skip
    with pytest.raises(InputError, match="is a named pipe"):
        _files.read_input(fifo)


def test_prob_qrels_under_a_header_name_the_right_line(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("query_id\tdoc_id\tprobability\n1\ta\t0.5\n1\tb\t0.2\textra\n")
    with pytest.raises(InputError, match="expected 3 columns") as info:
        read_prob_qrels(path)
    assert info.value.line == 3  # was 2: the header was not counted
    path.write_bytes(b"query_id doc_id probability\n1 a 0.5\n1 b\xff 0.2\n")
    with pytest.raises(InputError, match="not UTF-8") as info:
        read_prob_qrels(path)
    assert info.value.line == 3
    path.write_text("query_id\tdoc_id\tprobability\n1\ta\t0.5\n1\tb\t2\n")
    with pytest.raises(InputError, match="outside") as info:
        read_prob_qrels(path)
    assert info.value.line == 3  # (the value checks were already right)


# --------------------------------------------------------------------------- relevance threshold


@pytest.mark.parametrize("command", ["evaluate", "compare", "fit"])
def test_threshold_above_the_top_grade_is_an_error(collection, capsys, command):
    """Every score would be 0 (trec_eval -l 2 prints zeros): exit 2, naming file and top grade."""
    output = ["-o", collection / "out.tsv"] if command == "fit" else []
    argv = [command, collection / "qrels.txt", collection / "runs", "--rel-threshold", "2", *output]
    code, err = _run(argv, capsys)
    assert code == 2 and "Traceback" not in err
    assert (f"relimpute {command}: error: {collection / 'qrels.txt'}: no judged document is "
            "relevant at --rel-threshold 2: the highest grade in the qrels is 1 (every measure "
            "would be 0)") in err  # fmt: skip
    (collection / "relimpute.toml").write_text("rel_threshold = 3\n")  # the collection's own
    code, err = _run(["evaluate", collection / "qrels.txt", collection / "runs"], capsys)
    assert code == 2 and "relevant at rel_threshold 3: the highest grade in the qrels is 1" in err


def test_threshold_checks_of_the_grades(collection, capsys):
    code, err = _run(["evaluate", collection / "qrels.txt", collection / "runs",
                      "--rel-threshold", "0"], capsys)  # fmt: skip
    assert "warning: every judged document is relevant at rel_threshold 0" in err
    code, err = _run(["evaluate", collection / "qrels.txt", collection / "runs"], capsys)
    assert "warning" not in err and "note" not in err


def test_graded_qrels_at_the_default_threshold_get_a_note(write_collection, capsys):
    folder = write_collection(QRELS.replace("d1 1", "d1 3"), RUNS)
    code, err = _run(["evaluate", folder / "qrels.txt", folder / "runs"], capsys)
    assert code == 0 and "rel_threshold is the default 1; TREC DL counts 2 and above" in err
    code, err = _run(["evaluate", folder / "qrels.txt", folder / "runs", "--rel-threshold", "1"],
                     capsys)  # fmt: skip
    assert "TREC DL" not in err  # given explicitly: the user chose it


# --------------------------------------------------------------------------- journals


def _journal(folder: Path, header: dict, *records: dict) -> Path:
    path = folder / "j.jsonl"
    lines = [{"action": "start", **header}, *records]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def _v1_header(folder: Path) -> dict:
    """The start record the previous release (journal version 1) wrote."""
    return {
        "version": 1,
        "qrels": str((folder / "qrels.txt").resolve()),
        "runs": [str((folder / "runs").resolve())],
        "systems": ["a", "b"],
        "strategy": "mtc",
        "depth": None,
        "rel_threshold": 1,
        "prior": 0.5,
        "model": None,
    }


def test_previous_release_journal_resumes(collection, capsys, monkeypatch):
    import io

    path = _journal(collection, _v1_header(collection),
                    {"action": "judge", "query_id": "1", "doc_id": "d5", "relevance": 1})  # fmt: skip
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    code = main(["judge", str(collection / "qrels.txt"), str(collection / "runs"),
                 "--journal", str(path), "--strategy", "mtc", "--answers", "-"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err  # was: "journal was started with qrels_sha256=None"
    assert "resumed with 1 action(s)" in captured.out


@pytest.mark.parametrize(
    "header, records, message",
    [
        ({"version": 99}, [], "journal version 99 was written by a newer relimpute"),
        ({"version": "2"}, [], "journal version '2' is not a positive integer"),
        ({"scale": [0, 99]}, [], "scale [0, 99] is not [lowest, highest] grade within [-2, 10]"),
        ({}, [{"action": "judge", "query_id": "1", "doc_id": "x y", "relevance": 1}],
         "doc_id 'x y' is empty or holds a blank"),  # fmt: skip
        ({}, [{"action": "judge", "query_id": "1", "doc_id": "d9", "relevance": 1},
              {"action": "judge", "query_id": "1", "doc_id": "d9", "relevance": 0}],
         "document 'd9' of topic '1' is judged 0 here and 1 on line 2; undo one of them"),
    ],
)
def test_hand_edited_journals_are_refused_on_export(collection, capsys, header, records, message):
    path = _journal(collection, {**_v1_header(collection), "version": 2, "scale": [0, 1],
                                 **header}, *records)  # fmt: skip
    out = collection / "out.txt"
    code, err = _run(["judge", collection / "qrels.txt", "--journal", path, "--export-qrels", out],
                     capsys)  # fmt: skip
    assert code == 2 and message in err
    assert not out.exists()


def test_agreeing_duplicate_judgments_export_once(collection, capsys):
    same = {"action": "judge", "query_id": "1", "doc_id": "d5", "relevance": 1}
    path = _journal(collection, {**_v1_header(collection), "version": 2, "scale": [0, 1]},
                    same, same)  # fmt: skip
    out = collection / "out.txt"
    code, err = _run(["judge", collection / "qrels.txt", "--journal", path, "--export-qrels", out],
                     capsys)  # fmt: skip
    assert code == 0, err
    exported = read_qrels(out)  # evaluate reads what judge exports
    assert exported[exported["doc_id"] == "d5"]["relevance"].tolist() == [1]


# --------------------------------------------------------------------------- irds: qrels


def test_irds_download_failure_is_a_message(collection, capsys, monkeypatch):
    ir_datasets = pytest.importorskip("ir_datasets")

    class Offline:
        def has_qrels(self):
            return True

        def qrels_iter(self):
            raise ConnectionError("Max retries exceeded with url: https://example.org/qrels")

    monkeypatch.setattr(ir_datasets, "load", lambda dataset_id: Offline())
    for argv in (["evaluate", "irds:msmarco-passage/trec-dl-2019", collection / "runs"],
                 ["judge", "irds:msmarco-passage/trec-dl-2019", collection / "runs",
                  "--journal", collection / "j.jsonl"]):  # fmt: skip
        code, err = _run(argv, capsys)
        assert code == 2, err
        assert "irds:msmarco-passage/trec-dl-2019: ir_datasets could not provide the qrels " \
               "(ConnectionError: Max retries exceeded" in err  # fmt: skip
    assert not (collection / "j.jsonl").exists()


# --------------------------------------------------------------------------- standard output


def _cli(argv, **kwargs):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    code = "import sys\nfrom relimpute.cli import main\nsys.exit(main())"
    return subprocess.Popen([sys.executable, "-c", code, *map(str, argv)], env=env,
                            stderr=subprocess.PIPE, **kwargs)  # fmt: skip


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_on_a_full_disk(collection):
    with open("/dev/full", "w") as full:
        done = _cli(["evaluate", collection / "qrels.txt", collection / "runs"], stdout=full)
        err = done.communicate(timeout=120)[1].decode()
    assert done.returncode == 2, err
    assert err == "relimpute evaluate: error: cannot write the output: No space left on device\n"


def test_stdout_to_a_closed_pipe_stops_quietly(collection):
    done = _cli(["evaluate", collection / "qrels.txt", collection / "runs", "-q"],
                stdout=subprocess.PIPE)  # fmt: skip
    done.stdout.close()  # as `| head -0` does
    err = done.communicate(timeout=120)[1].decode()
    assert done.returncode == 128 + signal.SIGPIPE and "Traceback" not in err, err


# --------------------------------------------------------------------------- polish


@pytest.mark.parametrize("command", ["demo", "evaluate", "compare", "calibrate", "judge"])
def test_help_shows_no_sphinx_markup(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = capsys.readouterr().out
    assert not any(mark in shown for mark in (":mod:", ":func:", ":class:", ":meth:", "``"))


def test_python_dash_m_relimpute(collection):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "relimpute", "evaluate", collection / "qrels.txt",
                           collection / "runs", "-m", "AP"], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split() == ["system", "num_q", "AP"]


def test_unknown_run_names_get_the_closest(collection, capsys):
    (collection / "runs" / "bm25base_p").write_text(RUNS["a"].replace(" a\n", " x\n"))
    argv = ["compare", collection / "qrels.txt", collection / "runs", "--prior", "0.5"]
    code, err = _run([*argv, "--systems", "bm25base", "a"], capsys)
    assert code == 2 and "--systems: unknown run(s) bm25base (bm25base: did you mean " \
                         "bm25base_p?)" in err  # fmt: skip
    (collection / "runs" / "bm25base_ax_p").write_text(RUNS["b"])  # the closest comes first
    code, err = _run([*argv, "--systems", "bm25base", "a"], capsys)
    assert "(bm25base: did you mean bm25base_p or bm25base_ax_p?)" in err
    code, err = _run(["evaluate", *argv[1:3], "--baseline", "bm25base"], capsys)
    assert code == 2 and "--baseline: unknown run(s) bm25base (bm25base: did you mean" in err


def test_run_folder_with_a_readme(collection, capsys):
    (collection / "runs" / "README.md").write_text("# Runs of the track\n\nOne file per run.\n")
    (collection / "runs" / "stats.tsv").write_text("run\tdocs\na\t5\n")
    code, err = _run(["evaluate", collection / "qrels.txt", collection / "runs", "-m", "AP",
                      "-f", "tsv"], capsys)  # fmt: skip
    assert code == 0, err  # the README used to stop the whole folder ("expected 6 columns")
    assert "note: 2 file(s) in the run directories are not runs and were skipped" in err
    assert "README.md" in err
    named = collection / "runs" / "README.md"  # named on the command line: read as a run
    code, err = _run(["evaluate", collection / "qrels.txt", named], capsys)
    assert code == 2 and "expected 6 columns" in err


def test_default_seed_makes_compare_reproducible(write_collection, capsys):
    docs = [f"u{i}" for i in range(20)]  # unjudged: their relevance is drawn
    runs = {name: "".join(f"{q} Q0 {d} {r + 1} {30 - r} {name}\n" for q in "12"
                          for r, d in enumerate(["d1", "d3", *order]))
            for name, order in {"a": docs, "b": docs[::-1]}.items()}  # fmt: skip
    folder = write_collection(QRELS, runs)
    argv = ["compare", folder / "qrels.txt", folder / "runs", "--model", "uniform",
            "-m", "nDCG@10", "--mc-draws", "50", "-f", "tsv"]  # fmt: skip
    outputs = []
    for _ in range(2):  # compare had no default seed: two identical calls, two answers
        assert main([str(a) for a in argv]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert main([str(a) for a in argv] + ["--seed", "3"]) == 0
    assert capsys.readouterr().out != outputs[0]  # the seed is used: another gives other draws


def test_bootstrap_compare_p_values(collection, capsys):
    import io as _io

    import pandas as pd
    from scipy.stats import norm

    code = main(["bootstrap", str(collection / "qrels.txt"), str(collection / "runs"),
                 "--pair", "a", "b", "-B", "200", "-f", "tsv"])  # fmt: skip
    assert code == 0
    frame = pd.read_csv(_io.StringIO(capsys.readouterr().out), sep="\t")
    spread = frame[frame["standard_error"] > 0]
    assert len(spread) >= 3 and spread["p_value"].notna().all()  # was NaN but for meta rows
    oracle = 2 * norm.sf(spread["difference"].abs() / spread["standard_error"])
    assert spread["p_value"].to_numpy() == pytest.approx(oracle, rel=1e-3, abs=1e-5)


# --------------------------------------------------------------------------- uncalibrated models


def _study(
    root: Path, collection: str, rows: dict[str, tuple[float, float]], study: str = "calibration"
) -> None:
    folder = root / "examples" / study / collection
    folder.mkdir(parents=True)
    lines = ["strategy,trials,w,w_low,w_high"]
    lines += [f"{s},200,{w},{low},{w + 1}" for s, (w, low) in rows.items()]
    (folder / "summary.csv").write_text("\n".join(lines) + "\n")


def test_calibration_warning_reads_the_study_summaries(tmp_path):
    from relimpute.cli._relevance import calibration_warning

    _study(tmp_path, "dl19", {"rtc": (-5.5, -6.0), "mtc": (-0.2, -0.4), "fusion-mc": (0.3, 0.1)})
    _study(tmp_path, "trec8", {"rtc": (-1.0, -2.0), "mtc": (0.1, -0.7), "fusion-mc": (0.2, 0.0)})
    assert calibration_warning("rtc", tmp_path) == (
        "warning: model 'rtc' failed the shipped calibration study (W -5.50 on dl19, -1.00 on "
        "trec8; calibrated is W >= -0.5): its confidence is over-stated; the default model passes"
    )
    assert "W +0.10 on trec8;" in calibration_warning("uniform", tmp_path)  # its lower bound
    assert calibration_warning("fusion", tmp_path) is None
    assert calibration_warning("bayes", tmp_path) is None  # no study ran it: nothing to say


def test_calibration_warning_reads_the_held_out_bayes_study(tmp_path):
    """The hierarchy as shipped (NUTS draws into Monte Carlo) is bayes-mc, studied held out in
    examples/bayes_calibration/loco; the default's verdict still comes from examples/calibration."""
    from relimpute.cli._relevance import calibration_warning

    _study(tmp_path, "dl19", {"fusion-mc": (0.3, 0.1), "bayes": (-10.0, -12.0)})
    loco = "bayes_calibration/loco"
    _study(tmp_path, "dl19", {"bayes-mc": (0.4, 0.1), "fusion-mc": (0.5, 0.3)}, loco)
    _study(tmp_path, "dl21", {"bayes-mc": (-0.9, -1.6), "fusion-mc": (0.3, 0.1)}, loco)
    assert calibration_warning("bayes", tmp_path) == (
        "warning: model 'bayes' failed the shipped calibration study (W -0.90 on dl21; "
        "calibrated is W >= -0.5): its confidence is over-stated; the default model passes"
    )


def test_calibration_warning_reads_the_rtc_reproduction(tmp_path):
    """RTC as published is studied in examples/rtc_paper (strategy ``rtc[paper]``); its MTC
    row there repeats the TREC-8 reusability study and is not read twice."""
    from relimpute.cli._relevance import calibration_warning

    _study(tmp_path, "trec8", {"mtc": (-8.4, -10.0), "fusion-mc": (0.2, 0.0)})
    results = tmp_path / "examples" / "rtc_paper" / "results"
    results.mkdir(parents=True)
    (results / "summary.csv").write_text(
        "strategy,trials,w,w_low,w_high\nmtc,200,-8.4,-10.0,-7\nrtc[paper],200,-20.7,-22.7,-18.8\n"
    )
    assert "(W -20.70 on rtc_paper;" in calibration_warning("rtc", tmp_path)
    assert "(W -8.40 on trec8;" in calibration_warning("uniform", tmp_path)


@pytest.mark.parametrize("extra, model", [(["--model", "rtc"], "rtc"),
                                          (["--prior", "0.5"], "uniform")])  # fmt: skip
def test_compare_with_an_uncalibrated_model_says_so(collection, capsys, extra, model):
    import pandas as pd

    root = Path(__file__).resolve().parents[1] / "examples"
    strategy, studies = {"rtc": ("rtc[paper]", "rtc_paper/results/summary.csv"),
                         "uniform": ("mtc", "calibration/*/summary.csv")}[model]  # fmt: skip
    measured = [pd.read_csv(p).set_index("strategy").loc[strategy, "w"]
                for p in sorted(root.glob(studies))]  # fmt: skip
    if not measured:
        pytest.skip("the calibration studies are not in this checkout")
    code, err = _run(["compare", collection / "qrels.txt", collection / "runs", *extra], capsys)
    assert code == 0
    line = next(x for x in err.splitlines() if "failed the shipped calibration study" in x)
    assert f"model {model!r}" in line and all(f"{w:+.2f}" in line for w in measured)
    code, err = _run(["compare", collection / "qrels.txt", collection / "runs", "--prior", "0"],
                     capsys)  # fmt: skip
    assert "calibration study" not in err


# --------------------------------------------------------------------------- found by the fuzz


@pytest.mark.parametrize(
    "command, text, message",
    [
        ("power", "run\tpooled\na\tyes\nb\tno\n", "1 run(s) marked pooled: the pool needs at "
                                                  "least two"),  # fmt: skip
        ("power", "run\tpooled\na\tyes\na\tyes\nb\tyes\n", "line 3: run 'a' listed twice"),
        ("power", "run\tpooled\na\tyes\tx\nb\tyes\n",
         "line 2: groups table: expected 2 tab-separated fields (as the header line), found 3"),
        ("poolbias", "run\tgroup\tpooled\na\tg1\tyes\tno\nb\tg2\tyes\n",  # pandas shifted it
         "line 2: groups table: expected 3 tab-separated fields"),  # fmt: skip
        ("plan", "\tstrategy\tmeasure\tdepth\tn_topics\teffort\teffort_per_topic\tpower\tbias\n"
                 "depth\tMAP\t1\t2\t4\t2\t0.5\t0.0\n", "line 2: curves table: expected 9 tab-separated"),
        ("plan", "strategy\tmeasure\tdepth\tn_topics\teffort\teffort_per_topic\tpower\tbias\n"
                 "\ndepth\tMAP\t1\t2\tmany\t2\t0.5\t0.0\n", "line 3: effort 'many' is not a "
                                                           "finite number"),  # fmt: skip
    ],
)
def test_tables_with_wrong_rows(collection, capsys, command, text, message):
    table = collection / "t.tsv"
    table.write_text(text)
    runs = [collection / "qrels.txt", collection / "runs"]
    argv = {
        "power": ["power", *runs, "--groups", table, "--pool-depth", "1", "--n-topics", "2"],
        "poolbias": ["poolbias", *runs, "--groups", table, "--pool-depth", "1", "-o", collection / "o"],
        "plan": ["plan", table, "--budget", "10"],
    }[command]
    code, err = _run(argv, capsys)
    where = f"{table}, " if message.startswith("line") else f"{table}: "
    assert code == 2 and where + message in err, err
