"""Progress on a terminal (issue 26, item 7): long commands show a bar from their first
steps; the loading of the runs has one, shown when loading starts, not when it ends."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios
import time

import numpy as np
import pytest

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 0\n"
RUN = "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 e 3 1 r\n2 Q0 d 1 2 r\n2 Q0 c 2 1 r\n"


def _stderr_on_a_terminal(args: list[str]) -> tuple[list[tuple[float, str]], int]:
    """``relimpute ARGS`` with stderr on a pseudo-terminal: each piece of text it shows
    (split at carriage returns and newlines) with the seconds since the start; the exit code."""
    master, slave = pty.openpty()
    # a new pty has 0 columns, and tqdm draws a bar as wide as the terminal: nothing
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "relimpute", *args], stdout=subprocess.DEVNULL, stderr=slave, env=env
    )
    os.close(slave)
    shown = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        now = time.perf_counter() - start
        text = data.decode("utf-8", "replace").replace("\r", "\n")
        shown += [(now, piece) for piece in text.split("\n") if piece.strip()]
    os.close(master)
    return shown, child.wait(timeout=120)


@pytest.fixture
def collection(write_collection):
    root = write_collection(QRELS, {f"r{i}": RUN.replace(" r\n", f" r{i}\n") for i in range(3)})
    return [str(root / "qrels.txt"), str(root / "runs")]


def test_loading_the_runs_shows_a_bar_first_and_from_its_start(collection):
    shown, code = _stderr_on_a_terminal(["evaluate", *collection])
    assert code == 0
    texts = [text for _, text in shown]
    assert texts, "nothing on the terminal"
    # first what runs (before the qrels are read), then the runs' bar from 0 of 3, not once
    # they all are
    assert texts[0].startswith("relimpute evaluate: reading the qrels and runs ..."), texts
    bars = [text for text in texts if text.startswith("reading runs:")]
    assert bars and "0/3" in bars[0], texts


def test_fit_says_what_it_does_at_every_step(collection, tmp_path):
    """The steps with nothing to count show a line from their start (issue 26: progress
    within 2 s): reading the campaign, the model's fit, writing the file; in that order."""
    out = tmp_path / "p.tsv"
    shown, code = _stderr_on_a_terminal(["fit", *collection, "-o", str(out)])
    assert code == 0 and out.is_file()
    texts = [text for _, text in shown]
    steps = ["reading the qrels and runs ...", "fitting fusion ...", f"writing {out} ..."]
    at = [next((i for i, t in enumerate(texts) if t.startswith(f"relimpute fit: {s}")), None)
          for s in steps]  # fmt: skip
    assert None not in at and at == sorted(at), texts


def test_quiet_and_a_pipe_show_no_bar(collection):
    shown, code = _stderr_on_a_terminal(["evaluate", *collection, "--quiet"])
    assert code == 0 and not [text for _, text in shown if "reading runs" in text]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    piped = subprocess.run([sys.executable, "-m", "relimpute", "evaluate", *collection],
                           capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert piped.returncode == 0 and "reading runs" not in piped.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("delay, shown", [(0.0, True), (60.0, False)])
def test_a_fit_counts_its_steps_once_it_lasts(monkeypatch, delay, shown):
    """A fit lasting over PROGRESS_DELAY shows a 'fitting' bar; the quick fits of a study don't."""
    from relimpute.relevance import _newton

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(_newton, "PROGRESS_DELAY", delay)
    theta = _newton.newton_maximise(
        lambda t: -float((t - 3.0) @ (t - 3.0)), lambda t: (-2 * (t - 3.0), 2 * np.eye(2)),
        np.zeros(2),
    )  # fmt: skip
    assert theta == pytest.approx([3.0, 3.0])
    assert ("fitting:" in terminal.getvalue()) == shown


def test_a_stage_is_shown_at_once_and_cleared(monkeypatch):
    from relimpute.progress import quiet, stage

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with stage("relimpute x: doing it"):
        assert "relimpute x: doing it ..." in terminal.getvalue()
    assert terminal.getvalue().endswith("\r") or "\x1b" in terminal.getvalue()  # cleared
    before = terminal.getvalue()
    with quiet(), stage("relimpute x: again"):
        pass
    assert terminal.getvalue() == before


def test_the_plain_bar_outside_ipython_and_the_notebook_one_inside(monkeypatch):
    """tqdm.auto (which imports asyncio) only where IPython runs; a terminal gets the same
    plain bar from tqdm.std either way."""
    import tqdm.auto
    import tqdm.std

    from relimpute.progress import _tqdm

    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert _tqdm() is tqdm.std.tqdm
    monkeypatch.setitem(sys.modules, "IPython", object())
    assert _tqdm() is tqdm.auto.tqdm
