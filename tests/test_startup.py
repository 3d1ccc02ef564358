"""Start-up: ``relimpute --help`` and ``import relimpute`` load no numerical stack."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from relimpute.cli import (
    _literals,
    _subcommand_index,
    _subcommand_modules,
    build_parser,
)
from relimpute.cli._process import BLAS_THREADS

HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "numba", "pymc")


def _modules_after(code: str, *flags: str) -> set[str]:
    probe = code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, *flags, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


@pytest.mark.parametrize(
    "code",
    [
        "import relimpute",
        "from relimpute.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
        "from relimpute.cli import main\ntry:\n    main(['--version'])\n"
        "except SystemExit:\n    pass",
    ],
)
def test_no_heavy_import_at_start_up(code):
    loaded = _modules_after(code)
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}


def test_a_subcommand_imports_only_its_own_module():
    loaded = _modules_after(
        "from relimpute.cli import main\ntry:\n    main(['judge', '--help'])\nexcept SystemExit:\n"
        "    pass"
    )
    assert "relimpute.cli.judge" in loaded
    assert not {"relimpute.cli.calibrate", "relimpute.cli.demo", "relimpute.cli.compare"} & loaded
    assert "inspect" not in loaded  # pkgutil.iter_modules would load it: ~10 ms of CPU


@pytest.mark.parametrize("command", sorted(_subcommand_index()))
def test_every_subcommand_help_loads_no_numerical_stack(command):
    """``relimpute COMMAND --help`` within 0.1 s of CPU (issue 26) is kept by loading none of
    numpy, pandas, pyarrow, scipy, numba or PyMC (each costs more than the whole budget);
    not timed here, the shared machine's timings are noise."""
    loaded = _modules_after(
        f"from relimpute.cli import main\ntry:\n    main([{command!r}, '--help'])\n"
        "except SystemExit:\n    pass"
    )
    assert _subcommand_index()[command][0] in loaded  # its own module, whose help it is
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    assert "locale" not in loaded  # argparse's gettext lookups are skipped (cli._process.untranslated)


#: standard modules `COMMAND --help` used to load for one call each (terminal width, the
#: subcommands' literals, a type hint, a signal number): under ``python -S`` (no site and
#: none of its .pth files, which load some of them anyway) none may come back
HELP_AVOIDS = ("ast", "shutil", "bz2", "lzma", "typing", "pathlib", "importlib.util", "signal")


@pytest.mark.parametrize("command", ["", *sorted(_subcommand_index())])
def test_help_loads_only_what_it_needs_of_the_standard_library(command):
    words = [command, "--help"] if command else ["--help"]
    loaded = _modules_after(
        f"from relimpute.cli import main\ntry:\n    main({words!r})\nexcept SystemExit:\n    pass",
        "-S",
    )
    assert "argparse" in loaded and not set(HELP_AVOIDS) & loaded


def test_help_is_as_wide_as_argparse_makes_it(monkeypatch):
    """The formatter's width without shutil equals shutil's, with $COLUMNS and without."""
    import shutil

    from relimpute.cli import _terminal_width

    for columns in ("37", "200", "0", "x"):
        monkeypatch.setenv("COLUMNS", columns)
        assert _terminal_width() == shutil.get_terminal_size().columns
        assert build_parser(["compare"]).format_help().startswith("usage: relimpute")
    monkeypatch.delenv("COLUMNS")
    assert _terminal_width() == shutil.get_terminal_size().columns


def test_argparse_messages_are_restored_after_main():
    import argparse

    from relimpute.cli import main

    before = argparse._
    with pytest.raises(SystemExit):
        main(["compare", "--no-such-option"])
    assert argparse._ is before
    assert main([]) == 2 and argparse._ is before


def test_lazy_top_level_help_equals_the_full_one():
    assert build_parser([]).format_help() == build_parser().format_help()


def test_command_and_help_are_read_from_the_source():
    for module in _subcommand_modules():
        values = _literals(module.__name__)
        assert (values["COMMAND"], values["HELP"]) == (module.COMMAND, module.HELP)


def test_lazy_package_attributes():
    import relimpute

    assert relimpute.read_qrels is relimpute.io.read_qrels
    assert "Campaign" in dir(relimpute)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        relimpute.nope  # noqa: B018


def test_evaluate_loads_no_statistics_or_relevance_models(tmp_path):
    """Plain ``relimpute evaluate`` (the trec_eval job) pays for neither scipy nor the
    relevance models: importing them cost 0.8 s of its 0.9 s on DL 2019."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "runs" / "r.txt").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    args = ["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / "runs"), "-f", "tsv"]
    loaded = _modules_after(f"from relimpute.cli import main\nassert main({args!r}) == 0")
    assert "relimpute.cli.evaluate" in loaded
    assert not {m for m in loaded if m.split(".")[0] in ("scipy", "sklearn", "pymc", "numba")}
    assert not {m for m in loaded if m.startswith("relimpute.relevance")}


HELP_HEAVY = ("pandas", "pyarrow", "scipy", "numba", "pymc", "matplotlib", "sklearn")


@pytest.mark.parametrize("command", sorted(_subcommand_index()))
def test_subcommand_help_loads_no_heavy_module(command):
    """``relimpute COMMAND --help`` (issue 26: <= 0.1 s CPU, measured in
    benchmarks/bench_startup.py) imports none of the numerical stack but numpy."""
    loaded = _modules_after(
        f"from relimpute.cli import main\ntry:\n    main([{command!r}, '--help'])\n"
        "except SystemExit:\n    pass"
    )
    assert f"relimpute.cli.{_subcommand_index()[command][0].rsplit('.', 1)[1]}" in loaded
    assert not {m for m in loaded if m.split(".")[0] in HELP_HEAVY}
    assert not {m for m in loaded if m.startswith(("relimpute.relevance", "relimpute.measures"))}


def test_constants_written_out_for_help_match_their_sources():
    from relimpute.bias import STUDY_MEASURES
    from relimpute.cli import _common, evaluate, poolbias, power
    from relimpute.precision.power import MEASURES
    from relimpute.measures import describe_measures
    from relimpute.measures.significance import CORRECTIONS, TESTS
    from relimpute.relevance.settings import DEFAULT_MODEL

    assert _common.DEFAULT_MODEL is DEFAULT_MODEL  # one definition (relimpute._defaults)
    assert (poolbias.STUDY_MEASURES, power.MEASURES) == (STUDY_MEASURES, MEASURES)
    assert (evaluate.TESTS, evaluate.CORRECTIONS) == (TESTS, CORRECTIONS)
    listing = "".join(f"  {syntax:<18} {text}\n" for syntax, text in describe_measures())
    assert evaluate._MEASURE_LIST == listing


def test_the_default_compare_loads_no_other_model_nor_asyncio(tmp_path):
    """``compare`` with the default model imports none of the other relevance models (the
    registry finds them when one is named) nor asyncio (tqdm.auto's; issue 26 item 5)."""
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 0\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "r1").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 e 3 1 r\n2 Q0 d 1 2 r\n2 Q0 c 2 1 r\n")
    (runs / "r2").write_text("1 Q0 b 1 3 s\n1 Q0 e 2 2 s\n1 Q0 a 3 1 s\n2 Q0 c 1 2 s\n2 Q0 f 2 1 s\n")
    argv = ["compare", str(tmp_path / "qrels.txt"), str(runs), "--mc-draws", "50", "--quiet"]
    loaded = _modules_after(f"from relimpute.cli import main\nassert main({argv!r}) == 0")
    assert "relimpute.relevance.fusion" in loaded  # the default model did run
    others = {"rtc", "bayes", "uniform", "nonrelevant", "fusion_llm"}
    assert not {m for m in loaded if m.split(".")[:3][-1] in others and "relevance" in m}
    assert "asyncio" not in loaded
    from relimpute.relevance import RTC, Bayes, available_models  # found when named

    assert RTC.name == "rtc" and Bayes.name == "bayes" and "uniform" in available_models()


def test_a_command_runs_with_fewer_garbage_collections_and_restores_them(tmp_path, monkeypatch):
    """The cyclic collector's young threshold is raised while a command runs (its imports set
    off many collections: issue 26 item 5) and put back after it, error or not."""
    import gc

    import relimpute.cli.compare as compare
    from relimpute.cli import main

    seen = []
    monkeypatch.setattr(compare, "run", lambda args: seen.append(gc.get_threshold()) or 0)
    before = gc.get_threshold()
    assert main(["compare", str(tmp_path / "q"), str(tmp_path / "r")]) == 0
    assert seen and seen[0][0] >= 10_000 and seen[0][1:] == before[1:]
    assert gc.get_threshold() == before

    def fails(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(compare, "run", fails)
    assert main(["compare", str(tmp_path / "q"), str(tmp_path / "r")]) == 130
    assert gc.get_threshold() == before


def test_the_objects_alive_at_exit_are_frozen_before_finalisation():
    """After a command the interpreter exits without its garbage collections walking every
    object: main registers gc.freeze to run at exit, once, and handlers
    registered before it run after it; in a session nothing is frozen before exit."""
    probe = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen at exit', gc.get_freeze_count() > 0))\n"
        "from relimpute.cli import main\n"
        "for _ in range(3):\n"
        "    try:\n        main(['--version'])\n    except SystemExit:\n        pass\n"
        "print('frozen before exit', gc.get_freeze_count() > 0)\n"
        "import relimpute.cli._process as p; print('registered', p.FREEZE_REGISTERED)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-3:] == ["frozen before exit False", "registered True", "frozen at exit True"]


@pytest.mark.parametrize(("preset", "expected"), [(None, 1), ("2", 2)])
def test_a_command_runs_its_blas_on_one_thread_unless_told(tmp_path, preset, expected):
    """The CLI asks OpenBLAS for one thread before numpy loads it (its extra threads spin on
    the models' small matrices), unless the environment names a number, which is kept;
    threadpoolctl reads the count the loaded library actually uses. The environment is as
    it was once main returns."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "runs" / "r.txt").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    args = ["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / "runs"), "-f", "tsv"]
    probe = (
        f"from relimpute.cli import main\nassert main({args!r}) == 0\n"
        "import os, threadpoolctl  # the libraries the command loaded (numpy's)\n"
        "found = [p['num_threads'] for p in threadpoolctl.threadpool_info()"
        " if p['user_api'] == 'blas']\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), sorted(set(found)))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    value, counts = done.stdout.splitlines()[-1].split(" ", 1)
    assert value == str(preset)
    assert counts.strip("[]") and {int(c) for c in counts.strip("[]").split(",")} == {expected}


def test_main_leaves_the_environment_and_the_collector_as_it_found_them(tmp_path):
    """main may run inside a Python session: the BLAS thread variables it sets for a command
    (numpy not yet loaded) and the collector's threshold are restored when it returns, after
    a command that succeeded and after one that failed."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "runs" / "r.txt").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    args = ["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / "runs"), "-f", "tsv"]
    probe = (
        "import gc, os\nfrom relimpute.cli import main\n"
        "before = (dict(os.environ), gc.get_threshold())\n"
        f"assert main({args!r}) == 0\n"
        "assert main(['evaluate', 'no-such-qrels', 'no-such-run']) == 2\n"
        "after = (dict(os.environ), gc.get_threshold())\n"
        "print(before == after, sorted(set(after[0]) ^ set(before[0])))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "True []"
