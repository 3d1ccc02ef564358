"""Readers: one whitespace rule on both parsing paths (fuzzed against a plain-Python oracle),
and files that are not files — FIFOs, broken links, unreadable directories — as clean errors."""

from __future__ import annotations

import math
import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relimpute import io as rio
from relimpute.cli import main
from relimpute.errors import InputError
from relimpute.io import read_qrels, read_run, read_runs

RUN = "1 Q0 d1 1 3.5 A\n1 Q0 d2 2 2.0 A\n"


# --------------------------------------------------------------------------- one whitespace rule


@pytest.mark.parametrize(
    "line, doc",
    [
        (b"1 0 d1\x0b 1", "d1"),  # the fast path used to keep 'd1\x0b' as the docno
        (b"1\t0\td1\x0c\t1", "d1"),
        (b"1 0 d\xc2\xa01 1", "d\u00a01"),  # a no-break space stays inside the id
    ],
)
def test_vertical_tab_and_form_feed_separate_on_both_paths(tmp_path, line, doc):
    alone = tmp_path / "alone"
    alone.write_bytes(line + b"\n")
    mixed = tmp_path / "mixed"  # an unrelated line with the other blank: line-by-line path
    mixed.write_bytes(line + b"\n" + (b"2\t0 e 0\n" if b" " in line else b"2 0\te 0\n"))
    for path in (alone, mixed):
        assert read_qrels(path)["doc_id"].tolist()[0] == doc


def test_vertical_tab_inside_an_id_is_rejected_whatever_the_other_lines(tmp_path):
    for extra in (b"", b"2\t0 e 0\n", b"\n"):  # used to be accepted silently in the first case
        path = tmp_path / "f"
        path.write_bytes(b"1 0 d\x0b1 1\n" + extra)
        with pytest.raises(InputError, match="expected 4 columns .*, found 5") as info:
            read_qrels(path)
        assert info.value.line == 1


FIELDS = ["1", "2", "q", "a", "b", "0", "3", "-1", "x", "1.5", "99", "a\u00a0b", "1e0"]
BLANKS = [" ", "\t", "  ", " \t", "\x0b", "\x0c", "\t\x0c"]


@st.composite
def qrels_text(draw) -> bytes:
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 7)) == 0:
            lines.append(draw(st.sampled_from(["", " ", "\x0c"])))
            continue
        fields = draw(st.lists(st.sampled_from(FIELDS), min_size=3, max_size=5))
        seps = draw(st.lists(st.sampled_from(BLANKS), min_size=len(fields) + 1,
                             max_size=len(fields) + 1))  # fmt: skip
        edge = draw(st.booleans())
        text = "".join(s + f for s, f in zip(seps, fields))
        lines.append(text if edge else text.lstrip(" \t\x0b\x0c"))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    return (ending.join(lines) + draw(st.sampled_from(["", ending]))).encode("utf-8")


def _first(bad, lines):
    return next((n for n, b in zip(lines, bad) if b), None)


def oracle_qrels(data: bytes):
    """Plain-Python qrels reader (bytes.split, i.e. C isspace): rows, or ('error', line).

    Checks run in the reader's order — columns, numbers, finiteness, integers,
    grade range, conflicting duplicates — each naming its first bad line.
    """
    numbered = [(n, line.split()) for n, line in
                enumerate(data.replace(b"\r\n", b"\n").split(b"\n"), 1)]  # fmt: skip
    numbered = [(n, f) for n, f in numbered if f]
    if not numbered:
        return ("error", None)
    lines = [n for n, _ in numbered]
    first = _first([len(f) != 4 for _, f in numbered], lines)
    if first:
        return ("error", first)
    rows = [(f[0].decode(), f[2].decode(), f[3].decode()) for _, f in numbered]

    def number(text):
        try:
            return float(text)
        except ValueError:
            return None

    values = [number(v) for _, _, v in rows]
    for is_bad in (
        lambda v: v is None,
        lambda v: not math.isfinite(v),
        lambda v: v != round(v),
        lambda v: not -2 <= v <= 10,
    ):
        first = _first([is_bad(v) for v in values], lines)
        if first:
            return ("error", first)
    seen, out, conflicts = {}, [], []
    for (q, d, _), v, n in zip(rows, values, lines):
        if (q, d) in seen:
            if seen[(q, d)] != v:
                conflicts.append(n)
            continue
        seen[(q, d)] = v
        out.append((q, d, int(v)))
    return ("error", conflicts[0]) if conflicts else out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=qrels_text())
def test_fuzz_qrels_reader_matches_the_oracle(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "qrels"
    path.write_bytes(data)
    expected = oracle_qrels(data)
    try:
        frame = read_qrels(path)
    except InputError as exc:
        assert isinstance(expected, tuple), (data, exc)
        assert exc.line == expected[1], (data, exc)
        return
    got = list(zip(frame["query_id"], frame["doc_id"], frame["relevance"].tolist()))
    assert got == expected, data


@settings(max_examples=300, deadline=None)
@given(data=st.one_of(st.binary(max_size=120), qrels_text()))
def test_fuzz_readers_raise_only_input_errors(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "f"
    path.write_bytes(data)
    for reader in (read_qrels, read_run, rio.read_prob_qrels):
        try:
            reader(path)
        except InputError as exc:
            assert exc.source == str(path)


# --------------------------------------------------------------------------- not regular files


def test_fifo_as_qrels_is_an_error_not_a_hang(tmp_path, capsys):
    fifo = tmp_path / "qrels.fifo"
    os.mkfifo(fifo)
    (tmp_path / "A").write_text(RUN)
    old = signal.signal(signal.SIGALRM, lambda *a: pytest.fail("reading a FIFO hung"))
    signal.alarm(20)
    try:
        with pytest.raises(InputError, match="is a named pipe \\(FIFO\\), not a regular file"):
            read_qrels(fifo)
        assert main(["evaluate", str(fifo), str(tmp_path / "A")]) == 2
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert f"{fifo}: is a named pipe" in capsys.readouterr().err


def test_broken_symlink_in_a_run_directory_is_reported(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "A").write_text(RUN)
    (runs / "B").symlink_to(tmp_path / "moved-away")
    with pytest.raises(InputError, match="broken symbolic link to '.*moved-away'") as info:
        read_runs(runs)
    assert info.value.source == str(runs / "B")  # used to be skipped, leaving one run fewer


def test_unreadable_run_directory_is_an_error(tmp_path, monkeypatch, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "A").write_text(RUN)
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    if os.geteuid() == 0:  # root reads anything: make listing fail as it does for a user
        real_iterdir = Path.iterdir

        def iterdir(self):
            if self == runs:
                raise PermissionError(13, "Permission denied", str(self))
            return real_iterdir(self)

        monkeypatch.setattr(Path, "iterdir", iterdir)
    else:
        runs.chmod(0)
    try:
        assert main(["evaluate", str(tmp_path / "qrels"), str(runs)]) == 2
    finally:
        runs.chmod(0o755)
    err = capsys.readouterr().err
    assert f"{runs}: cannot list run directory: Permission denied" in err
