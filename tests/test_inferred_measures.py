"""xinfAP, infNDCG, iP@k and inferred counts against NIST's sample_eval.pl.

A case derived by hand runs everywhere; the script itself (../shared/oracles,
Perl) is run on the real bioCADDIE 2016 sampled qrels with runs built over its
docnos when perl, the script and the data are present, and the test skips with
the reason otherwise. Tolerance 1e-4: the script prints four decimals.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

from relimpute.errors import InputError
from relimpute.io import read_run, read_sampled_qrels
from relimpute.measures.inferred import EPSILON, SampledQrels, sample_eval, sample_eval_runs

from conftest import SHARED_DATA

ORACLE = SHARED_DATA.parent / "oracles" / "sample_eval.pl"
BIOCADDIE = SHARED_DATA / "biocaddie-2016-sampled" / "qrels-sampled.txt"
#: the script's output names and ours
NAMES = {
    "infAP": "xinfAP",
    "infNDCG": "infNDCG",
    "iP10": "iP@10",
    "iP50": "iP@50",
    "iP1000": "iP@1000",
    "inum_rel_ret": "iNumRelRet",
    "inum_rel": "iNumRel",
    "num_ret": "NumRet",
}

HAND_QRELS = """\
1 0 a 1 1
1 0 b 1 0
1 0 c 2 1
1 0 d 2 -1
1 0 e 2 0
1 0 f 2 -1
"""
HAND_RUN = "1 Q0 a 1 4 r\n1 Q0 x 2 3 r\n1 Q0 c 3 2 r\n1 Q0 d 4 1 r\n"


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_case_derived_by_hand(tmp_path):
    """Stratum 1 judged whole (a rel, b non), stratum 2 half sampled (c rel, e non; d, f not).

    R̂ = 1·2/2 + 1·4/2 = 3. The run ranks a, x (outside the pool), c, d:
    a at rank 1 has precision 1; c at rank 3 has 1/3 + (1/3)·(1+ε)/(1+3ε)
    (one pooled document above, a, of stratum 1, sampled and relevant).
    """
    qrels = read_sampled_qrels(_write(tmp_path, "q.txt", HAND_QRELS))
    scores = sample_eval(qrels, read_run(_write(tmp_path, "r.txt", HAND_RUN)))
    smooth = (1 + EPSILON) / (1 + 3 * EPSILON)
    topic = scores.loc["1"]
    assert topic["iNumRel"] == pytest.approx(3.0, abs=1e-12)
    assert topic["xinfAP"] == pytest.approx(1 / 3 * 1 + 2 / 3 * (1 / 3 + smooth / 3), abs=1e-12)
    # d_1 = 1 (a), d_2 = 2 (c, d) with one sampled, relevant, in each
    assert topic["iNumRelRet"] == pytest.approx(3 * smooth, abs=1e-12)
    assert topic["iP@10"] == pytest.approx(3 * smooth / 10, abs=1e-12)
    # DCG per stratum: a gains 1 at rank 1, c gains 1/log2(4) at rank 3; ideal: R̂ = 3 of grade 1
    ideal = 1 + 1 / math.log2(3) + 1 / 2
    assert topic["infNDCG"] == pytest.approx(3 * (1 / 3 * 1 + 2 / 3 * 0.5) / ideal, abs=1e-12)
    assert topic["NumRet"] == 4
    assert scores.loc["all", "xinfAP"] == topic["xinfAP"]


def test_ties_are_broken_by_docno_descending_and_zeros_stripped_in_runs_only(tmp_path):
    qrels = read_sampled_qrels(_write(tmp_path, "q.txt", HAND_QRELS))
    tied = "01 Q0 a 1 1 r\n01 Q0 c 2 1 r\n01 Q0 x 3 1 r\n"
    scores = sample_eval(qrels, read_run(_write(tmp_path, "r.txt", tied)))
    # docno descending: x (outside the pool), c, a; c has nothing pooled above it,
    # a has c above it (stratum 2, sampled, relevant)
    smooth = (1 + EPSILON) / (1 + 3 * EPSILON)
    c_prec, a_prec = 1 / 2, 1 / 3 + smooth / 3
    assert list(scores.index) == ["1", "all"]
    assert scores.loc["1", "xinfAP"] == pytest.approx(1 / 3 * a_prec + 2 / 3 * c_prec, abs=1e-12)


def test_a_run_longer_than_the_cut_off_is_read_to_it(tmp_path):
    qrels = read_sampled_qrels(_write(tmp_path, "q.txt", HAND_QRELS))
    lines = [f"1 Q0 z{i:02d} 0 {100 - i} r" for i in range(12)] + ["1 Q0 a 0 1 r"]
    scores = sample_eval(qrels, read_run(_write(tmp_path, "r.txt", "\n".join(lines))), max_rank=10)
    assert scores.loc["1", "xinfAP"] == 0  # a is at rank 13, past the cut-off
    assert scores.loc["1", "NumRet"] == 13 and scores.loc["all", "NumRet"] == 10


def test_runs_ranked_together_score_as_each_alone(tmp_path):
    """One sort and one hash pass for many runs give each run's own numbers, exactly: ties,
    zero-padded topics, a topic one run lacks, and a document listed twice (its last line)."""
    qrels = SampledQrels(read_sampled_qrels(_write(tmp_path, "q.txt", HAND_QRELS
                                                   + "2 0 g 1 1\n2 0 h 1 -1\n")))
    runs = [
        pd.DataFrame({"query_id": ["1"] * 4 + ["2"] * 2, "doc_id": list("axcdgh"),
                      "score": [4.0, 3, 2, 1, 2, 2]}),
        pd.DataFrame({"query_id": ["01"] * 3, "doc_id": list("acx"), "score": [1.0, 1, 1]}),
        pd.DataFrame({"query_id": ["1"] * 4 + ["2"], "doc_id": list("cadcg"),
                      "score": [1.0, 3, 2, 4, 1]}),  # c twice: its last line, score 4, counts
    ]
    repeating = []
    together = sample_eval_runs(qrels, runs, repeating.append)
    assert repeating == [2]
    for run, table in zip(runs, together):
        alone = sample_eval(qrels, run)
        assert list(table.index) == list(alone.index)
        assert np.array_equal(table.to_numpy(), alone.to_numpy())
    assert together[2].loc["1", "xinfAP"] == sample_eval(qrels, runs[2].iloc[1:]).loc["1", "xinfAP"]
    assert together[2].loc["1", "NumRet"] == 4  # the script counts the run's lines


def test_lists_scored_together_score_as_each_alone_over_many_strata():
    """Every run's list of a topic is scored at once (counts cumulated within each list):
    12 strata, grades 0-2, runs that start with a relevant or an outside document."""
    rng = np.random.default_rng(5)
    docs = [f"d{i}" for i in range(300)]
    qrels = pd.DataFrame({"query_id": "7", "doc_id": docs, "stratum": rng.integers(1, 13, 300),
                          "relevance": rng.integers(-1, 3, 300)})
    design = SampledQrels(qrels, gains={1: 0})
    runs = [pd.DataFrame({"query_id": "7", "doc_id": list(rng.choice(docs + ["out"] * 40,
                                                                     size=120, replace=False)),
                          "score": rng.normal(size=120)}) for _ in range(6)]
    together = sample_eval_runs(design, runs)
    for run, table in zip(runs, together):
        assert np.allclose(table.to_numpy(), sample_eval(design, run).to_numpy(), rtol=0,
                           atol=1e-12)
    assert len({table.loc["7", "xinfAP"] for table in together}) == len(runs)


def test_gain_mapping_applies_before_everything(tmp_path):
    qrels = read_sampled_qrels(_write(tmp_path, "q.txt", HAND_QRELS.replace("c 2 1", "c 2 2")))
    run = read_run(_write(tmp_path, "r.txt", HAND_RUN))
    plain = sample_eval(qrels, run)
    dropped = sample_eval(qrels, run, gains={2: 0})
    assert dropped.loc["1", "iNumRel"] == pytest.approx(1.0)  # c mapped to nonrelevant
    assert plain.loc["1", "iNumRel"] == pytest.approx(3.0)


def test_a_topic_with_no_judged_relevant_document_scores_zero(tmp_path):
    qrels = read_sampled_qrels(_write(tmp_path, "q.txt", HAND_QRELS + "2 0 g 1 0\n2 0 h 1 -1\n"))
    run = read_run(_write(tmp_path, "r.txt", HAND_RUN + "2 Q0 g 1 2 r\n2 Q0 h 2 1 r\n"))
    scores = sample_eval(qrels, run)
    assert scores.loc["2", ["xinfAP", "infNDCG", "iNumRel"]].tolist() == [0, 0, 0]
    assert scores.loc["all", "xinfAP"] == pytest.approx(scores.loc["1", "xinfAP"] / 2)


# --------------------------------------------------------------------------- reading


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 0 a 1 1\n1 0 b 1\n", "line 2: expected 5 columns"),
        ("1 0 a 1 1\n1 0 b x 0\n", "line 2"),
        ("1 0 a 1 1\n1 0 a 2 0\n", "listed twice (stratum 1 on line 1, stratum 2 here)"),
        ("1 0 a 1 -2\n", "relevance -2 is outside"),
    ],
)
def test_bad_sampled_qrels_name_the_line(tmp_path, text, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_sampled_qrels(_write(tmp_path, "q.txt", text))


def test_a_stratum_with_nothing_judged_is_named_in_a_warning(tmp_path):
    text = "2 0 c 1 -1\n1 0 a 1 1\n1 0 b 2 -1\n10 0 d 4 -1\n10 0 e 3 -1\n"
    with pytest.warns(UserWarning, match="no document of topic 1 stratum 2") as caught:
        read_sampled_qrels(_write(tmp_path, "q.txt", text))
    # the strata in (topic, stratum) order, the warning at the reader's caller
    assert "of topic 1 stratum 2, topic 10 stratum 3, topic 10 stratum 4, topic 2 stratum 1 " \
        "was judged" in str(caught[0].message)
    assert caught[0].filename == __file__


# --------------------------------------------------------------------------- the script


def _script_output(qrels, run, *extra) -> dict[tuple[str, str], float]:
    quiet = [] if extra else ["-q"]  # the script drops -q when -G follows
    result = subprocess.run(
        ["perl", str(ORACLE), *quiet, str(qrels), str(run), *extra],
        capture_output=True, text=True, check=True,
    )
    out = {}
    for line in result.stdout.splitlines():
        measure, topic, value = line.split()
        out[NAMES.get(measure, measure), topic] = float(value)
    return out


def _require_script():
    if shutil.which("perl") is None:
        pytest.skip("perl is not installed: sample_eval.pl cannot run")
    if not ORACLE.is_file() or not BIOCADDIE.is_file():
        pytest.skip(f"{ORACLE} or {BIOCADDIE} not found (../shared is not beside the repo)")


def _runs(tmp_path, qrels: pd.DataFrame) -> list:
    """Runs over the collection's docnos: random, tied, past 1,000, zero-padded, and good."""
    rng = np.random.default_rng(41)
    paths = []
    for kind in ("random", "ties", "long", "zeros", "good"):
        lines = []
        for topic, rows in qrels.groupby("query_id", sort=False):
            n = 1200 if kind == "long" else 300
            docs = rows["doc_id"].to_numpy()
            weight = rng.normal(size=len(docs)) + (5.0 * (rows["relevance"].to_numpy() > 0)
                                                   if kind == "good" else 0)
            pick = np.argsort(-weight)[:n] if kind == "good" else rng.permutation(len(docs))[:n]
            names = np.concatenate([docs[pick], [f"outside{i}" for i in range(20)]])
            scores = (rng.integers(0, 30, len(names)) if kind == "ties"
                      else np.sort(rng.normal(size=len(names)))[::-1])
            tid = "0" + topic if kind == "zeros" else topic
            lines += [f"{tid} Q0 {d} {i} {s} {kind}" for i, (d, s) in enumerate(zip(names, scores))]
        path = tmp_path / f"{kind}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def _assert_equal_to_script(ours: pd.DataFrame, script: dict) -> None:
    assert script, "the script printed nothing"
    for (measure, topic), value in script.items():
        assert ours.loc[topic, measure] == pytest.approx(value, abs=1e-4), (measure, topic)


def test_equal_to_sample_eval_on_biocaddie(tmp_path):
    _require_script()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qrels = read_sampled_qrels(BIOCADDIE)
    for path in _runs(tmp_path, qrels):
        ours = sample_eval(qrels, read_run(path))
        _assert_equal_to_script(ours, _script_output(BIOCADDIE, path))
    good = tmp_path / "good.txt"
    mapped = sample_eval(qrels, read_run(good), gains={1: 0, 2: 3})
    _assert_equal_to_script(mapped, _script_output(BIOCADDIE, good, "-G", "1=0", "2=3"))


def test_equal_to_sample_eval_on_the_hand_case(tmp_path):
    _require_script()
    qrels_path = _write(tmp_path, "q.txt", HAND_QRELS + "2 0 g 1 0\n2 0 h 1 -1\n")
    run_path = _write(tmp_path, "r.txt", HAND_RUN + "02 Q0 g 1 2 r\n02 Q0 h 2 2 r\n")
    ours = sample_eval(read_sampled_qrels(qrels_path), read_run(run_path))
    _assert_equal_to_script(ours, _script_output(qrels_path, run_path))
