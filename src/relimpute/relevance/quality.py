"""Predictive quality of a relevance model on held-out judgments.

Protocol (the proof that a model works): keep some of a campaign's
judgments (a random share, or the depth-k pool of the runs), hide the rest,
fit the model on what is kept, predict the hidden documents and score the
predictions against their labels: log loss, Brier score, AUC and a
calibration curve (reliability diagram). Scores are over the hidden judged
documents of all topics pooled.

That protocol never sees the documents nobody judged, which in a pooled
collection are most of the retrieved documents and nearly all nonrelevant.
``score_unjudged=True`` scores every document of the campaign instead, an
unjudged one counting as nonrelevant (:func:`complete_judgments`; right for
a collection whose qrels hold essentially every relevant document, as
DL 2019's), and every result reports the expected number of relevant
documents per topic, ``Σ_i p_i`` (the quantity behind E[R] in the
confidence engine), against the number the qrels hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .._deprecation import renamed_kwargs
from .._display import short_repr
from ..data import Campaign
from ..stats import binary_outcomes, log_loss
from .base import RelevanceModel, as_generator


def brier(y, p) -> float:
    """Mean squared error of ``p`` against the 0/1 labels (Brier 1950; scikit-learn's)."""
    from sklearn.metrics import brier_score_loss

    y, p = binary_outcomes(y, p)
    return float(brier_score_loss(y, p, labels=[False, True]))


def auc(y, p) -> float:
    """Area under the ROC curve (scikit-learn's; ties count ½); NaN with one class only."""
    from sklearn.metrics import roc_auc_score

    y, p = binary_outcomes(y, p)
    if y.all() or not y.any():
        return float("nan")
    return float(roc_auc_score(y, p))


def calibration_curve(y, p, *, bins: int = 10) -> pd.DataFrame:
    """Reliability table over ``bins`` equal-width bins of ``p`` (empty bins dropped).

    Bins are ``(low, high]`` (the first also holds 0), as scikit-learn's
    ``calibration_curve``.

    Columns ``bin_low, bin_high, n, mean_predicted, observed`` (observed =
    share relevant).
    """
    y, p = binary_outcomes(y, p)
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    edges = np.linspace(0, 1, bins + 1)
    which = np.searchsorted(edges[1:-1], p)  # bins (low, high], the first closed at 0
    n = np.bincount(which, minlength=bins)
    keep = n > 0
    mean_p = np.bincount(which, weights=p, minlength=bins)[keep] / n[keep]
    observed = np.bincount(which, weights=y, minlength=bins)[keep] / n[keep]
    return pd.DataFrame(
        {
            "bin_low": edges[:-1][keep],
            "bin_high": edges[1:][keep],
            "n": n[keep],
            "mean_predicted": mean_p,
            "observed": observed,
        }
    )


def complete_judgments(campaign: Campaign) -> Campaign:
    """The campaign with every document judged, an unjudged one as nonrelevant (grade 0).

    The truth of the ``score_unjudged`` protocol; :func:`split_judgments` on
    it with ``protocol="random"`` samples the judgments uniformly from every
    document the runs retrieve (the unbiased case).
    """
    topics = tuple(
        replace(
            t,
            judged=np.ones(t.n_docs, dtype=bool),
            grades=np.where(t.judged, t.grades, 0).astype(np.int16),
        )
        for t in campaign.topics
    )
    return replace(campaign, topics=topics)


@renamed_kwargs(depth="pool_depth")
def split_judgments(
    campaign: Campaign,
    *,
    protocol: str = "random",
    fraction: float = 0.1,
    pool_depth: int = 5,
    rng: int | np.random.Generator | None = None,
) -> list[np.ndarray]:
    """Per topic, the mask of judgments to keep (the rest are held out).

    ``protocol="random"``: each judged document is kept with probability
    ``fraction`` (on :func:`complete_judgments` of a campaign: each document). ``protocol="pool"``: keep the judged documents in the top
    ``pool_depth`` of any run (a depth-k pool), hold out the deeper ones.
    """
    if protocol == "random":
        if not 0 < fraction < 1:
            raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
        gen = as_generator(rng)
        return [t.judged & (gen.random(t.n_docs) < fraction) for t in campaign.topics]
    if protocol == "pool":
        if pool_depth < 1:
            raise ValueError(f"pool_depth must be >= 1, got {pool_depth}")
        masks = []
        for t in campaign.topics:
            top = t.ranking[:, :pool_depth]
            pooled = np.zeros(t.n_docs, dtype=bool)
            pooled[top[top >= 0]] = True
            masks.append(t.judged & pooled)
        return masks
    raise ValueError(f"protocol must be 'random' or 'pool', got {protocol!r}")


@dataclass(frozen=True, slots=True)
class PredictiveQuality:
    """Scores of one model's predictions on held-out documents (:func:`heldout_quality`)."""

    model: str
    n_train: int
    n_test: int
    prevalence: float
    log_loss: float
    brier: float
    auc: float
    calibration: pd.DataFrame
    #: per topic: ``query_id, expected_relevant`` (Σ p over the topic's
    #: documents, kept labels included) and ``true_relevant`` (the qrels' count)
    relevant_counts: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: whether unjudged documents were scored (as nonrelevant)
    score_unjudged: bool = False

    @property
    def expected_relevant(self) -> float:
        """Mean over topics of the expected number of relevant documents."""
        return float(self.relevant_counts["expected_relevant"].mean())

    @property
    def true_relevant(self) -> float:
        """Mean over topics of the number of relevant documents in the qrels."""
        return float(self.relevant_counts["true_relevant"].mean())

    @property
    def relevant_ratio(self) -> float:
        """Geometric mean over topics of expected / true relevant (topics with R > 0)."""
        counts = self.relevant_counts[self.relevant_counts["true_relevant"] > 0]
        ratio = counts["expected_relevant"] / counts["true_relevant"]
        return float(np.exp(np.log(ratio).mean())) if len(ratio) else float("nan")

    def to_frame(self) -> pd.DataFrame:
        """One row: ``model, n_train, n_test, prevalence, log_loss, brier, auc,
        expected_relevant, true_relevant, relevant_ratio, score_unjudged``."""
        return pd.DataFrame(
            [
                {
                    "model": self.model,
                    "n_train": self.n_train,
                    "n_test": self.n_test,
                    "prevalence": self.prevalence,
                    "log_loss": self.log_loss,
                    "brier": self.brier,
                    "auc": self.auc,
                    "expected_relevant": self.expected_relevant,
                    "true_relevant": self.true_relevant,
                    "relevant_ratio": self.relevant_ratio,
                    "score_unjudged": self.score_unjudged,
                }
            ]
        )

    def __repr__(self) -> str:
        return short_repr(
            self,
            f"model={self.model!r}",
            f"n_test={self.n_test}",
            f"log_loss={self.log_loss:.4f}",
            f"auc={self.auc:.3f}",
        )

    def __str__(self) -> str:
        what = "held-out documents" if self.score_unjudged else "held-out judgments"
        return (
            f"{self.model}: log loss {self.log_loss:.4f}, Brier {self.brier:.4f}, "
            f"AUC {self.auc:.3f} on {self.n_test} {what} "
            f"({self.prevalence:.1%} relevant; trained on {self.n_train}); "
            f"{self.expected_relevant:.1f} relevant expected per topic, "
            f"{self.true_relevant:.1f} true (ratio {self.relevant_ratio:.2f})"
        )


def heldout_quality(
    model: RelevanceModel,
    campaign: Campaign,
    keep: list[np.ndarray],
    *,
    rng: int | np.random.Generator | None = None,
    bins: int = 10,
    score_unjudged: bool = False,
) -> PredictiveQuality:
    """Fit ``model`` on the judgments in ``keep``, score it on the held-out documents.

    ``score_unjudged=False``: scored on the other judged documents.
    ``True``: on every other document of the campaign, an unjudged one as
    nonrelevant (:func:`complete_judgments`); ``keep`` may then hold
    unjudged documents (as split from the completed campaign).
    """
    truth = complete_judgments(campaign) if score_unjudged else campaign
    train = truth.with_judged(keep)
    estimate = model.fit(train, rng=rng).predict(train)
    test = [t.judged & ~k for t, k in zip(truth.topics, keep)]
    relevant = truth.relevant()
    y = np.concatenate([r[m] for r, m in zip(relevant, test)])
    p = np.concatenate([pt[m] for pt, m in zip(estimate.p, test)])
    counts = pd.DataFrame(
        {
            "query_id": list(truth.query_ids),
            "expected_relevant": [float(pt.sum()) for pt in estimate.p],
            "true_relevant": [int(r.sum()) for r in relevant],
        }
    )
    return PredictiveQuality(
        model=model.name,
        n_train=int(sum(k.sum() for k in keep)),
        n_test=int(y.size),
        prevalence=float(y.mean()) if y.size else float("nan"),
        log_loss=log_loss(y, p),
        brier=brier(y, p),
        auc=auc(y, p),
        calibration=calibration_curve(y, p, bins=bins),
        relevant_counts=counts,
        score_unjudged=score_unjudged,
    )
