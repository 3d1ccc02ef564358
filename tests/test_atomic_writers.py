"""Every writer of every command goes through one helper: a temporary file beside the target
and a rename, so a kill leaves the old file or the new one; temporaries a kill left are
removed by the next write; bad output paths and a full disk are clean errors before or
without damage."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from relimpute import _files
from relimpute.cli import main
from relimpute.errors import InputError
from relimpute.io import write_prob_qrels, write_qrels, write_run
from relimpute.simulate import simulate_campaign

SRC = str(Path(_files.__file__).resolve().parents[1])


def synthetic_files(root: Path, **simulate) -> tuple[Path, str, str]:
    """A synthetic campaign on disk: ``qrels``, ``runs/`` and ``groups.tsv`` (families as
    groups, every run pooled); returns the folder, the qrels and the runs."""
    sim = simulate_campaign(**simulate)
    qrels, runs = sim.campaign.to_files(root)
    groups = pd.DataFrame(
        {"run": list(sim.campaign.systems), "group": [f"g{f}" for f in sim.family], "pooled": "yes"}
    )
    groups.to_csv(root / "groups.tsv", sep="\t", index=False)
    return root, str(qrels), str(runs)


SIZE = dict(n_topics=6, n_systems=6, n_docs=120, depth=20, n_families=3, rng=5)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return synthetic_files(tmp_path_factory.mktemp("writers"), **SIZE)


def _commands(data, out: Path) -> dict[str, list[str]]:
    root, qrels, runs = data
    return {
        "fit": ["fit", "--model", "uniform", qrels, runs, "-o", str(out / "est.tsv")],
        "power": ["power", qrels, runs, "--pool-depth", "1,5", "--n-topics", "3", "--repetitions", "2",
                  "--seed", "1", "-o", str(out / "curves"), "--plot", str(out / "curves.svg")],
        "poolbias": ["poolbias", qrels, runs, "--groups", str(root / "groups.tsv"), "--pool-depth", "5",
                     "--correctors", "reduced", "-m", "P@5", "--common-topics", "2",
                     "--common-repeats", "1", "-o", str(out / "bias")],
        "calibrate": ["calibrate", qrels, runs, "--trials", "2", "--k", "3", "--c", "2",
                      "--strategies", "mtc", "--seed", "2", "--depth", "10", "--quiet",
                      "-o", str(out / "cal")],
        "judge": ["judge", qrels, "--journal", str(out / "j.jsonl"),
                  "--export-qrels", str(out / "exported.txt")],
    }  # fmt: skip


def _files_under(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("command", ["fit", "power", "poolbias", "calibrate", "judge"])
def test_every_written_file_is_renamed_into_place(data, tmp_path, monkeypatch, capsys, command):
    """Every file a command leaves was written to a temporary file and renamed onto its name
    (a writer that wrote in place would leave a file no rename put there)."""
    if command == "judge":
        _journal(data, tmp_path / "j.jsonl")
    before = _files_under(tmp_path)
    renamed = []
    real_replace = os.replace

    def replace(src, dst):
        assert Path(src).parent == Path(dst).parent and Path(src).name.startswith(".rlp-")
        renamed.append(Path(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(_files.os, "replace", replace)
    assert main(_commands(data, tmp_path)[command]) == 0, capsys.readouterr().err
    after = _files_under(tmp_path)
    changed = {p for p, body in after.items() if before.get(p) != body}
    assert changed, "the command wrote nothing"
    assert changed <= set(renamed), sorted(map(str, changed - set(renamed)))
    assert not [p for p in after if p.name.endswith(".tmp")]


def _journal(data, path: Path) -> None:
    """A journal of no judgment yet (the simulated runs retrieve only judged documents) on the
    campaign's qrels and runs, as ``judge`` writes it."""
    from relimpute.cli._judge_journal import qrels_sha256 as _sha256
    from relimpute.selection.journal import Journal

    _, qrels, runs = data
    header = {"qrels": str(Path(qrels).resolve()), "qrels_sha256": _sha256(qrels),
              "runs": [str(Path(runs).resolve())]}  # fmt: skip
    Journal.open(path, header).close()


class Killed(BaseException):
    """Stands for a SIGKILL arriving in the middle of a write."""


def _killed_mid_write(monkeypatch) -> None:
    """``write_fully`` writes half its bytes, then the process 'dies'."""

    def write(fd, data):
        os.write(fd, bytes(data[: max(1, len(data) // 2)]))
        raise Killed

    monkeypatch.setattr(_files, "write_fully", write)


FRAME = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
RUN = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
PROB = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "probability": [0.5, 0.25]})


def _figure_writer(path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    try:
        _files.save_figure(fig, path)
    finally:
        plt.close(fig)


WRITERS = {
    "qrels.txt": lambda p: write_qrels(FRAME, p),
    "qrels.txt.gz": lambda p: write_qrels(FRAME, p),
    "a.run": lambda p: write_run(RUN, p),
    "est.tsv": lambda p: write_prob_qrels(PROB, p),
    "table.tsv": lambda p: _files.write_table(FRAME, p, sep="\t"),
    "figure.png": _figure_writer,
    "figure.svg": _figure_writer,
}


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_kill_mid_write_leaves_the_old_file(tmp_path, monkeypatch, name):
    path = tmp_path / name
    path.write_bytes(b"old contents\n")
    _killed_mid_write(monkeypatch)
    with pytest.raises(Killed):
        WRITERS[name](path)
    monkeypatch.undo()
    assert path.read_bytes() == b"old contents\n"
    WRITERS[name](path)  # and then the new one, whole
    assert path.read_bytes() != b"old contents\n"


def test_a_sigkilled_writer_leaves_a_temporary_the_next_write_removes(tmp_path):
    """A real SIGKILL mid-write: the target keeps its old bytes, the temporary stays until
    the next write of that path; a temporary of a live writer or another target is kept."""
    target = tmp_path / "out.tsv"
    target.write_text("old\n")
    script = textwrap.dedent(
        f"""
        import os, signal
        from relimpute import _files
        def write(fd, data):
            os.write(fd, bytes(data[:3]))
            os.kill(os.getpid(), signal.SIGKILL)
        _files.write_fully = write
        _files.atomic_write_text({str(target)!r}, "new contents\\n" * 100)
        """
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=60)
    assert done.returncode == -signal.SIGKILL
    assert target.read_text() == "old\n"
    left = [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert len(left) == 1 and len(left[0]) < 40  # short: a 255-byte target name stays legal
    mine = f".rlp-{_files._target_tag('out.tsv')}-{os.getpid()}-abcdefgh.tmp"
    other = f".rlp-{_files._target_tag('other.tsv')}-999999999-abcdefgh.tmp"
    earlier = ".out.tsv.k3j_x9aa.tmp"  # an earlier release's temporary name
    for name in (mine, other, earlier):
        (tmp_path / name).write_text("x")
    _files.atomic_write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert sorted(p for p in os.listdir(tmp_path) if p.endswith(".tmp")) == sorted([mine, other])


def test_a_255_byte_name_is_written_and_a_longer_one_refused(tmp_path):
    longest = tmp_path / ("q" * 251 + ".txt")
    write_qrels(FRAME, longest)
    assert longest.read_text() == "1 0 a 1\n1 0 b 0\n"
    with pytest.raises(InputError, match="longer than 255 bytes"):
        write_qrels(FRAME, tmp_path / ("q" * 256))


def test_figures_are_the_same_bytes_twice(tmp_path):
    """No date and no random ids: a resumed study rewrites its diagrams byte for byte."""
    for name in ("a.svg", "b.svg", "a.png", "b.png", "a.pdf", "b.pdf"):
        _figure_writer(tmp_path / name)
    for kind in ("svg", "png", "pdf"):
        assert (tmp_path / f"a.{kind}").read_bytes() == (tmp_path / f"b.{kind}").read_bytes()


@pytest.mark.parametrize(
    "command, target",
    [("power", "curves/curves.tsv"), ("power", "curves.svg"), ("poolbias", "bias/estimates.tsv"),
     ("fit", "est.tsv"), ("calibrate", "cal/report.md"), ("calibrate", "cal/manifest.json")],
)  # fmt: skip
def test_a_full_disk_is_a_clean_error_naming_the_file(data, tmp_path, monkeypatch, capsys, command, target):
    argv = _commands(data, tmp_path)[command]
    assert main(argv) == 0
    old = (tmp_path / target).read_bytes()
    real_write = os.write

    def write(fd, body):  # the disk is full when the target's bytes are written
        if os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1].startswith(".rlp-"):
            if _files._target_tag(Path(target).name) in os.readlink(f"/proc/self/fd/{fd}"):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, body)

    monkeypatch.setattr(_files.os, "write", write)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / target}: cannot write file: No space left on device" in err
    assert "Traceback" not in err
    monkeypatch.undo()
    assert (tmp_path / target).read_bytes() == old
    assert not [p for p in (tmp_path / target).parent.iterdir() if p.name.endswith(".tmp")]


def _no_study(*args, **kwargs):
    raise AssertionError("the study ran before the output path was checked")


@pytest.mark.parametrize(
    "command, option, value, message",
    [
        ("power", "-o", "groups.tsv", "names a file: --output is the study's folder"),
        ("power", "--plot", "adir", "give a file name ending in .png"),
        ("power", "--plot", "groups.tsv/x.png", "it is not a directory"),
        ("poolbias", "-o", "groups.tsv", "is a file, not a directory to write into"),
        ("calibrate", "-o", "groups.tsv", "is a file, not a directory to write into"),
        ("fit", "-o", "newdir/", "names a folder; give a file name"),
    ],
)
def test_bad_output_paths_are_refused_before_any_work(data, monkeypatch, capsys, command, option, value, message):
    root = data[0]
    monkeypatch.setattr(f"relimpute.cli.{command}.load_campaign", _no_study)
    argv = _commands(data, root / "unused")[command]
    at = argv.index("--plot" if option == "--plot" else "-o")
    argv[at + 1] = f"{root}/{value}"  # as typed: a trailing / says "a directory"
    try:
        code = main(argv)
    except SystemExit as exc:  # refused by the parser
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and str(root / value) in err and "Traceback" not in err
    assert not (root / "adir").exists() and not (root / "newdir").exists()
