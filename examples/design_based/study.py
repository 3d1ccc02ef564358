"""Does the design-based guarantee hold? Coverage, bias and width of relimpute's HT and
model-assisted (GREG) estimates of MAP and ΔMAP over many seeded samplings.

Universe: each topic's depth-100 pool of the pooled runs (TREC-8: the 71 pooled runs, cut at
100; DL: every run). Truth: each run's AP with the official qrels restricted to the universe
(a pool document the qrels do not judge is nonrelevant; relevant = grade ≥ 2 on DL, ≥ 1 on
TREC-8), MAP its mean over topics — the estimand of relimpute.confidence.survey (statAP's ratio
AP of the fully judged universe). Designs (nothing judged beforehand):

- ``uniform``: uniform within two strata (best rank 1–10, 11–100) without replacement,
  n_h = max(2, round(rate · N_h)) (StratifiedDesign's rule with a floor of 2 so every stratum
  has a sample variance);
- ``pps``: statAP's Poisson design, π ∝ the summed AP-prior weight, floor 0.01 (PPSDesign);
- ``guided``: Poisson, π ∝ the default model's uncertainty about each document's weight in
  the ΔMAP of every pair (ModelGuidedDesign), floor 0.01, the model fitted on the pilot;
- ``census``: every document some run ranks in its top k judged (π = 1), the rest of the budget
  uniform below at one rate in every topic (:func:`census_plan`: k the deepest census within
  :data:`CENSUS_SHARE` of the budget); ``census-guided``: the same census, model-guided below;
- ``guided-strata``: uniform within strata of the model's uncertainty (the guided design's u,
  cut at :data:`STRATA_QUANTILES` over the pool), Neyman rates ∝ each stratum's mean u
  (:func:`strata_rates`);
- ``--floor-share S`` floors the Poisson designs at max(0.01, S × the budget's rate) instead.

Control variates (the prediction p of every universe document): ``none`` (HT), ``model``
(the default model, fusion with the settings chosen without the collection,
examples/calibration/held_out, fitted once per budget on a *pilot*: a uniform Poisson sample
at the same rate drawn with its own seed, independent of every scored sampling, so the control
is fixed given the pilot and the estimator exactly design-unbiased; the pilot's judgments are
not counted in the budget), ``half`` (0.5 everywhere), ``reversed`` (1 − the model's p) and,
on DL, ``llm-swapped`` (UMBRELA GPT-4o labels, p = 1 at grade ≥ 2, swapped on a third of the
topics; pairs without a label get 0). Estimators: HT for ``none``, the difference (GREG)
estimator (λ = 1) and PPI++ (λ per topic and quantity, cross-fitted) for the others; intervals
± 1.96 se, the se linearised and the delete-one jackknife (stratified: within the
stratum), the package's default; every sampling's numbers are
relimpute.confidence.survey.estimate's for that sample (without the ratio's bias correction,
PPI++'s λ cross-fitted over the topics of the same sampling), computed for many samplings at
once by relimpute.confidence.survey.batched, the arithmetic estimate itself runs on.

    python examples/design_based/study.py dl19 --samplings 500
    python examples/design_based/study.py trec8 --samplings 500 --designs uniform pps
    python examples/design_based/study.py dl19 --samplings 60 --budgets 0.05 --designs pps --controls none
    python examples/design_based/study.py dl21 --designs census --controls none \
        --bias-correction jackknife --variances jackknife averaged

``--bias-correction jackknife`` (stratified designs) reads the jackknife's corrected ratio;
``--pairs N`` scores ΔMAP on N seeded pairs (PPI++'s per-pair λ makes that correction cost
pairs × drawn² per topic).
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from relimpute.confidence.survey.batched import Samplings, TopicSamplings
from relimpute.confidence.survey.samplings import tuned_lambda

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DATA = ROOT.parent / "shared" / "data"
COLLECTIONS = {"dl19": ("trec-dl-2019-passage", 2), "dl21": ("trec-dl-2021-passage", 2),
               "trec8": ("trec-8-adhoc", 1)}
DEPTH, FLOOR, SEED, Z = 100, 0.01, 43, 1.959963984540054
BUDGETS = (0.05, 0.10, 0.20)
DESIGNS = ("uniform", "pps", "guided", "census", "census-guided", "guided-strata")
#: the census design's depth k: the deepest top k of every run (k ≥ 1) whose census takes at most
#: this share of the budget (fixed before any census cell was scored, not tuned)
CENSUS_SHARE = 0.4
#: the guided-strata design: strata cut at these quantiles of the model's uncertainty over the
#: pool, each stratum's rate ∝ its mean uncertainty, floored at this share of the budget's rate
STRATA_QUANTILES, STRATA_FLOOR_SHARE = (0.5, 0.8, 0.95), 0.25
CONTROLS = ("none", "model", "half", "reversed", "llm-swapped")
#: memory for one chunk of samplings of every topic, as estimated (their totals and Gram
#: matrices; DL 2019 at 25 samplings a chunk peaked at 1.5 GB)
CHUNK_BYTES = 2**29


def load(name: str):
    """The campaign (pooled runs, cut at 100, shrunk to their pool and judgments)."""
    from relimpute import Campaign
    from relimpute.groups import read_groups

    folder, threshold = COLLECTIONS[name]
    data = DATA / folder
    if not data.exists():
        raise SystemExit(f"{data} is absent: this study needs the shared data")
    campaign = Campaign.from_files(data / "qrels.txt", data / "runs", rel_threshold=threshold)
    if name == "trec8":
        table = pd.read_csv(data / "groups.tsv", sep="\t", dtype=str)
        campaign = campaign.subset(list(table.loc[table["pooled"] == "yes", "run"]))
    del read_groups
    return campaign.truncated(DEPTH, shrink=True)


class Universe:
    """Per topic: the universe's documents, relevance x, the runs' ranks, truth AP."""

    def __init__(self, campaign):
        self.campaign = campaign
        self.topics = []
        for t in campaign.topics:
            inside = t.retrieved(depth=DEPTH)
            at = np.flatnonzero(inside)
            ranks = np.stack([t.ranks(s)[at] for s in range(campaign.n_systems)]).astype(int)
            x = t.relevant(campaign.rel_threshold)[at].astype(float)
            best = np.where(ranks > 0, ranks, DEPTH + 1).min(axis=0)
            self.topics.append(dict(query_id=t.query_id, at=at, ranks=ranks, x=x, best=best,
                                    doc_ids=t.doc_ids[at].astype(str)))
        whole = [Samplings(np.ones((1, len(u["x"])), bool), inclusion=np.ones(len(u["x"])))
                 for u in self.topics]
        self.truth_ap = np.stack([TopicSamplings(w, u["x"], u["ranks"]).estimates(
            estimator="ht", variance="linearised", bias_correction=False).value[0]
            for u, w in zip(self.topics, whole)])  # (T, R)
        self.truth_map = self.truth_ap.mean(axis=0)
        self.pool_size = sum(len(u["x"]) for u in self.topics)


def pilot_model(universe: Universe, name: str, rate: float, rng) -> list[np.ndarray]:
    """The default model's p on every universe document, fitted on a pilot uniform Poisson
    sample at ``rate`` (its own seed; see the module docstring)."""
    from relimpute.selection.guided import fit_model

    campaign = universe.campaign
    masks = []
    for t, u in zip(campaign.topics, universe.topics):
        mask = np.zeros(t.n_docs, bool)
        mask[u["at"][rng.random(len(u["at"])) < rate]] = True
        masks.append(mask & t.judged)
    settings = ROOT / "examples" / "calibration" / "held_out" / name / "fusion.json"
    estimate = fit_model(campaign.with_judged(masks), str(settings), rng)
    p = [np.clip(np.asarray(estimate.p[i], float)[u["at"]], 0, 1)
         for i, u in enumerate(universe.topics)]
    return p, estimate


def llm_control(universe: Universe, name: str, rng) -> list[np.ndarray] | None:
    """UMBRELA GPT-4o labels as p (grade ≥ threshold), swapped on a third of the topics."""
    path = DATA / COLLECTIONS[name][0] / "llm" / "umbrela-gpt-4o.txt"
    if not path.exists():
        return None
    labels = pd.read_csv(path, sep=r"\s+", header=None, names=["q", "it", "d", "g"],
                         dtype={"q": str, "d": str})
    by = {q: dict(zip(f["d"], f["g"])) for q, f in labels.groupby("q")}
    swap = set(rng.choice(len(universe.topics), len(universe.topics) // 3, replace=False))
    out = []
    for i, u in enumerate(universe.topics):
        grades = by.get(u["query_id"], {})
        has = np.array([d in grades for d in u["doc_ids"]])
        p = np.array([grades.get(d, 0) >= COLLECTIONS[name][1] for d in u["doc_ids"]], float)
        out.append(np.where(has, 1 - p, 0.0) if i in swap else p)
    return out


def census_plan(universe: Universe, rate: float) -> tuple[int, float]:
    """(k, the rate below): every document some run ranks in its top k judged, k the deepest
    census within :data:`CENSUS_SHARE` of the budget (at least 1), the rest of the budget drawn
    uniformly below at one rate in every topic (xinfAP's ``1-k:1.0,k+1-100:rate``)."""
    budget = rate * universe.pool_size

    def size(k):
        return sum(int((top["best"] <= k).sum()) for top in universe.topics)

    k = 1
    while size(k + 1) <= CENSUS_SHARE * budget:
        k += 1
    return k, max(0.0, budget - size(k)) / (universe.pool_size - size(k))


def strata_rates(u: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """(stratum of each document, each stratum's rate): strata cut at :data:`STRATA_QUANTILES`
    of ``u``, rates ∝ the stratum's mean ``u`` in [:data:`STRATA_FLOOR_SHARE` · ``rate``, 1]
    spending ``rate`` of the documents (Neyman's allocation with the model's sd as S_h)."""
    stratum = np.searchsorted(np.quantile(u, STRATA_QUANTILES), u, side="right")
    size = np.bincount(stratum, minlength=len(STRATA_QUANTILES) + 1)
    mean = np.bincount(stratum, u, len(size)) / np.maximum(size, 1)
    if not (mean > 0).any():  # the model is sure of every document: uniform
        return stratum, np.full(len(size), rate)
    budget, lo, hi = rate * len(u), 0.0, 1.0 / mean[mean > 0].min()
    for _ in range(100):  # the scale c with Σ N_h clip(c ū_h) = budget
        c = (lo + hi) / 2
        spent = (size * np.clip(c * mean, STRATA_FLOOR_SHARE * rate, 1)).sum()
        lo, hi = (c, hi) if spent < budget else (lo, c)
    return stratum, np.clip(hi * mean, STRATA_FLOOR_SHARE * rate, 1)


def inclusion(universe: Universe, design: str, rate: float, estimate,
              floor_share: float = 0.0) -> list:
    """Per topic (π, stratum, stratified) of ``design`` at ``rate`` of the pool (stratified:
    π is each stratum's rate); the Poisson designs' π floor is the package's
    design_floor(:data:`FLOOR`, ``floor_share``, ``rate``)."""
    from relimpute.selection.designs import (ModelGuidedDesign, ap_prior, design_floor,
                                             pps_inclusion)
    from relimpute.selection.guided import guided_uncertainty

    floor = design_floor(FLOOR, floor_share, rate)
    out = []
    if design in ("guided", "census-guided", "guided-strata"):
        hidden = universe.campaign.with_judged([np.zeros(t.n_docs, bool)
                                                for t in universe.campaign.topics])
        u = guided_uncertainty(hidden, estimate, hidden.systems, DEPTH)
        census = np.zeros(len(u), bool)
        if design == "census-guided":  # π = 1 on the census's top k, guided on the rest
            best = pd.concat([pd.Series(top["best"], index=pd.MultiIndex.from_product(
                [[top["query_id"]], top["doc_ids"]])) for top in universe.topics])
            index = pd.MultiIndex.from_frame(u[["query_id", "doc_id"]].astype(str))
            census = best.reindex(index).to_numpy() <= census_plan(universe, rate)[0]
        if design == "guided-strata":
            stratum, rates = strata_rates(u["uncertainty"].to_numpy(), rate)
            strata = u.assign(h=stratum).set_index(["query_id", "doc_id"])["h"]
            print("guided strata: sizes", np.bincount(stratum).tolist(), "rates",
                  np.round(rates, 4).tolist(), flush=True)
        pi = np.ones(len(u))
        pi[~census] = ModelGuidedDesign(budget=int(round(rate * len(u) - census.sum())),
                                        floor=floor).inclusion(
            u["uncertainty"].to_numpy()[~census])
        frame = u.assign(pi=pi).set_index(["query_id", "doc_id"])["pi"]
    if design == "census":
        depth, below = census_plan(universe, rate)
    for top in universe.topics:
        n = len(top["x"])
        if design == "uniform":
            stratum = (top["best"] > 10).astype(int)
            out.append((np.array([rate, rate]), stratum, True))
        elif design == "census":
            out.append((np.array([1.0, below]), (top["best"] > depth).astype(int), True))
        elif design == "guided-strata":
            h = strata.loc[top["query_id"]].reindex(top["doc_ids"]).to_numpy().astype(int)
            out.append((rates, h, True))
        elif design == "pps":
            weight = np.where(top["ranks"] > 0, ap_prior(np.maximum(top["ranks"], 1), DEPTH),
                              0).sum(axis=0)
            out.append((pps_inclusion(weight, rate * n, floor), np.zeros(n, int), False))
        else:
            pi = frame.loc[top["query_id"]].reindex(top["doc_ids"]).to_numpy()
            out.append((pi, np.zeros(n, int), False))
    return out


def draw(pi, stratum, stratified, B, rng) -> Samplings:
    """B samplings of one topic (stratified: ``pi`` is each stratum's rate)."""
    n = len(stratum)
    if not stratified:
        return Samplings(rng.random((B, n)) < pi, inclusion=pi)
    drawn = np.zeros((B, n), bool)
    rates, pi = pi, np.ones(n)
    for h in np.unique(stratum):
        members = np.flatnonzero(stratum == h)
        size = len(members)
        k = min(size, max(2, int(np.floor(rates[h] * size + 0.5))))
        keys = rng.random((B, size))
        chosen = np.argsort(keys, axis=1)[:, :k]
        drawn[np.arange(B)[:, None], members[chosen]] = True
        pi[members] = k / size
    return Samplings(drawn, stratum=stratum, sampling="stratified")


def cell(universe, controls, design, rate, estimate, B, rng, chunk=None, floor_share=0.0,
         bias_correction="none", variances=("linearised", "jackknife"), n_pairs=None):
    """Per (control, estimator): MAP̂ and its variance (B, R), ΔMAP̂ of every pair and its
    variance (B, P), the mean λ. PPI++'s λ is cross-fitted over topics as
    :func:`relimpute.confidence.survey.estimate` does (per sampling, topic t's λ from the
    other topics' summed moments), so every topic of a chunk of samplings is held at once
    (``chunk``: samplings per chunk, by default as many as :data:`CHUNK_BYTES` allows)."""
    T, R = universe.truth_ap.shape
    pairs = np.array(list(combinations(range(R), 2)))
    if n_pairs is not None and n_pairs < len(pairs):  # a seeded subset, the same in every cell
        pairs = pairs[np.sort(np.random.default_rng([SEED, R]).choice(len(pairs), n_pairs,
                                                                      replace=False))]
    keys = [(c, e, v) for c in controls for e in (("ht",) if controls[c] is None
                                                    else ("model-assisted", "ppi++"))
            for v in variances]
    acc = {k: [np.zeros((B, R)), np.zeros((B, R)), np.zeros((B, len(pairs))),
               np.zeros((B, len(pairs))), 0.0] for k in keys}
    plan = inclusion(universe, design, rate, estimate, floor_share)
    draws = [draw(pi, stratum, stratified, B, rng) for pi, stratum, stratified in plan]
    quantities = ([(np.arange(R), 1.0)], [(pairs[:, 0], 1.0), (pairs[:, 1], -1.0)])
    if chunk is None:  # a sampling of one topic holds about 8 (3 R n + (4 R)²) bytes
        size = sum(3 * R * len(top["x"]) + (4 * R) ** 2 for top in universe.topics) * 8
        chunk = int(max(1, min(25, CHUNK_BYTES // max(size, 1))))
    for start in range(0, B, chunk):
        part = slice(start, start + chunk)
        judged = [TopicSamplings(Samplings(d.drawn[part], d.inclusion, d.stratum, d.sampling),
                                 top["x"], top["ranks"]) for d, top in zip(draws, universe.topics)]
        for c, ps in controls.items():
            topics = judged if ps is None else [j.with_control(ps[i])
                                                for i, j in enumerate(judged)]
            lams = [(None, None)] * T
            if ps is not None:  # leave topic t out of its own λ
                own = [[[np.nan_to_num(m) for m in topic.lambda_moments(members)]
                        for members in quantities] for topic in topics]
                total = [[sum(o[q][k] for o in own) for k in (0, 1)] for q in (0, 1)]
                lams = [tuple(tuned_lambda(total[q][0] - o[q][0], total[q][1] - o[q][1])
                              for q in (0, 1)) for o in own]
            for topic, lam in zip(topics, lams):
                for (c2, e, v) in keys:
                    if c2 != c:
                        continue
                    given = lam if e == "ppi++" else (None, None)
                    found = topic.estimates(pairs, estimator=e, variance=v,
                                            bias_correction=bias_correction,
                                            lam=given[0],
                                            delta_lam=given[1])
                    box = acc[(c, e, v)]
                    box[0][part] += found.value
                    box[1][part] += found.variance
                    box[2][part] += found.delta
                    box[3][part] += found.delta_variance
                    box[4] += float(found.lam.sum()) / (B * R * T)
    return pairs, {k: (v / T, var / T**2, d / T, dv / T**2, lam)
                   for k, (v, var, d, dv, lam) in acc.items()}


def summarise(universe, pairs, results):
    """One row per (control, estimator): coverage, bias, widths relative to HT's."""
    truth = universe.truth_map
    dtruth = truth[pairs[:, 0]] - truth[pairs[:, 1]]
    rows = []
    for (c, e, v), (est, var, d, dvar, lam) in results.items():
        se, dse = np.sqrt(np.maximum(var, 0)), np.sqrt(np.maximum(dvar, 0))
        rows.append(dict(
            control=c, estimator=e, variance=v, mean_lambda=lam,
            map_coverage=float((np.abs(est - truth) <= Z * se).mean()),
            dmap_coverage=float((np.abs(d - dtruth) <= Z * dse).mean()),
            map_bias=float(np.abs(est.mean(axis=0) - truth).mean()),
            map_width=float(2 * Z * se.mean()), dmap_width=float(2 * Z * dse.mean()),
        ))
    for r in rows:
        ht = next(h for h in rows if h["estimator"] == "ht" and h["variance"] == r["variance"])
        r["map_width_vs_ht"] = r["map_width"] / ht["map_width"]
        r["dmap_width_vs_ht"] = r["dmap_width"] / ht["dmap_width"]
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("collection", choices=sorted(COLLECTIONS))
    parser.add_argument("--samplings", type=int, default=500)
    parser.add_argument("--budgets", type=float, nargs="+", default=list(BUDGETS))
    parser.add_argument("--designs", nargs="+", choices=DESIGNS, default=list(DESIGNS))
    parser.add_argument("--controls", nargs="+", choices=CONTROLS, default=list(CONTROLS),
                        help="the controls scored besides none (HT, the widths' reference); "
                             "none alone fits no pilot unless the design is guided")
    parser.add_argument("--floor-share", type=float, default=0.0,
                        help="the Poisson designs' π floor as a share of the budget: max(0.01, "
                             "share × budget); 0 (default): 0.01")
    parser.add_argument("--bias-correction", default="none",
                        choices=("none", "taylor", "jackknife"),
                        help="AP's ratio bias correction (the package's default is taylor; "
                             "jackknife: stratified designs only)")
    parser.add_argument("--variances", nargs="+", default=["linearised", "jackknife"],
                        choices=("linearised", "jackknife", "averaged"),
                        help="the variances scored (averaged: with --bias-correction jackknife)")
    parser.add_argument("--pairs", type=int, help="ΔMAP of this many seeded pairs (default: all)")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    threadpool_limits(1)  # small matrices: a BLAS thread per core spins more than it computes
    started = time.process_time()
    universe = Universe(load(args.collection))
    print(f"{args.collection}: {len(universe.topics)} topics, "
          f"{universe.truth_ap.shape[1]} runs, pool {universe.pool_size} documents", flush=True)
    rows = []
    for rate in args.budgets:
        rng = np.random.default_rng([SEED, int(rate * 1000)])
        controls, estimate = {"none": None}, None
        if args.controls != ["none"] or any("guided" in d for d in args.designs):
            p, estimate = pilot_model(universe, args.collection, rate, rng)
            controls.update({"model": p, "half": [np.full(len(q), 0.5) for q in p],
                             "reversed": [1 - q for q in p]})
            llm = llm_control(universe, args.collection, rng)
            if llm is not None:
                controls["llm-swapped"] = llm
        controls = {c: v for c, v in controls.items() if c in args.controls or c == "none"}
        for design in args.designs:
            t0 = time.process_time()
            if design.startswith("census"):
                depth, below = census_plan(universe, rate)
                print(f"census of every run's top {depth}, {below:.2%} of the rest", flush=True)
            pairs, results = cell(universe, controls, design, rate, estimate, args.samplings,
                           np.random.default_rng([SEED, int(rate * 1000), DESIGNS.index(design)]),
                           floor_share=args.floor_share, bias_correction=args.bias_correction,
                           variances=tuple(args.variances), n_pairs=args.pairs)
            for r in summarise(universe, pairs, results):
                rows.append(dict(collection=args.collection, budget=rate, design=design,
                                 samplings=args.samplings, **r))
            print(pd.DataFrame(rows[-len(results):]).drop(columns=["collection", "samplings"]).round(4).to_string(index=False),
                  f"\n  ({design}, budget {rate:.0%}: {time.process_time() - t0:.1f} CPU s)",
                  flush=True)
    table = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / f"{args.collection}.tsv", sep="\t", index=False, float_format="%.5f")
    print(f"total {time.process_time() - started:.0f} CPU s")


if __name__ == "__main__":
    main()
