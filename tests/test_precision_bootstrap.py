"""Corpus bootstrap, AP intervals, MAP intervals, paired differences and meta-analysis.

Oracles: explicit list replication in Python, brute-force delete-one AP,
scipy.stats.bootstrap's BCa, exact enumeration / Monte Carlo for the small-R
limits, and simulated corpora drawn from a known population.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import make_campaign
from scipy import stats

from relimpute.data import Campaign
from relimpute.precision import (
    ap_intervals,
    corpus_bootstrap,
    logit,
    mean_intervals,
    meta_analysis,
    other_sample_coverage,
    paired_difference,
    small_r_corrected,
)
from relimpute.precision._kernels import POISSON1_CDF, jackknife_influence, resample_counts
from relimpute.precision.intervals import bca_bounds
from relimpute.precision.small_r import (
    expected_ap_random_ranks,
    silver_bullet_upper,
    unseen_share,
)


def _ap(relevance: list[int], n_relevant: int) -> float:
    found, total = 0, 0.0
    for k, rel in enumerate(relevance, start=1):
        if rel:
            found += 1
            total += found / k
    return total / n_relevant if n_relevant else float("nan")


def _campaign(lists: dict[str, list[str]], relevant: set[str], extra_relevant=()) -> Campaign:
    """One topic; ``extra_relevant`` are relevant documents no run retrieves."""
    docs = sorted({d for v in lists.values() for d in v} | set(extra_relevant))
    qrels = [("q", d, int(d in relevant or d in extra_relevant)) for d in docs]
    return make_campaign(qrels, lists)


def test_counts_are_poisson_one():
    counts = resample_counts(np.uint64(12345), 400, 500, POISSON1_CDF).ravel()
    values, freq = np.unique(np.minimum(counts, 5), return_counts=True)
    expected = stats.poisson.pmf(np.arange(6), 1.0)
    expected[-1] = stats.poisson.sf(4, 1.0)
    chi2 = stats.chisquare(freq, expected * counts.size)
    assert list(values) == list(range(6))
    assert chi2.pvalue > 1e-3
    assert abs(counts.mean() - 1.0) < 0.01 and abs(counts.var() - 1.0) < 0.02


def test_replicates_equal_explicit_replication():
    lists = {"a": ["d1", "d2", "d3", "d4", "d5"], "b": ["d3", "d6", "d1", "d7"]}
    relevant = {"d1", "d3", "d6"}
    campaign = _campaign(lists, relevant, extra_relevant=("r8", "r9"))
    boot = corpus_bootstrap(campaign, 300, rng=7)
    topic = campaign.topics[0]
    counts = resample_counts(np.uint64(boot.seeds[0]), 300, topic.n_docs, POISSON1_CDF)
    rel = topic.relevant(1)
    index = {d: i for i, d in enumerate(topic.doc_ids)}
    for s, name in enumerate(campaign.systems):
        for b in range(300):
            replicated = [
                int(rel[index[d]]) for d in lists[name] for _ in range(counts[b, index[d]])
            ]
            r_star = int(counts[b, rel].sum())
            expected = _ap(replicated, r_star)
            got = boot.replicates[s, 0, b]
            assert (np.isnan(expected) and np.isnan(got)) or got == pytest.approx(
                expected, abs=1e-12
            )
    assert boot.observed[0, 0] == pytest.approx(_ap([1, 0, 1, 0, 0], 5))
    assert boot.n_relevant[0] == 5


def test_units_on_threads_resample_serially_and_give_the_main_threads_numbers():
    """A study's units on a Dask worker's threads must not launch numba's threads (several at
    once can abort the process): off the main thread the serial kernel runs, with equal numbers."""
    import threading

    from relimpute.precision import _kernels

    lists = {"a": ["d1", "d2", "d3", "d4", "d5"], "b": ["d3", "d6", "d1", "d7"]}
    campaign = _campaign(lists, {"d1", "d3", "d6"}, extra_relevant=("r8",))
    want = corpus_bootstrap(campaign, 500, rng=3).replicates
    called = []
    serial = _kernels.bootstrap_ap_serial
    import relimpute.precision.resample as resample

    def spy(*args):
        called.append(threading.current_thread().name)
        return serial(*args)

    got = {}
    original, resample.bootstrap_ap_serial = resample.bootstrap_ap_serial, spy
    try:
        threads = [
            threading.Thread(target=lambda k=k: got.__setitem__(k, corpus_bootstrap(campaign, 500, rng=3).replicates))
            for k in range(3)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        resample.bootstrap_ap_serial = original
    assert len(called) == 3 and threading.main_thread().name not in called
    for k in range(3):
        np.testing.assert_array_equal(got[k], want)


def test_jackknife_influence_matches_brute_force_deletion():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = 12
        rel_flags = rng.random(n) < 0.4
        n_not = int(rng.integers(0, 3))
        relevant = np.r_[rel_flags, np.ones(n_not, dtype=bool)]
        r = int(relevant.sum())
        if r == 0:
            continue
        row = np.arange(n, dtype=np.int64)
        stop = int(np.nonzero(rel_flags)[0].max() + 1) if rel_flags.any() else 0
        got = jackknife_influence(row, stop, relevant, r)
        ap = _ap(list(rel_flags), r)
        for i in range(stop):
            kept = [int(x) for j, x in enumerate(rel_flags) if j != i]
            r_i = r - int(rel_flags[i])
            expected = ap - _ap(kept, r_i) if r_i else np.nan
            assert np.isnan(got[i]) if np.isnan(expected) else got[i] == pytest.approx(expected)
        if r > 1:
            assert got[stop] == pytest.approx(ap - _ap(list(rel_flags), r - 1))


def test_bca_bounds_equal_scipy():
    rng = np.random.default_rng(11)
    data = rng.exponential(size=40)
    res = stats.bootstrap(
        (data,), np.mean, method="BCa", n_resamples=999, confidence_level=0.9, rng=5
    )
    jack = np.array([np.delete(data, i).mean() for i in range(data.size)])
    u = jack.mean() - jack
    accel = np.sum(u**3) / (6 * np.sum(u**2) ** 1.5)
    low, high = bca_bounds(res.bootstrap_distribution, data.mean(), accel, 0.9)
    assert low == pytest.approx(res.confidence_interval.low, rel=1e-10)
    assert high == pytest.approx(res.confidence_interval.high, rel=1e-10)


def test_interval_methods_by_hand():
    campaign = _campaign({"a": ["d1", "d2", "d3", "d4"]}, {"d2", "d4"}, extra_relevant=("r5",))
    boot = corpus_bootstrap(campaign, 500, rng=2)
    reps = boot.replicates[0, 0]
    reps = reps[np.isfinite(reps)]
    ap = boot.observed[0, 0]
    normal = ap_intervals(boot, "normal", level=0.9)
    half = stats.norm.ppf(0.95) * reps.std(ddof=1)
    assert (normal.low[0, 0], normal.high[0, 0]) == pytest.approx((ap - half, ap + half))
    lo = ap_intervals(boot, "logit", level=0.9, epsilon=0.01)
    lhalf = stats.norm.ppf(0.95) * logit(reps, 0.01).std(ddof=1)
    expected = 1 / (1 + np.exp(-(np.log(ap / (1 - ap)) + np.array([-lhalf, lhalf]))))
    assert (lo.low[0, 0], lo.high[0, 0]) == pytest.approx(tuple(expected))
    pct = ap_intervals(boot, "percentile", level=0.9)
    assert (pct.low[0, 0], pct.high[0, 0]) == pytest.approx(tuple(np.quantile(reps, [0.05, 0.95])))
    assert set(ap_intervals(boot, "bca").to_frame().columns) >= {
        "system",
        "query_id",
        "low",
        "high",
    }
    with pytest.raises(ValueError, match="unknown interval method"):
        ap_intervals(boot, "student")


def test_other_sample_coverage_is_paper_value():
    # 2Φ(1.96/√2) − 1 = 0.834; the paper rounds 1.96/√2 to 1.39 and reports 83.5%
    assert other_sample_coverage(0.95) == pytest.approx(0.8342, abs=1e-4)
    assert 2 * stats.norm.cdf(1.39) - 1 == pytest.approx(0.835, abs=5e-4)


def _population_campaign(n_corpora: int, seed: int, size=6000, prevalence=0.02, depth=300):
    """Independent corpora from one population: relevant scores N(1.5, 1), others N(0, 1)."""
    rng = np.random.default_rng(seed)
    qrels, rows, aps = [], [], []
    for c in range(n_corpora):
        rel = rng.random(size) < prevalence
        score = rng.normal(size=size) + 1.5 * rel
        top = np.argsort(-score)[:depth]
        qid = f"c{c:03d}"
        docs = [f"{qid}-{i}" for i in range(size)]
        qrels.append(
            pd.DataFrame(
                {"query_id": qid, "doc_id": [docs[i] for i in np.nonzero(rel)[0]], "relevance": 1}
            )
        )
        rows.append(
            pd.DataFrame(
                {
                    "query_id": qid,
                    "doc_id": [docs[i] for i in top],
                    "score": -np.arange(depth, dtype=float),
                }
            )
        )
        aps.append(_ap(list(rel[top]), int(rel.sum())))
    campaign = Campaign.from_frames(pd.concat(qrels), {"sys": pd.concat(rows)})
    return campaign, np.array(aps)


def test_bootstrap_sd_matches_population_sd_and_other_corpus_coverage():
    campaign, aps = _population_campaign(60, seed=1)
    boot = corpus_bootstrap(campaign, 400, rng=3)
    assert boot.observed[0] == pytest.approx(aps)
    true_sd = aps.std(ddof=1)
    boot_sd = np.nanstd(boot.replicates[0], axis=-1, ddof=1)
    assert 0.8 < np.sqrt(np.mean(boot_sd**2)) / true_sd < 1.25
    # intervals on corpus i should hold corpus i+1's AP about 83.5% of the time
    iv = ap_intervals(boot, "logit")
    inside = (aps[1:] >= iv.low[0, :-1]) & (aps[1:] <= iv.high[0, :-1])
    assert 0.65 < inside.mean() <= 0.97


def test_small_r_limits():
    assert unseen_share(4, 0.05) == pytest.approx(0.527, abs=1e-3)  # the paper's 0.53
    rng = np.random.default_rng(0)
    n, m, r = 30, 3, 5
    sims = []
    for _ in range(20000):
        ranks = np.sort(rng.choice(n, size=m, replace=False) + 1)
        sims.append(np.sum(np.arange(1, m + 1) / ranks) / r)
    assert expected_ap_random_ranks(r, m, n) == pytest.approx(
        np.mean(sims), abs=4 * np.std(sims) / 140
    )
    u = unseen_share(r, 0.05)
    mix = [stats.binom.pmf(k, r, u) * expected_ap_random_ranks(r, k, n) for k in range(r + 1)]
    assert silver_bullet_upper(r, n, 0.05) == pytest.approx(sum(mix))
    campaign = _campaign({"a": ["n1", "n2", "n3"], "b": ["r1", "r2", "n1"]}, {"r1", "r2"})
    boot = corpus_bootstrap(campaign, 200, rng=1)
    corrected = small_r_corrected(ap_intervals(boot, "logit"), boot, np.array([[3], [3]]))
    assert corrected.low[0, 0] == 0.0
    assert corrected.high[0, 0] == pytest.approx(silver_bullet_upper(2, 3, 0.05))
    assert corrected.low[1, 0] <= 1 - unseen_share(2, 0.05) + 1e-12 and corrected.high[1, 0] == 1.0


def test_mean_intervals_by_hand():
    campaign, _ = _population_campaign(6, seed=4, size=2000, depth=100)
    boot = corpus_bootstrap(campaign, 300, rng=5)
    eps = 1e-3
    boot_map = mean_intervals(boot, "MAP", "bootstrap")
    per_resample = np.nanmean(boot.replicates[0], axis=0)
    assert boot_map.standard_error[0] == pytest.approx(np.std(per_resample, ddof=1))
    param = mean_intervals(boot, "MAP", "parametric", epsilon=eps)
    ap = boot.observed[0]
    sd_t = np.array([np.nanstd(logit(r, eps), ddof=1) for r in boot.replicates[0]])
    assert param.standard_error[0] == pytest.approx(np.sqrt(np.sum(((ap - ap**2) * sd_t) ** 2)) / 6)
    lmap = mean_intervals(boot, "L-MAP", "parametric", epsilon=eps)
    assert lmap.estimate[0] == pytest.approx(logit(ap, eps).mean())
    assert lmap.standard_error[0] == pytest.approx(np.sqrt(np.sum(sd_t**2)) / 6)
    assert param.to_frame().shape == (1, 9)


def test_paired_difference_uses_shared_resamples():
    lists = {
        "a": ["r1", "n1", "r2", "n2", "r3", "n3"],
        "b": ["r1", "n1", "r2", "n2", "n3", "r3"],
    }
    campaign = _campaign(lists, {"r1", "r2", "r3"}, extra_relevant=("r4",))
    boot = corpus_bootstrap(campaign, 2000, rng=9)
    same = paired_difference(boot, "a", "a", scale="ap")
    assert same.standard_error[0] == 0.0
    pair = paired_difference(boot, "a", "b", scale="ap")
    unpaired = np.hypot(*np.nanstd(boot.replicates[:, 0], axis=-1, ddof=1))
    assert pair.standard_error[0] < 0.5 * unpaired  # the two lists nearly agree
    assert pair.difference[0] == pytest.approx(boot.observed[0, 0] - boot.observed[1, 0])
    with pytest.raises(KeyError, match="unknown system"):
        paired_difference(boot, "a", "zzz")


def test_meta_analysis_fixed_by_hand_and_random_coverage():
    d = np.array([0.1, 0.3, -0.2, 0.5])
    se = np.array([0.1, 0.2, 0.3, 0.25])
    fixed = meta_analysis(d, se, "fixed")
    w = 1 / se**2
    assert fixed.effect == pytest.approx(np.sum(w * d) / w.sum())
    assert fixed.standard_error == pytest.approx(w.sum() ** -0.5)
    assert fixed.tau2 == 0.0
    rng = np.random.default_rng(1)
    covered = {"fixed": 0, "random": 0}
    trials = 600
    for _ in range(trials):
        se = rng.uniform(0.05, 0.3, size=40)
        d = 0.2 + rng.normal(scale=np.sqrt(se**2 + 0.2**2))
        for model in covered:
            res = meta_analysis(d, se, model)
            covered[model] += res.low <= 0.2 <= res.high
    assert abs(covered["random"] / trials - 0.95) < 0.035
    assert covered["fixed"] / trials < 0.8  # ignores the between-topic variance
    with pytest.raises(ValueError, match="positive standard error"):
        meta_analysis([0.1], [0.0])


def test_dl19_every_list_and_its_paired_difference(dl19):
    """Real runs: shapes, resamples centred on AP, pairing narrower than independence.

    (Speed is a benchmark: benchmarks/bench_bootstrap.py.)
    """
    boot = corpus_bootstrap(dl19, 300, rng=0)
    assert boot.replicates.shape == (37, 43, 300)
    assert abs(np.nanmean(boot.replicates) - boot.observed.mean()) < 0.02
    pair = paired_difference(boot, "p_bert", "bm25base_p", scale="ap")
    a, b = boot.systems.index("p_bert"), boot.systems.index("bm25base_p")
    independent = np.hypot(np.nanstd(boot.replicates[a], -1), np.nanstd(boot.replicates[b], -1))
    varies = independent > 0
    ratio = pair.standard_error[varies] / independent[varies]
    # shared corpora correlate the two systems' APs (median ratio 0.71 with seed 0)
    assert np.median(ratio) < 0.85
