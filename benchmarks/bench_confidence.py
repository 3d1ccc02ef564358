"""Speed of the confidence engine, and how far the two ratio treatments are apart on DL 2019.

Run ``python benchmarks/bench_confidence.py`` (a few minutes on 2 cores);
writes ``benchmarks/results/confidence.json`` and ``.md``. Parts:

1. DL 2019: all 666 pairs of the 37 runs x 43 topics at full depth, p = 1/2
   for every unjudged document (target < 5 s), with ``ratio="constant"``
   and ``"delta"``, how far their variances and confidences are apart, and
   both against 2,000 Monte Carlo draws (skipped when ../shared/data is absent).
2. Synthetic: 100 systems x 50 topics x depth 1,000 (4,950 pairs) from
   :func:`relimpute.simulate.simulate_campaign` with a depth-10 pool judged
   (target < 60 s and < 1 GB peak resident memory).
3. The same work through a straightforward implementation of the paper's
   formulas (Carterette 2007 §2.1: dense c_ij over the union of two rankings,
   the four variance sums with the O(n^3) triple sum, numba-compiled like the
   engine) at depth 100 and 1,000: a sample of (pair, topic) cells is timed
   and the full run extrapolated (it would take hours), checked against the
   engine on the sampled cells, and reported as a speed-up ratio.

Timings are wall-clock on a shared machine; the first call of each kernel is
excluded (numba compiles or loads its cache then).
"""

from __future__ import annotations

import json
import platform
import resource
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from numba import njit

from relimpute.confidence import ConfidenceEngine, relevant_moments
from relimpute.relevance import Uniform

HERE = Path(__file__).resolve().parent
DL19 = HERE.parent.parent / "shared" / "data" / "trec-dl-2019-passage"


def best_of(fn, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ---------------------------------------------------------------- the paper's formulas


@njit(cache=True)
def paper_delta_q(ranks_a, ranks_b, p):
    """E[ΔQ], Var[ΔQ] by Carterette 2007 §2.1 literally: dense c_ij and the O(n^3) triple sum."""
    n = p.shape[0]
    c = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            a = 1.0 / max(ranks_a[i], ranks_a[j]) if ranks_a[i] > 0 and ranks_a[j] > 0 else 0.0
            b = 1.0 / max(ranks_b[i], ranks_b[j]) if ranks_b[i] > 0 and ranks_b[j] > 0 else 0.0
            c[i, j] = a - b
    q = 1.0 - p
    mean = 0.0
    var = 0.0
    for i in range(n):
        mean += c[i, i] * p[i]
        var += c[i, i] ** 2 * p[i] * q[i]
        for j in range(i + 1, n):
            mean += c[i, j] * p[i] * p[j]
            var += c[i, j] ** 2 * p[i] * p[j] * (1.0 - p[i] * p[j])
        for j in range(n):
            if j != i:
                var += 2.0 * c[i, i] * c[i, j] * p[i] * p[j] * q[i]
        for j in range(n):
            if j == i:
                continue
            for k in range(j + 1, n):
                if k != i:
                    var += 2.0 * c[i, j] * c[i, k] * p[i] * p[j] * p[k] * q[i]
    return mean, var


def paper_cell(topic, p, row_a, row_b, depth):
    """One (pair, topic) cell over the union of the two truncated rankings."""
    ra = np.where(topic.ranks(row_a) <= depth, topic.ranks(row_a), 0)
    rb = np.where(topic.ranks(row_b) <= depth, topic.ranks(row_b), 0)
    union = np.flatnonzero((ra > 0) | (rb > 0))
    return paper_delta_q(ra[union].astype(np.float64), rb[union].astype(np.float64), p[union])


def bench_paper(campaign, estimate, depth, n_cells, seed, engine_seconds):
    rng = np.random.default_rng(seed)
    n_sys = campaign.n_systems
    n_pairs = n_sys * (n_sys - 1) // 2
    engine = ConfidenceEngine(depth=depth)
    result = engine.confidence(campaign, estimate, method="normal")
    paper_paired = {(int(a), int(b)): k for k, (a, b) in enumerate(result.pairs)}
    paper_cell(campaign.topics[0], estimate.p[0], 0, 1, 5)  # compile
    seconds, worst = 0.0, 0.0
    for _ in range(n_cells):
        a, b = sorted(rng.choice(n_sys, 2, replace=False))
        t = int(rng.integers(campaign.n_topics))
        topic, p = campaign.topics[t], estimate.p[t]
        start = time.perf_counter()
        mean, var = paper_cell(topic, p, a, b, depth)
        seconds += time.perf_counter() - start
        e_r = relevant_moments(topic, p, None, depth)[0]
        k = paper_paired[(int(a), int(b))]
        worst = max(
            worst,
            abs(mean / e_r - result.e_delta_ap[k, t]),
            abs(var / e_r**2 - result.var_delta_ap[k, t]) / max(result.var_delta_ap[k, t], 1e-300),
        )
    per_cell = seconds / n_cells
    full = per_cell * n_pairs * campaign.n_topics
    return {
        "depth": depth,
        "cells_timed": n_cells,
        "seconds_per_cell": per_cell,
        "extrapolated_seconds_all_pairs": full,
        "engine_seconds_all_pairs": engine_seconds,
        "speedup": full / engine_seconds,
        "max_discrepancy_vs_engine": worst,
    }


# ---------------------------------------------------------------- parts


def bench_dl19():
    if not (DL19 / "qrels.txt").is_file():
        print(f"skip: DL 2019 data not found at {DL19}")
        return None
    from relimpute.data import Campaign

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(DL19 / "qrels.txt", DL19 / "runs", rel_threshold=2)
    estimate = Uniform(0.5).fit_predict(campaign)
    out = {"runs": campaign.n_systems, "topics": campaign.n_topics, "pairs": 666}
    results = {}
    for ratio in ("constant", "delta"):
        engine = ConfidenceEngine(ratio=ratio)
        engine.confidence(campaign, estimate, method="normal")  # warm-up: numba cache load
        seconds, results[ratio] = best_of(lambda: engine.confidence(
            campaign, estimate, method="normal"
        ))
        out[f"compare_seconds_{ratio}"] = seconds
    const, delta = results["constant"], results["delta"]
    sd_ratio = delta.sd_delta_map / const.sd_delta_map
    map_sd_ratio = delta.scores.sd_map / const.scores.sd_map
    topic_ratio = np.sqrt(
        delta.scores.var_ap / np.where(const.scores.var_ap > 0, const.scores.var_ap, np.nan)
    )
    decided = lambda r: np.maximum(r.p_a_better, 1 - r.p_a_better) >= 0.95  # noqa: E731
    out["constant_vs_delta"] = {
        "pair_sd_ratio_delta_over_constant": summary(sd_ratio),
        "pair_abs_diff_p_a_better": summary(np.abs(delta.p_a_better - const.p_a_better)),
        "pairs_decided_at_0.95_constant": int(decided(const).sum()),
        "pairs_decided_at_0.95_delta": int(decided(delta).sum()),
        "system_map_sd_ratio_delta_over_constant": summary(map_sd_ratio),
        "system_topic_ap_sd_ratio_delta_over_constant": summary(
            topic_ratio[np.isfinite(topic_ratio)]
        ),
    }
    n_draws = 2000
    start = time.perf_counter()
    mc = ConfidenceEngine().confidence(
        campaign, estimate, n_draws=n_draws, rng=2007, method="monte carlo"
    )
    out["monte_carlo"] = {
        "draws": n_draws,
        "seconds": time.perf_counter() - start,
        "map_sd_ratio_mc_over_delta": summary(mc.scores.sd_map / delta.scores.sd_map),
        "map_sd_ratio_mc_over_constant": summary(mc.scores.sd_map / const.scores.sd_map),
        "pair_sd_ratio_mc_over_delta": summary(mc.sd_delta_map / delta.sd_delta_map),
        "pair_abs_diff_p_a_better_mc_vs_delta": summary(np.abs(mc.p_a_better - delta.p_a_better)),
    }
    return out


def summary(x):
    x = np.asarray(x, dtype=float)
    return {
        "min": float(x.min()),
        "median": float(np.median(x)),
        "mean": float(x.mean()),
        "max": float(x.max()),
    }


def bench_synthetic():
    from relimpute.simulate import simulate_campaign

    rss_before = peak_rss_mb()
    start = time.perf_counter()
    sim = simulate_campaign(
        n_topics=50, n_systems=100, n_docs=20_000, depth=1000, short_fraction=0.0, rng=2007
    )
    campaign = sim.campaign.pooled(10)
    estimate = Uniform(0.5).fit_predict(campaign)
    build = time.perf_counter() - start
    rss_built = peak_rss_mb()
    engine = ConfidenceEngine()
    small = campaign.subset(systems=campaign.systems[:2], topics=campaign.query_ids[:1])
    engine.confidence(small, Uniform(0.5).fit_predict(small), method="normal")  # warm-up
    start = time.perf_counter()
    result = engine.confidence(campaign, estimate, method="normal")
    seconds = time.perf_counter() - start
    tracemalloc.start()  # numpy buffers of one more run (the kernels allocate O(n) scratch only)
    engine.confidence(campaign, estimate, method="normal")
    traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    out = {
        "systems": campaign.n_systems,
        "topics": campaign.n_topics,
        "depth": 1000,
        "docs_per_topic": 20_000,
        "pairs": len(result.pairs),
        "unjudged_retrieved_per_topic": float(
            np.mean([(~t.judged & t.retrieved()).sum() for t in campaign.topics])
        ),
        "build_seconds": build,
        "compare_seconds": seconds,
        "peak_rss_mb_before_campaign": rss_before,
        "peak_rss_mb_after_campaign": rss_built,
        "peak_rss_mb_after_compare": peak_rss_mb(),
        "compare_traced_peak_mb": traced_peak,
    }
    start = time.perf_counter()
    engine100 = ConfidenceEngine(depth=100)
    engine100.confidence(campaign, estimate, method="normal")
    seconds100 = time.perf_counter() - start
    out["compare_seconds_depth_100"] = seconds100
    out["paper_depth_100"] = bench_paper(campaign, estimate, 100, 40, 1, seconds100)
    out["paper_depth_1000"] = bench_paper(campaign, estimate, 1000, 2, 2, seconds)
    return out


def markdown(report) -> str:
    lines = ["# Confidence engine benchmark", "", f"Machine: {report['machine']}", ""]
    dl = report.get("dl19")
    if dl:
        cd = dl["constant_vs_delta"]
        lines += [
            "## DL 2019: 666 pairs x 43 topics, full depth, p = 1/2 for unjudged",
            "",
            "| ratio | compare (s) | target |",
            "|---|---|---|",
            f"| constant | {dl['compare_seconds_constant']:.2f} | < 5 |",
            f"| delta | {dl['compare_seconds_delta']:.2f} | < 5 |",
            "",
            "How far the delta-method and constant-E[R] variances are apart (ratio of sd, delta / constant):",
            "",
            "| quantity | min | median | max |",
            "|---|---|---|---|",
        ]
        for key, label in [
            ("pair_sd_ratio_delta_over_constant", "sd of dMAP per pair"),
            ("system_map_sd_ratio_delta_over_constant", "sd of MAP per system"),
            ("system_topic_ap_sd_ratio_delta_over_constant", "sd of AP per system and topic"),
            ("pair_abs_diff_p_a_better", "abs. difference of p_a_better"),
        ]:
            s = cd[key]
            lines.append(f"| {label} | {s['min']:.4f} | {s['median']:.4f} | {s['max']:.4f} |")
        lines += [
            "",
            f"Pairs decided at max(P, 1-P) >= 0.95: constant {cd['pairs_decided_at_0.95_constant']}, "
            f"delta {cd['pairs_decided_at_0.95_delta']} of 666.",
            "",
        ]
        mc = dl["monte_carlo"]
        lines += [
            f"Monte Carlo check ({mc['draws']} draws of every unjudged document, AP with the "
            f"drawn R, all 37 runs: {mc['seconds']:.1f} s); ratio of sd, median (min-max):",
            "",
        ]
        for key, label in [
            ("map_sd_ratio_mc_over_delta", "MAP per system, MC / delta"),
            ("map_sd_ratio_mc_over_constant", "MAP per system, MC / constant"),
            ("pair_sd_ratio_mc_over_delta", "dMAP per pair, MC / delta"),
            ("pair_abs_diff_p_a_better_mc_vs_delta", "abs. difference of p_a_better, MC vs delta"),
        ]:
            s = mc[key]
            lines.append(f"- {label}: {s['median']:.4f} ({s['min']:.4f}-{s['max']:.4f})")
        lines.append("")
    syn = report["synthetic"]
    lines += [
        f"## Synthetic: {syn['systems']} systems x {syn['topics']} topics x depth {syn['depth']} "
        f"({syn['pairs']} pairs)",
        "",
        f"- compare (constant ratio): {syn['compare_seconds']:.2f} s (target < 60 s); "
        f"at depth 100: {syn['compare_seconds_depth_100']:.2f} s",
        f"- peak resident memory of the process: {syn['peak_rss_mb_after_compare']:.0f} MB "
        f"({syn['peak_rss_mb_after_campaign']:.0f} MB after building the campaign; target < 1 GB); "
        f"peak of the arrays compare allocates: {syn['compare_traced_peak_mb']:.0f} MB",
        f"- unjudged retrieved documents per topic: {syn['unjudged_retrieved_per_topic']:.0f} "
        "(depth-10 pool judged)",
        "",
        "## Against a straightforward implementation of the paper's formulas",
        "",
        "Dense c_ij over the union of the two rankings and the four variance sums of "
        "Carterette 2007 §2.1 (O(n^3)), numba-compiled; a sample of (pair, topic) cells "
        "timed and extrapolated to all pairs x topics.",
        "",
        "| depth | cells timed | s / cell | all pairs, extrapolated (s) | engine (s) | speed-up | "
        "max discrepancy |",
        "|---|---|---|---|---|---|---|",
    ]
    for key in ("paper_depth_100", "paper_depth_1000"):
        b = syn[key]
        lines.append(
            f"| {b['depth']} | {b['cells_timed']} | {b['seconds_per_cell']:.4g} | "
            f"{b['extrapolated_seconds_all_pairs']:.3g} | {b['engine_seconds_all_pairs']:.2f} | "
            f"{b['speedup']:.3g}x | {b['max_discrepancy_vs_engine']:.1e} |"
        )
    lines += ["", "Command: `python benchmarks/bench_confidence.py`", ""]
    return "\n".join(lines)


def main() -> None:
    report = {
        "machine": f"{platform.processor() or platform.machine()}, python {platform.python_version()}"
    }
    report["dl19"] = bench_dl19()
    report["synthetic"] = bench_synthetic()
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "confidence.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "confidence.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
