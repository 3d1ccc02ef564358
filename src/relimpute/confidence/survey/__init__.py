"""The design-based side of the confidence engine: answers that hold whatever the model.

A random sample of the universe (e.g. the depth-100 pool) is judged with known inclusion
probabilities π; :func:`estimate` gives per run and topic, and over topics, AP, P@k and
nDCG@k (and paired differences of runs) with design-based 95% intervals:

- ``ht``: Horvitz–Thompson (statAP's ratio for AP; Aslam, Pavlu & Yilmaz 2006);
- ``model-assisted``: the difference (GREG) estimator with a relevance model's or an LLM's
  predictions as the control variate (Särndal, Swensson & Wretman 1992, ch. 6);
- ``ppi++``: the same with a power-tuned λ per topic (Angelopoulos, Duchi & Zrnic 2023).

Each is unbiased over the design whatever the predictions (AP and nDCG: to the order of the
ratio's bias); a good model only narrows the interval. Modules: :mod:`.design` (the sample
per topic, the design covariance), :mod:`.totals` (HT and model sums), :mod:`.measures`
(P@k, nDCG@k as functions of totals, linearised), :mod:`.batched` (AP of every run and pair
for one or many samplings: the one implementation of AP's estimators), :mod:`.quenouille`
(AP's jackknife bias correction and delete-two variance), :mod:`.estimate` (the
table).
"""

from .design import POISSON, STRATIFIED, TopicSample, design_covariance, infer_sampling, \
    topic_samples
from .measures import Control, no_control
from .estimate import COLUMNS, ESTIMATOR_TITLES, ESTIMATORS, SURVEY_ESTIMAND, controls, estimate, \
    run_ranks, topic_estimate
from .quenouille import by_design

__all__ = ["COLUMNS", "Control", "no_control", "ESTIMATORS", "ESTIMATOR_TITLES", "POISSON", "STRATIFIED",
           "SURVEY_ESTIMAND", "TopicSample", "by_design", "controls", "design_covariance", "estimate",
           "infer_sampling", "run_ranks", "topic_estimate", "topic_samples"]
