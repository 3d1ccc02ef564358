"""The runs' consensus plus automatic labels whose error is learned from the judgments.

An LLM's label (or any labeller's other than the campaign's assessors) is
evidence, not a judgment: how far it is to be trusted is learned from the
documents the humans judged, and that learning's uncertainty is carried into
the answer (the labels' meaning: :mod:`relimpute.labels`).

Model. The default model (:class:`~relimpute.relevance.fusion.Fusion`,
with its shipped settings) gives each document the log-odds ``η_ti`` the runs'
consensus supports (its capture-adjusted prediction). For label source ``s``
and label category ``v`` (a grade, or a bin of a probability) the label moves
them::

    logit P(X_ti = 1) = (w + λ) η_ti + (r − w) u_ti + Σ_s ( β_{s,v} + δ_{t,s,v} ),   v = (t, i)'s label by s,
    β_{s,v} ~ N(0, label_sd²),  δ_{t,s,v} ~ N(0, label_topic_sd²),  λ ~ N(0, runs_weight_sd²)

a source that does not label (t, i) adds nothing. A document no human judged and no
source labels is, by default (``unlabelled="nonrelevant"``), non-relevant in a topic
some source labels: the label sources' documents are then a pool, and the answer is the
measure as trec_eval computes it on that pool's judgments (its convention for
a document nobody judged); with ``unlabelled="runs"`` it keeps the default model's
probability. A labelled document no run of the
campaign retrieves has no runs' evidence (the default model's ``η`` there is its
extrapolation far below every run, about 0): it gets the labels' probability alone,
fitted the same way on every judged, labelled document without the offset::

    logit P(X_ti = 1) = Σ_s ( α_{s,v} + ε_{t,s,v} ),
    α_{s,v} ~ N(0, label_sd²),  ε_{t,s,v} ~ N(0, label_topic_sd²)

(one source: the share of the judged documents with label ``v`` that are relevant, per
topic partially pooled). Such documents count towards R because a label names them
(:func:`relimpute.confidence.counted_documents`). ``β_{s,v}`` is the log
likelihood ratio of label ``v`` beyond what the runs say (with labels drawn
independently of the runs given relevance, ``log P(v | rel) / P(v | non-rel)``
up to a constant shared by the categories: Bayes' rule); ``δ_{t,s,v}`` lets a
topic's labels be better or worse than the collection's, partially pooled
towards it (the random-intercept model of the default model, per label
value). ``w + λ`` (only on labelled documents) is the weight of the runs' evidence
once a label is known: an LLM and the runs both respond to how well a document
matches the query, so given relevance they need not be independent, and adding
the two log-odds (``w = 1``, ``λ = 0``: the independent combination) would then
count their shared evidence twice. ``w`` is a setting (``runs_weight``), not
learned: where the human labels sit at the top of the runs (a pool) the judged
documents do not vary in depth, so nothing in them says how the runs' steep
extrapolation below the pool should combine with a label there; ``λ`` is learned
(``runs_weight_sd = 0`` holds it at 0). ``u_ti`` is the share of ``η_ti`` that the runs'
effects make (the default model's ``Σ_j u_j / log2(1 + r_ij)`` over the runs retrieving
the document: how much better than the consensus each run's documents are, learned from the
judgments); it keeps the weight ``r`` (``run_effects_weight``, default 1) rather than ``w``:
a run's record on the human judgments is not evidence a label repeats, and halving it (the
earlier ``r = w``) states the best runs lowest (examples/llm_evidence/diagnose_default.py). Fitted by penalised maximum likelihood (Newton) on the judged,
labelled documents with ``η`` as an offset (and as ``λ``'s covariate), with a
Laplace approximation for the posterior of ``(β, δ, λ)``.

Draws. Posterior draw ``d`` adds the label shift of a Laplace draw of
``(β, δ)`` to the default model's draw ``d`` of the log-odds: by default the two
posteriors are taken as independent (the label fit conditions on the default
model's point estimate); with ``label_draws="conditional"`` the label fit is
redone on draw ``d``'s log-odds and ``(β, δ, λ)`` drawn from it (composition
sampling of the label model given each draw of the runs' model). A labelled
document no run retrieves takes a Laplace draw of ``(α, ε)``. Judged documents keep their human labels in every draw.
``(r − w) u_ti`` is added at the default model's point estimate of the run effects (their
posterior spread stays in each draw's ``η``, weighted by ``w``). On a labelled document the
draws of ``η`` are the default model's with its per-run spread below the pool
(``beyond_run_sd``) set to ``labelled_beyond_run_sd`` (default 0: that spread stands for what
no one knows of a run's documents below the pool, which a label observes).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, logit

from ..data import Campaign
from ..io.memory import checked_square
from . import arrowhead
from .arrowhead import laplace_draws
from .base import LazyDraws, RelevanceModel, register_model
from .offset_logistic import fit_offset_logistic, posterior_property

#: probabilities of the default model are kept this far from 0 and 1 before their log-odds
#: are taken (a document the default model puts at exactly 0 or 1 keeps it: no run evidence)
_EDGE = 1e-12


class FusionLLM(RelevanceModel):
    """The default model's consensus plus automatic labels calibrated on the judgments.

    Module docstring for the model. Label sources come with the campaign
    (:func:`relimpute.labels.with_labels`); without any it predicts what the
    wrapped default model predicts.

    Parameters
    ----------
    fusion
        The wrapped consensus model: a registered name or settings file (``"fusion"``:
        the shipped settings) or a mapping of :class:`Fusion` keyword arguments.
        Its ``n_draws`` is the number of posterior draws.
    label_sd
        Prior sd of each label value's log-odds shift ``β_{s,v}``.
    label_topic_sd
        Prior sd of a topic's deviation ``δ_{t,s,v}`` from ``β_{s,v}``: 0 pools the
        topics completely. This default and ``label_sd``'s were chosen
        leave-one-collection-out on TREC DL 2019 and DL 2021 (the log loss of P(ΔMAP < 0) on
        each collection chose the other's setting, and both chose these;
        examples/llm_evidence/, "Settings chosen leave-one-collection-out").
    runs_weight
        ``w``, the weight of the runs' log-odds on a labelled document before ``λ``: 1 adds
        the runs' log-odds and the labels' shifts, 0 leaves a labelled document to its labels.
        This default and ``unlabelled``'s were chosen leave-one-collection-out on TREC DL 2019
        and DL 2021 against substitution (examples/llm_evidence/default_check.py).
    runs_weight_sd
        Prior sd of ``λ``, the learned change of that weight; 0 holds it at 0.
    run_effects_weight
        ``r``, the weight of the runs' effects' share of the log-odds on a labelled document
        (the wrapped model's per-run effects): 1 keeps it whole whatever ``runs_weight``;
        ``runs_weight``'s value weighs it as the rest of the runs' evidence (the earlier
        default). Chosen leave-one-collection-out on TREC DL 2019 and DL 2021 against
        substitution (examples/llm_evidence/default_check.py).
    labelled_beyond_run_sd
        The wrapped model's ``beyond_run_sd`` (its per-run spread below the pool, in the
        posterior draws only) on a labelled document; the wrapped model's own value (the
        shipped 1) draws a labelled document as the earlier defaults did. Chosen as
        ``run_effects_weight``.
    unlabelled
        ``"nonrelevant"``: in a topic some source labels, a document no human judged and no
        source labels is non-relevant (p 0 in every draw: the labelled documents are taken as
        the pool, as the official qrels take theirs); ``"runs"``: it keeps the default model's
        probability (the answer is then about every retrieved document).
    label_draws
        ``"independent"``: each draw's ``(β, δ, λ)`` from the Laplace posterior fitted on the
        default model's point estimate; ``"conditional"``: refitted on each draw of the default
        model (its log-odds of that draw as the offset), then drawn from that fit's Laplace
        posterior, so a draw whose runs' log-odds are higher on the judged documents gets
        smaller label shifts (one Newton fit per draw: slower).

    Attributes
    ----------
    fusion_
        The fitted wrapped model.
    sources_
        ``(name, categories)`` of each label source, in the campaign's order.
    coef_, covariance_
        Posterior mode and Laplace covariance of ``(β, δ, λ)``: the ``β`` of every source
        and category first, then per topic (:attr:`query_ids_`) the ``δ``, ``λ`` last.
    alone_coef_, alone_covariance_
        The same of ``(α, ε)`` (no ``λ``): the labels alone, for the labelled documents no
        run retrieves.
    n_fit_
        Judged, labelled documents the label shifts were learned from.
    block_
        None (dense fits), or the columns ``(g, g T + g)`` of the per-topic shifts when, beyond
        ``DENSE_LIMIT`` parameters, both posteriors are arrowhead precisions (:mod:`.offset_logistic`;
        the covariances are formed, memory-checked, when read).
    """

    name = "fusion-llm"
    contract_params: ClassVar[dict[str, Any]] = {"fusion": {"n_draws": 8}}
    covariance_ = posterior_property("covariance_")
    alone_covariance_ = posterior_property("alone_covariance_")

    def __init__(
        self,
        fusion: str | Mapping[str, Any] = "fusion",
        label_sd: float = 2.0,
        label_topic_sd: float = 1.0,
        runs_weight_sd: float = 0.0,
        runs_weight: float = 0.5,
        unlabelled: str = "nonrelevant",
        run_effects_weight: float = 1.0,
        labelled_beyond_run_sd: float = 0.0,
        label_draws: str = "independent",
    ):
        self.fusion = fusion
        self.label_sd = label_sd
        self.label_topic_sd = label_topic_sd
        self.runs_weight_sd = runs_weight_sd
        self.runs_weight = runs_weight
        self.unlabelled = unlabelled
        self.run_effects_weight = run_effects_weight
        self.labelled_beyond_run_sd = labelled_beyond_run_sd
        self.label_draws = label_draws

    def _build_fusion(self):
        from .fusion import Fusion
        from .settings import load_model

        if isinstance(self.fusion, Mapping):
            return Fusion(**self.fusion)
        return load_model(self.fusion)

    # ------------------------------------------------------------------ fit

    def _validate(self) -> None:
        """The checks a fit makes (a settings file runs them when read, before any data)."""
        spreads = (self.label_sd, self.label_topic_sd or 1, self.runs_weight_sd or 1)
        if not all(1e-100 < sd < 1e100 for sd in spreads):  # so that every 1 / sd**2 is finite
            raise ValueError("label_sd must be > 0, label_topic_sd and runs_weight_sd >= 0 "
                             "(each from 1e-100 to 1e100 but for a 0)")  # fmt: skip
        for name in ("runs_weight", "run_effects_weight"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        spread = self.labelled_beyond_run_sd
        if not (spread == 0 or 1e-100 < spread < 1e100):
            raise ValueError(f"labelled_beyond_run_sd must be 0 or from 1e-100 to 1e100, got {spread}")
        if self.unlabelled not in ("runs", "nonrelevant"):
            raise ValueError(f"unlabelled must be 'runs' or 'nonrelevant', got {self.unlabelled!r}")
        if self.label_draws not in ("independent", "conditional"):
            raise ValueError(f"label_draws must be 'independent' or 'conditional', got {self.label_draws!r}")

    def _fit(self, campaign: Campaign, rng: np.random.Generator) -> None:
        self._validate()
        self.sources_ = tuple((s.name, tuple(s.categories)) for s in campaign.labels)
        self.query_ids_ = tuple(campaign.query_ids)
        g = self._n_global()
        n_par = g * (1 + len(self.query_ids_)) + 1
        designs = self._designs(campaign)
        # beyond DENSE_LIMIT, with one topic shift δ per document, the precisions are arrowheads
        # (the δ block diagonal): kept so, linear in the topics; else the dense (g (1 + T) + 1)²
        # covariances, curvatures and inverses (LAPACK's copy), checked before any fit
        block = (g, n_par - 1) if n_par > arrowhead.DENSE_LIMIT and _one_shift(designs, g) else None
        if block is None:
            checked_square(n_par, f"the {type(self).__name__} model's label shifts over {len(self.query_ids_):,} topics", 6)
        self.fusion_ = self._build_fusion().fit(campaign, rng=rng)
        self.draw_seed_ = int(rng.integers(2**63))
        self.coef_, self.alone_coef_, self.n_fit_, self.block_ = np.zeros(n_par), np.zeros(n_par - 1), 0, block
        if not self.sources_:  # λ alone, held at its prior
            self.covariance_, self.alone_covariance_ = np.zeros((1, 1)), np.zeros((0, 0))
            return
        wrapped, extra = self._wrapped(campaign, designs)
        self._cached = (campaign, wrapped, designs, extra)  # predict reuses them
        p = wrapped[0]
        rows, offsets, ys, alone = [], [], [], []
        for t, (topic, relevant) in enumerate(zip(campaign.topics, campaign.relevant())):
            labelled = _judged_labelled(topic, designs[t])
            keep = _shift_rows(labelled, p[t])
            rows.append(designs[t][keep])
            offsets.append(_log_odds(p[t][keep]))
            ys.append(relevant[keep].astype(float))
            alone.append((designs[t][labelled], relevant[labelled].astype(float)))
        offset = np.concatenate(offsets)
        # λ's column: the runs' log-odds of each (labelled) document
        design = sp.hstack([sp.vstack(rows), sp.csr_matrix(offset[:, None])], format="csr")
        self.n_fit_ = design.shape[0]
        prec = self._precision()
        y = np.concatenate(ys)
        self.coef_, self.covariance_ = fit_offset_logistic(design, y, self.runs_weight * offset, prec, block=block)
        design = sp.vstack([d for d, _ in alone], format="csr")
        self.alone_coef_, self.alone_covariance_ = fit_offset_logistic(
            design, np.concatenate([y for _, y in alone]), np.zeros(design.shape[0]), prec[:-1], block=block
        )

    def _n_global(self) -> int:
        return sum(len(c) for _, c in self.sources_)

    def _precision(self) -> np.ndarray:
        """Diagonal prior precision of ``(β, δ, λ)``; a spread of 0 holds its parameters at 0."""
        g = self._n_global()
        prec = np.full(g * (1 + len(self.query_ids_)) + 1, _precision_of(self.label_topic_sd))
        prec[:g] = 1.0 / self.label_sd**2
        prec[-1] = _precision_of(self.runs_weight_sd)
        return prec

    def _designs(self, campaign: Campaign) -> list[sp.csr_matrix]:
        """Per topic, the ``(n, P)`` label design: for each source labelling a document, a 1 in
        the column of its category's ``β`` and one in its topic's ``δ`` (a topic the fit did not
        see: ``β`` only)."""
        by_name = {s.name: s for s in campaign.labels}
        missing = [name for name, _ in self.sources_ if name not in by_name]
        if missing:
            raise ValueError(f"the campaign lacks the label source(s) {missing} the model was fitted with")
        g = self._n_global()
        n_par = g * (1 + len(self.query_ids_))  # λ is not a column here (its value is η's)
        topic_pos = {q: i for i, q in enumerate(self.query_ids_)}
        aligned, start = [], 0
        for name, categories in self.sources_:
            source = by_name[name]
            if tuple(source.categories) != categories:
                raise ValueError(f"label source {name!r} has categories {source.categories}, fitted {categories}")
            aligned.append((start, source.align(campaign)))
            start += len(categories)
        designs = []
        for t, topic in enumerate(campaign.topics):
            rows, cols = [], []
            for first, codes in aligned:
                labelled = np.flatnonzero(codes[t] >= 0)
                column = first + codes[t][labelled]
                rows += [labelled, labelled] if topic.query_id in topic_pos else [labelled]
                cols += [column]
                if topic.query_id in topic_pos:
                    cols += [g * (1 + topic_pos[topic.query_id]) + column]
            r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
            c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
            designs.append(sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(topic.n_docs, n_par)))
        return designs

    # ------------------------------------------------------------------ predict

    def _predict(self, campaign: Campaign):
        cached = getattr(self, "_cached", None)
        self._cached = None
        same = cached is not None and cached[0] is campaign
        if not self.sources_:
            return self.fusion_._predict(campaign)
        if same:
            _, wrapped, designs, extra = cached
        else:
            designs = self._designs(campaign)
            wrapped, extra = self._wrapped(campaign, designs)
        p, draws, params = wrapped
        raw, params = p, dict(params)
        weight = self.runs_weight - 1 + self.coef_[-1]  # the change of η's weight from 1
        # labelled documents no run retrieves (judged ones keep their label): the labels alone
        named = [d.getnnz(axis=1) > 0 for d in designs]
        alone = [n & ~t.retrieved() & ~t.judged for t, n in zip(campaign.topics, named)]
        # documents outside the labels' pool, when they are taken as non-relevant
        pool = self.unlabelled == "nonrelevant"
        outside = [~n & ~t.judged & pool & n.any() for t, n in zip(campaign.topics, named)]
        p = [
            np.where(o, 0.0, np.where(a, expit(d @ self.alone_coef_), _shifted(pt, d @ self.coef_[:-1] + x, weight, n)))
            for pt, d, n, a, o, x in zip(p, designs, named, alone, outside, extra)
        ]
        g = 0
        for name, categories in self.sources_:
            params[f"labels_{name}"] = dict(zip(categories, map(float, self.coef_[g : g + len(categories)])))
            params[f"labels_alone_{name}"] = dict(
                zip(categories, map(float, expit(self.alone_coef_[g : g + len(categories)])))
            )
            g += len(categories)
        params["runs_weight_change"] = float(self.coef_[-1])
        params["unlabelled"] = self.unlabelled  # "nonrelevant": the answer is on the labels' pool
        params["n_fit_labels"] = self.n_fit_
        if draws is not None:
            rng = np.random.default_rng(self.draw_seed_)
            # the Laplace posterior whole: dense (numpy's Cholesky draw), or its arrowhead precision
            if self.label_draws == "conditional":
                gamma = self._conditional_draws(campaign, designs, raw, draws, rng)
            else:
                gamma = laplace_draws(rng, self.coef_, self.__dict__["covariance_"], draws.n_draws)
            # drawn after γ, so the draws of the documents some run retrieves are as before
            alpha = None
            if any(a.any() for a in alone):
                alpha = laplace_draws(rng, self.alone_coef_, self.__dict__["alone_covariance_"], draws.n_draws)
            gamma[:, -1] += self.runs_weight - 1
            make = _LabelDraws(draws, designs, gamma, alone, alpha, outside, extra)
            draws = LazyDraws(campaign.n_topics, draws.n_draws, make)
        return p, draws, params

    def _conditional_draws(self, campaign: Campaign, designs, point, draws, rng) -> np.ndarray:
        """``(n_draws, P)``: per draw ``d`` of the default model, a draw of ``(β, δ, λ)`` from
        its Laplace posterior given that draw's log-odds as the offset (refitted on the
        judged, labelled documents whose ``point`` probability, the default model's, is not
        0 or 1, as the point fit), not given the point estimate's."""
        keep, rows, ys = [], [], []
        for topic, d, relevant, q in zip(campaign.topics, designs, campaign.relevant(), point):
            k = _shift_rows(_judged_labelled(topic, d), q)  # as the point fit
            keep.append(k)
            rows.append(d[k])
            ys.append(relevant[k].astype(float))
        eta = np.concatenate([_log_odds(draws[t][:, k]) for t, k in enumerate(keep)], axis=1)  # (D, m)
        design, y, prec = sp.vstack(rows, format="csr"), np.concatenate(ys), self._precision()
        out = np.empty((eta.shape[0], len(self.coef_)))
        for i, e in enumerate(eta):
            full = sp.hstack([design, sp.csr_matrix(e[:, None])], format="csr")
            theta, cov = fit_offset_logistic(full, y, self.runs_weight * e, prec, start=self.coef_, block=self.block_)
            out[i] = laplace_draws(rng, theta, cov, 1)[0]
        return out

    def _wrapped(self, campaign: Campaign, designs):
        """The wrapped model's ``(p, draws, params)`` of ``campaign``, with the draws of the
        labelled documents (a row in ``designs``) at ``labelled_beyond_run_sd``
        (:meth:`Fusion._draws <relimpute.relevance.fusion.Fusion._draws>` on the same fit,
        parameter draws and evidence), and per topic ``(r − w) u_ti`` (:meth:`_run_effects_offset`)."""
        from .fusion import Fusion

        fusion = self.fusion_
        if not isinstance(fusion, Fusion):  # no per-run spread below the pool, no run effects
            return fusion._predict(campaign), [np.zeros(t.n_docs) for t in campaign.topics]
        p, params, parts = fusion._point(campaign)
        draws = fusion._draws(campaign, parts) if fusion.n_draws else None
        spread = self.labelled_beyond_run_sd
        if draws is not None and spread != fusion.beyond_run_sd:
            named = [d.getnnz(axis=1) > 0 for d in designs]
            draws = LazyDraws(campaign.n_topics, draws.n_draws,
                              partial(_where, named, fusion._draws(campaign, parts, spread), draws))  # fmt: skip
        return (p, draws, params), self._run_effects_offset(fusion, designs, parts[1])

    def _run_effects_offset(self, fusion, designs, runs) -> list[np.ndarray]:
        """Per topic ``(r − w) u_ti`` on the labelled documents (0 elsewhere, and with a wrapped
        model without run effects): the runs' effects' share of the log-odds, at the wrapped
        model's point estimate, moved from the weight ``w`` to ``r`` (``runs``: the wrapped
        model's design of each topic)."""
        change = self.run_effects_weight - self.runs_weight
        zero = [np.zeros(d.shape[0]) for d in designs]
        n = len(fusion.systems_)
        if change == 0 or not n:
            return zero
        out = []
        for z, d, x in zip(zero, designs, runs):
            r = d.getnnz(axis=1) > 0
            z[r] = change * (x[r][:, x.shape[1] - n :] @ fusion.coef_[-n:])
            out.append(z)
        return out

    def __getstate__(self):
        return {**self.__dict__, "_cached": None}


class _LabelDraws:
    """Topic ``t``'s draws: the default model's draw ``d`` shifted by the label draw ``d``."""

    def __init__(self, draws, designs, gamma, alone, alpha, outside, extra):
        self.draws, self.designs, self.alone, self.outside, self.extra = draws, designs, alone, outside, extra
        self.gamma_t, self.weight = np.ascontiguousarray(gamma[:, :-1].T), gamma[:, -1:]
        self.alpha_t = None if alpha is None else np.ascontiguousarray(alpha.T)

    def __call__(self, t: int) -> np.ndarray:
        shift = (self.designs[t] @ self.gamma_t).T + self.extra[t]  # (n_draws, n)
        out = _shifted(self.draws[t], shift, self.weight, self.designs[t].getnnz(axis=1) > 0)
        if self.alone[t].any():  # a labelled document no run retrieves: the labels alone
            out[:, self.alone[t]] = expit((self.designs[t][self.alone[t]] @ self.alpha_t).T)
        out[:, self.outside[t]] = 0.0
        return out


def _where(named, labelled, draws, t: int) -> np.ndarray:
    """Topic ``t``'s draws: ``labelled``'s on the documents ``named[t]``, ``draws``' elsewhere."""
    return np.where(named[t], labelled[t], draws[t])


def _one_shift(designs, g: int) -> bool:
    """Whether every document has at most one topic shift ``δ`` (columns ``g:`` of its label
    design; two sources labelling one document give it two): the ``δ`` block of the label
    shifts' precision is then diagonal, an arrowhead (:mod:`.arrowhead`)."""
    return all(np.diff(d[:, g:].tocsr().indptr).max(initial=0) <= 1 for d in designs)


def _judged_labelled(topic, design) -> np.ndarray:
    """``(n,)`` bool: the documents a human judged and some label source labels."""
    return topic.judged & (design.getnnz(axis=1) > 0)


def _shift_rows(labelled: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``(n,)`` bool: the documents the label shifts are learned from, the judged, labelled
    ones (``labelled``) whose runs' probability ``p`` is neither 0 nor 1 (their log-odds, the
    offset, are finite)."""
    return labelled & (p > 0) & (p < 1)


def _log_odds(p: np.ndarray) -> np.ndarray:
    return logit(np.clip(p, _EDGE, 1 - _EDGE))


def _precision_of(sd: float) -> float:
    """Prior precision of a spread; 0 holds the parameter at 0."""
    return 1e12 if sd == 0 else 1.0 / sd**2


def _shifted(p: np.ndarray, shift: np.ndarray, weight=0.0, labelled=True) -> np.ndarray:
    """``expit((1 + weight) logit(p) + shift)`` (``weight`` only where ``labelled``), with
    p = 0 or 1 (no evidence of the runs) kept."""
    eta = _log_odds(p)
    moved = expit(eta + np.where(labelled, weight * eta, 0.0) + shift)
    return np.where((p <= 0) | (p >= 1), p, moved)


register_model(FusionLLM)
