"""``relimpute judge --design guided [--looks K]``: the model-guided sample in the journal, and
the stopping rule that keeps coverage.

The journal records every π, the entries and the model's predictions; resuming keeps the draw
and refuses another seed or stopping rule; the export carries π. With --looks the session
stops at the first look whose Bonferroni interval decides the pair, and says the rule.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.data import Campaign
from relimpute.io import read_inclusion_qrels
from relimpute.selection.designs import ModelGuidedDesign, sample_from_record
from relimpute.selection.journal import read_records


@pytest.fixture
def files(tmp_path):
    """Five topics of 60 documents (three judged in the qrels), runs A, B, C of 40: A puts the
    relevant documents first, C ranks at random; the truth."""
    rng = np.random.default_rng(4)
    truth, initial = {}, []
    for t in range(1, 6):
        for i in range(60):
            truth[str(t), f"d{t}_{i}"] = grade = int(rng.random() < 0.3)
            if i < 3:
                initial.append(f"{t} 0 d{t}_{i} {grade}\n")
    (tmp_path / "qrels.txt").write_text("".join(initial))
    (tmp_path / "runs").mkdir()
    for k, name in enumerate("ABC"):
        lines = []
        for t in range(1, 6):
            key = [-truth[str(t), f"d{t}_{d}"] * (2 - k) + rng.normal() for d in range(60)]
            lines += [f"{t} Q0 d{t}_{d} {r + 1} {50 - r} {name}\n"
                      for r, d in enumerate(np.argsort(key)[:40])]  # fmt: skip
        (tmp_path / "runs" / name).write_text("".join(lines))
    return tmp_path, truth


GUIDED = ["--design", "guided", "--budget", 40, "--pool-depth", 40, "--pair", "A", "C"]


def judge(tmp, *extra):
    return main(["judge", str(tmp / "qrels.txt"), str(tmp / "runs"), "--journal",
                 str(tmp / "j.jsonl"), *map(str, extra)])  # fmt: skip


def answers(tmp, truth, count=None, start=0):
    """The true grades of the journal's sample in the order asked (from ``start``)."""
    sample = sample_from_record(read_records(tmp / "j.jsonl")[0]["sample"])
    asked = sample[sample["order"] >= 0].sort_values("order")
    lines = [f"{q} {d} {truth[q, d]}\n" for q, d in zip(asked["query_id"], asked["doc_id"])]
    (tmp / "answers.txt").write_text("".join(lines[start:count]))
    return tmp / "answers.txt"


def test_the_journal_keeps_the_guided_draw_and_the_export_carries_pi(files, capsys):
    tmp, truth = files
    (tmp / "none.txt").write_text("")
    assert judge(tmp, *GUIDED, "--seed", 3, "--answers", tmp / "none.txt") == 0
    header = read_records(tmp / "j.jsonl")[0]
    assert header["design"] == {"design": "guided", "budget": 40, "depth": 40, "floor": 0.01,
                                "floor_share": 0.5, "model": "fusion",
                                "pairs": [["A", "C"]]}  # fmt: skip
    sample = sample_from_record(header["sample"])
    campaign = Campaign.from_files(tmp / "qrels.txt", tmp / "runs")
    design = ModelGuidedDesign(40, 40, pairs=[("A", "C")])
    drawn = design.draw(campaign, np.random.default_rng(3), ("A", "C"))
    pd.testing.assert_frame_equal(sample, drawn)
    open_ = sample[sample["stratum"] == 1]
    assert open_["inclusion"].sum() == pytest.approx(40) and open_["prediction"].between(0, 1).all()
    assert judge(tmp, *GUIDED, "--seed", 3, "--answers", answers(tmp, truth, 12)) == 0
    assert "stopped; 12 answer(s)" in capsys.readouterr().out
    assert judge(tmp, *GUIDED, "--seed", 4, "--answers", answers(tmp, truth)) == 2
    assert "--design guided --budget 40 --pool-depth 40 --seed 3 --model fusion --pair A C" in \
        capsys.readouterr().err
    assert judge(tmp, *GUIDED, "--seed", 3, "--answers", answers(tmp, truth, start=12)) == 0
    assert "every sampled document is answered" in capsys.readouterr().out
    out = tmp / "sample.qrels"
    assert main(["judge", str(tmp / "qrels.txt"), "--journal", str(tmp / "j.jsonl"),
                 "--export-qrels", str(out)]) == 0  # fmt: skip
    written = read_inclusion_qrels(out).set_index(["query_id", "doc_id"])
    keys = list(zip(open_["query_id"], open_["doc_id"]))
    assert np.allclose(written.loc[keys, "inclusion"], open_["inclusion"])
    drawn = open_[open_["drawn"]]
    assert (written.loc[list(zip(drawn["query_id"], drawn["doc_id"])), "relevance"] >= 0).all()
    assert main(["judge", str(tmp / "qrels.txt"), "--journal", str(tmp / "j.jsonl"),
                 "--export-qrels", str(tmp / "x"), "-f", "sampled"]) == 2  # fmt: skip
    assert "export it with -f inclusion" in capsys.readouterr().err


def test_looks_stop_when_the_bonferroni_interval_decides_and_keep_their_rule(files, capsys):
    tmp, truth = files
    looks = [*GUIDED, "--seed", 3, "--looks", 4]
    (tmp / "none.txt").write_text("")
    assert judge(tmp, *looks, "--answers", tmp / "none.txt") == 0
    header = read_records(tmp / "j.jsonl")[0]
    assert header["looks"] == {"count": 4, "confidence": 0.95, "margin": None}
    capsys.readouterr()
    assert judge(tmp, *looks, "--answers", answers(tmp, truth)) == 0
    out = capsys.readouterr().out
    assert "Bonferroni: 0.05/4" in out and "98.75% interval" in out
    assert "look 1/4 (25% of the design" in out
    assert "decided at look" in out and "A better" in out  # A ranks the relevant first
    sample = sample_from_record(header["sample"])
    asked = int((sample["order"] >= 0).sum())
    judged = len([r for r in read_records(tmp / "j.jsonl") if r.get("action") == "judge"])
    assert 0 < judged < asked  # stopped before the whole sample
    entry = np.sort(sample.loc[sample["order"] >= 0, "entry"].to_numpy())
    assert judged in {int((entry < f).sum()) for f in (0.25, 0.5, 0.75)}  # at a look
    assert judge(tmp, *GUIDED, "--seed", 3, "--looks", 2, "--answers", tmp / "none.txt") == 2
    assert "stopping rule --looks 4 --confidence 0.95, not --looks 2" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [(["--design", "pps", "--budget", 40, "--looks", 4], "--looks reads a model-guided sample"),
     ([*GUIDED, "--margin", 0.01], "--margin is the equivalence margin of --looks"),
     ([*GUIDED, "--looks", 4, "--margin", -1], "--margin must be positive"),
     (["--design", "guided", "--budget", 5000], "--budget 5000 is larger than the pool"),
     (["--design", "guided"], "--design guided needs --budget N")],
)  # fmt: skip
def test_bad_options_are_named(files, capsys, extra, message):
    tmp, _ = files
    assert judge(tmp, *extra, "--answers", tmp / "qrels.txt") == 2
    assert message in capsys.readouterr().err


def test_a_topic_left_unsampled_is_named(files, capsys):
    """A budget of 3 over five topics leaves some topic with nothing drawn: judge says which."""
    tmp, _ = files
    (tmp / "none.txt").write_text("")
    assert judge(tmp, "--design", "guided", "--budget", 3, "--pool-depth", 40, "--seed", 1,
                 "--answers", tmp / "none.txt") == 0  # fmt: skip
    err = capsys.readouterr().err
    sample = sample_from_record(read_records(tmp / "j.jsonl")[0]["sample"])
    drawn = sample[sample["stratum"] == 1].groupby("query_id")["drawn"].any()
    empty = sorted(drawn.index[~drawn])
    assert empty and f"{len(empty)} topic(s) have documents left to sample" in err
    assert ", ".join(empty) in err


def test_a_guided_journal_from_before_the_floor_share_resumes_at_share_zero(files, capsys):
    """A journal written before --floor-share recorded none: its sample was drawn at share 0,
    and resuming it asks for --floor-share 0 rather than redrawing at the new default."""
    import json

    tmp, truth = files
    (tmp / "none.txt").write_text("")
    assert judge(tmp, *GUIDED, "--floor-share", 0, "--seed", 3, "--answers", tmp / "none.txt") == 0
    lines = (tmp / "j.jsonl").read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    assert first["design"].pop("floor_share") == 0.0
    (tmp / "j.jsonl").write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
    capsys.readouterr()
    assert judge(tmp, *GUIDED, "--seed", 3, "--answers", answers(tmp, truth, 5)) == 2
    assert "--pool-depth 40 --seed 3 --floor-share 0 --model fusion" in capsys.readouterr().err
    assert judge(tmp, *GUIDED, "--floor-share", 0, "--seed", 3,
                 "--answers", answers(tmp, truth, 5)) == 0  # fmt: skip
    assert "stopped; 5 answer(s)" in capsys.readouterr().out
    assert judge(tmp, "--floor-share", 0.5, "--answers", tmp / "none.txt") == 2
    assert "--floor-share goes with --design" in capsys.readouterr().err
