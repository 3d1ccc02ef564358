"""Every registry measure is accepted by every command that takes measures (issue 27, 2)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from relimpute.cli import build_parser, main
from relimpute.confidence import exact_measure_names, has_closed_form
from relimpute.measures import measure_families, parse_measure, parse_measures

QRELS = "".join(
    f"{t} 0 {d} {g}\n" for t in (1, 2, 3) for d, g in zip("abcdef", (2, 1, 0, 1, 0, 2))
)
RUNS = {
    name: "".join(
        f"{t} Q0 {d} {r} {10 - r} {name}\n" for t in (1, 2, 3) for r, d in enumerate(order, 1)
    )
    for name, order in {"r1": "abcdeg", "r2": "fedcba", "r3": "cabgfe"}.items()
}


def _name(cls) -> str:
    """A name of the family as a user writes it: with a cutoff where it takes one."""
    return cls.family + ("@3" if cls.cutoff_rule != "none" else "")


NAMES = [_name(cls) for cls in measure_families()]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("everywhere")
    (root / "qrels.txt").write_text(QRELS)
    (root / "runs").mkdir()
    for name, text in RUNS.items():
        (root / "runs" / name).write_text(text)
    return str(root / "qrels.txt"), str(root / "runs")


def _tsv(capsys) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t")


def test_the_loop_covers_the_whole_registry():
    assert len(NAMES) == len({parse_measure(n).family for n in NAMES}) >= 17
    assert "DCG@3" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_evaluate_scores_every_measure(files, capsys, name):
    assert main(["evaluate", *files, "-m", name, "-f", "tsv"]) == 0
    assert str(parse_measure(name)) in _tsv(capsys).columns


@pytest.mark.parametrize("name", NAMES)
def test_compare_takes_every_measure(files, capsys, name):
    argv = ["compare", *files, "--prior", "0.3", "-m", name, "--mc-draws", "40", "-f", "tsv"]
    assert main(argv) == 0
    frame = _tsv(capsys)
    assert len(frame) == 3  # the three pairs
    assert frame["p_a_better"].between(0, 1).all()


def test_dcg_against_hand_computed_values(files, capsys):
    """DCG@3 by hand: evaluate uses the grades, compare binary relevance (gain 1)."""
    assert main(["evaluate", *files, "-m", "DCG@3", "-f", "tsv"]) == 0
    scores = _tsv(capsys).set_index("system")["DCG@3"]
    log3 = np.log2(3.0)
    # per topic: r1 = a(2) b(1) c(0), r2 = f(2) e(0) d(1), r3 = c(0) a(2) b(1)
    want = {"r1": 2 + 1 / log3, "r2": 2 + 1 / 2, "r3": 2 / log3 + 1 / 2}
    assert scores.to_dict() == pytest.approx(want, abs=1e-5)
    assert main(["compare", *files, "--prior", "0.3", "-m", "DCG@3", "-f", "tsv"]) == 0
    frame = _tsv(capsys).set_index(["system_a", "system_b"])
    assert frame.loc[("r1", "r2"), "e_delta_map"] == pytest.approx((1 + 1 / log3) - 1.5, abs=1e-5)
    assert frame.loc[("r1", "r2"), "sd_delta_map"] == 0  # the top 3 are all judged


@pytest.mark.parametrize("name", NAMES)
def test_power_takes_every_measure(files, capsys, name):
    argv = ["power", *files, "--pool-depth", "1,2", "--n-topics", "2", "--repetitions", "2"]
    assert main([*argv, "-m", name, "-f", "tsv"]) == 0
    assert set(_tsv(capsys)["measure"]) == {name}


@pytest.mark.parametrize("name", NAMES)
def test_poolbias_parses_every_measure(name):
    """poolbias's parser and its parse step; each corrector then says which measures it supports."""
    argv = ["poolbias", "q", "r", "--groups", "g", "--pool-depth", "5", "-m", name, "-o", "o"]
    args = build_parser(["poolbias"]).parse_args(argv)
    assert [str(m) for m in parse_measures(args.measures)] == [str(parse_measure(name))]


def test_power_names_what_it_takes_for_an_unknown_measure(files, capsys):
    argv = ["power", *files, "--pool-depth", "1", "--n-topics", "2", "-m", "nDGC@10"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "did you mean 'nDCG@10' or 'ndcg_cut_10'?; power also takes P@k" in err
    assert "Traceback" not in err


def test_exact_moments_are_declared_by_the_registry():
    assert exact_measure_names() == ["AP[@k]", "DCG[@k]", "NumRelRet", "P@k", "RBP(p=0.8)[@k]"]
    assert has_closed_form("DCG@10") and has_closed_form("RBP(p=0.5)@4")
    assert not has_closed_form("P(rel=2)@10")  # the engine's p is at the campaign's threshold
    assert not has_closed_form("AP@10") and not has_closed_form("nDCG@10")
    assert not has_closed_form("no-such-measure")
    assert {cls.family for cls in measure_families() if cls.graded} == {"DCG", "ERR", "nDCG"}
