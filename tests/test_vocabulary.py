"""One vocabulary: relimpute.toml thresholds, --confidence, the vocabulary table, --quiet."""

from __future__ import annotations

import argparse
import io
import re
from pathlib import Path

import pandas as pd
import pytest

import relimpute
from relimpute import Campaign, InputError
from relimpute.cli import build_parser, main
from relimpute.cli._vocabulary import VOCABULARY, spellings
from relimpute.collection_settings import resolve_rel_threshold
from relimpute.progress import progress, quiet

ROOT = Path(__file__).resolve().parents[1]
CHANGELOG = ROOT / "CHANGELOG.md"
QRELS = "1 0 a 2\n1 0 b 1\n1 0 c 0\n"
RUNS = {"r1": "1 Q0 a 1 3 r1\n1 Q0 b 2 2 r1\n", "r2": "1 Q0 b 1 3 r2\n1 Q0 c 2 2 r2\n"}


@pytest.fixture
def files(write_collection):
    return write_collection(QRELS, RUNS)


def _p_at_1(capsys) -> pd.Series:
    return pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t").set_index("system")["P@1"]


def test_rel_threshold_from_relimpute_toml_beside_the_qrels(files, capsys):
    argv = ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-m", "P@1", "-f", "tsv"]
    assert main(argv) == 0
    assert _p_at_1(capsys).tolist() == [1.0, 1.0]  # default 1: b (grade 1) is relevant
    (files / "relimpute.toml").write_text("# TREC DL\nrel_threshold = 2\n")
    assert main(argv) == 0
    err_out = capsys.readouterr()
    assert pd.read_csv(io.StringIO(err_out.out), sep="\t")["P@1"].tolist() == [1.0, 0.0]
    assert "rel_threshold 2 from" in err_out.err and "relimpute.toml" in err_out.err
    assert main([*argv, "--rel-threshold", "1"]) == 0  # the option overrides the file
    assert _p_at_1(capsys).tolist() == [1.0, 1.0]


def test_python_takes_the_collection_threshold_unless_given(files):
    (files / "relimpute.toml").write_text("rel_threshold = 2\n")
    assert Campaign.from_files(files / "qrels.txt", files / "runs").rel_threshold == 2
    explicit = Campaign.from_files(files / "qrels.txt", files / "runs", rel_threshold=1)
    assert explicit.rel_threshold == 1
    assert resolve_rel_threshold(files / "elsewhere" / "q.txt", None) == (1, None)


@pytest.mark.parametrize(
    "text, problem",
    [("rel_treshold = 2\n", "unknown setting 'rel_treshold'"),
     ("rel_threshold = '2'\n", "must be an integer"),
     ("rel_threshold = \n", "not valid TOML")],
)  # fmt: skip
def test_bad_settings_files_name_the_file(files, capsys, text, problem):
    (files / "relimpute.toml").write_text(text)
    with pytest.raises(InputError, match=problem):
        Campaign.from_files(files / "qrels.txt", files / "runs")
    assert main(["evaluate", str(files / "qrels.txt"), str(files / "runs")]) == 2
    err = capsys.readouterr().err
    assert "relimpute.toml" in err and problem in err


def test_confidence_is_the_one_name(files, capsys):
    base = ["compare", str(files / "qrels.txt"), str(files / "runs"), "--prior", "0.5", "-f", "tsv"]
    assert main([*base, "--confidence", "0.8"]) == 0
    assert "ci_low" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # argparse rejects it
        main([*base, "--confidence", "1.5"])
    assert "strictly between 0 and 1" in capsys.readouterr().err


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def test_every_option_of_every_command_is_in_the_vocabulary_table(capsys):
    """No option outside the table, each spelling with its own short form only, and every
    spelling shown in the command's --help (the table is what the docs render)."""
    known = spellings()
    for command, parser in _commands().items():
        with pytest.raises(SystemExit):
            main([command, "--help"])
        help_text = capsys.readouterr().out
        for action in parser._actions:
            for option in action.option_strings:
                assert option in known, f"relimpute {command}: {option} is not in VOCABULARY"
                assert option in help_text
            longs = {known[o] for o in action.option_strings}
            assert len(longs) <= 1, f"relimpute {command}: {action.option_strings} mixes spellings"


def test_one_spelling_per_meaning():
    meanings = [meaning for _, meaning in VOCABULARY]
    assert len(meanings) == len(set(meanings))
    names = [name for spelled, _ in VOCABULARY for name in spelled]
    assert len(names) == len(set(names))
    assert all(spelled[0].startswith("--") for spelled, _ in VOCABULARY)


@pytest.mark.parametrize(
    "command, old",
    [("compare", "--level"), ("bootstrap", "--level"), ("power", "--alpha"),
     ("judge", "--alpha"), ("calibrate", "--alpha"), ("calibrate", "--runs"),
     ("calibrate", "--qrels"), ("calibrate", "--no-progress"), ("calibrate", "--one-per-group"),
     ("calibrate", "--models"), ("demo", "--confident"), ("demo", "--systems"),
     ("demo", "--depth"), ("demo", "--topics"), ("demo", "--models"), ("compare", "--topics"),
     ("power", "--topics"), ("power", "--depths"), ("power", "--measures"),
     ("power", "--pooled-from"), ("poolbias", "--depth"), ("poolbias", "--measures"),
     ("poolbias", "--draws"), ("bootstrap", "--compare")],
)  # fmt: skip
def test_old_spellings_are_gone(command, old):
    """0.2.0 removed them (CHANGELOG.md names the new spelling of each)."""
    parser = _commands()[command]
    assert old not in {o for action in parser._actions for o in action.option_strings}
    lines = CHANGELOG.read_text().splitlines()
    rows = [line for line in lines if line.startswith(f"| `{command}`")]
    assert any(f"| `{old}" in row for row in rows), f"CHANGELOG.md: no row for {command} {old}"


def test_the_version_is_written_in_one_place(capsys):
    """relimpute.__version__ is the one place: pyproject.toml reads it (no version of its own),
    no other module writes one, and ``--version`` prints it."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "relimpute.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", relimpute.__version__)
    writers = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "src").rglob("*.py")
        if re.search(r"^\s*__version__\s*=", path.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert writers == ["src/relimpute/__init__.py"]
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"relimpute {relimpute.__version__}"


def test_quiet_switches_progress_bars_off(monkeypatch):
    import relimpute.progress as module

    seen = []
    fake = lambda it, **kw: seen.append(kw["disable"]) or it  # noqa: E731
    monkeypatch.setattr(module, "_tqdm", lambda: fake)
    monkeypatch.setattr(module, "_terminal", lambda stream: True)  # a bar would show
    assert list(progress(range(3), desc="x")) == [0, 1, 2]
    with quiet():
        assert list(progress(range(3), desc="x")) == [0, 1, 2]
        with quiet(False):  # an inner block cannot switch them back on
            progress(range(3), desc="x")
    progress(range(3), desc="x")
    assert seen == [None, None]  # quiet: no bar made at all (tqdm not even imported)
    monkeypatch.setattr(module, "_terminal", lambda stream: False)  # stderr a file: no bar
    assert list(progress(range(3), desc="x")) == [0, 1, 2] and seen == [None, None]


def test_quiet_option_reaches_the_bars(files, monkeypatch, capsys):
    import relimpute.progress as module

    states = []
    real = module.progress
    monkeypatch.setattr(module, "progress", lambda *a, **k: states.append(module._quiet) or real(*a, **k))
    argv = ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "--estimate"]
    est = files / "est.tsv"
    est.write_text("query_id\tdoc_id\tprobability\n1\ta\t1\n1\tb\t1\n1\tc\t0\n")
    assert main([*argv, str(est), "-m", "nDCG@2", "--mc-draws", "10", "--quiet"]) == 0
    quieted, states[:] = list(states), []
    assert main([*argv, str(est), "-m", "nDCG@2", "--mc-draws", "10"]) == 0
    # every bar (reading the campaign, the Monte Carlo) is off with --quiet, on without
    assert quieted and all(quieted) and states and not any(states)


def test_matrix_numbers_its_columns_in_readable_formats(files, capsys):
    base = ["compare", str(files / "qrels.txt"), str(files / "runs"), "--prior", "0.5", "--matrix"]
    assert main(base) == 0
    out, err = capsys.readouterr()
    heading, *lines = out.splitlines()
    assert heading.startswith("estimand: complete")
    assert lines[0].split() == ["system", "1", "2"]
    assert lines[1].split()[:3] == ["1", "r1", "-"] and lines[2].split()[:2] == ["2", "r2"]
    assert "full names" in err
    assert main([*base, "-f", "tsv"]) == 0  # full names and digits for scripts
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t").set_index("system")
    assert list(frame.columns) == ["r1", "r2"]
    assert frame.loc["r1", "r2"] + frame.loc["r2", "r1"] == pytest.approx(1.0)


def test_compare_says_which_uncertainty_it_carries(files, capsys):
    assert main(["compare", str(files / "qrels.txt"), str(files / "runs"), "--prior", "0.5"]) == 0
    err = capsys.readouterr().err
    assert "relevance of unjudged documents" in err and "evaluate --baseline" in err
