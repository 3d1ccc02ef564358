"""relimpute's design-based and PPI++ estimates of mean P@10 beside ``ppi-python``'s on the
same samples.

``ppi-python`` (Angelopoulos et al.; PPI++ with power tuning) estimates means and GLM
coefficients, so it has no AP or MAP: AP is a ratio of pair totals. P@10 is a mean over
documents, so the two can be put side by side on it. The universe and the truth are
``study.py``'s (each topic's depth-100 pool; truth: mean P@10 over topics with the whole pool
judged). Design: uniform within two strata (best rank 1–10, 11–100) without replacement at
``--budget`` of each stratum (``study.draw``); a run's top 10 lies in the first stratum.
Control: the default model fitted on a pilot sample (``study.pilot_model``), and that model's
probabilities reversed (a wrong control).

Columns, each a 95% interval of each run's mean P@10 and of the ΔP@10 of seeded pairs:

- ``relimpute ht`` / ``relimpute ppi++``: ``relimpute.confidence.survey.estimate`` (stratified
  variance; PPI++'s λ cross-fitted over topics);
- ``ppi-python classical`` / ``ppi-python ppi++``: ``ppi_py.ppi_mean_ci`` with λ = 0 and λ tuned
  (clipped to [0, 1]) over the topics pooled, called on the run's top-10 documents of every
  topic: the first stratum's judged documents as the labelled set (y = c·x, c the document's
  coefficient in the sum, 0 off the top 10) with design weights 1 / π (ppi-python scales
  them to mean 1: a Hájek mean), all of them as the unlabelled set: its interval of the mean
  over those N documents, times N / M (M = 10 × topics), is the same difference estimator as
  relimpute's with its own λ; its variance treats the labelled terms as independent draws
  from the stratum (no finite-population correction, topics pooled);
- ``ppi-python stratified``: topic-stratified PPI++ (Fisch et al. 2024): ``ppi_mean_ci`` on each
  topic alone (its λ tuned on that topic), each topic's estimate the midpoint and its se the
  half-width / 1.96, summed over topics with weights N_t / M (a topic with fewer than two judged
  documents has no interval and leaves the quantity without one).

    python examples/design_based/beside_ppi.py dl19 --budget 0.10 --samplings 100

Needs ``ppi-python`` (``pip install ppi-python``); exits with a message without it.
"""

from __future__ import annotations

import argparse
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.confidence.survey import estimate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study import COLLECTIONS, Universe, draw, load, pilot_model  # noqa: E402

K = 10
COLUMNS = ("relimpute ht", "relimpute ppi++", "ppi-python classical", "ppi-python ppi++",
           "ppi-python stratified")


def slot_coefficients(universe: Universe, members) -> tuple[list, float]:
    """Per topic, each universe document's coefficient in the P@10 (one run) or ΔP@10 (two
    runs) sum, and M, the number of slots the mean is over."""
    out = []
    for u in universe.topics:
        c = np.zeros(len(u["x"]))
        for sign, s in zip((1.0, -1.0), members):
            r = u["ranks"][s]
            c += sign * ((r > 0) & (r <= K))
        out.append(c)
    return out, K * len(universe.topics)


def ppi_python_ci(coefs, M, drawn, pi, x, p, lam, strata):
    """``ppi_mean_ci`` of the mean Σ c·x / M over the first stratum's documents (c = 0 off
    the runs' top 10): labelled = the judged ones, unlabelled = all of them."""
    from ppi_py import ppi_mean_ci

    lab_y, lab_p, lab_w, all_p = [], [], [], []  # ppi-python scales w to mean 1: Hájek
    for c, d, w, xs, ps, h in zip(coefs, drawn, pi, x, p, strata):
        keep = h == 0
        all_p.append(c[keep] * ps[keep])
        take = keep & d
        lab_y.append(c[take] * xs[take])
        lab_p.append(c[take] * ps[take])
        lab_w.append(1.0 / w[take])
    y, yh, w, yu = (np.concatenate(a) for a in (lab_y, lab_p, lab_w, all_p))
    n, N = len(y), len(yu)
    if n < 2:
        return np.nan, np.nan
    low, high = ppi_mean_ci(y, yh, yu, alpha=0.05, lam=lam, w=w)  # the mean over N
    return float(np.ravel(low)[0]) * N / M, float(np.ravel(high)[0]) * N / M


def stratified_ci(coefs, M, drawn, pi, x, p, strata):
    """Topic-stratified PPI++: :func:`ppi_python_ci` on each topic alone (λ tuned per topic),
    combined over topics as independent strata, 95% normal interval."""
    total = var = 0.0
    for c, d, w, xs, ps, h in zip(coefs, drawn, pi, x, p, strata):
        n_t = int((h == 0).sum())  # the topic's mean is over its first stratum's documents
        low, high = ppi_python_ci([c], n_t, [d], [w], [xs], [ps], None, [h])
        if not np.isfinite(low):
            return np.nan, np.nan
        total += n_t * (low + high) / 2
        var += (n_t * (high - low) / (2 * 1.959963984540054)) ** 2
    half = 1.959963984540054 * np.sqrt(var)
    return (total - half) / M, (total + half) / M


def sample_frame(universe: Universe, drawn, strata) -> pd.DataFrame:
    """The sampled qrels of one sampling (−1: in the universe, not judged)."""
    return pd.concat([pd.DataFrame({
        "query_id": u["query_id"], "doc_id": u["doc_ids"],
        "relevance": np.where(d, u["x"], -1).astype(int), "stratum": h})
        for u, d, h in zip(universe.topics, drawn, strata)], ignore_index=True)


def control_frame(universe: Universe, p) -> pd.DataFrame:
    return pd.concat([pd.DataFrame({"query_id": u["query_id"], "doc_id": u["doc_ids"], "p": q})
                      for u, q in zip(universe.topics, p)], ignore_index=True)


def bounds(table: pd.DataFrame, names) -> tuple[np.ndarray, np.ndarray]:
    """The mean-over-topics rows' interval of each (run, run_b) in ``names``."""
    rows = table[table["query_id"] == "all"].set_index(["run", "run_b"]).loc[names]
    return rows["low"].to_numpy(), rows["high"].to_numpy()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", choices=sorted(COLLECTIONS))
    parser.add_argument("--budget", type=float, default=0.10, help="share of each stratum judged")
    parser.add_argument("--samplings", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--out", type=Path, default=None, help="a TSV of the summary")
    args = parser.parse_args(argv)
    try:
        import ppi_py  # noqa: F401
    except ImportError:
        raise SystemExit("this comparison needs ppi-python: pip install ppi-python")
    campaign = load(args.collection)
    universe = Universe(campaign)
    systems = list(campaign.systems)
    runs = {s: campaign.run_frame(s) for s in systems}
    every = list(combinations(range(len(systems)), 2))
    chosen = np.random.default_rng(43).choice(len(every), min(args.pairs, len(every)),
                                              replace=False)
    quantities = [(s,) for s in range(len(systems))] + [every[i] for i in chosen]
    slots = [slot_coefficients(universe, members) for members in quantities]  # sampling-free
    truth = np.array([sum(float(c @ u["x"]) for c, u in zip(coefs, universe.topics)) / M
                      for coefs, M in slots])
    rng = np.random.default_rng(11)
    p_model, _ = pilot_model(universe, args.collection, args.budget, np.random.default_rng(5))
    controls = {"model": p_model, "reversed": [1 - q for q in p_model]}
    frames = {c: control_frame(universe, p) for c, p in controls.items()}
    pairs = [(systems[a], systems[b]) for a, b in (every[i] for i in chosen)]
    names = [(systems[m[0]], "") if len(m) == 1 else (systems[m[0]], systems[m[1]])
             for m in quantities]
    low = {(c, k): [] for c in controls for k in COLUMNS}
    high = {(c, k): [] for c in controls for k in COLUMNS}
    for b in range(args.samplings):
        strata = [(u["best"] > K).astype(int) for u in universe.topics]
        draws = [draw(None, h, True, args.budget, 1, rng) for h in strata]
        drawn = [d.drawn[0] for d in draws]
        pi = []
        for d, h in zip(drawn, strata):
            share = np.ones(len(h))
            for g in np.unique(h):
                share[h == g] = d[h == g].sum() / (h == g).sum()
            pi.append(share)
        sample = sample_frame(universe, drawn, strata)
        found = {"ht": bounds(estimate(sample, runs, measures=(f"P@{K}",), pairs=pairs,
                                       rel_threshold=1, sampling="stratified"), names)}
        for c, p in controls.items():
            found["ppi++"] = bounds(estimate(
                sample, runs, measures=(f"P@{K}",), pairs=pairs, control=frames[c],
                estimator="ppi++", rel_threshold=1, sampling="stratified"), names)
            for estimator, key in (("ht", "relimpute ht"), ("ppi++", "relimpute ppi++")):
                low[(c, key)].append(found[estimator][0])
                high[(c, key)].append(found[estimator][1])
            for lam, key in ((0.0, "ppi-python classical"), (None, "ppi-python ppi++")):
                got = [ppi_python_ci(*slot, drawn, pi, [u["x"] for u in universe.topics], p,
                                     lam, strata) for slot in slots]
                low[(c, key)].append(np.array([g[0] for g in got]))
                high[(c, key)].append(np.array([g[1] for g in got]))
            got = [stratified_ci(*slot, drawn, pi, [u["x"] for u in universe.topics], p, strata)
                   for slot in slots]
            low[(c, "ppi-python stratified")].append(np.array([g[0] for g in got]))
            high[(c, "ppi-python stratified")].append(np.array([g[1] for g in got]))
        print(f"  sampling {b + 1} of {args.samplings}", file=sys.stderr, flush=True)
    single = np.array([len(m) == 1 for m in quantities])
    rows = []
    for (c, key) in low:
        lo, hi = np.array(low[(c, key)]), np.array(high[(c, key)])
        covered = (lo <= truth) & (truth <= hi)
        width = hi - lo
        rows.append({"control": c, "estimator": key,
                     "P@10 coverage": covered[:, single].mean(),
                     "ΔP@10 coverage": covered[:, ~single].mean(),
                     "P@10 width": np.nanmean(width[:, single]),
                     "ΔP@10 width": np.nanmean(width[:, ~single])})
    summary = pd.DataFrame(rows)
    print(f"{args.collection}, uniform in strata at {args.budget:.0%}, {args.samplings} "
          f"samplings, {len(systems)} runs, {len(pairs)} pairs: 95% intervals of mean P@10")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.out:
        summary.to_csv(args.out, sep="\t", index=False)


if __name__ == "__main__":
    main()
