"""AP of every run and ΔAP of every pair for B samplings of one topic at once, in arrays: the
one implementation of AP's estimators (:func:`.estimate.estimate` reads each sample as B = 1).

The B samplings share the universe, the runs and the predictions, so the totals are
:func:`.totals.ranked_pair_sums` (AP's numerator) and Σ w x (R̂) under weights ``(B, n)``, the ratio
is :func:`.measures.ratio_parts` (R̂ held at the relevant documents judged:
:func:`.measures.relevant_judged`, a replicate's own), λ is :func:`.samplings.tuned_lambda`
(PPI++ keeps its answer on every topic: :mod:`.samplings`). With z_r = a_r (dN_r − λ dNp_r) +
b_r (x − λ p) (a = 1/R̂, b = −N̂/R̂², :mod:`.measures`) every design covariance is a quadratic
form in one Gram matrix per sampling of the basis [dN_r, dNp_r, x, p]
(:func:`.design.design_covariance`: Poisson Σ_S (1 − π)/π² z², stratified
Σ_h N_h²(1 − n_h/N_h)/n_h s_h²(z)), so a pair costs nothing more than its runs. The
delete-one jackknife is exact: AP's totals are linear in each weight separately, so deleting
d gives T_(d) = T − w_d ∂T/∂w_d (Poisson), and the stratified replicate's reweighting of d's
stratum is a shift by the stratum's own totals (:meth:`TopicSamplings.jackknife`).
``tests/test_survey_batched.py`` checks every row against one sample at a time, and
``tests/test_survey_jackknife.py`` the replicates against statAP by hand. The loops over
samplings, quantities and drawn documents (pair Grams, replicate sums, forms) are
:mod:`._small`'s: numpy for one sample, numba's :mod:`._kernels` for many.
"""

from __future__ import annotations

from copy import copy
from types import SimpleNamespace

import numpy as np

from ._small import gathered_basis, pair_grams, pair_overcount_forms, paired_forms, \
    quadratic_forms, ratio_rows, replicate_ratios, replicate_side, replicate_variance
from .design import STRATIFIED
from .measures import ratio_parts, relevant_judged
from .quenouille import bias_correction_name, by_design, corrected
from .samplings import ESTIMATORS, VARIANCES, SamplingEstimates, Samplings, \
    _gathered, _stratum_means, mean_over_topics, tuned_lambda
from .totals import ranked_pair_sums


class TopicSamplings:
    """One topic's B samplings with R runs: AP's totals per sampling and run, built once and
    read at any λ (:meth:`estimates`).

    ``relevant`` (n,): 1 for a relevant universe document (read on the drawn ones only);
    ``ranks`` (R, n): each run's rank of each document (0 = not retrieved, cut at the
    measure's k first); ``p`` (n,): the control variate's predictions (None: zeros, HT)."""

    #: R̂ is held at least here as well as at the relevant documents judged (PPI++: 1)
    floor = 0.0

    def __init__(self, samplings: Samplings, relevant, ranks, p=None, _judged=None):
        self.s = samplings
        self.x = np.asarray(relevant, dtype=float)
        self.p = np.zeros(len(self.x)) if p is None else np.asarray(p, dtype=float)
        self.ranks = np.atleast_2d(np.asarray(ranks, dtype=int))
        if _judged is None:  # N̂ = HT_x (B, R), its derivatives (B, R, n), R̂'s HT_x, its floor
            self.nx, self.dnx, self.inx = self._numerator(self.x)
            self.rx = samplings.weight @ self.x
            self.least = relevant_judged(samplings.weight, self.x)  # R̂ ≥ this (B,)
            self._shared = {}  # what every control's replicates share (:meth:`jackknife`)
        else:
            for name in ("nx", "dnx", "inx", "rx", "least", "_shared"):
                setattr(self, name, getattr(_judged, name))
        self.np_, self.dnp, self.inp = self._numerator(self.p)
        self.replicates = {}  # the jackknife correction's, of these totals (:mod:`.quenouille`)
        self.rp, self.pop_r = samplings.weight @ self.p, float(self.p.sum())
        self.pop_n = ranked_pair_sums(self.p, np.ones((1, len(self.p))), self.ranks,
                                      np.zeros(len(self.p), int), np.ones(1))[0][0]

    @property
    def gram(self) -> np.ndarray:
        """:meth:`_gram`, computed when first read (the study's first pass reads only the
        controls' λ moments, never the judgments' own Gram)."""
        if "_gram_matrix" not in self.__dict__:
            self._gram_matrix = self._gram()
        return self._gram_matrix

    def forget_replicates(self) -> None:
        """Drop the jackknife correction's delete-two values kept for these samplings (runs ×
        judged² floats); rows already read stay."""
        self.replicates.clear()

    def with_control(self, p) -> "TopicSamplings":
        """The same samplings, relevance and runs with the predictions ``p`` of another control
        variate: the judgments' totals are shared, the predictions' computed."""
        return TopicSamplings(self.s, self.x, self.ranks, p, _judged=self)

    def _numerator(self, v):
        """AP's numerator of ``v`` (x or p) under each sampling's weights, per run: its HT sum
        (B, R), derivatives (B, R, n) and, stratified, each document's pairs inside its
        stratum (else None) (:func:`.totals.ranked_pair_sums`); zeros when v is."""
        s = self.s
        stratified = s.sampling == STRATIFIED
        if not v.any():
            B, R, n = len(s), len(self.ranks), len(v)
            return np.zeros((B, R)), np.zeros((B, R, n)), \
                np.zeros((B, R, n)) if stratified else None
        return ranked_pair_sums(v, s.weight, self.ranks, s.stratum, s.pair_factor, stratified)

    # ------------------------------------------------------------------ the ratio at λ
    def ratio(self, lam, runs, nx=None, np_=None, rx=None, rp=None, least=None,
              value_only=False):
        """(AP̂, a, b, N̂, R̂(λ) unheld) at λ ``(B, Q)`` for ``runs`` (Q,), as
        :func:`.measures.ratio_parts` (replicate totals when given, with the replicates' own
        ``least``: a trailing axis)."""
        if nx is None and np.ndim(lam) == 2:  # a row per sampling: one pass (_kernels)
            rows = ratio_rows(self.nx, self.np_, self.pop_n, np.asarray(runs, dtype=np.int64),
                              self.rx, self.rp, self.pop_r,
                              np.ascontiguousarray(np.broadcast_to(lam, (len(self.s),
                                                                        len(runs))),
                                                   dtype=float), self.least, self.floor)
            return rows[0] if value_only else rows
        nx = self.nx[:, runs] if nx is None else nx
        np_ = self.np_[:, runs] if np_ is None else np_
        rx = self.rx[:, None] if rx is None else rx
        rp = self.rp[:, None] if rp is None else rp
        n_hat = nx + lam * (self.pop_n[runs].reshape(-1, *[1] * (nx.ndim - 2)) - np_)
        raw = rx + lam * (self.pop_r - rp)
        least = np.maximum(self.least[:, None] if least is None else least, self.floor)
        value, a, b = ratio_parts(n_hat, raw, least)
        return value if value_only else (value, a, b, n_hat, raw)

    # ------------------------------------------------------------------ design covariances
    def _gram(self, chunk: int = 50) -> np.ndarray:
        """(B, K, K), K = 2R + 2: :func:`.design.design_covariance` of every two rows of the
        basis [dN_r, dNp_r, x, p], over the drawn documents only (gathered by
        :func:`._kernels.gathered_basis`; stratified: centred on the stratum's sample mean,
        a product over U whose judged rows every control of one chunk shares)."""
        s = self.s
        B, R, n = self.dnx.shape
        out = np.empty((B, 2 * R + 2, 2 * R + 2))
        for start in range(0, B, chunk):
            part = slice(start, start + chunk)
            if ("gathered", start) not in self._shared:
                idx, valid = _gathered(s.drawn[part])
                root = np.sqrt(np.take_along_axis(s.var_coef[part], idx, 1))
                self._shared["gathered", start] = idx, valid, root
            idx, valid, root = self._shared["gathered", start]
            mean = np.zeros((len(idx), 2 * R + 2, s.member.shape[1]))
            if s.sampling == STRATIFIED and s.centred[part].any():
                z = self._shared.get("drawn basis") if B <= chunk else None
                if z is None:  # the judgments' rows (kept when one chunk is all)
                    z = np.zeros((len(idx), 2 * R + 2, n))
                    np.multiply(self.dnx[part], s.drawn[part, None], out=z[:, :R])
                    np.multiply(self.x, s.drawn[part], out=z[:, 2 * R])
                    if B <= chunk:
                        self._shared["drawn basis"] = z
                np.multiply(self.dnp[part], s.drawn[part, None], out=z[:, R:2 * R])
                np.multiply(self.p, s.drawn[part], out=z[:, 2 * R + 1])
                mean = z @ s.member / np.maximum(s.n_h[part], 1)[:, None]
            picked = gathered_basis(self.dnx[part], self.dnp[part], self.x, self.p, idx, valid,
                                    root, s.stratum, s.centred[part], mean)
            out[part] = picked @ picked.transpose(0, 2, 1)
        return out

    def _form(self, index, left, right=None) -> np.ndarray:
        """lᵀ G r per sampling and quantity: ``index`` (Q, m) basis positions, ``left`` and
        ``right`` (B, Q, m) coefficients. A form below 1e-12 of its bound Σ|l|√G_ii Σ|r|√G_jj
        is 0: a sum over the sample that vanishes term by term (z_d = 0 on every d with π < 1)
        leaves only the roundoff of the Gram's cancellation."""
        right = left if right is None else right
        # a pair: x and p once, with the two runs' coefficients summed (paired_forms)
        forms = paired_forms if index.shape[1] == 8 else quadratic_forms
        return forms(self.gram, np.ascontiguousarray(index, dtype=np.int64),
                     np.ascontiguousarray(left, dtype=float),
                     np.ascontiguousarray(right, dtype=float))

    def _index(self, runs) -> np.ndarray:
        """Basis positions [dN_r, dNp_r, x, p] of each run."""
        R = self.nx.shape[1]
        runs = np.asarray(runs)
        return np.stack([runs, R + runs, np.full(len(runs), 2 * R),
                         np.full(len(runs), 2 * R + 1)], 1)

    # ------------------------------------------------------------------ one quantity's parts
    def _quantity(self, lam, members, linearised=True):
        """Value, linearised variance (None unless ``linearised``) and second-order bias pieces
        of Σ_i sign_i AP_i at λ (B, Q): ``members`` a list of (runs (Q,), sign)."""
        index = np.concatenate([self._index(r) for r, _ in members], 1)
        value, coef, n_hats, raws, parts = 0.0, [], [], [], []
        for runs, sign in members:
            f, a, b, n_hat, raw = self.ratio(lam, runs)
            value = value + sign * f
            if linearised:
                coef.append(sign * np.stack([a, -lam * a, b, -lam * b], -1))
            parts.append((runs, sign, n_hat, raw))
        if not linearised:
            return value, None, index, parts
        return value, self._form(index, np.concatenate(coef, -1)), index, parts

    def _bias(self, lam, parts) -> np.ndarray:
        """The ratio's design bias to second order, ½ Σ_ij ∂²f/∂T_i∂T_j Ĉov(T̂_i, T̂_j) (for AP =
        N/R: (AP V̂ar(R̂) − Ĉov(N̂, R̂)) / R̂², Cochran 1977 §6.8), the Hessian by central
        differences of :func:`.measures.ratio_parts`' gradient, per run, summed with the signs;
        0 where R̂ is held or not positive (:meth:`quantity` caps it at ½ se)."""
        bias = 0.0
        for runs, sign, n_hat, raw in parts:
            index = self._index(runs)
            held = np.maximum(self.least, self.floor)[:, None]
            active = (raw > held) & (raw > 0)
            values = [n_hat, raw]
            d_n = np.stack([np.ones_like(lam), -lam, 0 * lam, 0 * lam], -1)
            d_r = np.stack([0 * lam, 0 * lam, np.ones_like(lam), -lam], -1)
            derivs = [d_n, d_r]
            total = 0.0
            for j in range(2):
                step = 1e-4 * np.maximum(np.abs(values[j]), 1.0)
                up = [v + (step if i == j else 0) for i, v in enumerate(values)]
                down = [v - (step if i == j else 0) for i, v in enumerate(values)]
                column = [(g_up - g_down) / (2 * step) for g_up, g_down in
                          zip(ratio_parts(*up, held)[1:], ratio_parts(*down, held)[1:])]
                for i in range(2):
                    cov = self._form(index, derivs[i], derivs[j])
                    total = total + np.where(column[i] != 0.0, 0.5 * column[i] * cov, 0.0)
            bias = bias + sign * np.where(active, total, 0.0)
        return bias

    # ------------------------------------------------------------------ the jackknife
    def jackknife(self, lam, members, value) -> np.ndarray:
        """The delete-one jackknife variance of Σ sign · AP over ``members`` ((runs, sign)) at
        λ (B, Q) (:func:`.design.replicates`, :func:`.design.jackknife_variance`). Poisson:
        Σ_d (1 − π_d)(θ̂_(d) − θ̂)² over the drawn d with π_d < 1, ``value`` θ̂, less what it
        counts twice in AP's pairs (:meth:`pair_overcount`). Stratified (n_h ≥ 2): replicate d
        reweights the rest of its stratum by c = n_h/(n_h − 1), the stratum's inner pairs by
        n_h/(n_h − 2) (0 at n_h = 2), so T_(d) = T + (c − 1) T_h − c w_d ∂T/∂w_d for a linear
        total and N_(d) = N + (c − 1) A_h + (g − 1) W_h − c w_d ∂N/∂w_d + (c − g) i_d for AP's
        (W_h its pairs inside h, i_d those of d, A_h the rest of h's share), exactly;
        Σ_h (1 − n_h/N_h)(n_h − 1)/n_h Σ_{d ∈ h} (θ̂_(d) − θ̄_h)², θ̄_h the mean over h; a stratum
        with one judged document takes the Poisson form. A pair's replicates share R̂:
        (N̂_A − N̂_B)_(d) / R̂_(d); at one λ for all, V_AA + V_BB − 2 V_AB from the Gram V of the
        runs' replicate deviations. The replicate totals are :meth:`_replicate_totals`'."""
        t = self._replicate_totals()
        stratified = self.s.sampling == STRATIFIED
        H = self.s.member.shape[1]
        every = np.arange(self.nx.shape[1])
        signs = [sign for _, sign in members]
        paired = len(members) == 2 and signs == [1.0, -1.0]
        fixed = float(lam.flat[0]) if lam.size and np.all(lam == lam.flat[0]) else None
        if paired and fixed is not None:  # one λ: a Gram of the runs' replicate deviations
            rep = replicate_ratios(t.nx, t.np_, self.pop_n, t.rx, t.rp, self.pop_r, fixed,
                                   t.least, self.floor)
            centre = self.ratio(np.full(self.nx.shape, fixed), every)[0][..., None]
            if stratified:
                centre = _stratum_means(rep, t.split, t.h, H, centre)
            e = rep - centre
            gram = (e * t.coef[:, None]) @ e.transpose(0, 2, 1)
            a, b = members[0][0], members[1][0]
            out = gram[:, a, a] + gram[:, b, b] - 2 * gram[:, a, b]
        else:
            if paired or (len(members) == 2 and signs == [-1.0, 1.0]):
                first, second = (members[0][0], members[1][0])[::1 if paired else -1]
                centre = value if paired else -value
            elif len(members) == 1 and abs(signs[0]) == 1.0:  # Var(−θ̂) = Var(θ̂)
                first, second, centre = members[0][0], None, signs[0] * value
            else:
                raise ValueError("the jackknife reads one run (±) or a difference of two")
            first = np.asarray(first, dtype=np.int64)
            second = np.full(len(first), -1) if second is None else np.asarray(second)
            least = np.maximum(t.least, self.floor)  # PPI++'s R̂ held in each replicate too
            out = replicate_variance(t.nx, t.np_, t.rx, t.rp, least, t.coef, self.pop_n,
                                     self.pop_r, first, second.astype(np.int64),
                                     np.ascontiguousarray(lam, dtype=float),
                                     np.ascontiguousarray(centre, dtype=float), t.h, t.split, H)
        return out if stratified else out - self.pair_overcount(lam, members)

    def _replicate_totals(self) -> SimpleNamespace:
        """Every run's totals in each delete-one replicate (:meth:`jackknife`), the same at any
        λ and for any quantity, so computed once (the judgments' once for every control): per
        sampling and drawn document d (gathered, m the most drawn) N̂x, N̂p (B, R, m), R̂x, R̂p,
        R̂'s floor, the coefficient, d's stratum and whether it is split (B, m)."""
        if "_replicates" in self.__dict__:
            return self._replicates
        if "design" not in self._shared:
            self._shared["design"] = self._replicate_design()
        t = self._shared["design"]
        if "judged" not in self._shared:
            least = self.least[:, None] - self.x[t.idx] * (t.w > 0)  # relevant_judged less d
            self._shared["judged"] = (*self._replicate_side(t, self.x, self.rx, self.nx,
                                                            self.dnx, self.inx), least)
        rx, nx, least = self._shared["judged"]
        rp, np_ = self._replicate_side(t, self.p, self.rp, self.np_, self.dnp, self.inp)
        self._replicates = SimpleNamespace(nx=nx, np_=np_, rx=rx, rp=rp, least=least,
                                           coef=t.coef, h=t.h, split=t.split)
        return self._replicates

    def _replicate_design(self) -> SimpleNamespace:
        """The replicates' design (:meth:`_replicate_totals`): the gathered drawn documents,
        their weights, coefficients and, stratified, strata and reweightings c, g."""
        s = self.s
        idx, valid = _gathered(s.drawn)
        w = np.take_along_axis(s.weight, idx, 1)
        pi = np.take_along_axis(s.pi, idx, 1)
        t = SimpleNamespace(idx=idx, w=w, coef=np.where(valid & (pi < 1), 1.0 - pi, 0.0),
                            h=np.zeros(idx.shape, np.int64), split=np.zeros(idx.shape, bool))
        if s.sampling == STRATIFIED:
            t.h = s.stratum[idx]
            m_h = np.take_along_axis(s.n_h, t.h, 1)
            t.split = valid & (m_h >= 2)
            t.c = np.where(t.split, m_h / np.where(t.split, m_h - 1, 1), 1.0)
            t.g = np.where(t.split, np.where(m_h >= 3, m_h / np.maximum(m_h - 2, 1), 0.0), 1.0)
            size = s.member.sum(0)[t.h]
            t.coef = np.where(t.split, (1 - m_h / size) * (m_h - 1) / np.maximum(m_h, 1), t.coef)
        return t

    def _replicate_side(self, t, v, r_total, n_total, deriv, inner):
        """(R̂, N̂) of ``v`` (x or p) in each replicate of :meth:`_replicate_design` ``t``:
        (B, m) and (B, R, m) (:func:`._kernels.replicate_side`; stratified, the stratum's
        sums over U as products, A_h = Σ_h w ∂N/∂w − 2 W_h and W_h ½ Σ_h i_d)."""
        s = self.s
        if s.sampling == STRATIFIED:
            v_h = (s.weight * v) @ s.member
            pairs_h = 0.5 * inner @ s.member  # (A_h, W_h) of v's numerators (B, R, H)
            rest_h = (s.weight[:, None] * deriv) @ s.member - 2 * pairs_h
            c, g, h = t.c, t.g, t.h
        else:
            inner = np.zeros((1, 1, 1))
            v_h, rest_h = np.zeros((1, 1)), np.zeros((1, 1, 1))
            pairs_h, c, g, h = rest_h, t.w, t.w, t.h
        return replicate_side(deriv, inner, v, t.idx, t.w, r_total, n_total, v_h, rest_h,
                              pairs_h, c, g, h, s.sampling == STRATIFIED)

    def pair_overcount(self, lam, members) -> np.ndarray:
        """What the delete-one jackknife counts twice in AP's pairs (Poisson). A quadratic
        estimate Σ_d a_d w_d + Σ_{j<k} b_jk w_j w_k has design variance Σ_d c_d² v_d +
        Σ_{j<k} b_jk² v_j v_k (v = (1 − π)/π, c_d its derivative at w = 1); the replicate
        differences w_d ĉ_d carry ĉ_d's own noise, so the jackknife's mean is the first sum plus
        twice the second. This is the second's HT estimate, ½ Σ_{j≠k ∈ S} b_jk² a_j a_k,
        a = (1 − π) w²,
        b_jk = Σ_runs ± (x_j x_k − λ p_j p_k) / (max(r_j, r_k) R̂(λ)) over the drawn d with
        π < 1, read off three Gram matrices over runs (xx·xx, xx·pp, pp·pp), so any λ costs
        nothing more."""
        s = self.s
        B = len(s)
        if not hasattr(self, "_pair_grams"):
            inside = s.drawn & (s.pi < 1) & ((self.x > 0) | (self.p > 0))  # b_jk = 0 elsewhere
            idx, valid = _gathered(inside)
            w = np.take_along_axis(s.weight, idx, 1)
            a = np.where(valid, (1 - np.take_along_axis(s.pi, idx, 1)) * w**2, 0.0)
            X, P = np.where(valid, self.x[idx], 0.0), np.where(valid, self.p[idx], 0.0)
            self._pair_grams = pair_grams(self.ranks, idx, valid, a * X * X, a * X * P,
                                          a * P * P)
        if len(members) > 2:
            raise ValueError("the overcount reads one run or a difference of two")
        (first, s1), (second, s2) = members[0], members[1] if len(members) == 2 else \
            (np.full(len(members[0][0]), -1), 0.0)
        return pair_overcount_forms(self._pair_grams, np.asarray(first, dtype=np.int64),
                                    np.asarray(second, dtype=np.int64), float(s1), float(s2),
                                    np.ascontiguousarray(np.broadcast_to(lam, (B, len(first))),
                                                         dtype=float), self.rx, self.rp,
                                    self.pop_r)

    # ------------------------------------------------------------------ the estimates
    def lambda_moments(self, members) -> tuple[np.ndarray, np.ndarray]:
        """(Ĉov(u, v), V̂ar(v)) per sampling and quantity, u and v read at the HT point
        (:func:`.estimate.lambda_moments`): the pieces of PPI++'s λ, to sum over topics; kept
        per quantity (both variances of PPI++ read them)."""
        key = tuple((np.asarray(r).tobytes(), sign) for r, sign in members)
        cache = self.__dict__.setdefault("_moments", {})
        if key not in cache:
            cache[key] = self._lambda_moments(members)
        return cache[key]

    def _lambda_moments(self, members):
        zero = np.zeros((len(self.s), len(members[0][0])))
        index = np.concatenate([self._index(r) for r, _ in members], 1)
        u, v = [], []
        for runs, sign in members:
            _, a, b, _, _ = self.ratio(zero, runs)
            u.append(sign * np.stack([a, 0 * a, b, 0 * b], -1))
            v.append(sign * np.stack([0 * a, a, 0 * b, b], -1))
        u, v = np.concatenate(u, -1), np.concatenate(v, -1)
        return self._form(index, u, v), self._form(index, v)

    def quantity(self, members, estimator: str, variance: str = "auto", bias_correction="auto",
                 lam=None):
        """(estimate, variance, λ) per sampling of Σ sign · AP over ``members`` (a list of
        (runs (Q,), sign)): :func:`.estimate.topic_estimate` at once for every sampling. PPI++
        keeps its answer (no fallback to HT, :mod:`.samplings`); λ tuned on the sampling's own
        sample (``lam`` None) is 0 where no relevant document is drawn (u = 0 there), a choice
        on the outcome that the cross-fitted λ of :func:`.estimate.estimate` does not make."""
        B, Q = len(self.s), len(members[0][0])
        if estimator == "ht":
            lam = np.zeros((B, Q))
        elif estimator == "model-assisted":
            lam = np.ones((B, Q)) if lam is None else np.broadcast_to(lam, (B, Q)).astype(float)
        elif lam is None:
            cov, var = self.lambda_moments(members)
            lam = tuned_lambda(cov, var)
        else:
            lam = np.broadcast_to(np.asarray(lam, dtype=float), (B, Q))
        if variance not in VARIANCES:
            raise ValueError(f"variance {variance!r} is not one of {', '.join(VARIANCES)}")
        correction, variance = by_design(bias_correction, variance, self.s.sampling)
        topic = self._held() if estimator == "ppi++" else self
        value, var, _, parts = topic._quantity(lam, members, variance == "linearised" or
                                               correction == "taylor")  # else the jackknife's
        raw_value = value
        if correction == "taylor":
            half = 0.5 * np.sqrt(np.maximum(var, 0.0))
            value = value - np.clip(topic._bias(lam, parts), -half, half)
        if correction == "jackknife":  # the jackknife's estimate, its delete-two variance
            value, twice, once = topic._corrected(lam, members)
            var = {"jackknife": twice, "averaged": 0.5 * (once + twice)}.get(variance, var)
        elif variance in ("jackknife", "averaged"):
            var = topic.jackknife(lam, members, raw_value)
        if estimator == "ppi++":
            value = self._projected(value, members, lam, variance, correction)
        return value, np.maximum(var, 0.0), lam

    def _corrected(self, lam, members):
        """:func:`.quenouille.corrected` at λ, kept: both of its variances read one call (the
        key holds R̂'s floor: PPI++'s held view shares this cache)."""
        key = (self.floor, np.asarray(lam).tobytes(),
               tuple((np.asarray(r).tobytes(), sign) for r, sign in members))
        cache = self.__dict__.setdefault("_quenouille_rows", {})
        if key not in cache:
            cache[key] = corrected(self, lam, members)
        return cache[key]

    def _projected(self, value, members, lam, variance: str, bias_correction) -> np.ndarray:
        """PPI++'s AP̂ clipped to [0, 1] (ΔAP̂ to [−1, 1]) widened by (1 − λ) of the way to HT's
        own estimate of the same quantity: [λ·0 + (1 − λ) min(0, HT), λ·1 + (1 − λ) max(1, HT)].
        PPI++'s totals are (1 − λ) HT's plus λ the control's difference estimator; the bound
        moves with them, from HT's own value (left as it is: at λ = 0 PPI++ is HT) to the
        universe's range (what the control adds beyond it, an R̂(λ) just above its hold under a
        larger N̂(λ), is cut). Clipped to [0, 1] at every λ, a wrong control (λ ≈ 0) cut HT's AP̂
        above 1, which offsets its many low ones, and biased MAP low
        (``examples/design_based/README.md``)."""
        signs = [sign for _, sign in members]
        low, high = sum(min(s, 0) for s in signs), sum(max(s, 0) for s in signs)
        if ((value >= low) & (value <= high)).all():
            return value
        ht = self._ht(members, variance, bias_correction)[0]
        keep = 1.0 - np.asarray(lam, dtype=float)
        return np.clip(value, low + keep * (np.minimum(low, ht) - low),
                       high + keep * (np.maximum(high, ht) - high))

    def _held(self) -> "TopicSamplings":
        """PPI++'s view of these samplings: R̂ held at least at 1. A universe's R is 0 or a
        count ≥ 1, so an R̂(λ) in (0, 1), left where no relevant document is judged and the
        control's residuals nearly cancel its predictions, is no universe's; holding it at 1
        can only bring it nearer to any R ≥ 1 (it made AP̂ = N̂/0.005 ≈ 30 on DL 2019). The
        same map of R̂ on every sample: unlike a fallback to HT, it chooses nothing by the
        sample's own variance. λ's moments are read unheld (:meth:`lambda_moments`); the value
        is projected as :meth:`_projected` says."""
        if "_held_view" not in self.__dict__:
            _ = self.gram  # read before the copy, so the view shares it
            view = copy(self)
            view.floor = 1.0  # self.least unchanged: the judged totals are shared (_shared)
            self._held_view = view
        return self._held_view

    def _ht(self, members, variance: str, bias_correction):
        """HT's :meth:`quantity`, kept on the samplings: it does not depend on the control, so
        every control over the same samplings, relevance and runs reads it once."""
        key = (self.x.tobytes(), self.ranks.tobytes(), variance,
               bias_correction_name(bias_correction),
               tuple((np.asarray(r).tobytes(), sign) for r, sign in members))
        cache = self.s.__dict__.setdefault("_ht_rows", {})
        if key not in cache:
            cache[key] = self.quantity(members, "ht", variance, bias_correction)
        return cache[key]

    def estimates(self, pairs=(), *, estimator: str = "ht", variance: str = "auto",
                  bias_correction="auto", lam=None, delta_lam=None) -> SamplingEstimates:
        """Every run's AP and every pair's ΔAP (``pairs``: (a, b) run positions) per sampling,
        as :func:`.estimate.estimate` gives them for each sample of this topic alone. PPI++
        tunes λ on each sampling's own sample unless ``lam`` (B, R) and ``delta_lam`` (B, P)
        are given (e.g. cross-fitted over topics from :meth:`lambda_moments`, as
        :func:`.estimate.estimate` does)."""
        if estimator not in ESTIMATORS:
            raise ValueError(f"estimator {estimator!r} is not one of {', '.join(ESTIMATORS)}")
        if variance not in VARIANCES:
            raise ValueError(f"variance {variance!r} is not one of {', '.join(VARIANCES)}")
        bias_correction, variance = by_design(bias_correction, variance, self.s.sampling)
        runs = np.arange(self.nx.shape[1])
        quantity = (lambda m, *_: self._ht(m, variance, bias_correction)) if estimator == "ht" \
            else self.quantity
        single = quantity([(runs, 1.0)], estimator, variance, bias_correction, lam)
        pairs = np.asarray(pairs, dtype=int).reshape(-1, 2)
        if len(pairs):
            paired = quantity([(pairs[:, 0], 1.0), (pairs[:, 1], -1.0)], estimator, variance,
                              bias_correction, delta_lam)
        else:
            paired = (np.zeros((len(self.s), 0)),) * 3
        if self.s.sampling == STRATIFIED:  # a stratum none judged: no estimate (as estimate())
            unknown = (self.s.n_h == 0).any(1)[:, None]
            single = [np.where(unknown, np.nan, a) for a in single]
            paired = [np.where(unknown, np.nan, a) for a in paired]
        return SamplingEstimates(*single, *paired)
