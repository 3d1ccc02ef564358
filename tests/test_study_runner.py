"""One study runner: every study is a :class:`relimpute.studies.Study` run by
:func:`relimpute.studies.run`, which resumes, parallelises, refuses a changed study and
writes one output shape (a folder: the tables, manifest.json and the finished parts)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from relimpute.cli import main
from relimpute.errors import InputError
from relimpute.studies import Study, StudyFolder, run
from test_atomic_writers import synthetic_files

SIZE = dict(n_topics=6, n_systems=6, n_docs=100, depth=15, n_families=3, rng=3)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return synthetic_files(tmp_path_factory.mktemp("runner"), **SIZE)


@dataclass(frozen=True)
class Squares:
    """A toy study: the squares of 0..n-1 plus a number drawn from the seed; its table, their sum."""

    n: int
    seed: int | None = None
    fail_at: int | None = None  # a unit that raises (a study stopped half-way)

    command = "squares"
    unit = "square"
    report = "sum.md"

    def with_seed(self, seed):
        return replace(self, seed=seed)

    def identity(self):
        return {"command": self.command, "seed": self.seed, "arguments": {"n": self.n}}

    def units(self):
        return list(range(self.n))

    def run_unit(self, unit):
        if unit == self.fail_at:
            raise KeyboardInterrupt
        return unit * unit + self.seed % 7

    def encode(self, result):
        return result

    def decode(self, data):
        return data

    def combine(self, results):
        return sum(results)

    def write(self, result, folder):
        path = Path(folder) / "sum.md"
        path.write_text(f"{result}\n")
        return [path]


def test_a_study_runs_the_same_with_or_without_a_folder_and_resumes_from_its_parts(tmp_path):
    assert isinstance(Squares(3), Study)
    assert run(Squares(4, seed=7)) == 0 + 1 + 4 + 9
    assert run(Squares(4, seed=7), jobs=2) == 14
    out = tmp_path / "study"
    with pytest.raises(KeyboardInterrupt):
        run(Squares(4, seed=7, fail_at=2), out)
    assert (out / "sum.md").read_text().startswith("> **UNFINISHED: 2 of 4 squares finished.**")
    assert sorted(p.name for p in (out / ".resume").iterdir()) == ["square-0.json", "square-1.json"]
    with pytest.raises(InputError, match="add --resume to go on with it"):
        run(Squares(4, seed=7), out)  # finished work is never dropped unasked
    with pytest.raises(InputError, match=r"n: 4 there, 5 now"):
        run(Squares(5, seed=7), out, resume=True)  # another study: refused, naming what differs
    assert run(Squares(4, seed=7, fail_at=0), out, resume=True) == 14  # units 0 and 1 not run again
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["state"] == "complete" and manifest["files"] == ["sum.md"]
    assert (out / "sum.md").read_text() == "14\n"


def test_an_unseeded_study_draws_its_seed_once_and_a_resume_reuses_it(tmp_path):
    out = tmp_path / "study"
    with pytest.raises(KeyboardInterrupt):
        run(Squares(3, fail_at=2), out)
    seed = json.loads((out / "manifest.json").read_text())["study"]["seed"]
    assert isinstance(seed, int)
    assert run(Squares(3), out, resume=True) == 0 + 1 + 4 + 3 * (seed % 7)


def test_the_four_studies_are_studies_with_no_private_type_in_their_signatures():
    import inspect

    from relimpute.bias.study import LeaveOneGroupOut, run_pool_bias_study
    from relimpute.calibration import CalibrationTrials, run_study
    from relimpute.precision.power import PowerGrid, power_curves
    from relimpute.precision.split import CorpusSplits, split_study

    for kind in (CalibrationTrials, LeaveOneGroupOut, PowerGrid, CorpusSplits):
        assert all(hasattr(kind, name) for name in ("command", "unit", "report", "identity", "units",
                                                     "run_unit", "encode", "decode", "combine", "write"))
    for function in (run_study, run_pool_bias_study, power_curves, split_study):
        assert {"folder", "scheduler"} <= set(inspect.signature(function).parameters)
        assert "a path" in function.__doc__  # not an object to build by hand
    for function in (run_study, run_pool_bias_study, power_curves, split_study, run):
        text = inspect.getsource(function).split('"""')[0] + (function.__doc__ or "")
        assert "_study_folder" not in text, function.__name__  # a private type: built by hand


def test_run_study_takes_a_folder_path_and_resumes_there(data, tmp_path):
    from relimpute import Campaign
    from relimpute.calibration import read_study, run_study

    _, qrels, runs = data
    campaign = Campaign.from_files(qrels, runs)
    options = dict(n_trials=3, k=3, c=2, depth=10, seed=5, progress=False)
    first = run_study(campaign, "mtc", folder=tmp_path / "cal", **options)
    assert json.loads((tmp_path / "cal" / "manifest.json").read_text())["state"] == "complete"
    again = run_study(campaign, "mtc", folder=tmp_path / "cal", **options)  # from its 3 parts
    assert again.pairs.equals(first.pairs)
    assert (tmp_path / "cal" / "report.md").is_file()
    read = read_study(tmp_path / "cal")  # its trials had no warning: an empty column read back
    assert read.pairs.shape == first.pairs.shape and (read.trials["warning_messages"] == "").all()


def _earlier_release_folder(folder: Path, state: str = "running") -> None:
    """A study folder as relimpute 0.2 left it: manifest format 1 and a part of its own form."""
    (folder / ".resume").mkdir(parents=True)
    study = {"command": "power", "version": "0.2.0", "seed": 0, "arguments": {}, "data": "x"}
    (folder / "manifest.json").write_text(json.dumps({"format": 1, "state": state, "study": study,
                                                      "files": [], "stale": []}))
    (folder / ".resume" / "design-0.json").write_text('{"unit": ["depth", "MAP", 1], "result": []}')


def test_a_folder_an_earlier_release_wrote_is_refused_saying_what_to_do_or_overwritten(data, tmp_path,
                                                                                        capsys):
    _, qrels, runs = data
    out = tmp_path / "curves"
    _earlier_release_folder(out)
    argv = ["power", qrels, runs, "--pool-depth", "1,5", "--n-topics", "3", "--repetitions", "2", "-o", str(out)]
    for more in ([], ["--resume"]):
        assert main([*argv, *more]) == 2
        err = capsys.readouterr().err
        assert f"{out / 'manifest.json'}: this folder holds a study written by relimpute 0.2" in err
        assert "go on with it using that release and --resume" in err and "--overwrite" in err
        assert "Traceback" not in err and (out / ".resume" / "design-0.json").exists()
    assert main([*argv, "--overwrite"]) == 0
    assert "the 1 finished designs of the study there were dropped" in capsys.readouterr().err
    assert json.loads((out / "manifest.json").read_text())["format"] == 2
    assert (out / "curves.tsv").is_file()


def test_the_study_folder_refuses_an_earlier_release_unless_overwrite(tmp_path):
    _earlier_release_folder(tmp_path, state="complete")
    with pytest.raises(InputError, match="this folder holds a study written by relimpute 0.2"):
        StudyFolder(tmp_path, {"command": "power", "seed": 0, "arguments": {}}, resume=True)
    fresh = StudyFolder(tmp_path, {"command": "power", "seed": 0, "arguments": {}}, overwrite=True)
    assert fresh.kept() == 0
    fresh.close()


@pytest.mark.parametrize("command", ["power", "bootstrap"])
def test_an_output_file_of_the_earlier_form_is_refused_naming_a_folder(data, tmp_path, capsys, command):
    _, qrels, runs = data
    argv = [command, qrels, runs, *(["--split"] if command == "bootstrap" else []), "-o"]
    table = "curves.tsv" if command == "power" else "split.tsv"
    assert main([*argv, str(tmp_path / table)]) == 2
    err = capsys.readouterr().err
    assert f"--output: {tmp_path / table} names a file: --output is the study's folder since 0.3.0 " \
           f"({table} is written in it" in err  # fmt: skip
    assert f"give a folder, e.g. -o {table[:-4]}" in err and "Traceback" not in err
    (tmp_path / f".{table}.study").mkdir()  # a study 0.2 kept beside its file: said how to finish it
    assert main([*argv, str(tmp_path / table), "--resume"]) == 2
    assert "was written by relimpute 0.2: go on with it using that release" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".{table}.study"]  # nothing written
