"""``relimpute judge``: stdin scripts, a SIGKILL mid-session and resume, export to qrels."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sys
import warnings

import numpy as np
import pytest

from relimpute.cli import main
from relimpute.data import Campaign
from relimpute.io import read_qrels
from relimpute.selection import SimulatedAssessor, run_selection
from relimpute.selection.journal import read_records

PROMPT = "grade? "


class Terminal(io.StringIO):
    """Keys typed at a terminal (judge refuses a standard input that is not one)."""

    def isatty(self):
        return True


@pytest.fixture
def files(tmp_path):
    """Initial qrels (some judged), three runs, and full truth qrels, over 3 topics."""
    rng = np.random.default_rng(4)
    truth = {}
    initial = []
    for t in range(3):
        for i in range(14):
            grade = int(rng.integers(0, 3))
            truth[(f"q{t}", f"d{t}_{i}")] = grade
            if rng.random() < 0.25:
                initial.append(f"q{t} 0 d{t}_{i} {grade}\n")
    (tmp_path / "qrels.txt").write_text("".join(initial))
    (tmp_path / "truth.txt").write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in truth.items()))
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("A", "B", "C"):
        lines = []
        for t in range(3):
            for r, d in enumerate(rng.permutation(14)[:9]):
                lines.append(f"q{t} Q0 d{t}_{d} {r + 1} {20 - r} {name}\n")
        (runs / name).write_text("".join(lines))
    (tmp_path / "docs.tsv").write_text("".join(f"{d}\ttext of {d}\n" for (_, d) in truth))
    return tmp_path, truth


def run_cli(argv, keys, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", Terminal("".join(k + "\n" for k in keys)))
    code = main(["judge", *map(str, argv)])
    return code, capsys.readouterr().out


def base_args(tmp, journal="j.jsonl"):
    """The pair A, B with MTC's uniform prior (the order run_selection's "mtc" judges in)."""
    return [
        tmp / "qrels.txt",
        tmp / "runs" / "A",
        tmp / "runs" / "B",
        "--pair",
        "A",
        "B",
        "--journal",
        tmp / journal,
        "--strategy",
        "mtc",
    ]


def judged_records(path):
    return [r for r in read_records(path) if r["action"] == "judge"]


def test_keys_invalid_skip_undo_quit_and_resume(files, monkeypatch, capsys):
    tmp, _ = files
    code, out = run_cli(
        base_args(tmp), ["x", "r", "2", "0", "s", "u", "u", "1", "q"], monkeypatch, capsys
    )
    assert code == 0
    assert "'x' is not a key" in out
    # graded qrels (grades 0-2): 'r' would not say which grade, so it is refused
    assert "'r' is not a key: answer a grade 0-2" in out
    assert out.count("undone") == 2
    records = read_records(tmp / "j.jsonl")
    assert [r["action"] for r in records] == [
        "start",
        "judge",
        "judge",
        "skip",
        "undo",
        "undo",
        "judge",
    ]
    # effective: first judgment (2), then the re-judged second document (1)
    from relimpute.selection.journal import effective_actions

    actions = effective_actions(records)
    assert [a.relevance for a in actions] == [2, 1]
    assert (
        actions[1].doc_id == records[2]["doc_id"]
    )  # undo of the '0' brought the same document back
    # resume: the same command continues after those two judgments
    code, out = run_cli(base_args(tmp), ["q"], monkeypatch, capsys)
    assert "resumed with 2 action(s)" in out and "[3] topic" in out
    # nothing to undo on a fresh journal; end of input quits cleanly
    code, out = run_cli(base_args(tmp, "k.jsonl"), ["u"], monkeypatch, capsys)
    assert code == 0 and "nothing to undo" in out and "stopped; 0 judgment(s)" in out


def test_stops_at_alpha_and_exports_qrels(files, monkeypatch, capsys):
    tmp, truth = files
    expected = _oracle_session_order(tmp, truth)
    keys = [str(truth[doc]) for doc in expected]
    code, out = run_cli(
        [*base_args(tmp), "--docs", tmp / "docs.tsv"], keys + ["q"], monkeypatch, capsys
    )
    assert code == 0
    assert out.rstrip().endswith("confidence 0.95 reached: done")
    assert f"text of {expected[0][1]}" in out
    journal = judged_records(tmp / "j.jsonl")
    assert [(r["query_id"], r["doc_id"]) for r in journal] == expected
    out_path = tmp / "exported.txt"
    argv = [
        "judge",
        str(tmp / "qrels.txt"),
        "--journal",
        str(tmp / "j.jsonl"),
        "--export-qrels",
        str(out_path),
    ]
    assert main(argv) == 0
    exported = read_qrels(out_path)
    initial = read_qrels(tmp / "qrels.txt")
    assert len(exported) == len(initial) + len(journal)
    new = exported.tail(len(journal))
    assert list(new["doc_id"]) == [r["doc_id"] for r in journal]
    # the assessor's grades, exactly as given, on the collection's scale
    assert all(
        truth[(q, d)] == g for q, d, g in zip(new["query_id"], new["doc_id"], new["relevance"])
    )
    assert read_records(tmp / "j.jsonl")[0]["scale"] == [0, 2]


def test_mismatched_settings_and_bad_docs(files, monkeypatch, capsys):
    tmp, _ = files
    run_cli(base_args(tmp), ["1", "q"], monkeypatch, capsys)
    monkeypatch.setattr(sys, "stdin", Terminal("q\n"))
    code = main(["judge", *map(str, base_args(tmp)), "--depth", "3"])
    assert code == 2
    assert "journal was started with depth=None" in capsys.readouterr().err
    (tmp / "bad.tsv").write_text("no tab here\n")
    code = main(["judge", *map(str, base_args(tmp, "z.jsonl")), "--docs", str(tmp / "bad.tsv")])
    assert code == 2 and "bad.tsv, line 1" in capsys.readouterr().err
    code = main(["judge", str(tmp / "qrels.txt"), "--journal", str(tmp / "j.jsonl")])
    assert code == 2


def test_jsonl_docs_are_shown(files, monkeypatch, capsys):
    tmp, truth = files
    (tmp / "docs.jsonl").write_text(
        "".join(json.dumps({"doc_id": d, "text": f"body {d}"}) + "\n" for (_, d) in truth)
    )
    code, out = run_cli([*base_args(tmp), "--docs", tmp / "docs.jsonl"], ["q"], monkeypatch, capsys)
    assert code == 0
    shown = next(line for line in out.splitlines() if "] topic " in line).split()[4]
    assert f"body {shown}" in out


def test_cut_short_last_line_is_dropped(files, monkeypatch, capsys):
    tmp, _ = files
    run_cli(base_args(tmp), ["1", "0", "q"], monkeypatch, capsys)
    path = tmp / "j.jsonl"
    with open(path, "a") as out:
        out.write('{"action": "judge", "query_id": "q1", "doc')  # killed mid-write
    code, out = run_cli(base_args(tmp), ["q"], monkeypatch, capsys)
    assert code == 0 and "resumed with 2 action(s)" in out
    assert path.read_text().endswith("\n")
    assert len(judged_records(path)) == 2


def _oracle_session_order(tmp, truth):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(tmp / "qrels.txt", [tmp / "runs" / "A", tmp / "runs" / "B"])
    frame = read_qrels(tmp / "truth.txt")
    result = run_selection(campaign, "mtc", SimulatedAssessor(frame), ("A", "B"), confidence=0.95)
    return list(zip(result.judgments["query_id"], result.judgments["doc_id"]))


def test_sigkill_mid_session_and_resume(files):
    """Drive the real command in a pseudo-terminal, SIGKILL it, resume: same judgments
    as an uninterrupted session, none lost or duplicated."""
    pexpect = pytest.importorskip("pexpect")
    tmp, truth = files
    expected = _oracle_session_order(tmp, truth)
    if len(expected) < 4:
        pytest.skip("the synthetic pair is decided too quickly for a kill test")
    command = [sys.executable, "-c", "import sys; from relimpute.cli import main; sys.exit(main())"]
    argv = ["judge", *map(str, base_args(tmp))]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}

    def answer(child, count):
        shown = []
        for _ in range(count):
            child.expect(r"\] topic (\S+)\s+document (\S+)", timeout=60)
            q, d = child.match.group(1), child.match.group(2)
            shown.append((q, d))
            child.expect_exact(PROMPT, timeout=60)
            child.sendline(str(truth[(q, d)]))
        return shown

    child = pexpect.spawn(command[0], command[1:] + argv, env=env, encoding="utf-8")
    first = answer(child, 3)
    child.expect(r"\] topic (\S+)\s+document (\S+)", timeout=60)
    pending = (child.match.group(1), child.match.group(2))
    child.expect_exact(PROMPT, timeout=60)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert [(r["query_id"], r["doc_id"]) for r in judged_records(tmp / "j.jsonl")] == first

    child = pexpect.spawn(command[0], command[1:] + argv, env=env, encoding="utf-8")
    child.expect_exact("resumed with 3 action(s)", timeout=60)
    rest = []
    while True:
        index = child.expect([r"\] topic (\S+)\s+document (\S+)", "done", pexpect.EOF], timeout=60)
        if index != 0:
            break
        q, d = child.match.group(1), child.match.group(2)
        rest.append((q, d))
        child.expect_exact(PROMPT, timeout=60)
        child.sendline(str(truth[(q, d)]))
    child.expect(pexpect.EOF, timeout=60)
    assert rest[0] == pending  # resumed exactly where it stopped
    journal = [(r["query_id"], r["doc_id"]) for r in judged_records(tmp / "j.jsonl")]
    assert journal == first + rest
    assert len(set(journal)) == len(journal)
    assert journal == expected


def test_journal_replay_and_export_rules(tmp_path):
    import pandas as pd

    from relimpute.selection.journal import Journal, effective_actions, export_qrels

    journal = Journal.open(tmp_path / "j.jsonl", {"systems": ["A", "B"]})
    journal.undo()  # nothing to undo yet: ignored
    journal.judge("1", "a", 1)
    journal.skip("1", "b")
    journal.judge("2", "c", 0)
    journal.undo()
    journal.undo()
    journal.judge("2", "d", 2)
    journal.close()
    again = Journal.open(tmp_path / "j.jsonl", {"systems": ["A", "B"]}, check=("systems",))
    assert [(a.doc_id, a.relevance) for a in again.actions()] == [("a", 1), ("d", 2)]
    assert effective_actions(again.records) == again.actions()
    initial = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "z"], "relevance": [-1, 1]})
    frame = export_qrels(initial, again.judgments())
    # the journal's label replaces the initial (unjudged) one; order: initial, then new
    assert list(zip(frame["query_id"], frame["doc_id"], frame["relevance"])) == [
        ("2", "z", 1),
        ("1", "a", 1),
        ("2", "d", 2),
    ]
    with pytest.raises(ValueError, match="unknown journal action"):
        journal.append({"action": "dance"})


def test_rtc_strategy_records_its_model_and_refuses_another_on_resume(files, monkeypatch, capsys):
    tmp, _ = files
    args = base_args(tmp, "rtc.jsonl") + ["--strategy", "rtc", "--model", "uniform"]
    code, out = run_cli(args, ["0", "q"], monkeypatch, capsys)
    assert code == 0 and "stopped; 1 judgment(s)" in out
    start = read_records(tmp / "rtc.jsonl")[0]
    assert start["strategy"] == "rtc" and start["model"] == "uniform"
    # Resuming the journal with another model would mix two selection rules: refused.
    code, out = run_cli(base_args(tmp, "rtc.jsonl") + ["--strategy", "rtc"], ["q"], monkeypatch, capsys)
    assert code == 2


def test_posterior_strategy_judges_and_resumes(files, monkeypatch, capsys):
    """``--strategy posterior``: the default model's posterior predictive confidence,
    reproducible on resume (the draws are seeded)."""
    tmp, _ = files
    args = base_args(tmp, "post.jsonl") + ["--strategy", "posterior"]
    code, first = run_cli(args, ["0", "1", "q"], monkeypatch, capsys)
    assert code == 0
    assert read_records(tmp / "post.jsonl")[0]["strategy"] == "posterior"
    assert len(judged_records(tmp / "post.jsonl")) == 2
    code, again = run_cli(args, ["q"], monkeypatch, capsys)
    assert code == 0
    status = re.findall(r"confidence [0-9.]+ \(P\(A better than B\) = [0-9.]+, E\[dMAP\] = [-+][0-9.]+\)", first)
    assert status and status[-1] in again  # the same confidence after replaying the journal


def test_rtc_stops_on_the_posterior_when_its_model_has_draws(files, monkeypatch, capsys):
    """``--strategy rtc --model fusion`` states the posterior predictive confidence (the same
    first status as ``--strategy posterior``, which refits the same model with the same
    seed); a model without draws says in one line that its stop ignores that uncertainty."""
    tmp, _ = files
    status = re.compile(r"judged 0; confidence [0-9.]+ \(P\(A better than B\) = [0-9.]+")
    code, rtc = run_cli(base_args(tmp, "f.jsonl") + ["--strategy", "rtc", "--model", "fusion"],
                        ["q"], monkeypatch, capsys)
    assert code == 0
    code, posterior = run_cli(base_args(tmp, "p.jsonl") + ["--strategy", "posterior"], ["q"], monkeypatch, capsys)
    assert code == 0 and status.search(rtc).group() == status.search(posterior).group()
    monkeypatch.setattr(sys, "stdin", Terminal("q\n"))
    assert main(["judge", *map(str, base_args(tmp, "u.jsonl")), "--strategy", "rtc", "--model", "uniform"]) == 0
    assert "returns no posterior draws and --strategy rtc stops on its point estimate" in capsys.readouterr().err
