"""Design-based and model-assisted estimates of AP, P@k, nDCG@k, their means over topics and
the paired differences of runs, from a judged sample with known inclusion probabilities.

Estimators (``docs/sampled.md``, ``docs/survey.md``): ``ht`` Horvitz–Thompson (statAP's ratio for
AP); ``model-assisted`` the difference (GREG) estimator, the model's total over the universe
plus the HT total of the residuals (judged − predicted); ``ppi++`` the same with the
prediction scaled by λ_t ∈ [0, 1] per topic and quantity, λ_t = Ĉov(u, v) / V̂ar(v) clipped
(u, v the linearised variables of the judgments and of the predictions on the sample,
:func:`.measures.prediction_part`), which minimises the estimated variance (Angelopoulos,
Duchi & Zrnic 2023). λ_t is estimated on the same sample it is applied to (no cross-fitting):
this costs a bias of order 1/|S_t|, measured in ``tests/test_survey_coverage.py``.

Variances are linearised (:mod:`.measures`) and estimated from the design
(:func:`.design.design_covariance`); intervals are normal, estimate ± z_{(1+level)/2} · se.
Topics are independent designs: Var(MAP̂) = Σ_t Var(AP̂_t) / T²; ΔMAP is paired (one sample
serves both runs, z_Δ = z_A − z_B per document). P(A beats B) is the normal approximation
Φ(ΔMAP̂ / se) of the design distribution read as a belief, and P(|ΔMAP| < ε) likewise
Φ((ε − Δ̂)/se) − Φ((−ε − Δ̂)/se): neither is a posterior probability.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..._parsing import sort_trec
from .design import TopicSample, design_covariance, jackknife_variance, topic_samples
from .measures import Control, linearised, measure_totals, no_control, prediction_part, \
    replicate_values, survey_measure

ESTIMATORS = ("ht", "model-assisted", "ppi++")
VARIANCES = ("jackknife", "linearised")
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
        aligned = pd.DataFrame({"doc_id": s.doc_ids}).merge(rows, on="doc_id", how="left")
        p = aligned["p"].fillna(0.0).to_numpy(dtype=float)
        gain = aligned["gain"].fillna(0.0).to_numpy(dtype=float) if "gain" in aligned else p
        grade_p = {int(c[len("p_grade_"):]): aligned[c].fillna(0.0).to_numpy(dtype=float)
                   for c in grade_cols}
        if not grade_p and s.grade.max(initial=0) <= 1:
            grade_p = {1: p}
        out[topic] = Control(p if n else np.zeros(0), gain, grade_p)
    return out


def run_ranks(run: pd.DataFrame, samples: dict[str, TopicSample]) -> dict[str, np.ndarray]:
    """Per topic of the sample, each universe document's rank in the run (trec_eval's order;
    0 = not retrieved)."""
    ranked = sort_trec(run[["query_id", "doc_id", "score"]].astype({"query_id": str,
                                                                    "doc_id": str}))
    ranked = ranked.assign(rank=ranked.groupby("query_id", sort=False).cumcount() + 1)
    by_topic = dict(tuple(ranked.groupby("query_id", sort=False)))
    out = {}
    for topic, s in samples.items():
        rows = by_topic.get(topic)
        if rows is None:
            out[topic] = np.zeros(len(s.doc_ids), dtype=int)
            continue
        at = pd.Series(rows["rank"].to_numpy(), index=rows["doc_id"].to_numpy())
        out[topic] = at.reindex(s.doc_ids).fillna(0).to_numpy(dtype=int)
    return out


def _tuned_lambda(topic: TopicSample, u: np.ndarray, v: np.ndarray) -> float:
    """PPI++'s λ = Ĉov(u, v) / V̂ar(v), clipped to [0, 1] (0 when the predictions vary not)."""
    var_v, _ = design_covariance(topic, v, v)
    if var_v <= 0:
        return 0.0
    cov, _ = design_covariance(topic, u, v)
    return float(np.clip(cov / var_v, 0.0, 1.0))


def topic_estimate(topic: TopicSample, measure, ranks, control: Control | None = None,
                   estimator: str = "ht", rel_threshold: int = 1, variance: str = "jackknife"
                   ) -> tuple[float, float, float, bool]:
    """One topic's (estimate, variance, λ, one-document-stratum fallback) of ``measure`` (a
    name or :class:`~relimpute.measures.Measure`) for one run's ``ranks`` (per universe
    document, 0 = not retrieved) or, given two, the difference A − B. ``variance``:
    ``jackknife`` (:func:`.design.replicates`) or ``linearised`` (:mod:`.measures`)."""
    if variance not in VARIANCES:
        raise ValueError(f"variance {variance!r} is not one of {', '.join(VARIANCES)}")
    measure = survey_measure(measure)
    control = control or no_control(topic)
    ranks = [ranks] if isinstance(ranks, np.ndarray) else list(ranks)
    signs = (1.0, -1.0)[: len(ranks)]
    parts = [(*measure_totals(measure, topic, r, control, rel_threshold), sign)
             for r, sign in zip(ranks, signs)]
    if estimator == "ht":
        lam = 0.0
    elif estimator == "model-assisted":
        lam = 1.0
    else:
        pieces = [prediction_part(totals, make) for totals, make, _ in parts]
        u = sum(sign * a for (_, _, sign), (a, _) in zip(parts, pieces))
        v = sum(sign * b for (_, _, sign), (_, b) in zip(parts, pieces))
        lam = _tuned_lambda(topic, u, v)
    value, z = 0.0, 0.0
    for totals, make, sign in parts:
        f, zi = linearised(totals, make, lam)
        value, z = value + sign * f, z + sign * zi
    var, fallback = design_covariance(topic, z, z)
    if variance == "jackknife":
        weights, factor, coef, groups = topic.replicate_set()
        if len(coef):
            values = sum(sign * replicate_values(measure_totals(
                measure, topic, r, control, rel_threshold, weights, factor)[0], make, lam)
                for r, (_, make, sign) in zip(ranks, parts))
            var = jackknife_variance(value, values, coef, groups)
        else:
            var = 0.0
    return value, max(var, 0.0), lam, fallback


def estimate(sample: pd.DataFrame, runs, *, measures=("AP",), control: pd.DataFrame | None = None,
             estimator: str = "ht", pairs=None, level: float = 0.95, margin: float | None = None,
             rel_threshold: int = 1, per_topic: bool = False, sampling: str | None = None,
             control_name: str | None = None, variance: str = "jackknife") -> pd.DataFrame:
    """Design-based (``ht``) or model-assisted (``model-assisted``, ``ppi++``) estimates with
    intervals, a tidy table of :data:`COLUMNS`.

    ``sample``: sampled qrels (``query_id, doc_id, relevance`` with −1 = in the universe, not
    judged) with ``inclusion`` (Poisson) and/or ``stratum`` (stratified without replacement),
    or a sample table of :mod:`relimpute.selection.designs`; ``sampling`` fixes the design when
    the table cannot tell (:func:`.design.infer_sampling`). ``runs``: name -> run frame
    (``query_id, doc_id, score``). ``control``: predictions (``query_id, doc_id, p``) of a
    relevance model or an LLM's labels, needed by the model-assisted estimators. ``pairs``:
    None, ``"all"`` or (A, B) names: rows of the paired difference A − B with P(A beats B)
    and, given ``margin`` ε, P(|Δ| < ε). Rows ``query_id = "all"`` are the means over topics;
    ``per_topic`` adds a row per topic. A stratum none of whose documents was judged leaves
    its topic without an estimate: the topic's rows say so, and the mean is over the other
    topics, its note naming those left out.
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator {estimator!r} is not one of {', '.join(ESTIMATORS)}")
    if estimator != "ht" and control is None:
        raise ValueError(f"the {estimator} estimator needs a control variate: predictions "
                         "of a relevance model or LLM labels")
    runs = dict(runs)
    if not runs:
        raise ValueError("no runs given")
    if pairs == "all":
        pairs = list(combinations(runs, 2))
    for a, b in pairs or ():
        for name in (a, b):
            if name not in runs:
                raise ValueError(f"run {name!r} of the pair {a} - {b} is not among the runs")
    parsed = [survey_measure(m) for m in measures]
    samples = topic_samples(sample, sampling)
    preds = controls(samples, control)
    ranks = {name: run_ranks(run, samples) for name, run in runs.items()}
    retrieved = set().union(*(set(r["query_id"].astype(str)) for r in runs.values()))
    topics = [t for t in samples if t in retrieved]
    if not topics:
        raise ValueError("the runs and the sample share no topic")
    absent = sorted(retrieved - set(samples))
    control_label = "none" if control is None else (control_name or "given")
    quantities = [((name,), name, "") for name in runs]
    quantities += [((a, b), a, b) for a, b in pairs or ()]
    z = norm.ppf(0.5 + level / 2)
    rows = []
    for measure in parsed:
        for members, run, run_b in quantities:
            per = []
            for t in topics:
                s = samples[t]
                if s.unsampled:
                    per.append((t, np.nan, np.nan, np.nan, False, s))
                    continue
                found = topic_estimate(s, measure, [ranks[m][t] for m in members], preds[t],
                                       estimator, rel_threshold, variance)
                per.append((t, *found, s))
            rows += _rows(per, measure, run, run_b, z, margin, estimator, control_label,
                          per_topic, absent)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _row(query, run, run_b, measure, value, var, lam, n, z, margin, estimator, control, note):
    se = float(np.sqrt(var)) if np.isfinite(var) else np.nan
    better = equivalent = np.nan
    if run_b and np.isfinite(value):
        better = float(norm.cdf(value / se)) if se > 0 else float(0.5 + 0.5 * np.sign(value))
        if margin is not None:
            equivalent = float(norm.cdf((margin - value) / se) - norm.cdf((-margin - value) / se)) \
                if se > 0 else float(abs(value) < margin)
    return (query, run, run_b, str(measure), value, se, value - z * se, value + z * se, better,
            equivalent, lam, estimator, control, n, SURVEY_ESTIMAND, note)


def _rows(per, measure, run, run_b, z, margin, estimator, control, per_topic, absent):
    rows, notes = [], []
    for t, value, var, lam, fallback, s in per:
        note = ""
        if s.unsampled:
            note = ("no judged document in " + ", ".join(s.unsampled) +
                    ": its contribution is unknown, no design-based estimate")
        elif fallback:
            note = "a stratum with one judged document: its variance is the Poisson formula's"
        if note:
            notes.append(f"topic {t}: {note}")
        if per_topic:
            rows.append(_row(t, run, run_b, measure, value, var, lam, s.n_judged, z, margin,
                             estimator, control, note))
    known = [(v, var) for _, v, var, *_ in per if np.isfinite(v)]
    left = [t for t, v, *_ in per if not np.isfinite(v)]
    summary = []
    if left:
        summary.append(f"mean over {len(known)} of {len(per)} topics; left out (unsampled "
                       f"stratum): {', '.join(left)}")
    if absent:
        summary.append(f"topics of the runs not in the sample (not in the mean): "
                       f"{', '.join(absent[:10])}{' ...' if len(absent) > 10 else ''}")
    if any("Poisson formula" in n for n in notes):
        summary.append("strata with one judged document: Poisson variance formula")
    if known:
        values, variances = np.array(known).T
        mean, var = float(values.mean()), float(variances.sum() / len(values) ** 2)
        lams = [lam for _, v, _, lam, *_ in per if np.isfinite(v)]
        lam = float(np.mean(lams))
    else:
        mean = var = lam = np.nan
    n = sum(s.n_judged for *_, s in per)
    rows.append(_row("all", run, run_b, measure, mean, var, lam, n, z, margin, estimator,
                     control, "; ".join(summary)))
    return rows
