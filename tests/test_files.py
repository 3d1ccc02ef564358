"""Written files: permissions as ``open`` gives them, disk full and bad -o paths as clean errors."""

from __future__ import annotations

import errno
import os
import stat

import pandas as pd
import pytest

from relimpute import _files
from relimpute.cli import main
from relimpute.errors import InputError
from relimpute.io import read_qrels, write_qrels

QRELS = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    """Set a umask for one test and restore the old one."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_file_follows_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    write_qrels(QRELS, tmp_path / "new.txt")
    assert _mode(tmp_path / "new.txt") == expected  # was 0600 whatever the umask


@pytest.mark.parametrize("existing", [0o644, 0o600, 0o640])
def test_replaced_file_keeps_its_mode(tmp_path, umask, existing):
    umask(0o077)
    path = tmp_path / "q.txt"
    path.write_text("old\n")
    path.chmod(existing)
    write_qrels(QRELS, path)
    assert _mode(path) == existing  # a 0644 file used to become 0600
    pd.testing.assert_frame_equal(read_qrels(path), QRELS.astype({"relevance": "int64"}))


def _disk_full_after(monkeypatch, n_bytes: int) -> None:
    """Make ``os.write`` write at most ``n_bytes`` in all, then fail with ENOSPC."""
    real_write = os.write
    left = [n_bytes]

    def write(fd, data):
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = real_write(fd, bytes(data[: left[0]]))
        left[0] -= n
        return n

    monkeypatch.setattr(_files.os, "write", write)


@pytest.mark.parametrize("suffix", [".txt", ".gz"])
def test_disk_full_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch, suffix):
    path = tmp_path / f"qrels{suffix}"
    write_qrels(QRELS, path)
    before = path.read_bytes()
    bigger = pd.concat([QRELS] * 50, ignore_index=True).assign(
        doc_id=[f"d{i}" for i in range(100)]
    )
    _disk_full_after(monkeypatch, 10)
    with pytest.raises(InputError, match="No space left on device") as info:
        write_qrels(bigger, path)
    monkeypatch.undo()
    assert info.value.source == str(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == [path.name]


def test_short_writes_are_completed(tmp_path, monkeypatch):
    real_write = os.write
    monkeypatch.setattr(_files.os, "write", lambda fd, data: real_write(fd, bytes(data[:3])))
    write_qrels(QRELS, tmp_path / "q.txt")
    assert (tmp_path / "q.txt").read_text() == "1 0 a 1\n1 0 b 0\n"


@pytest.fixture
def fit_files(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 x 1\nq2 0 y 0\n")
    (tmp_path / "r1.run").write_text(
        "q1 Q0 a 1 3 r1\nq1 Q0 b 2 2 r1\nq1 Q0 c 3 1 r1\nq2 Q0 x 1 2 r1\nq2 Q0 z 2 1 r1\n"
    )
    (tmp_path / "r2.run").write_text(
        "q1 Q0 c 1 3 r2\nq1 Q0 a 2 2 r2\nq2 Q0 y 1 2 r2\nq2 Q0 x 2 1 r2\n"
    )
    return tmp_path


def _fit(tmp, output) -> list[str]:
    return ["fit", "--model", "uniform", str(tmp / "qrels.txt"), str(tmp / "r1.run"),
            str(tmp / "r2.run"), "-o", str(output)]  # fmt: skip


def test_fit_output_disk_full_is_a_clean_error(fit_files, monkeypatch, capsys):
    out = fit_files / "est.tsv"
    assert main(_fit(fit_files, out)) == 0
    before = out.read_bytes()
    _disk_full_after(monkeypatch, 5)
    assert main(_fit(fit_files, out)) == 2
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert f"{out}: cannot write file: No space left on device" in err
    assert out.read_bytes() == before
    assert not [p for p in os.listdir(fit_files) if p.endswith(".tmp")]


@pytest.mark.parametrize("where", ["directory", "below a file"])
def test_fit_output_that_cannot_be_a_file(fit_files, capsys, where):
    out = fit_files if where == "directory" else fit_files / "r1.run" / "est.tsv"
    assert main(_fit(fit_files, out)) == 2
    err = capsys.readouterr().err
    expected = "is a directory" if where == "directory" else "it is not a directory"
    assert str(out) in err and expected in err and "Traceback" not in err


def test_calibrate_output_that_is_a_file(fit_files, capsys):
    out = fit_files / "r1.run"
    argv = ["calibrate", str(fit_files / "qrels.txt"), str(fit_files / "r1.run"),
            str(fit_files / "r2.run"), "--quiet", "-o", str(out)]  # fmt: skip
    assert main(argv) == 2
    assert f"{out}: is a file, not a directory to write into" in capsys.readouterr().err
    with pytest.raises(InputError, match="cannot write below"):
        _files.output_directory(out / "report")


def test_a_palette_png_keeps_the_picture_in_fewer_bytes_and_the_same_bytes_each_time(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from PIL import Image


    fig, ax = plt.subplots()
    for shift in range(5):
        ax.plot(np.linspace(0, 1, 50), np.sin(np.linspace(0, 6, 50) + shift), marker="o")
    try:
        full = _files.save_figure(fig, tmp_path / "full.png", dpi=80)
        first = _files.save_figure(fig, tmp_path / "palette.png", dpi=80, colors=256)
        again = _files.save_figure(fig, tmp_path / "again.png", dpi=80, colors=256)
    finally:
        plt.close(fig)
    small = Image.open(first)
    assert small.mode == "P" and len(small.getcolors(maxcolors=257)) <= 256
    assert first.stat().st_size < full.stat().st_size
    assert first.read_bytes() == again.read_bytes()
    pixels = np.asarray(Image.open(full).convert("RGB"), dtype=float)
    assert np.abs(np.asarray(small.convert("RGB"), dtype=float) - pixels).mean() < 2.0  # of 255
