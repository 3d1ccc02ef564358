"""Statistical precision of IR evaluation (Cormack & Lynam 2006, 2007).

- :mod:`.resample` — the corpus bootstrap of ranked lists (:func:`corpus_bootstrap`).
- :mod:`.intervals` — AP intervals: normal, logit, percentile, BCa.
- :mod:`.small_r` — silver-bullet / lead-balloon correction for AP ≈ 0, 1.
- :mod:`.means` — MAP and L-MAP intervals (bootstrap, parametric).
- :mod:`.paired` — the difference of two systems on shared resamples.
- :mod:`.meta` — fixed- and random-effects meta-analysis over topics.
- :mod:`.split` — the split-corpus validation (MD5 halves of the documents).
- :mod:`.pools` — judging orders of depth-k and move-to-front pools.
- :mod:`.power` — power and bias of pooling strategies against judging effort; planning.
- :mod:`.power_plots` — the power / bias figures (matplotlib, imported on use).

Not here: one interval for ΔMAP combining topic sampling with judgment
uncertainty (that is :mod:`relimpute.confidence.topic_bootstrap`).
"""

from .intervals import METHODS, APIntervals, ap_intervals, logit, other_sample_coverage
from .means import MeanIntervals, mean_intervals
from .meta import MetaAnalysis, meta_analysis
from .paired import PairedDifference, paired_difference
from .resample import CorpusBootstrap, corpus_bootstrap
from .small_r import small_r_corrected

__all__ = [
    "METHODS",
    "APIntervals",
    "CorpusBootstrap",
    "MeanIntervals",
    "MetaAnalysis",
    "PairedDifference",
    "ap_intervals",
    "corpus_bootstrap",
    "logit",
    "mean_intervals",
    "meta_analysis",
    "other_sample_coverage",
    "paired_difference",
    "small_r_corrected",
]
