"""Survey strategies of a calibration study: judge a random sample of the trial's pool, drawn
with a design, and state P(ΔMAP > 0) from a design-based or model-assisted estimator.

In each trial a survey strategy (:class:`~relimpute.calibration.strategies.Strategy` with a
``design``) spends the judgments MTC spent in the same trial (``budget_from="mtc"``, as
``ip``): it draws a sample of the depth-K pool of the trial's k runs with the design ``judge
--design`` uses (:mod:`relimpute.selection.designs`: ``stratified``, uniform in the strata of
best rank 1–10 and 11–K; ``pps``, statAP's; ``guided``, π ∝ the default model's uncertainty,
Zrnic & Candès 2024), judges it from the trial's qrels, and reads every run's MAP and every
pair's ΔMAP with :func:`relimpute.confidence.survey.estimate` (``ht``, or ``ppi++`` with the
strategy's model, cross-fitted on the sample, as the control variate). P(a beats b) is the
estimator's normal approximation Φ(ΔMAP̂ / se) (``docs/survey.md``).

The universe is the pool of all k runs, the runs whose comparisons are scored (MTC judges for
the initial runs only): a document outside it would count as nonrelevant in every estimate.
The π floor is statAP's 0.01, or half the budget's share of the pool when that is smaller, so
that any budget can be drawn (the guided design's own floor share then lifts it to half the
budget's share: :data:`~relimpute.selection.designs.GUIDED_FLOOR_SHARE`); the stratified
design draws at least one document of every stratum of every topic, so at a budget below that
it judges more (the trial row counts what it judged). A trial whose MTC judged nothing leaves
nothing to sample: every pair then gets P = ½ (no evidence either way), ``stopped_because =
"no budget"``.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations

import numpy as np
import pandas as pd

#: The designs a survey strategy can draw with (``judge --design``'s names).
SURVEY_DESIGNS = ("stratified", "pps", "guided")
#: The estimators it can read the sample with (``evaluate --estimator``'s names).
SURVEY_ESTIMATORS = ("ht", "ppi++")
#: Where the stratified design's first stratum ends (best rank 1–10, then 11–K).
TOP_STRATUM = 10


def survey_design(design: str, budget: int, pool_size: int, pool_depth: int, model: str):
    """The sampling design ``design`` that judges ``budget`` of the ``pool_size`` documents of
    the depth-``pool_depth`` pool (module docstring)."""
    from ..selection.designs import DEFAULT_FLOOR, ModelGuidedDesign, PPSDesign, StratifiedDesign

    if design not in SURVEY_DESIGNS:
        raise ValueError(f"design {design!r} is not one of {', '.join(SURVEY_DESIGNS)}")
    budget = min(int(budget), pool_size)
    floor = min(DEFAULT_FLOOR, 0.5 * budget / max(pool_size, 1))
    if design == "pps":
        return PPSDesign(budget=budget, pool_depth=pool_depth, floor=floor)
    if design == "guided":
        return ModelGuidedDesign(budget, pool_depth=pool_depth, floor=floor, model=model)
    rate = budget / max(pool_size, 1)
    if pool_depth <= TOP_STRATUM:
        return StratifiedDesign(((1, pool_depth, rate),))
    return StratifiedDesign(((1, TOP_STRATUM, rate), (TOP_STRATUM + 1, pool_depth, rate)))


def draw_judged_sample(full, hidden, strategy, budget: int, rng) -> pd.DataFrame:
    """The sample table (:mod:`relimpute.selection.designs`) of ``strategy``'s design over the
    pool of ``hidden``'s runs (no judgments), each drawn document judged from ``full``'s qrels
    (a document the qrels do not judge is nonrelevant, as the simulated assessor answers)."""
    from ..selection.designs import pool_table

    pool_depth = int(max(t.ranking.shape[1] for t in hidden.topics))
    pool = pool_table(hidden, pool_depth)
    design = survey_design(strategy.design, budget, len(pool), pool_depth,
                           strategy.model if isinstance(strategy.model, str) else "fusion")
    sample = design.draw(hidden if strategy.design == "guided" else pool, rng)
    grade = {}
    for t in full.topics:
        grade[t.query_id] = dict(zip(t.doc_ids[t.judged].astype(str), t.grades[t.judged]))
    drawn = sample["drawn"].to_numpy()
    answers = [grade[q].get(d, 0) for q, d in zip(sample["query_id"], sample["doc_id"])]
    return sample.assign(relevance=np.where(drawn, answers, -1).astype(int))


def survey_comparison(full, sample: pd.DataFrame, strategy, systems, rng, measure: str = "AP"):
    """(E[MAP] per system, the pair rows ``system_a, system_b, e_delta_map, p_a_better``)
    of ``strategy``'s estimator on the judged ``sample`` of ``full``'s runs ``systems``."""
    from ..confidence.survey import estimate
    from ..confidence.survey.control import model_predictions

    control = None
    if strategy.estimator != "ht":
        control = model_predictions(judged_campaign(full, sample), sample,
                                    strategy.make_model(), rng=rng, measures=(measure,))
    runs = {name: full.run_frame(name) for name in systems}
    table = estimate(sample[["query_id", "doc_id", "relevance", "inclusion", "stratum"]], runs,
                     measures=[measure], control=control, estimator=strategy.estimator,
                     pairs=list(combinations(systems, 2)), rel_threshold=full.rel_threshold,
                     control_name=None if control is None else str(strategy.model))
    single = table[table["run_b"] == ""].set_index("run")["estimate"]
    e_map = pd.Series(single.reindex(systems).fillna(0.0).to_numpy(), index=list(systems))
    paired = table[table["run_b"] != ""]
    p = paired["p_a_better"].to_numpy(dtype=float)
    rows = pd.DataFrame({"system_a": paired["run"].to_numpy(),
                         "system_b": paired["run_b"].to_numpy(),
                         "e_delta_map": paired["estimate"].fillna(0.0).to_numpy(),
                         "p_a_better": np.where(np.isfinite(p), p, 0.5)})
    return e_map, rows


def judged_campaign(full, sample: pd.DataFrame):
    """``full`` knowing exactly the sample's judgments (and nothing else)."""
    judged = sample[sample["relevance"] >= 0]
    by_topic = {q: dict(zip(f["doc_id"], f["relevance"])) for q, f in judged.groupby("query_id")}
    topics = []
    for t in full.topics:
        answers = by_topic.get(t.query_id, {})
        grade = np.array([answers.get(d, -1) for d in t.doc_ids.astype(str)], dtype=int)
        topics.append(replace(t, judged=grade >= 0, grades=np.maximum(grade, 0).astype(t.grades.dtype)))
    return replace(full, topics=tuple(topics))


def run_survey(full, hidden, strategy, budget: int, rng, initial, measure: str = "AP"):
    """One trial of a survey strategy: (E[MAP] per system, the pair rows, judgments made,
    why it stopped, the initial pair's max(P, 1 − P))."""
    systems = list(full.systems)
    if budget < 1:
        e_map, rows = no_evidence(systems)
        return e_map, rows, 0, "no budget", 0.5
    sample = draw_judged_sample(full, hidden, strategy, budget, rng)
    e_map, rows = survey_comparison(full, sample, strategy, systems, rng, measure)
    a, b = initial[:2]
    first = rows[((rows["system_a"] == a) & (rows["system_b"] == b))
                 | ((rows["system_a"] == b) & (rows["system_b"] == a))]["p_a_better"]
    p = float(first.iloc[0]) if len(first) else 0.5
    return e_map, rows, int((sample["relevance"] >= 0).sum()), "budget", max(p, 1 - p)


def no_evidence(systems):
    """What a survey strategy states with nothing judged: E[MAP] 0, P = ½ for every pair."""
    pairs = list(combinations(systems, 2))
    return (pd.Series(0.0, index=list(systems)),
            pd.DataFrame({"system_a": [a for a, _ in pairs], "system_b": [b for _, b in pairs],
                          "e_delta_map": 0.0, "p_a_better": 0.5}))
