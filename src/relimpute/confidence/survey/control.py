"""Control variates for the model-assisted estimators: a prediction p_d of every universe
document's relevance, from an LLM's labels or from a relevance model.

- Labels (:func:`label_predictions`): the label itself is the prediction (p = 1 at a grade ≥
  the threshold, else 0; a probability label is p; gain = the grade), no calibration: the
  estimators stay unbiased whatever the labels, and PPI++'s λ scales them.
- A model (:func:`model_predictions`): fitted to the judged sample, its prediction for a judged
  document would be that document's own label and the residual would vanish. So it is
  cross-fitted (Zrnic & Candès 2024, cross-prediction): the judged documents drawn with π < 1
  are split at random into ``folds``; each fold's documents are predicted by the model fitted
  with that fold's judgments hidden, and the documents never judged get the mean of the folds'
  predictions. The predictions then depend on the sample only through other documents'
  labels: the estimators' bias from this is of order 1/|S| (measured in the examples).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def label_predictions(path, rel_threshold: int = 1) -> pd.DataFrame:
    """``query_id, doc_id, p, gain`` and ``p_grade_<g>`` (1 at the label's grade) of a label
    file (:func:`relimpute.labels.read_labels`: qrels or probabilistic-qrels format)."""
    from ...io import read_prob_qrels
    from ...labels import read_labels

    source = read_labels(path)
    if source.scale == "probability":
        table = read_prob_qrels(path)
        p = table["probability"].to_numpy(dtype=float)
        return pd.DataFrame({"query_id": table["query_id"].astype(str),
                             "doc_id": table["doc_id"].astype(str), "p": p, "gain": p})
    frame = source.frame.drop_duplicates(["query_id", "doc_id"], keep="last")
    grade = np.array([int(c) for c in source.categories])[frame["category"].to_numpy()]
    out = pd.DataFrame({"query_id": frame["query_id"].astype(str).to_numpy(),
                        "doc_id": frame["doc_id"].astype(str).to_numpy(),
                        "p": (grade >= rel_threshold).astype(float), "gain": grade.astype(float)})
    for g in np.unique(grade[grade > 0]):
        out[f"p_grade_{g}"] = (grade == g).astype(float)
    return out


def model_predictions(campaign, sample: pd.DataFrame, model="fusion", *, folds: int = 2,
                      rng=None, measures=("AP",)) -> pd.DataFrame:
    """``query_id, doc_id, p``: cross-fitted predictions (module docstring) of ``model`` (a
    name, settings path or unfitted :class:`~relimpute.relevance.base.RelevanceModel`) for
    every document of ``campaign``; ``sample`` gives each judged document's π (a document with
    π = 1 keeps its judgment in every fit: its residual is weighted 1 − 1 = 0 anyway)."""
    from ...relevance import load_model
    from ..binary import predict_for
    from .design import topic_samples

    if folds < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, got {folds}")
    rng = np.random.default_rng(rng)
    samples = topic_samples(sample)
    fold_of, hidden_any = [], False
    for t in campaign.topics:
        s = samples.get(t.query_id)
        drawn = np.zeros(t.n_docs, dtype=bool)
        if s is not None:
            at = pd.Index(t.doc_ids).get_indexer(s.doc_ids)
            chance = s.judged & (s.inclusion < 1) & (at >= 0)
            drawn[at[chance]] = True
        fold = np.full(t.n_docs, -1)
        fold[drawn] = rng.permutation(np.arange(drawn.sum()) % folds)
        hidden_any |= drawn.any()
        fold_of.append(fold)
    predicted = [np.zeros(t.n_docs) for t in campaign.topics]
    for k in range(folds if hidden_any else 1):
        fitted = load_model(model) if isinstance(model, str) else model
        visible = campaign.with_judged([t.judged & (f != k) for t, f in
                                        zip(campaign.topics, fold_of)])
        fitted.fit(visible, rng=rng)
        estimate = predict_for(fitted, visible, measures)
        for i, (f, p) in enumerate(zip(fold_of, estimate.p)):
            p = np.asarray(p, dtype=float)
            predicted[i] += np.where(f == k, p, 0.0) + np.where(f < 0, p / folds, 0.0) \
                if hidden_any else p
    return pd.concat([pd.DataFrame({"query_id": t.query_id, "doc_id": t.doc_ids.astype(str),
                                    "p": p}) for t, p in zip(campaign.topics, predicted)],
                     ignore_index=True)
