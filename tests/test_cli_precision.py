"""`relimpute bootstrap`, `relimpute power` and `relimpute plan` end to end on small files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.data import Campaign


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(0)
    qrels, runs = [], {f"sys{k}": [] for k in range(4)}
    for t in range(8):
        qid = f"q{t}"
        rel = rng.random(300) < 0.1
        docs = np.array([f"{qid}-d{i}" for i in range(300)])
        for k in range(4):
            score = rng.normal(size=300) + (0.5 + 0.5 * k) * rel
            top = np.argsort(-score)[:50]
            runs[f"sys{k}"].append(
                pd.DataFrame({"query_id": qid, "doc_id": docs[top], "score": -np.arange(50.0)})
            )
        qrels.append(pd.DataFrame({"query_id": qid, "doc_id": docs, "relevance": rel.astype(int)}))
    campaign = Campaign.from_frames(pd.concat(qrels), {k: pd.concat(v) for k, v in runs.items()})
    root = tmp_path_factory.mktemp("precision")
    qrels_path, runs_dir = campaign.to_files(root)
    return str(qrels_path), str(runs_dir), root


def test_cli_lists_every_interval_method():
    from relimpute.cli.bootstrap import INTERVAL_METHODS
    from relimpute.precision import METHODS

    assert sorted(METHODS) == list(INTERVAL_METHODS)


def _json(capsys):
    return pd.DataFrame(json.loads(capsys.readouterr().out))


def test_bootstrap_default_per_topic_compare_and_split(files, capsys):
    qrels, runs, _ = files
    assert main(["bootstrap", qrels, runs, "-B", "200", "--seed", "1", "-f", "json"]) == 0
    frame = _json(capsys)
    assert set(frame["measure"]) == {"MAP", "L-MAP"} and len(frame) == 8
    assert (frame["low"] < frame["estimate"]).all() and (frame["estimate"] < frame["high"]).all()
    assert (
        main(
            [
                "bootstrap",
                qrels,
                runs,
                "-B",
                "200",
                "--per-topic",
                "--method",
                "bca",
                "--small-r",
                "-f",
                "json",
            ]
        )
        == 0
    )
    frame = _json(capsys)
    assert len(frame) == 32 and (frame["method"] == "bca+small-R").all()
    assert (
        main(["bootstrap", qrels, runs, "-B", "200", "--pair", "sys3", "sys0", "-f", "json"])
        == 0
    )
    frame = _json(capsys)
    assert list(frame["query_id"].iloc[-3:]) == ["mean", "fixed-effects", "random-effects"]
    assert frame["difference"].iloc[-3] > 0  # sys3 scores relevance best
    assert main(["bootstrap", qrels, runs, "-B", "100", "--split", "-f", "json"]) == 0
    captured = capsys.readouterr()
    frame = pd.DataFrame(json.loads(captured.out))
    assert "AP (bootstrap): observed / predicted variance" in captured.err
    assert {"AP", "MAP", "L-MAP"} == set(frame["measure"])
    assert np.allclose(frame[["below", "in", "above"]].sum(axis=1), 1.0)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--pair", "sys0", "nope"], "--pair: unknown run(s) nope"),
        (["-B", "1"], "argument --resamples/-B: 1 is not an integer >= 2"),
        (["--confidence", "1.5"], "argument --confidence: must lie strictly between 0 and 1"),
        (["--seed", "-1"], "argument --seed: -1 is not an integer >= 0"),
    ],
)
def test_bootstrap_bad_input(files, capsys, argv, message):
    qrels, runs, _ = files
    try:  # option values stop in argparse (SystemExit 2), the rest in the command (exit 2)
        code = main(["bootstrap", qrels, runs, *argv])
    except SystemExit as exit:
        code = exit.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_power_then_plan(files, capsys, tmp_path):
    qrels, runs, _ = files
    curves = tmp_path / "curves" / "curves.tsv"
    plot = tmp_path / "curves.png"
    argv = ["power", qrels, runs, "--pool-depth", "1,3,10", "--n-topics", "4,8", "--repetitions", "3"]
    assert main([*argv, "--seed", "2", "-o", str(curves.parent), "--plot", str(plot), "-f", "json"]) == 0
    frame = _json(capsys)
    assert len(frame) == 2 * 2 * 3 * 2 and plot.stat().st_size > 0
    assert pd.read_csv(curves, sep="\t").shape[0] == len(frame)
    assert main(["plan", str(curves), "--budget", "400", "--max-bias", "1", "-f", "json"]) == 0
    plan = _json(capsys)
    assert (plan["effort"] <= 400).all() and plan["power"].is_monotonic_decreasing
    assert main(["plan", str(curves), "--budget", "1"]) == 2
    assert "smaller than one topic's pool" in capsys.readouterr().err
    assert main([*argv[:3], "--n-topics", "20"]) == 2
    assert "between 2 and 8 topics" in capsys.readouterr().err
    groups = tmp_path / "groups.tsv"
    groups.write_text("run\tgroup\tpooled\nsys0\tg\tyes\nghost\tg\tyes\n")
    assert main([*argv, "--groups", str(groups)]) == 2
    assert "ghost" in capsys.readouterr().err


def test_plan_prints_counts_as_integers_and_names_the_best_design(tmp_path, capsys):
    """Depth and topics are counts (they printed as 1.0000 and 20.0000); one line names the
    best design for the budget."""
    curves = tmp_path / "curves.tsv"
    curves.write_text(
        "strategy\tmeasure\tdepth\tn_topics\teffort\teffort_per_topic\tpower\tbias\n"
        "depth\tMAP\t1\t20\t190.667\t9.53333\t0.51\t0.05\n"
        "mtf\tMAP\t2\t10\t150\t15\t0.4\t0.04\n"
        "depth\tMAP\t5\t40\t2000\t50\t0.9\t0.01\n"  # over the budget
    )
    assert main(["plan", str(curves), "--budget", "300", "--max-bias", "1"]) == 0
    out, err = capsys.readouterr()
    assert [line.split()[:5] for line in out.splitlines()[1:]] == [
        ["depth", "MAP", "1", "20", "190.6670"],
        ["mtf", "MAP", "2", "10", "150.0000"],
    ]
    assert err == (
        "relimpute plan: the best design for 300 judgments: 20 topics, depth 1, strategy depth "
        "(191 judgments; power 0.51, bias 0.050 on MAP)\n"
    )
    assert main(["plan", str(curves), "--budget", "300", "--max-bias", "1", "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["depth"], r["n_topics"]) for r in rows] == [(1, 20), (2, 10)]
    assert all(isinstance(r["depth"], int) for r in rows)
    curves.write_text(curves.read_text().replace("mtf\tMAP\t2\t", "mtf\tMAP\t2.5\t"))
    assert main(["plan", str(curves), "--budget", "300"]) == 2
    assert f"{curves}, line 3: depth '2.5' is not a whole number" in capsys.readouterr().err


def test_power_budget_ends_with_the_best_design_or_says_none_fits(files, capsys):
    qrels, runs, _ = files
    argv = ["power", qrels, runs, "--pool-depth", "1,3", "--n-topics", "4", "--repetitions", "2"]
    assert main([*argv, "--budget", "400", "--seed", "1"]) == 0
    out, err = capsys.readouterr()
    last = err.splitlines()[-1]
    assert last.startswith(("relimpute power: the best design for 400 judgments: ",
                            "relimpute power: no design fits 400 judgments with bias below"))
    assert "Empty DataFrame" not in out


def test_an_empty_plan_is_one_line_not_an_empty_frame(capsys):
    from relimpute.cli.plan import COLUMNS, show_plan

    show_plan(pd.DataFrame(columns=sorted(COLUMNS)), 400, 0.05, "table", "power")
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "relimpute power: no design fits 400 judgments with bias below 0.05\n"
