"""RTC: relevance by aggregating the systems as experts (Carterette 2007 §3; docs/math/rtc.md).

Modules: :mod:`.model` (:class:`RTC`, which chains the three stages), :mod:`.stages` (ranks to
probabilities, Platt scaling, the experts' aggregation) and :mod:`._rank_kernels` (the compiled
objective of the first stage).
"""

from .model import RTC
from .stages import fit_aggregation, fit_platt, rank_probabilities

__all__ = ["RTC", "fit_aggregation", "fit_platt", "rank_probabilities"]
