"""Every ``relimpute ...`` line of README.md works as written on the data it is shown with.

The tour is written for TREC DL 2019 (``qrels.txt``, ``runs/`` and ``groups.tsv`` of
``../shared/data/trec-dl-2019-passage``): each test links those three names into a working
folder and runs one README line there, exactly as a reader would type it, after the lines that
write the files it reads (``fit -o estimate.tsv`` before ``--estimate estimate.tsv``). It then
checks that the answer is believable, not only that the exit status is 0: MAP equal to the
official values, the pair the README compares called the right way, ``judge`` asking for
judgments rather than stopping at none.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
INPUTS = {"qrels.txt": "qrels.txt", "runs": "runs", "groups.tsv": "groups.tsv"}
# lines that run for many minutes: a study, run as written only with -m slow
SLOW = {"calibrate"}
TIMEOUT = 600

pytestmark = pytest.mark.shared_data


def readme_commands(text: str) -> list[str]:
    """The ``relimpute ...`` commands of the README's shell blocks, in order, without comments."""
    commands = []
    for block in re.findall(r"```(?:bash|sh|console)\n(.*?)```", text, re.DOTALL):
        for line in block.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words[:1] == ["relimpute"]:
                    commands.append(shlex.join(words))
    return commands


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))


def _outputs(words: list[str]) -> set[str]:
    return {words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", "--output", "--plot")}


def _param(command: str):
    subcommand = shlex.split(command)[1]
    marks = [pytest.mark.slow] if subcommand in SLOW else []
    return pytest.param(command, marks=marks, id=command.removeprefix("relimpute ")[:60])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    if not (DL19 / "qrels.txt").is_file():
        pytest.skip(f"DL 2019 data not found at {DL19} (../shared/data is not beside the repo)")
    folder = tmp_path_factory.mktemp("readme")
    for name, target in INPUTS.items():
        (folder / name).symlink_to(DL19 / target)
    return folder


def _run(command: str, folder: Path) -> subprocess.CompletedProcess:
    words = shlex.split(command)
    stdin = None
    if words[1] == "judge":  # the reader answers at a terminal; here a pipe stands in for them
        stdin = "0\n" * 5 + "q\n"  # five judgments, then quit: the journal keeps them
        words = [*words, "--answers", "-"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-c", "import sys; from relimpute.cli import main; sys.exit(main())"]
        + words[1:],
        check=False,
        cwd=folder,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


_DONE: dict[tuple[str, Path], subprocess.CompletedProcess] = {}


def run_line(command: str, folder: Path) -> subprocess.CompletedProcess:
    """Run ``command`` in ``folder`` after the earlier README lines that write what it reads.

    Each line runs at most once per folder (a later line reuses the file an earlier test wrote).
    """
    if (command, folder) in _DONE:
        return _DONE[command, folder]
    words = shlex.split(command)
    reads = set(words[2:]) - _outputs(words)
    for earlier in COMMANDS[: COMMANDS.index(command)]:
        if any(r == o or r.startswith(o.rstrip("/") + "/")  # a file or one in a folder written
               for r in reads for o in _outputs(shlex.split(earlier))):
            done = run_line(earlier, folder)
            assert done.returncode == 0, f"{earlier} (needed by {command}) failed:\n{done.stderr}"
    _DONE[command, folder] = _run(command, folder)
    return _DONE[command, folder]


def _table(stdout: str) -> list[list[str]]:
    """The rows of an aligned table, without the line over it that names the estimand."""
    lines = stdout.strip().splitlines()
    return [line.split() for line in lines[lines[0].startswith("estimand: ") :]]


def _official_map() -> dict[str, float]:
    rows = _table((DL19 / "run_stats.tsv").read_text())
    header = rows[0]
    return {row[0]: float(row[header.index("MAP")]) for row in rows[1:]}


def _column(rows: list[list[str]], name: str) -> dict[str, float]:
    header = rows[0]
    index = header.index(name)
    offset = len(rows[1]) - len(header)  # a printed index column shifts the values
    return {row[0 + offset]: float(row[index + offset]) for row in rows[1:]}


def _kendall_tau(a: dict[str, float], b: dict[str, float]) -> float:
    names = sorted(a)
    pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1 :]]
    signs = [(a[x] - a[y]) * (b[x] - b[y]) for x, y in pairs]
    return sum(math.copysign(1, s) for s in signs if s != 0) / len(pairs)


def check(command: str, done: subprocess.CompletedProcess, folder: Path) -> None:
    """What a reader should see from each kind of README line on DL 2019."""
    words = shlex.split(command)
    sub, out = words[1], done.stdout
    official = _official_map()
    if sub == "evaluate" and "--baseline" in words:
        rows = _table(out)
        header = rows[0]
        pvalues = [float(r[header.index("pvalue")]) for r in rows[1:]]
        assert len({r[1] for r in rows[1:]}) == len(official) - 1  # every run but the baseline
        assert all(0.0 <= p <= 1.0 for p in pvalues)
        assert "True" in out and "False" in out  # some differences significant, some not
    elif sub == "evaluate" and "--estimate" in words:
        expected = _column(_table(out), "E[AP]")
        low, high = _column(_table(out), "ci_low[AP]"), _column(_table(out), "ci_high[AP]")
        # the interval of the fit's posterior draws, kept beside the file
        assert all(low[run] < expected[run] < high[run] for run in official)
        assert set(expected) == set(official)
        assert all(0.0 <= v <= 1.0 for v in expected.values())
        assert _kendall_tau(expected, official) > 0.8  # nearly complete qrels: the same ranking
    elif sub == "evaluate":
        ap = _column(_table(out), "AP")
        assert set(ap) == set(official)
        # the official MAP at rel >= 2 (run_stats.tsv), to the printed digits
        assert all(abs(ap[run] - official[run]) < 6e-5 for run in official)
    elif sub == "compare" and "--matrix" in words:
        assert all(run in out for run in official)
        values = [float(v) for v in re.findall(r"(?<![\w.])[01]\.\d\d(?![\d])", out)]
        assert len(values) >= len(official) * (len(official) - 1)
        assert all(0.0 <= v <= 1.0 for v in values)
    elif sub == "compare":
        rows = _table(out)
        header = rows[0]
        (row,) = rows[1:]
        a, b = row[header.index("system_a")], row[header.index("system_b")]
        assert official[a] > official[b] + 0.1  # the README's pair: a clear difference ...
        assert float(row[header.index("p_a_better")]) > 0.95  # ... called, the right way
        assert float(row[header.index("e_delta_map")]) > 0.0
    elif sub == "fit":
        (target,) = _outputs(words)
        lines = (folder / target).read_text().splitlines()
        # DL's grades 0-3: P(grade >= g) for every grade beside P(relevant)
        assert lines[0].split("\t") == ["query_id", "doc_id", "probability", "p_ge_1", "p_ge_2", "p_ge_3"]
        probabilities = [float(line.split("\t")[2]) for line in lines[1:]]
        assert len(probabilities) > 100_000  # every retrieved document of 43 topics
        assert all(0.0 <= p <= 1.0 for p in probabilities)
    elif sub == "judge":
        first = re.search(r"judged 0; .*?(\d+) of (\d+) pair\(s\) undecided", out)
        assert first and int(first.group(1)) > 0, f"judge stopped before asking:\n{out[-2000:]}"
        assert re.search(r"stopped; 5 judgment\(s\) saved", out), out[-2000:]
    elif sub == "power":
        (target,) = _outputs(words)  # the study's folder
        rows = _table((folder / target / "curves.tsv").read_text())
        header = rows[0]
        assert len(rows) > 10
        assert all(0.0 <= float(r[header.index("power")]) <= 1.0 for r in rows[1:])
    elif sub == "plan":
        rows = _table(out)
        header = rows[0]
        budget = float(words[words.index("--budget") + 1])
        assert len(rows) > 1
        assert all(float(r[header.index("effort")]) <= budget for r in rows[1:])
    elif sub == "newrun":
        lines = out.strip().splitlines()
        header = lines[1].split()
        (row,) = [line.split() for line in lines[2:] if not line.split()[0].endswith(":")]
        new = row[0]
        assert abs(float(row[header.index("trec_eval")]) - official[new]) < 6e-5
        rank = 1 + sum(score > official[new] for run, score in official.items() if run != new)
        low, high = int(row[header.index("rank_low")]), int(row[header.index("rank_high")])
        assert low <= rank <= high <= low + 10  # its official rank, in a narrow interval
        assert re.search(rf"^{new}: its score .* ranks ", out, re.MULTILINE)
    elif sub == "calibrate":
        assert any((folder / next(iter(_outputs(words)))).iterdir())
    else:  # a line without a specific check still has to say something
        assert out.strip()


def test_readme_has_the_tour():
    subcommands = [shlex.split(c)[1] for c in COMMANDS]
    assert {"demo", "evaluate", "compare", "fit", "judge"} <= set(subcommands)
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


@pytest.mark.parametrize("command", [_param(c) for c in COMMANDS])
def test_readme_command_works_as_written(command, workdir):
    done = run_line(command, workdir)
    assert done.returncode == 0, f"{command}\nexit {done.returncode}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr
    check(command, done, workdir)
