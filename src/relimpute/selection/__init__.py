"""Judgment selection: which document to judge next, who judges it, when to stop.

- :mod:`.base` — the strategy protocol, the loop state and the registry
  (``get_strategy(name, **params)``, ``available_strategies()``).
- :mod:`.mtc` (``"mtc"``), :mod:`.rtc` (``"rtc"``) — Carterette 2007 Alg. 1.
- :mod:`.llm` (``"llm"``) — judging where the automatic labels leave the comparison unsure.
- :mod:`.pooling` — ``"ip"``, ``"depth"``, ``"mtf"`` (Cormack et al. 1998).
- :mod:`.stopping` — confidence, budget, exhaustion.
- :mod:`.assessors` — the simulated oracle from full qrels.
- :mod:`.journal` — the append-only judging journal behind ``relimpute judge``.
- :mod:`.designs` — sampling designs (stratified by depth, statAP's PPS, model-guided) for
  judging a sample; :mod:`.guided` the model-guided design's π; :mod:`.looks` stopping a
  model-guided sample's judging early with a rule that keeps coverage (Bonferroni looks).
- :mod:`.loop` — :class:`SelectionSession` and :func:`run_selection`.
"""

from .assessors import Assessor, SimulatedAssessor
from .base import (
    SelectionState,
    SelectionStrategy,
    available_strategies,
    get_strategy,
    register,
)
from .designs import ModelGuidedDesign, PPSDesign, SamplingDesign, StratifiedDesign
from .llm import LLMSelection
from .looks import Looks
from .loop import SelectionResult, SelectionSession, run_selection
from .mtc import MTC
from .pooling import DepthPooling, IncrementalPooling, MoveToFront
from .posterior import PosteriorSelection
from .rtc import RTCSelection
from .stopping import PairConfidence, StoppingRule

__all__ = [
    "LLMSelection",
    "PosteriorSelection",
    "MTC",
    "RTCSelection",
    "Assessor",
    "DepthPooling",
    "IncrementalPooling",
    "Looks",
    "ModelGuidedDesign",
    "MoveToFront",
    "PPSDesign",
    "PairConfidence",
    "SelectionResult",
    "SelectionSession",
    "SelectionState",
    "SamplingDesign",
    "SelectionStrategy",
    "SimulatedAssessor",
    "StoppingRule",
    "StratifiedDesign",
    "available_strategies",
    "get_strategy",
    "register",
    "run_selection",
]
