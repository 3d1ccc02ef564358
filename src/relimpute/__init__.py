"""relimpute: IR evaluation with incomplete relevance judgments."""

from .data import Campaign, TopicData
from .errors import InputError
from .io import read_prob_qrels, read_qrels, read_run, read_runs, write_prob_qrels, write_qrels, write_run

__version__ = "0.1.0"

__all__ = [
    "Campaign",
    "InputError",
    "TopicData",
    "read_prob_qrels",
    "read_qrels",
    "read_run",
    "read_runs",
    "write_prob_qrels",
    "write_qrels",
    "write_run",
]
