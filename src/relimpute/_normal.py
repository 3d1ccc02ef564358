"""The standard normal's distribution function and quantile, to the bit as scipy computes them
(``scipy.special.ndtr``/``ndtri``: Cephes' ``ndtr.c``/``ndtri.c``, Moshier 1989-1992), without
importing scipy (a third of a second of every command that prints a probability).

The same rational approximations are evaluated in the same order of IEEE operations (no fused
multiply-add, as scipy's build has none); ``exp`` and ``log`` are the C library's, which
scipy's C code calls too (:func:`math.exp`, :func:`math.log`). ``tests/test_normal.py`` checks
every bit against scipy. ``math.erfc`` or :class:`statistics.NormalDist` differ from it in the
last bit for nearly half the values, which would change printed digits.
"""

from __future__ import annotations

import math

import numpy as np

_SQRT1_2 = 0.70710678118654752440  # M_SQRT1_2
_MAXLOG = 7.09782712893383996843e2  # log(largest double): exp underflows below -_MAXLOG
_SQRT2PI = 2.50662827463100050242e0
_EXP_M2 = 0.13533528323661269189  # exp(-2)

# erfc(x) = exp(-x²) P(x)/Q(x), 1 <= x < 8; R/S beyond (coefficients highest power first;
# Q and S have a leading 1 that is not stored); erf(x) = x T(x²)/U(x²) for |x| < 1
_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
      4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
      9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_Q = (1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
      9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
      1.65666309194161350182e3, 5.57535340817727675546e2)
_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
      6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_S = (2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
      1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)
_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
      7.00332514112805075473e3, 5.55923013010394962768e4)
_U = (3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
      2.26290000613890934246e4, 4.92673942608635921086e4)
# the quantile: |y - 1/2| <= 3/8 (P0/Q0); z = sqrt(-2 log y) in [2, 8) (P1/Q1), [8, 64) (P2/Q2)
_P0 = (-5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1,
       1.39312609387279679503e1, -1.23916583867381258016e0)
_Q0 = (1.95448858338141759834e0, 4.67627912898881538453e0, 8.63602421390890590575e1,
       -2.25462687854119370527e2, 2.00260212380060660359e2, -8.20372256168333339912e1,
       1.59056225126211695515e1, -1.18331621121330003142e0)
_P1 = (4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1,
       4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0,
       -1.40256079171354495875e-1, -3.50424626827848203418e-2, -8.57456785154685413611e-4)
_Q1 = (1.57799883256466749731e1, 4.53907635128879210584e1, 4.13172038254672030440e1,
       1.50425385692907503408e1, 2.50464946208309415979e0, -1.42182922854787788574e-1,
       -3.80806407691578277194e-2, -9.33259480895457427372e-4)
_P2 = (3.23774891776946035970e0, 6.91522889068984211695e0, 3.93881025292474443415e0,
       1.33303460815807542389e0, 2.01485389549179081538e-1, 1.23716634817820021358e-2,
       3.01581553508235416007e-4, 2.65806974686737550832e-6, 6.23974539184983293730e-9)
_Q2 = (6.02427039364742014255e0, 3.67983563856160859403e0, 1.37702099489081330271e0,
       2.16236993594496635890e-1, 1.34204006088543189037e-2, 3.28014464682127739104e-4,
       2.89247864745380683936e-6, 6.79019408009981274425e-9)  # fmt: skip


def _polynomial(x, coefficients, monic: bool = False):
    """Horner's rule, highest power first (Cephes' ``polevl``; ``monic``: a leading 1 not
    stored, ``p1evl``): one multiply and one add per step, each rounded."""
    total = x + coefficients[0] if monic else coefficients[0]
    for c in coefficients[1:]:
        total = total * x + c
    return total


def normal_cdf(x) -> np.ndarray:
    """Φ(x), elementwise: ``scipy.special.ndtr`` to the bit (Cephes ``ndtr``: ½ + ½ erf(x/√2)
    where |x/√2| < 1, else ½ erfc(|x|/√2), from 1 when x > 0)."""
    t = np.asarray(x, dtype=float) * _SQRT1_2
    z = np.abs(t)
    inner = z < 1.0
    out = np.empty_like(t)
    s = t[inner]  # erf(s) = s T(s²)/U(s²), odd in s
    s2 = s * s
    out[inner] = 0.5 + 0.5 * (s * _polynomial(s2, _T) / _polynomial(s2, _U, monic=True))
    a = z[~inner]  # >= 1 (or NaN): erfc(a) = exp(-a²) P(a)/Q(a), R/S from 8 on
    square = -a * a
    far = a >= 8.0
    p = np.where(far, _polynomial(a, _R), _polynomial(a, _P))
    q = np.where(far, _polynomial(a, _S, monic=True), _polynomial(a, _Q, monic=True))
    under = square < -_MAXLOG  # erfc is 0 there (NaN is not under)
    e = np.array([0.0 if low else math.exp(v) for v, low in zip(square.tolist(), under.tolist())])
    with np.errstate(invalid="ignore"):  # inf * 0 where under
        y = np.where(under, 0.0, 0.5 * ((e * p) / q)) if len(a) else a
    out[~inner] = np.where(t[~inner] > 0, 1.0 - y, y)
    return out


def normal_quantile(y):
    """Φ⁻¹(y), elementwise: ``scipy.special.ndtri`` to the bit (Cephes ``ndtri``); -inf at 0,
    inf at 1, NaN outside [0, 1]. A float for a scalar ``y``, else an array of its shape."""
    flat = np.asarray(y, dtype=float)
    shape, flat = flat.shape, flat.ravel()
    out = np.where(flat == 0.0, -np.inf, np.where(flat == 1.0, np.inf, np.nan))
    inside = (flat > 0.0) & (flat < 1.0)
    upper = flat > 1.0 - _EXP_M2  # Φ⁻¹(y) = -Φ⁻¹(1 - y) there
    v = np.where(upper, 1.0 - flat, flat)
    centre = inside & (v > _EXP_M2)
    c = v[centre] - 0.5
    c2 = c * c
    x = c + c * (c2 * _polynomial(c2, _P0) / _polynomial(c2, _Q0, monic=True))
    out[centre] = x * _SQRT2PI
    tail = inside & ~centre
    x = np.sqrt(np.array([-2.0 * math.log(t) for t in v[tail].tolist()]))
    x0 = x - np.array([math.log(t) for t in x.tolist()]) / x
    z = 1.0 / x
    near = x < 8.0
    p = np.where(near, _polynomial(z, _P1), _polynomial(z, _P2))
    q = np.where(near, _polynomial(z, _Q1, monic=True), _polynomial(z, _Q2, monic=True))
    x = x0 - z * p / q
    out[tail] = np.where(upper[tail], x, -x)
    return float(out[0]) if not shape else out.reshape(shape)
