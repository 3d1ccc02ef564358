"""``relimpute judge --design``: a seeded sample drawn once, judged, resumed and exported.

The designs (relimpute.selection.designs) draw reproducibly with π in (0, 1] and a stratum
per document; the journal keeps the draw across sessions and refuses another design or
seed; the exports read back, xinfAP equal to sample_eval.pl's (when perl is present) and
statAP equal to stat_eval on the same sample.
"""

from __future__ import annotations

import io
import json
import shutil

import numpy as np
import pandas as pd
import pytest

from relimpute.cli import main
from relimpute.data import Campaign
from relimpute.io import (
    read_inclusion_qrels,
    read_run,
    read_sampled_qrels,
    write_inclusion_qrels,
    write_sampled_qrels,
)
from relimpute.measures.inferred import sample_eval
from relimpute.measures.statap import StatDesign, stat_eval
from relimpute.selection.designs import (
    JUDGED_STRATUM,
    PPSDesign,
    StratifiedDesign,
    pool_table,
    sample_from_record,
    strata_sizes,
)
from relimpute.selection.journal import VERSION, read_records

STRATA = "1-5:1,6-30:0.2"
DESIGN = StratifiedDesign(((1, 5, 1.0), (6, 30, 0.2)))


@pytest.fixture
def files(tmp_path):
    """Three topics of 40 documents, three judged in the qrels; three runs of 30; the truth."""
    rng = np.random.default_rng(4)
    truth, initial = {}, []
    for t in range(1, 4):
        for i in range(40):
            grade = int(rng.random() < 0.3) * int(rng.integers(1, 3))
            truth[str(t), f"d{t}_{i}"] = 2 if i == 0 else grade  # graded qrels: 0-2
            if i < 3:
                initial.append(f"{t} 0 d{t}_{i} {truth[str(t), f'd{t}_{i}']}\n")
    (tmp_path / "qrels.txt").write_text("".join(initial))
    (tmp_path / "runs").mkdir()
    for name in "ABC":
        lines = [f"{t} Q0 d{t}_{d} {r + 1} {50 - r} {name}\n"
                 for t in range(1, 4) for r, d in enumerate(rng.permutation(40)[:30])]
        (tmp_path / "runs" / name).write_text("".join(lines))
    return tmp_path, truth


def campaign(tmp):
    return Campaign.from_files(tmp / "qrels.txt", tmp / "runs")


def answers(tmp, truth, sample, count=None, name="answers.txt"):
    """The true grades of the sample's documents in the order asked ('QUERY DOC GRADE')."""
    asked = sample[sample["order"] >= 0].sort_values("order")
    lines = [f"{q} {d} {truth[q, d]}\n" for q, d in zip(asked["query_id"], asked["doc_id"])]
    (tmp / name).write_text("".join(lines[:count]))
    return tmp / name


def judge(tmp, *extra, journal="j.jsonl"):
    return main(["judge", str(tmp / "qrels.txt"), str(tmp / "runs"), "--journal",
                 str(tmp / journal), *map(str, extra)])  # fmt: skip


def export(tmp, out, *extra, journal="j.jsonl"):
    return main(["judge", str(tmp / "qrels.txt"), "--journal", str(tmp / journal),
                 "--export-qrels", str(tmp / out), *extra])  # fmt: skip


def header(tmp, journal="j.jsonl"):
    return read_records(tmp / journal)[0]


def test_a_seeded_draw_is_reproducible_with_its_strata_and_probabilities(files):
    tmp, _ = files
    pool = pool_table(campaign(tmp), DESIGN.pool_depth)
    first = DESIGN.draw(pool, np.random.default_rng(7))
    pd.testing.assert_frame_equal(first, DESIGN.draw(pool, np.random.default_rng(7)))
    assert not first.equals(DESIGN.draw(pool, np.random.default_rng(8)))
    pi = first["inclusion"].to_numpy()
    assert ((pi > 0) & (pi <= 1)).all()
    judged = first[first["stratum"] == JUDGED_STRATUM]  # the qrels' judgments: whole, not asked
    assert len(judged) == 9 and (judged["inclusion"] == 1).all() and (judged["order"] == -1).all()
    rank = pool.set_index(["query_id", "doc_id"])["rank"]
    for (topic, h), rows in first[first["stratum"] > 0].groupby(["query_id", "stratum"]):
        low, high, rate = DESIGN.strata[h - 1]
        ranks = rank.loc[list(zip(rows["query_id"], rows["doc_id"]))]
        assert ranks.between(low, high).all()
        n = max(1, int(np.floor(rate * len(rows) + 0.5)))
        assert rows["drawn"].sum() == n and np.allclose(rows["inclusion"], n / len(rows))
    sizes = strata_sizes(first).loc[("1", 2)]
    assert sizes["drawn"] == max(1, round(0.2 * sizes["population"]))
    assert sizes["inclusion"] == sizes["drawn"] / sizes["population"]
    asked = first[first["order"] >= 0].sort_values("order")  # topic by topic, stratum by stratum
    assert list(asked["order"]) == list(range(len(asked)))
    assert asked[["query_id", "stratum"]].apply(tuple, axis=1).is_monotonic_increasing


def test_pps_draws_statap_probabilities_for_the_budget(files):
    tmp, _ = files
    sample = PPSDesign(budget=30).draw(campaign(tmp), np.random.default_rng(7))
    universe = sample[sample["stratum"] == 1]
    assert universe["inclusion"].sum() == pytest.approx(30)
    assert universe["inclusion"].between(0.01, 1).all()
    pool = pool_table(campaign(tmp), 100).set_index(["query_id", "doc_id"])
    weight = pool.loc[list(zip(universe["query_id"], universe["doc_id"])), "weight"].to_numpy()
    top = universe.assign(w=weight).groupby("query_id")  # π grows with the AP-prior weight
    assert all(g.sort_values("w")["inclusion"].is_monotonic_increasing for _, g in top)
    assert universe["drawn"].sum() == (universe["order"] >= 0).sum() > 0
    with pytest.raises(ValueError, match="larger than the pool"):
        PPSDesign(budget=1000).draw(campaign(tmp), np.random.default_rng(7))


def test_the_journal_keeps_the_draw_and_resumes_it(files, capsys):
    tmp, truth = files
    sample = DESIGN.draw(campaign(tmp), np.random.default_rng(3), ("A", "B", "C"))
    argv = ["--design", "stratified", "--strata", STRATA, "--seed", 3]
    assert judge(tmp, *argv, "--answers", answers(tmp, truth, sample, 10)) == 0
    first = header(tmp)
    assert first["version"] == VERSION == 4 and first["seed"] == 3
    assert first["design"] == {"design": "stratified", "strata": [[1, 5, 1.0], [6, 30, 0.2]]}
    pd.testing.assert_frame_equal(sample_from_record(first["sample"]), sample)
    out = capsys.readouterr().out
    assert "stratum 1, probability 1" in out and "stopped; 10 answer(s)" in out
    # the rest, checked document by document against the draw's order
    rest = answers(tmp, truth, sample, name="all.txt").read_text().splitlines(keepends=True)[10:]
    (tmp / "rest.txt").write_text("".join(rest))
    assert judge(tmp, *argv, "--answers", tmp / "rest.txt") == 0
    out = capsys.readouterr().out
    assert "resumed with 10 answered" in out and "every sampled document is answered" in out
    records = read_records(tmp / "j.jsonl")
    assert records[0]["sample"] == first["sample"]
    assert len([r for r in records if r["action"] == "judge"]) == (sample["order"] >= 0).sum()


@pytest.mark.parametrize("change, option", [
    (["--design", "stratified", "--strata", STRATA, "--seed", 4], "--seed 4"),
    (["--design", "stratified", "--strata", "1-5:1,6-30:0.3", "--seed", 3], "6-30:0.3"),
    (["--design", "pps", "--budget", 20, "--seed", 3], "--design pps --budget 20"),
    (["--strategy", "mtc"], "--design stratified --strata 1-5:1,6-30:0.2 --seed 3"),
])  # fmt: skip
def test_another_design_or_seed_is_refused(files, capsys, change, option):
    tmp, _ = files
    (tmp / "none.txt").write_text("")
    argv = ["--design", "stratified", "--strata", STRATA, "--seed", 3, "--answers"]
    assert judge(tmp, *argv, tmp / "none.txt") == 0
    capsys.readouterr()
    assert judge(tmp, *change, "--answers", tmp / "none.txt") == 2
    err = capsys.readouterr().err
    assert option in err and "j.jsonl, line 1" in err and len(err.strip().splitlines()) == 1


def test_a_journal_of_a_strategy_is_not_resumed_as_a_sample(files, capsys):
    tmp, _ = files
    (tmp / "none.txt").write_text("")
    assert judge(tmp, "--strategy", "mtc", "--answers", tmp / "none.txt") == 0
    capsys.readouterr()
    assert judge(tmp, "--design", "pps", "--budget", 20, "--answers", tmp / "none.txt") == 2
    assert "judges with --strategy mtc, not a sample" in capsys.readouterr().err


def _evaluate(capsys, qrels, runs, *measures) -> pd.DataFrame:
    capsys.readouterr()
    assert main(["evaluate", str(qrels), str(runs), *measures, "-f", "tsv"]) == 0
    return pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t").set_index("system")


def test_a_stratified_export_reads_back_and_equals_sample_eval(files, capsys):
    tmp, truth = files
    sample = DESIGN.draw(campaign(tmp), np.random.default_rng(3))
    argv = ["--design", "stratified", "--strata", STRATA, "--seed", 3]
    assert judge(tmp, *argv, "--answers", answers(tmp, truth, sample)) == 0
    assert export(tmp, "sampled.txt") == 0
    table = read_sampled_qrels(tmp / "sampled.txt")
    drawn = sample["drawn"].to_numpy()
    expected = [truth[q, d] if k else -1 for q, d, k in zip(sample["query_id"], sample["doc_id"],
                                                            drawn)]  # fmt: skip
    assert table["relevance"].tolist() == expected
    assert table["stratum"].tolist() == sample["stratum"].tolist()
    scores = _evaluate(capsys, tmp / "sampled.txt", tmp / "runs", "-m", "xinfAP", "-m", "statAP")
    for name in "ABC":
        run = read_run(tmp / "runs" / name)
        assert scores.loc[name, "xinfAP"] == pytest.approx(
            sample_eval(table, run).loc["all", "xinfAP"])
        assert scores.loc[name, "statAP"] == pytest.approx(stat_eval(table, run).loc["all", "statAP"])
    if shutil.which("perl") is None:
        pytest.skip("perl is not installed: sample_eval.pl cannot run")
    from test_inferred_measures import ORACLE, _script_output

    if not ORACLE.is_file():
        pytest.skip(f"{ORACLE} not found (../shared is not beside the repo)")
    for name in "ABC":
        script = _script_output(tmp / "sampled.txt", tmp / "runs" / name)
        assert scores.loc[name, "xinfAP"] == pytest.approx(script["xinfAP", "all"], abs=1e-4)


def test_a_pps_export_gives_statap_equal_to_stat_eval(files, capsys):
    tmp, truth = files
    sample = PPSDesign(budget=30).draw(campaign(tmp), np.random.default_rng(5))
    argv = ["--design", "pps", "--budget", 30, "--seed", 5]
    assert judge(tmp, *argv, "--answers", answers(tmp, truth, sample)) == 0
    assert export(tmp, "pi.txt") == 0
    assert (tmp / "pi.txt").read_text().startswith("query_id doc_id relevance inclusion_probability")
    table = read_inclusion_qrels(tmp / "pi.txt")
    assert table["inclusion"].tolist() == sample["inclusion"].tolist()  # repr: exact
    truth_of = [truth[k] for k in zip(sample["query_id"], sample["doc_id"])]
    known = sample.assign(relevance=np.where(sample["drawn"], truth_of, -1))
    scores = _evaluate(capsys, tmp / "pi.txt", tmp / "runs", "-m", "statAP")
    for name in "ABC":
        ours = stat_eval(StatDesign(known), read_run(tmp / "runs" / name)).loc["all", "statAP"]
        assert np.isfinite(scores.loc[name, "statAP"])
        assert scores.loc[name, "statAP"] == pytest.approx(ours)
    assert export(tmp, "five.txt", "-f", "sampled") == 2  # one π per document: no strata
    assert "export it with -f inclusion" in capsys.readouterr().err


def test_unanswered_documents_shrink_a_stratum_and_block_a_poisson_export(files, capsys):
    tmp, truth = files
    sample = DESIGN.draw(campaign(tmp), np.random.default_rng(3))
    argv = ["--design", "stratified", "--strata", STRATA, "--seed", 3]
    assert judge(tmp, *argv, "--answers", answers(tmp, truth, sample, 12)) == 0
    assert export(tmp, "part.txt") == 0
    err = capsys.readouterr().err
    open_ = int((sample["order"] >= 0).sum()) - 12
    assert f"{open_} sampled document(s) are not answered" in err and "written -1" in err
    assert "strata with none answered add nothing" in err
    with pytest.warns(UserWarning, match="the stratum adds nothing"):  # as sample_eval.pl
        table = read_sampled_qrels(tmp / "part.txt")
    assert (table["relevance"] >= 0).sum() == 9 + 12
    assert export(tmp, "part-pi.txt", "-f", "inclusion") == 0  # π = answered / N_h
    pi = read_inclusion_qrels(tmp / "part-pi.txt")
    answered = pi[pi["relevance"] >= 0]
    assert (answered["inclusion"] > 0).all() and "as Poisson" in capsys.readouterr().err
    pps = PPSDesign(budget=30).draw(campaign(tmp), np.random.default_rng(5))
    argv = ["--design", "pps", "--budget", 30, "--seed", 5]
    assert judge(tmp, *argv, "--answers", answers(tmp, truth, pps, 2), journal="p.jsonl") == 0
    capsys.readouterr()
    assert export(tmp, "pps.txt", journal="p.jsonl") == 2
    err = capsys.readouterr().err
    assert "are not answered" in err and "no known inclusion probabilities" in err
    assert not (tmp / "pps.txt").exists()


@pytest.mark.parametrize("argv, message", [
    (["--design", "stratified", "--strata", "1-10:1.5"], "argument --strata: rate 1.5"),
    (["--design", "stratified", "--strata", "1-10:0"], "outside (0, 1]"),
    (["--design", "stratified", "--strata", "1-10:1,10-20:0.5"], "strata 1-10 and 10-20 overlap"),
    (["--design", "stratified", "--strata", "1-x:1"], "is not FIRST-LAST:RATE"),
    (["--design", "stratified"], "--design stratified needs --strata"),
    (["--design", "stratified", "--strata", "1-5:1", "--budget", 5], "--budget does not go"),
    (["--design", "pps", "--budget", 1000], "--budget 1000 is larger than the pool"),
    (["--design", "pps"], "--design pps needs --budget N"),
    (["--design", "pps", "--budget", 5, "--strata", "1-5:1"], "--strata goes with"),
    (["--design", "pps", "--budget", 5, "--strategy", "mtc"], "--strategy does not go"),
    (["--design", "pps", "--budget", 5, "--depth", 10], "--depth does not go"),
    (["--strata", "1-5:1"], "--strata goes with --design"),
    (["--pool-depth", 10], "--pool-depth goes with --design"),
])  # fmt: skip
def test_bad_options_are_one_line_errors_naming_the_option(files, capsys, argv, message):
    tmp, _ = files
    try:
        code = judge(tmp, *argv, "--answers", tmp / "qrels.txt")
    except SystemExit as exc:  # argparse's own check of --strata
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp / "j.jsonl").exists()


def test_writers_round_trip(tmp_path):
    frame = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"],
                          "stratum": [0, 1, 1], "relevance": [2, 1, 0],
                          "inclusion": [1.0, 0.1, 1 / 3]})  # fmt: skip
    write_sampled_qrels(frame, tmp_path / "s.txt")
    back = read_sampled_qrels(tmp_path / "s.txt")
    assert back[["query_id", "doc_id", "stratum", "relevance"]].equals(
        frame[["query_id", "doc_id", "stratum", "relevance"]])
    write_inclusion_qrels(frame, tmp_path / "p.txt")
    back = read_inclusion_qrels(tmp_path / "p.txt")
    assert back["inclusion"].tolist() == frame["inclusion"].tolist()
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        write_inclusion_qrels(frame.assign(inclusion=0.0), tmp_path / "bad.txt")


def test_a_malformed_sample_in_the_journal_is_refused(files, capsys):
    tmp, _ = files
    (tmp / "none.txt").write_text("")
    argv = ["--design", "pps", "--budget", 20, "--seed", 3, "--answers", tmp / "none.txt"]
    assert judge(tmp, *argv) == 0
    lines = (tmp / "j.jsonl").read_text().splitlines()
    start = json.loads(lines[0])
    start["sample"]["inclusion"][-1] = 0.0
    (tmp / "j.jsonl").write_text(json.dumps(start) + "\n")
    capsys.readouterr()
    assert judge(tmp, *argv) == 2
    err = capsys.readouterr().err
    assert "j.jsonl, line 1" in err and "outside (0, 1]" in err


class Terminal(io.StringIO):
    """Keys typed at a terminal (judge refuses a standard input that is not one)."""

    def isatty(self):
        return True


def test_skip_and_undo_at_the_terminal_keep_the_order_drawn(files, monkeypatch, capsys):
    tmp, _ = files
    sample = DESIGN.draw(campaign(tmp), np.random.default_rng(3))
    asked = sample[sample["order"] >= 0].sort_values("order")
    first, second, third = asked["doc_id"].iloc[:3]
    monkeypatch.setattr("sys.stdin", Terminal("2\ns\nu\n0\nq\n"))
    assert judge(tmp, "--design", "stratified", "--strata", STRATA, "--seed", 3) == 0
    out = capsys.readouterr().out
    shown = [line.split()[4] for line in out.splitlines() if line.startswith("[")]
    assert shown == [first, second, third, second, third]  # the skip undone: asked again
    assert "undone" in out and "stopped; 2 answer(s)" in out
    judged = [(r["doc_id"], r["relevance"]) for r in read_records(tmp / "j.jsonl")
              if r["action"] == "judge"]  # fmt: skip
    assert judged == [(first, 2), (second, 0)]
