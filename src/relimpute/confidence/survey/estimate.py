"""Design-based and model-assisted estimates of AP, P@k, nDCG@k, their means over topics and
the paired differences of runs, from a judged sample with known inclusion probabilities.

Estimators (``docs/sampled.md``, ``docs/survey.md``): ``ht`` Horvitz–Thompson (statAP's ratio for
AP); ``model-assisted`` the difference (GREG) estimator, the model's total over the universe
plus the HT total of the residuals (judged − predicted); ``ppi++`` the same with the
prediction scaled by λ_t ∈ [0, 1] per topic and quantity, λ = Ĉov(u, v) / V̂ar(v) clipped
(u, v the linearised variables of the judgments and of the predictions on the sample,
:func:`.measures.prediction_part`), which minimises the estimated variance (Angelopoulos,
Duchi & Zrnic 2023). λ_t is cross-fitted over topics: the covariances summed over every topic
but t (:func:`cross_fitted_lambdas`), so topic t's estimate does not reuse its own sample to
tune its weight (tuned on the same sample, a handful of judgments per topic made the
intervals too narrow: ``tests/test_survey_estimators.py``). AP is corrected for the ratio's
second-order bias (:meth:`.batched.TopicSamplings._bias`) or, asked, by the jackknife's own
estimate (:mod:`.quenouille`). AP's arithmetic is
:mod:`.batched`'s: each sample is one sampling of it, every run and pair of a topic at once.

Variances are linearised (:mod:`.measures`) and estimated from the design
(:func:`.design.design_covariance`); intervals are normal, estimate ± z_{(1+level)/2} · se.
Topics are independent designs: Var(MAP̂) = Σ_t Var(AP̂_t) / T²; ΔMAP is paired (one sample
serves both runs, z_Δ = z_A − z_B per document). P(A beats B) is the normal approximation
Φ(ΔMAP̂ / se) of the design distribution read as a belief, and P(|ΔMAP| < ε) likewise
Φ((ε − Δ̂)/se) − Φ((−ε − Δ̂)/se): neither is a posterior probability.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations

import numpy as np
import pandas as pd

from ..._normal import normal_cdf, normal_quantile
from ...io.trec import trec_scores
from .batched import TopicSamplings
from .design import STRATIFIED, TopicSample, design_covariance, jackknife_variance, \
    topic_samples
from .measures import Control, linearised, measure_totals, no_control, prediction_part, \
    replicate_values, survey_measure
from .quenouille import BIAS_CORRECTIONS, bias_correction_name, by_design
from .samplings import ESTIMATORS, VARIANCES, Samplings, tuned_lambda

__all__ = ["BIAS_CORRECTIONS", "COLUMNS", "ESTIMATORS", "ESTIMATOR_TITLES", "SURVEY_ESTIMAND",
           "VARIANCES", "campaign_ranks",
           "controls", "cross_fitted_lambdas", "estimate", "lambda_moments", "run_ranks",
           "sample_totals", "topic_estimate", "tuned_lambda", "universe_index"]
#: What the estimate estimates, as a table says it.
SURVEY_ESTIMAND = ("the measure with every document of the sample's universe judged "
                   "(documents outside it nonrelevant)")
ESTIMATOR_TITLES = {"ht": "Horvitz-Thompson (design-based)",
                    "model-assisted": "model-assisted difference (GREG) estimator",
                    "ppi++": "PPI++ (model-assisted, power-tuned lambda per topic)"}
COLUMNS = ("query_id", "run", "run_b", "measure", "estimate", "se", "low", "high", "p_a_better",
           "p_equivalent", "lambda", "estimator", "control", "n_sampled", "estimand", "note")


def controls(samples: dict[str, TopicSample], control: pd.DataFrame | None) -> dict[str, Control]:
    """Per topic, the predictions of ``control`` (``query_id, doc_id, p`` and optionally
    ``gain``, the expected gain, else p) aligned to the universe; a document it does not
    predict gets 0 (any prediction keeps the estimators unbiased). The grade counts of nDCG's
    ideal use P(grade = g) from columns ``p_grade_<g>``, else p for grade 1 of binary qrels."""
    if control is None:
        return {t: no_control(s) for t, s in samples.items()}
    frame = control.astype({"query_id": str, "doc_id": str})
    grade_cols = [c for c in frame.columns if c.startswith("p_grade_")]
    out = {}
    by_topic = dict(tuple(frame.groupby("query_id", sort=False)))
    for topic, s in samples.items():
        rows = by_topic.get(topic)
        n = len(s.doc_ids)
        if rows is None:
            out[topic] = no_control(s)
            continue
        column = _column_reader(rows, s.doc_ids)
        p = column("p")
        gain = column("gain") if "gain" in rows else p
        grade_p = {int(c[len("p_grade_"):]): column(c) for c in grade_cols}
        if not grade_p and s.grade.max(initial=0) <= 1:
            grade_p = {1: p}
        out[topic] = Control(p if n else np.zeros(0), gain, grade_p)
    return out


def _column_reader(rows: pd.DataFrame, doc_ids):
    """A reader of ``rows``' columns at ``doc_ids`` (floats; 0 where a document has no row or
    no value): a left merge on doc_id, by index where the ids are unique."""
    index = pd.Index(rows["doc_id"])
    if not index.is_unique:
        aligned = pd.DataFrame({"doc_id": doc_ids}).merge(rows, on="doc_id", how="left")
        return lambda name: aligned[name].fillna(0.0).to_numpy(dtype=float)
    at = index.get_indexer(doc_ids)

    def column(name):
        values = np.r_[rows[name].to_numpy(dtype=float), np.nan][at]  # -1: the NaN
        return np.where(np.isnan(values), 0.0, values)

    return column


def run_ranks(run: pd.DataFrame, samples: dict[str, TopicSample],
              universe: pd.MultiIndex | None = None) -> dict[str, np.ndarray]:
    """Per topic of the sample, each universe document's rank in the run (trec_eval's order,
    :func:`relimpute.io.trec.sort_trec`; 0 = not retrieved). ``universe``:
    :func:`universe_index` of ``samples``, built once for many runs."""
    import pyarrow as pa
    import pyarrow.compute as pc

    query, doc = (pa.array(run[c].astype(str)).cast(pa.large_string())
                  for c in ("query_id", "doc_id"))
    tab = pa.scalar("\t", pa.large_string())  # ids hold no tab: fields are split on it
    keys = pc.binary_join_element_wise(query, doc, tab)
    if pc.count_distinct(keys).as_py() < len(keys):
        twice = pd.Index(np.asarray(keys)).duplicated()
        at = int(np.flatnonzero(twice)[0])
        raise ValueError(f"the run retrieves document {doc[at]} twice for topic {query[at]}")
    order = pc.sort_indices(pa.table({"q": query, "s": -trec_scores(run["score"]), "d": doc}),
                            sort_keys=[("q", "ascending"), ("s", "ascending"),
                                       ("d", "descending")]).to_numpy()
    ranked = query.take(order)
    start = np.r_[True, np.asarray(pc.not_equal(ranked[1:], ranked[:-1]))] if len(order) \
        else np.zeros(0, bool)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - np.maximum.accumulate(np.where(start, np.arange(
        len(order)), 0)) + 1
    universe = universe_index(samples) if universe is None else universe
    wanted = pc.binary_join_element_wise(*(pa.array(universe.get_level_values(i).astype(str))
                                           .cast(pa.large_string()) for i in (0, 1)), tab)
    at = pc.fill_null(pc.index_in(wanted, value_set=keys), -1).to_numpy()
    rank = np.where(at >= 0, rank[np.maximum(at, 0)], 0)
    edges = np.cumsum([0] + [len(s.doc_ids) for s in samples.values()])
    return {t: rank[a:b] for t, a, b in zip(samples, edges[:-1], edges[1:])}


def campaign_ranks(campaign, samples: dict[str, TopicSample]) -> tuple[dict, set[str]]:
    """:func:`run_ranks` of every run of ``campaign`` (:class:`relimpute.data.Campaign`, not
    imported: run files read as ``evaluate`` reads them, each document listed once, rankings
    in trec_eval's order), per run name; and the topics the runs retrieve."""
    by_topic = {t.query_id: t for t in campaign.topics}
    ranks = {name: {} for name in campaign.systems}
    retrieved = set(campaign.dropped)
    for topic, s in samples.items():
        t = by_topic[topic]  # every sample topic is a qrels topic
        docs, ranking, depth = t.doc_ids, t.ranking, t.depth
        at = np.searchsorted(docs, s.doc_ids)  # docs in docno (code point) order, distinct
        if len(at) and not (docs[np.minimum(at, len(docs) - 1)] == s.doc_ids).all():
            raise AssertionError(f"topic {topic}: a sampled document not among its documents")
        if depth.any():
            retrieved.add(topic)
        rank_of = np.zeros((len(ranks), len(docs)), dtype=np.int64)
        run, position = np.nonzero(ranking >= 0)
        rank_of[run, ranking[run, position]] = position + 1
        for i, name in enumerate(ranks):
            ranks[name][topic] = rank_of[i, at]
    return ranks, retrieved


def universe_index(samples: dict[str, TopicSample]) -> pd.MultiIndex:
    """``(query_id, doc_id)`` of every universe document, topic by topic."""
    return pd.MultiIndex.from_arrays([
        np.repeat(list(samples), [len(s.doc_ids) for s in samples.values()]).astype(str),
        np.concatenate([s.doc_ids for s in samples.values()]).astype(str) if samples else
        np.array([], dtype=str)])


def sample_totals(measure, topic: TopicSample, rank: np.ndarray, control: Control,
                  rel_threshold: int, replicates: bool = False) -> tuple[list, callable]:
    """:func:`.measures.measure_totals` of one run on ``topic``'s sample (its jackknife
    ``replicates``' weights if asked), computed once per run, control and measure and kept on
    the sample: a run's totals serve its own rows and every pair it is in (P@k, nDCG@k)."""
    grade_p = tuple((g, v.tobytes()) for g, v in sorted(control.grade_p.items()))
    key = (measure, rel_threshold, replicates, rank.tobytes(),
           *(None if v is None else v.tobytes() for v in (control.p, control.gain)), grade_p)
    if key not in topic._totals:
        weights = topic.replicate_set()[0] if replicates else None
        totals, make = measure_totals(measure, topic, rank, control, rel_threshold, weights)
        if replicates:  # their values alone are read: (B, n) derivatives per run add up to GBs
            totals = [replace(t, dx=None, dp=None) for t in totals]
        topic._totals[key] = totals, make
    return topic._totals[key]


def ap_samplings(topic: TopicSample, measure, ranks, control: Control,
                 rel_threshold: int = 1) -> TopicSamplings:
    """``topic``'s sample as one sampling of :class:`.batched.TopicSamplings` with the runs of
    ``ranks`` (AP's arithmetic lives there), kept on the sample."""
    ranks = np.stack([r if measure.cutoff is None else np.where(r <= measure.cutoff, r, 0)
                      for r in ranks])
    key = ("batched", measure, rel_threshold, ranks.tobytes(), control.p.tobytes())
    if key not in topic._totals:
        samplings = Samplings(topic.judged[None], inclusion=topic.inclusion,
                              stratum=topic.stratum, sampling=topic.sampling)
        relevant = (topic.judged & (topic.grade >= rel_threshold)).astype(float)
        topic._totals[key] = TopicSamplings(samplings, relevant, ranks, control.p)
    return topic._totals[key]


def _members(count: int, pairs=None) -> list:
    """Batched members: each of ``count`` runs alone, or ``pairs`` (positions) A − B."""
    if pairs is None:
        return [(np.arange(count), 1.0)]
    pairs = np.asarray(pairs, dtype=int).reshape(-1, 2)
    return [(pairs[:, 0], 1.0), (pairs[:, 1], -1.0)]


def lambda_moments(topic: TopicSample, measure, ranks, control: Control,
                   rel_threshold: int = 1) -> tuple[float, float]:
    """(Ĉov(u, v), V̂ar(v)) of one topic (:func:`.measures.prediction_part`): the pieces of
    PPI++'s λ, summed over other topics to cross-fit it (:func:`estimate`)."""
    measure = survey_measure(measure)
    ranks = [ranks] if isinstance(ranks, np.ndarray) else list(ranks)
    if measure.family == "AP":
        batched = ap_samplings(topic, measure, ranks, control, rel_threshold)
        cov, var = batched.lambda_moments(_members(1, None if len(ranks) < 2 else [(0, 1)]))
        return float(cov[0, 0]), float(var[0, 0])
    u = v = 0.0
    for r, sign in zip(ranks, (1.0, -1.0)):
        a, b = prediction_part(*sample_totals(measure, topic, r, control, rel_threshold))
        u, v = u + sign * a, v + sign * b
    return design_covariance(topic, u, v)[0], design_covariance(topic, v, v)[0]


def topic_estimate(topic: TopicSample, measure, ranks, control: Control | None = None,
                   estimator: str = "ht", rel_threshold: int = 1, variance: str = "auto",
                   bias_correction="auto",
                   lam: float | None = None) -> tuple[float, float, float, bool]:
    """One topic's (estimate, variance, λ, one-document-stratum fallback) of ``measure`` (a
    name or :class:`~relimpute.measures.Measure`) for one run's ``ranks`` (per universe
    document, 0 = not retrieved) or, given two, the difference A − B. ``variance`` and
    ``bias_correction`` ``auto``: the design's (:func:`.quenouille.by_design`); ``variance``
    ``jackknife`` (:func:`.design.replicates`) or ``linearised`` (:mod:`.measures`);
    ``bias_correction`` of AP's ratio (:data:`.quenouille.BIAS_CORRECTIONS`): ``taylor`` (or
    True) subtracts its second-order bias (:mod:`.batched`, which computes AP), ``jackknife``
    takes the jackknife's own estimate, its ``jackknife`` variance the delete-two and its
    ``averaged`` one the mean of that and the plain ratio's (:mod:`.quenouille`; stratified
    designs), ``none`` (or False) neither. ``ppi++`` uses ``lam`` when given (cross-fitted
    over topics by :func:`estimate`), else tunes λ on this topic's own sample. PPI++ keeps its
    answer on every topic and measure: choosing HT where its own sample's variance is small (0
    when no relevant document was drawn, the estimate 0 too) selects on the outcome; it biased
    P@10 and MAP low and their intervals narrow (:mod:`.samplings`). PPI++'s AP holds R̂ at
    least at 1 (:meth:`.batched.TopicSamplings._held`)."""
    if variance not in VARIANCES:
        raise ValueError(f"variance {variance!r} is not one of {', '.join(VARIANCES)}")
    bias_correction, variance = by_design(bias_correction, variance, topic.sampling)
    measure = survey_measure(measure)
    control = control or no_control(topic)
    ranks = [ranks] if isinstance(ranks, np.ndarray) else list(ranks)
    fallback = _one_drawn(topic)
    if measure.family == "AP":
        batched = ap_samplings(topic, measure, ranks, control, rel_threshold)
        given = None if lam is None or estimator != "ppi++" else np.full((1, 1), lam)
        found = batched.quantity(_members(1, None if len(ranks) < 2 else [(0, 1)]), estimator,
                                 variance, bias_correction, given)
        return (*(float(a[0, 0]) for a in found), fallback)
    if estimator == "ht":
        lam = 0.0
    elif estimator == "model-assisted":
        lam = 1.0
    elif lam is None:
        lam = tuned_lambda(*lambda_moments(topic, measure, ranks, control, rel_threshold))
    value, z = 0.0, 0.0
    for r, sign in zip(ranks, (1.0, -1.0)):
        f, zi = linearised(*sample_totals(measure, topic, r, control, rel_threshold), lam)
        value, z = value + sign * f, z + sign * zi
    var = design_covariance(topic, z, z)[0]
    if variance in ("jackknife", "averaged"):  # no correction here: the two are one
        coef, groups = topic.replicate_set()[2:]
        values = sum(sign * replicate_values(*sample_totals(
            measure, topic, r, control, rel_threshold, replicates=True), lam)
            for r, sign in zip(ranks, (1.0, -1.0))) if len(coef) else 0.0
        var = jackknife_variance(value, values, coef, groups) if len(coef) else 0.0
    return value, max(var, 0.0), lam, fallback


def _one_drawn(topic: TopicSample) -> bool:
    """Whether a stratum of several documents had one judged: its variance is then the Poisson
    formula's (:func:`.design.design_covariance`)."""
    return bool(topic.sampling == STRATIFIED and
                ((topic.drawn == 1) & (topic.population > 1)).any())


def estimate(sample: pd.DataFrame, runs, *, measures=("AP",), control: pd.DataFrame | None = None,
             estimator: str = "ht", pairs=None, level: float = 0.95, margin: float | None = None,
             rel_threshold: int = 1, per_topic: bool = False, sampling: str | None = None,
             control_name: str | None = None, variance: str = "auto",
             bias_correction="auto") -> pd.DataFrame:
    """Design-based (``ht``) or model-assisted (``model-assisted``, ``ppi++``) estimates with
    intervals, a tidy table of :data:`COLUMNS`.

    ``sample``: sampled qrels (``query_id, doc_id, relevance`` with −1 = in the universe, not
    judged) with ``inclusion`` (Poisson) and/or ``stratum`` (stratified without replacement),
    or a sample table of :mod:`relimpute.selection.designs`; ``sampling`` fixes the design when
    the table cannot tell (:func:`.design.infer_sampling`). ``runs``: name -> run frame
    (``query_id, doc_id, score``), or a campaign of run files (:func:`campaign_ranks`).
    ``control``: predictions (``query_id, doc_id, p``) of a relevance model or an LLM's labels,
    needed by the model-assisted estimators. ``pairs``: None, ``"all"`` or (A, B) names: rows
    of the paired difference A − B with P(A beats B) and, given ``margin`` ε, P(|Δ| < ε).
    Rows ``query_id = "all"`` are the means over topics; ``per_topic`` adds a row per topic.
    A stratum none of whose documents was judged leaves its topic without an estimate: the
    topic's rows say so, and the mean is over the other topics, its note naming those left out.
    ``variance`` and ``bias_correction`` as :func:`topic_estimate` (``ht`` without the
    correction is statAP exactly).
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator {estimator!r} is not one of {', '.join(ESTIMATORS)}")
    bias_correction = bias_correction_name(bias_correction)
    if estimator != "ht" and control is None:
        raise ValueError(f"the {estimator} estimator needs a control variate: predictions "
                         "of a relevance model or LLM labels")
    read = hasattr(runs, "systems") and hasattr(runs, "topics")  # files read as evaluate's
    runs = runs if read else dict(runs)
    names = list(runs.systems if read else runs)
    if not names:
        raise ValueError("no runs given")
    if pairs == "all":
        pairs = list(combinations(names, 2))
    for a, b in pairs or ():
        for name in (a, b):
            if name not in names:
                raise ValueError(f"run {name!r} of the pair {a} - {b} is not among the runs")
    parsed = [survey_measure(m) for m in measures]
    samples = topic_samples(sample, sampling)
    preds = controls(samples, control)
    if read:
        ranks, retrieved = campaign_ranks(runs, samples)
    else:
        universe = universe_index(samples)
        ranks = {name: run_ranks(run, samples, universe) for name, run in runs.items()}
        retrieved = set().union(*(r["query_id"].astype(str).unique() for r in runs.values()))
    topics = [t for t in samples if t in retrieved]
    if not topics:
        raise ValueError("the runs and the sample share no topic")
    absent = sorted(retrieved - set(samples))
    control_label = "none" if control is None else (control_name or "given")
    quantities = [((name,), name, "") for name in names]
    quantities += [((a, b), a, b) for a, b in pairs or ()]
    z = float(normal_quantile(0.5 + level / 2))
    rows = []
    # per topic, once: whether it drew a relevant document, and how many it judged
    facts = {t: (bool((s.grade >= rel_threshold).any()), s.n_judged) for t, s in samples.items()}
    for measure in parsed:
        found = (_ap_topics if measure.family == "AP" else _topics)(
            measure, quantities, topics, samples, ranks, preds, estimator, rel_threshold,
            variance, bias_correction)
        for (_, run, run_b), per in zip(quantities, found):
            rows += _rows(per, measure, run, run_b, z, margin, estimator, control_label,
                          per_topic, absent, facts)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _topics(measure, quantities, topics, samples, ranks, preds, estimator, rel_threshold,
            variance, bias_correction) -> list:
    """Per quantity, per topic (topic, estimate, variance, λ, fallback, sample): P@k, nDCG@k
    one quantity at a time (:func:`topic_estimate`)."""
    out = []
    for members, _, _ in quantities:
        lams = dict.fromkeys(topics)
        if estimator == "ppi++":
            lams = cross_fitted_lambdas({
                t: lambda_moments(samples[t], measure, [ranks[m][t] for m in members],
                                  preds[t], rel_threshold)
                for t in topics if not samples[t].unsampled})
        per = []
        for t in topics:
            s = samples[t]
            if s.unsampled:
                per.append((t, np.nan, np.nan, np.nan, False, s))
                continue
            found = topic_estimate(s, measure, [ranks[m][t] for m in members], preds[t],
                                   estimator, rel_threshold, variance, bias_correction,
                                   lam=lams[t])
            per.append((t, *found, s))
        out.append(per)
    return out


def _ap_topics(measure, quantities, topics, samples, ranks, preds, estimator, rel_threshold,
               variance, bias_correction) -> list:
    """:func:`_topics` for AP: every run and every pair of a topic at once, by
    :class:`.batched.TopicSamplings` (one sampling: the sample), λ cross-fitted per quantity."""
    names = list(ranks)
    at = {name: i for i, name in enumerate(names)}
    pairs = [(at[m[0]], at[m[1]]) for m, _, _ in quantities if len(m) == 2]
    groups = [_members(len(names))] + ([_members(0, pairs)] if pairs else [])
    sampled = [t for t in topics if not samples[t].unsampled]
    batched = {t: ap_samplings(samples[t], measure, [ranks[n][t] for n in names], preds[t],
                               rel_threshold) for t in sampled}
    lams = [dict.fromkeys(sampled) for _ in groups]
    if estimator == "ppi++":
        lams = [{t: np.asarray(lam)[None] for t, lam in cross_fitted_lambdas(
            {t: tuple(a[0] for a in batched[t].lambda_moments(members)) for t in sampled}
        ).items()} for members in groups]
    found = [{} for _ in groups]
    for t in sampled:  # topic by topic: one topic's jackknife replicates held at a time
        for members, lam, out in zip(groups, lams, found):
            per = batched[t].quantity(members, estimator, variance, bias_correction, lam[t])
            out[t] = list(zip(*(np.asarray(a[0], dtype=float).tolist() for a in per)))
        batched[t].forget_replicates()  # per quantity its floats (value, var, λ) are kept
    columns = [{t: f[q] for t, f in out.items()}
               for members, out in zip(groups, found) for q in range(len(members[0][0]))]
    return [[(t, *columns[q][t], _one_drawn(samples[t]), samples[t]) if t in columns[q] else
             (t, np.nan, np.nan, np.nan, False, samples[t]) for t in topics]
            for q in range(len(quantities))]


def cross_fitted_lambdas(moments: dict) -> dict:
    """Per topic, PPI++'s λ from the other topics' summed moments (leave one topic out: λ_t
    does not see topic t's sample, so it adds no bias there); one topic alone tunes its own."""
    if len(moments) < 2:
        return {t: tuned_lambda(*m) for t, m in moments.items()}
    cov, var = np.sum(list(moments.values()), axis=0)
    return {t: tuned_lambda(cov - c, var - v) for t, (c, v) in moments.items()}


def _row(query, run, run_b, measure, value, var, lam, n, z, margin, estimator, control, note):
    se = float(np.sqrt(var)) if np.isfinite(var) else np.nan
    better = equivalent = np.nan
    if run_b and np.isfinite(value):
        better = float(normal_cdf(value / se)) if se > 0 else float(0.5 + 0.5 * np.sign(value))
        if margin is not None:
            equivalent = float(normal_cdf((margin - value) / se) - normal_cdf((-margin - value) / se)) \
                if se > 0 else float(abs(value) < margin)
    return (query, run, run_b, str(measure), value, se, value - z * se, value + z * se, better,
            equivalent, lam, estimator, control, n, SURVEY_ESTIMAND, note)


#: a topic holding more than this share of a mean's variance is named in its note
DOMINANT = 0.9
#: The note of an estimate no universe can have (the measures lie in [0, 1], a difference in
#: [-1, 1]): HT's ratio is unbiased only for a run fixed before the sample was drawn
OUTSIDE = ("outside the measure's range: the sample is too small for this run, or the run "
           "depends on which documents were judged (e.g. tuned on these judgments)")


def _impossible(value, run_b) -> bool:
    """Whether ``value`` lies outside every universe's values: [0, 1], or [-1, 1] for a pair."""
    return bool(np.isfinite(value) and not (-1.0 if run_b else 0.0) - 1e-12 <= value
                <= 1.0 + 1e-12)


def _rows(per, measure, run, run_b, z, margin, estimator, control, per_topic, absent, facts):
    rows, notes, blind = [], [], []
    for t, value, var, lam, fallback, s in per:
        note = ""
        if s.unsampled:
            note = ("no judged document in " + ", ".join(s.unsampled) +
                    ": its contribution is unknown, no design-based estimate")
        elif not facts[t][0]:
            blind.append(t)
            note = ("no relevant document among those judged: the sample cannot show its "
                    "variance, so its interval does not hold")
        elif fallback:
            note = "a stratum with one judged document: its variance is the Poisson formula's"
        if _impossible(value, run_b):
            note = "; ".join(filter(None, [note, OUTSIDE]))
        if note:
            notes.append(f"topic {t}: {note}")
        if per_topic:
            rows.append(_row(t, run, run_b, measure, value, var, lam, facts[t][1], z, margin,
                             estimator, control, note))
    finite = [p for p in per if np.isfinite(p[1])]  # (t, value, var, λ, ...) in the mean
    left = [t for t, v, *_ in per if not np.isfinite(v)]
    summary = []
    if left:
        summary.append(f"mean over {len(finite)} of {len(per)} topics; left out (unsampled "
                       f"stratum): {', '.join(left)}")
    if absent:
        summary.append(f"topics of the runs not in the sample (not in the mean): "
                       f"{', '.join(absent[:10])}{' ...' if len(absent) > 10 else ''}")
    if blind:
        summary.append(f"{len(blind)} of {len(per)} topics drew no relevant document "
                       f"({', '.join(blind[:10])}{' ...' if len(blind) > 10 else ''}): their "
                       "estimates carry no variance, so this interval may be too narrow; judge "
                       "more of those topics, or sample where relevant documents are likely")
    if any("Poisson formula" in n for n in notes):
        summary.append("strata with one judged document: Poisson variance formula")
    if finite:
        values, variances, lams = (np.array([p[i] for p in finite]) for i in (1, 2, 3))
        mean, var = float(values.mean()), float(variances.sum() / len(values) ** 2)
        if len(finite) > 2 and variances.max() > DOMINANT * variances.sum():
            top = int(variances.argmax())
            summary.append(f"topic {finite[top][0]} carries {variances[top] / variances.sum():.0%}"
                           " of this mean's variance: the interval is mostly that topic's" + (
                               "" if estimator == "ht" else f" (λ {lams[top]:.2f} there: the "
                               "control may disagree with its sample; compare --estimator ht)"))
        lam = float(np.mean(lams))
        if _impossible(mean, run_b):
            summary.append(OUTSIDE)
    else:
        mean = var = lam = np.nan
    n = sum(facts[t][1] for t, *_ in per)
    rows.append(_row("all", run, run_b, measure, mean, var, lam, n, z, margin, estimator,
                     control, "; ".join(summary)))
    return rows
