"""Output formats: trec_eval's layout, LaTeX, and markdown without ``nan`` cells."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.cli._format import FORMATTERS
from relimpute.data import Campaign
from relimpute.measures import evaluate

QRELS = """\
1 0 a 2
1 0 b 0
1 0 c 1
2 0 d 1
2 0 e 0
"""
RUNS = {
    "r1": "1 Q0 a 1 1.0 r1\n1 Q0 x 2 0.9 r1\n1 Q0 c 3 0.5 r1\n2 Q0 e 1 3.0 r1\n",
    "r2": "1 Q0 c 1 2.0 r2\n1 Q0 a 2 1.0 r2\n",
}
# trec_eval -q: "<name padded to 22>\t<qid>\t<value>"
TREC_LINE = re.compile(r"^(?P<name>\S+ *)\t(?P<qid>\S+)\t(?P<value>\S+)$")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "qrels.txt").write_text(QRELS)
    for name, text in RUNS.items():
        (tmp_path / "runs" / f"{name}.txt").write_text(text)
    return tmp_path


def _trec_lines(text):
    rows = []
    for line in text.splitlines():
        match = TREC_LINE.match(line)
        assert match, line
        assert len(match["name"]) == 22, line
        rows.append((match["name"].strip(), match["qid"], match["value"]))
    return rows


def test_trec_format_is_trec_eval_layout(files, capsys):
    args = ["evaluate", str(files / "qrels.txt"), str(files / "runs")]
    measures = ["-m", "map", "-m", "P_2", "-m", "num_rel_ret", "-m", "ERR@2"]
    assert main([*args, *measures, "-q", "--format", "trec"]) == 0
    rows = _trec_lines(capsys.readouterr().out)
    # r1: topics 1 and 2 then its all block; r2: topic 1 only (trec_eval skips topic 2)
    assert [(n, q) for n, q, _ in rows[:4]] == [
        ("map", "1"),
        ("P_2", "1"),
        ("num_rel_ret", "1"),
        ("ERR@2", "1"),
    ]
    assert rows[8:10] == [("runid", "all", "r1"), ("num_q", "all", "2")]
    assert rows[10:14] == [
        ("map", "all", f"{(1 + 2 / 3) / 2 / 2:.4f}"),  # topic 1 AP 5/6, topic 2 AP 0
        ("P_2", "all", "0.2500"),
        ("num_rel_ret", "all", "2"),  # a count: summed, printed as an integer
        ("ERR@2", "all", f"{(3 / 16) / 2:.4f}"),
    ]
    assert [r for r in rows[14:] if r[1] not in ("1", "all")] == []
    assert ("num_q", "all", "1") in rows[14:]


def test_trec_format_without_q_prints_only_all_rows(files, capsys):
    args = ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-f", "trec", "-c"]
    assert main([*args, "-m", "AP", "-m", "AP(rel=2)"]) == 0
    rows = _trec_lines(capsys.readouterr().out)
    assert {q for _, q, _ in rows} == {"all"}
    assert [n for n, _, _ in rows[:4]] == ["runid", "num_q", "map", "AP(rel=2)"]
    assert rows[1][2] == "2"  # -c: every qrels topic counts


@pytest.mark.shared_data
def test_trec_format_values_equal_evaluate_on_dl19(dl19_dir, dl19, capsys):
    names = ["map", "ndcg_cut_10", "recip_rank", "bpref", "num_ret"]
    argv = ["evaluate", str(dl19_dir / "qrels.txt"), str(dl19_dir / "runs"), "--rel-threshold"]
    assert main([*argv, "2", *sum((["-m", n] for n in names), []), "-q", "-f", "trec"]) == 0
    rows = pd.DataFrame(_trec_lines(capsys.readouterr().out), columns=["name", "qid", "value"])
    runs = rows.loc[rows["name"] == "runid", "value"].tolist()
    assert runs == list(dl19.systems)
    topics = rows[(rows["qid"] != "all")]
    assert len(topics) == 37 * 43 * len(names)
    ours = evaluate(dl19, names, per_topic=True)
    got = topics["value"].astype(float).to_numpy()
    np.testing.assert_allclose(got, ours["value"].to_numpy(), rtol=0, atol=5e-5 + 1e-12)


def test_markdown_and_latex_have_no_nan(files, capsys):
    (files / "runs" / "r3.txt").write_text("9 Q0 a 1 1.0 r3\n")  # no qrels topic: mean is NaN
    args = ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-m", "AP"]
    assert main([*args, "-f", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower() and "| r3 | 0 | - |" in out
    assert main([*args, "-m", "NumRet", "-f", "latex"]) == 0
    heading, *out = capsys.readouterr().out.splitlines()
    assert heading == "% estimand: qrels (trec_eval on the qrels given, unjudged = nonrelevant)"
    assert out[:4] == [
        r"\begin{tabular}{lrrr}",
        r"\toprule",
        r"system & num\_q & AP & NumRet \\",
        r"\midrule",
    ]
    assert out[-3:] == [r"r3 & 0 & -- & -- \\", r"\bottomrule", r"\end{tabular}"]
    assert out[4] == r"r1 & 2 & 0.4167 & 4.0000 \\"


def test_compare_matrix_markdown_has_no_nan(files, capsys):
    argv = ["compare", str(files / "qrels.txt"), str(files / "runs"), "--prior", "0.5"]
    assert main([*argv, "--matrix", "-f", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "| 1 r1 | - |" in out  # columns numbered as the rows


def test_markdown_escapes_pipes_and_line_breaks(files, capsys):
    # a run file named "a|b" would add a column; a newline in a name would end the table
    (files / "runs" / "a|b").write_text(RUNS["r2"])
    args = ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-m", "AP", "-f", "markdown"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if "a" in line and "b" in line] == [
        r"| a\|b | 1 | 1.0000 |"
    ]
    frame = pd.DataFrame({"run|name": ["x\ny", "c\\|d"], "value": [0.5, np.nan]})
    text = FORMATTERS["markdown"](frame)
    assert text.splitlines() == [
        r"| run\|name | value |", "|---|---|", "| x<br>y | 0.5000 |", r"| c\\\|d | - |"
    ]


def test_latex_escapes_text():
    frame = pd.DataFrame({"run_name": ["a&b_c%", "x^y~z\\"], "value": [0.5, np.nan]})
    text = FORMATTERS["latex"](frame)
    assert r"a\&b\_c\%" in text and r"x\^{}y\textasciitilde{}z\textbackslash{}" in text
    assert r"run\_name & value" in text and r"& -- \\" in text


def test_counts_are_integers_in_tables(files, capsys):
    with pytest.warns(UserWarning, match="retrieves nothing"):
        campaign = Campaign.from_files(files / "qrels.txt", files / "runs")
    want = evaluate(campaign, ["NumRet"])["value"].tolist()
    assert main(["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-m", "NumRet"]) == 0
    heading, *lines = capsys.readouterr().out.splitlines()
    assert heading.startswith("estimand: qrels (trec_eval")
    assert [line.split()[-1] for line in lines[1:]] == [str(int(v)) for v in want]
