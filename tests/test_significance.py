"""Topic-level tests against a baseline: scipy as the oracle, hand-computed corrections."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from relimpute.cli import main
from relimpute.measures.significance import (
    adjust,
    benjamini_hochberg,
    compare_to_baseline,
    holm,
    randomization_test,
)

P = np.array([0.01, 0.04, 0.03, 0.005])


def test_holm_matches_hand_computed_values():
    # sorted 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.02 0.03 0.06 0.06
    np.testing.assert_allclose(holm(P), [0.03, 0.06, 0.06, 0.02], rtol=1e-12)


def test_bh_matches_hand_computed_values():
    # sorted p*m/i: 0.02, 0.02, 0.04, 0.04 -> running min from the top: same
    np.testing.assert_allclose(benjamini_hochberg(P), [0.02, 0.04, 0.04, 0.02], rtol=1e-12)


def test_corrections_leave_nan_out_of_the_family():
    p = np.array([0.01, np.nan, 0.02])
    np.testing.assert_allclose(holm(p), [0.02, np.nan, 0.02])
    np.testing.assert_allclose(benjamini_hochberg(p), [0.02, np.nan, 0.02])
    np.testing.assert_array_equal(adjust(p, "none"), p)
    with pytest.raises(ValueError, match="correction"):
        adjust(p, "bonferroni")


def _random_pvalue_sets(seed: int):
    """200 sets of 1-11 p-values, many of them small."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(0, 0.3, size=rng.integers(1, 12)) ** 2 for _ in range(200)]


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
def test_holm_rejects_what_the_step_down_procedure_rejects(alpha):
    for p in _random_pvalue_sets(3):
        m = len(p)
        rejected = np.zeros(m, dtype=bool)
        for i, j in enumerate(np.argsort(p)):  # reject while p_(i) <= alpha / (m - i)
            if p[j] > alpha / (m - i):
                break
            rejected[j] = True
        np.testing.assert_array_equal(holm(p) <= alpha, rejected)


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
def test_bh_rejects_what_the_step_up_procedure_rejects(alpha):
    for p in _random_pvalue_sets(4):
        m = len(p)
        order = np.argsort(p)
        passing = [i for i in range(m) if p[order[i]] <= alpha * (i + 1) / m]
        rejected = np.zeros(m, dtype=bool)
        if passing:
            rejected[order[: max(passing) + 1]] = True
        np.testing.assert_array_equal(benjamini_hochberg(p) <= alpha, rejected)


def test_exact_randomization_test_equals_scipy_permutation_test():
    rng = np.random.default_rng(0)
    for n in (3, 7, 12):
        a, b = rng.uniform(size=n), rng.uniform(size=n)
        oracle = stats.permutation_test(
            (a, b),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            n_resamples=np.inf,
            vectorized=True,
        ).pvalue
        assert randomization_test(a - b, permutations=10_000) == pytest.approx(oracle, abs=1e-12)


def test_sampled_randomization_test_is_close_to_the_exact_one():
    rng = np.random.default_rng(1)
    d = rng.normal(0.15, 1.0, size=18)  # 2^18 sign vectors: exact is feasible as an oracle
    exact = randomization_test(d, permutations=2**18)
    sampled = randomization_test(d, permutations=20_000, rng=2)
    # binomial standard error of a p-value near 0.5 from 20 000 draws is 0.0035
    assert sampled == pytest.approx(exact, abs=0.015)
    assert 0.0 < exact < 1.0


def test_randomization_edge_cases():
    assert randomization_test(np.zeros(5)) == 1.0
    assert np.isnan(randomization_test(np.array([])))
    # one positive difference: half the flips are as extreme
    assert randomization_test(np.array([0.3])) == 1.0
    assert randomization_test(np.full(20, 0.1), permutations=999, rng=0) == pytest.approx(1 / 1000)


def _per_topic(scores: dict[str, list[float]]) -> pd.DataFrame:
    rows = [
        {"system": s, "query_id": str(t), "measure": "AP", "value": v}
        for s, values in scores.items()
        for t, v in enumerate(values)
    ]
    return pd.DataFrame(rows)


def test_compare_to_baseline_uses_scipy_tests_and_corrects_across_runs():
    rng = np.random.default_rng(5)
    base = rng.uniform(size=25)
    runs = {"base": base, "better": base + rng.normal(0.1, 0.1, 25), "same": base + rng.normal(0, 0.1, 25)}
    frame = compare_to_baseline(_per_topic(runs), "base", permutations=5000, rng=0)
    assert list(frame["system"].unique()) == ["better", "same"]
    for system in ("better", "same"):
        rows = frame[frame["system"] == system].set_index("test")
        d = runs[system] - base
        t = stats.ttest_rel(runs[system], base)
        assert rows.loc["t", "statistic"] == pytest.approx(t.statistic, rel=1e-12)
        assert rows.loc["t", "pvalue"] == pytest.approx(t.pvalue, rel=1e-12)
        w = stats.wilcoxon(runs[system], base)
        assert rows.loc["wilcoxon", "pvalue"] == pytest.approx(w.pvalue, rel=1e-12)
        assert rows.loc["t", "effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        assert rows.loc["t", "mean_difference"] == pytest.approx(d.mean(), rel=1e-12)
        assert rows.loc["t", "n_topics"] == 25
    for test, rows in frame.groupby("test"):
        np.testing.assert_allclose(rows["pvalue_adjusted"], holm(rows["pvalue"].to_numpy()))
    assert frame.loc[frame["system"] == "better", "significant"].all()


def test_compare_to_baseline_pairs_only_topics_both_runs_scored():
    per_topic = _per_topic({"base": [0.1, 0.2, 0.3, 0.4], "run": [0.2, 0.3, 0.5, 0.6]})
    per_topic = per_topic.drop(index=per_topic.index[-1])  # run skipped topic 3
    frame = compare_to_baseline(per_topic, "base", tests=["t"])
    assert frame["n_topics"].tolist() == [3]
    assert frame["baseline_mean"].iloc[0] == pytest.approx(0.2)


def test_compare_to_baseline_rejects_bad_arguments():
    per_topic = _per_topic({"base": [0.1, 0.2], "run": [0.2, 0.3]})
    with pytest.raises(ValueError, match="baseline 'nope'"):
        compare_to_baseline(per_topic, "nope")
    with pytest.raises(ValueError, match="tests must be among"):
        compare_to_baseline(per_topic, "base", tests=["sign"])
    with pytest.raises(ValueError, match="alpha"):
        compare_to_baseline(per_topic, "base", alpha=1.5)


QRELS = "".join(f"{t} 0 d{i} {int(i < 3)}\n" for t in range(1, 9) for i in range(6))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "qrels.txt").write_text(QRELS)
    good = "".join(f"{t} Q0 d{i} {i + 1} {10 - i} good\n" for t in range(1, 9) for i in range(6))
    bad = "".join(f"{t} Q0 d{5 - i} {i + 1} {10 - i} bad\n" for t in range(1, 9) for i in range(6))
    (tmp_path / "runs" / "good").write_text(good)
    (tmp_path / "runs" / "bad").write_text(bad)
    return tmp_path


def test_cli_baseline_prints_tests_and_says_which_uncertainty(files, capsys):
    from io import StringIO

    code = main(
        ["evaluate", str(files / "qrels.txt"), str(files / "runs"), "-m", "P@3", "-m", "AP",
         "--baseline", "bad", "--correction", "bh", "-f", "tsv"]
    )
    out, err = capsys.readouterr()
    assert code == 0
    frame = pd.read_csv(StringIO(out), sep="\t")
    assert set(frame["system"]) == {"good"} and len(frame) == 6  # 2 measures x 3 tests
    p3 = frame[(frame["measure"] == "P@3") & (frame["test"] == "randomization")].iloc[0]
    assert p3["mean_difference"] == pytest.approx(1.0)
    assert p3["pvalue"] == pytest.approx(2 / 2**8)  # exact, two-sided: no flip and all flipped
    assert "topic-sampling uncertainty only" in err and "relimpute compare" in err


def test_cli_baseline_bad_input(files, capsys):
    code = main(["evaluate", str(files / "qrels.txt"), str(files / "runs"), "--baseline", "x"])
    assert code == 2
    assert "--baseline: unknown run(s) x; the runs are bad, good" in capsys.readouterr().err
    assert main(["evaluate", str(files / "qrels.txt"), str(files / "runs"), "--baseline", "bad",
                 "-q"]) == 2  # fmt: skip
    assert "drop -q" in capsys.readouterr().err


@pytest.mark.parametrize("method, ours", [("holm", holm), ("fdr_bh", benjamini_hochberg)])
def test_corrections_equal_statsmodels_multipletests(method, ours, monkeypatch):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    # multipletests calls gc.collect() on every call: 200 calls took 15 s (106 s under
    # xdist) in pytest's heap; the answers do not depend on it
    import gc

    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    for p in _random_pvalue_sets(5):
        oracle = multitest.multipletests(p, method=method)[1]
        np.testing.assert_allclose(ours(p), oracle, rtol=1e-12, atol=0)


def test_judgment_variance_widens_the_t_test_only():
    rng = np.random.default_rng(5)
    rows = [{"system": s, "query_id": f"q{t}", "measure": "AP", "value": rng.random()}
            for s in ("base", "run") for t in range(12)]  # fmt: skip
    tidy = pd.DataFrame(rows)
    plain = compare_to_baseline(tidy, "base", correction="none", rng=0)
    none = compare_to_baseline(tidy, "base", correction="none", rng=0,
                               judgment_variance={("AP", "run"): 0.0})  # fmt: skip
    pd.testing.assert_frame_equal(none, plain)  # no variance added: scipy's ttest_rel
    v = 0.004
    added = compare_to_baseline(tidy, "base", correction="none", rng=0,
                                judgment_variance={("AP", "run"): v})  # fmt: skip
    d = tidy[tidy.system == "run"]["value"].to_numpy() - tidy[tidy.system == "base"]["value"].to_numpy()
    t = d.mean() / np.sqrt(d.var(ddof=1) / len(d) + v)
    row = added[added["test"] == "t"].iloc[0]
    assert row["statistic"] == pytest.approx(t)
    assert row["pvalue"] == pytest.approx(2 * stats.t.sf(abs(t), len(d) - 1))
    others = added["test"] != "t"
    pd.testing.assert_frame_equal(added[others], plain[others])
