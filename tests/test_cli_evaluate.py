"""``relimpute evaluate``: formats, per-topic rows, policies, help and bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from relimpute.cli import main

QRELS = """\
1 0 a 2
1 0 b 0
1 0 c 1
2 0 d 1
2 0 e 0
"""
RUN_1 = """\
1 Q0 a 1 1.0 r1
1 Q0 x 2 1.0 r1
1 Q0 c 3 0.5 r1
2 Q0 e 1 3.0 r1
"""
RUN_2 = """\
1 Q0 c 1 2.0 r2
1 Q0 a 2 1.0 r2
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "runs" / "r1.txt").write_text(RUN_1)
    (tmp_path / "runs" / "r2.txt").write_text(RUN_2)
    return tmp_path


def _tsv(capsys) -> pd.DataFrame:
    from io import StringIO

    return pd.read_csv(StringIO(capsys.readouterr().out), sep="\t", dtype={"query_id": str})


def test_summary_table_has_one_row_per_run(files, capsys):
    code = main(
        ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-m", "AP", "-m", "P@2"]
    )
    out, err = capsys.readouterr()
    assert code == 0
    heading, *lines = out.splitlines()
    assert heading == "estimand: qrels (trec_eval on the qrels given, unjudged = nonrelevant)"
    assert lines[0].split() == ["system", "num_q", "AP", "P@2"]
    # r1: x, a tie -> x first; AP topic 1 = (1/2 + 2/3)/2, topic 2 = 0; r2 skips topic 2
    assert lines[1].split() == ["r1", "2", f"{(1 / 2 + 2 / 3) / 4:.4f}", "0.2500"]
    assert lines[2].split() == ["r2", "1", "1.0000", "1.0000"]
    assert "retrieves nothing for 1 qrels topic" in err


def test_complete_and_condensed_change_the_scores(files, capsys):
    main(["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-m", "AP", "-c", "-f", "tsv"])
    frame = _tsv(capsys).set_index("system")
    assert frame.loc["r2", "AP"] == 0.5 and frame.loc["r2", "num_q"] == 2
    main(
        [
            "evaluate",
            str(files / "qrels.txt"),
            str(files / "runs"),
            "-m",
            "AP",
            "--condensed",
            "-f",
            "tsv",
        ]
    )
    frame = _tsv(capsys).set_index("system")
    assert frame.loc["r1", "AP"] == pytest.approx(0.5)  # topic 1: a, c -> AP 1; topic 2: 0


def test_per_topic_rows_end_with_each_runs_all_row(files, capsys):
    code = main(["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-q", "-f", "tsv"])
    frame = _tsv(capsys)
    assert code == 0
    assert list(frame.columns) == ["system", "query_id", "AP", "P@10", "nDCG@10", "Rprec", "Judged@10"]
    assert list(zip(frame["system"], frame["query_id"])) == [
        ("r1", "1"),
        ("r1", "2"),
        ("r1", "all"),
        ("r2", "1"),
        ("r2", "all"),
    ]
    r1 = frame[frame["system"] == "r1"]
    assert r1["AP"].iloc[2] == pytest.approx(r1["AP"].iloc[:2].mean(), abs=1e-12)  # every digit


def test_rel_threshold_and_gain_options(files, capsys):
    args = ["evaluate", str(files / "qrels.txt"), str(files / "runs" / "r2.txt"), "-f", "tsv"]
    main([*args, "-m", "AP", "--rel-threshold", "2"])
    assert _tsv(capsys)["AP"].iloc[0] == 0.5
    main([*args, "-m", "nDCG@2", "--gain", "exponential"])
    import math

    want = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert _tsv(capsys)["nDCG@2"].iloc[0] == pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize("fmt", ["table", "tsv", "json", "markdown"])
def test_every_format(files, capsys, fmt):
    code = main(["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-m", "AP", "-f", fmt])
    out = capsys.readouterr().out
    assert code == 0
    if fmt == "json":
        rows = json.loads(out)
        assert [r["system"] for r in rows] == ["r1", "r2"] and rows[1]["AP"] == 1.0
    elif fmt == "markdown":  # the estimand, a blank line, the table
        assert out.splitlines()[2] == "| system | num_q | AP |"
        assert "| r2 | 1 | 1.0000 |" in out
    elif fmt == "tsv":
        assert out.splitlines()[2] == "r2\t1\t1.0"  # every digit of the float
    elif fmt == "latex":
        assert out.startswith("% estimand: qrels")
    else:
        assert out.splitlines()[3].split() == ["r2", "1", "1.0000"]


def test_bad_input_exits_2_naming_file_and_line(files, capsys):
    bad = files / "bad.run"
    bad.write_text("1 Q0 a 1 1.0 r\n1 Q0 b 2 oops r\n")
    code = main(["evaluate", str(files / "qrels.txt"), str(bad)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"relimpute evaluate: error: {bad}, line 2:" in err and "oops" in err


def test_duplicates_policy_is_passed_to_the_readers(files, capsys):
    dup = files / "dup.run"
    dup.write_text("1 Q0 a 1 1.0 r\n1 Q0 a 2 0.5 r\n")
    assert main(["evaluate", str(files / "qrels.txt"), str(dup), "-m", "AP"]) == 2
    assert "line 2" in capsys.readouterr().err
    assert (
        main(["evaluate", str(files / "qrels.txt"), str(dup), "-m", "AP", "--duplicates", "first"])
        == 0
    )


@pytest.mark.parametrize(
    "name, hint",
    [("MAPP", "'MAP'"), ("map@10", "'map_cut_10' or 'MAP@10'"), ("P10", "'P@10' or 'P_10'")],
)
def test_unknown_measure_is_one_line_without_the_usage(files, capsys, name, hint):
    code = main(["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-m", name])
    assert code == 2
    assert capsys.readouterr().err == (
        f"relimpute evaluate: error: -m {name}: unknown measure '{name}'; did you mean {hint}?\n"
    )


def test_help_is_complete(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    for text in [
        "QRELS",
        "RUN",
        "--measure",
        "--per-topic",
        "--rel-threshold",
        "--complete",
        "--condensed",
        "--by-rank",
        "--duplicates",
        "--gain",
        "--format",
        "examples:",
        "RBPres",
        "Judged[@k]",
        '"all" row',
    ]:
        assert text in out
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "evaluate" in capsys.readouterr().out


@pytest.mark.shared_data
def test_dl19_official_map(dl19_dir, capsys):
    runs = [dl19_dir / "runs" / f"{name}.gz" for name in ("TUA1-1", "ICT-BERT2")]
    code = main(
        [
            "evaluate",
            str(dl19_dir / "qrels.txt"),
            *map(str, runs),
            "--rel-threshold",
            "2",
            "-m",
            "AP",
            "-m",
            "P@10",
            "-f",
            "tsv",
        ]
    )
    frame = _tsv(capsys).set_index("system")
    stats = pd.read_csv(dl19_dir / "run_stats.tsv", sep="\t").set_index("run")
    assert code == 0
    for name in frame.index:
        assert frame.loc[name, "AP"] == pytest.approx(stats.loc[name, "MAP"], abs=5e-5)
        assert frame.loc[name, "P@10"] == pytest.approx(stats.loc[name, "P_10"], abs=5e-5)
        assert frame.loc[name, "num_q"] == 43
