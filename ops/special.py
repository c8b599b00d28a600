"""Operators (onegraph domain): TensorFlow's special functions, which ONNX lacks.

Lgamma, Digamma, Polygamma, Zeta (Hurwitz), Igamma and Igammac (regularized lower and
upper incomplete gamma), Betainc (regularized incomplete beta), Erfinv, Erfcinv,
Ndtri, BesselI0, BesselI0e, BesselI1, BesselI1e and Xlog1py, with TensorFlow's op
names, argument order and special values (NaN outside the domain, inf at poles; see
each function). Gradients are in special_grad.py; TF1's lbeta is a composition of
Lgamma (train/api_special.py).

Every kernel computes in float64 (float16, bfloat16 and float32 inputs are lifted and
the result rounded back once), vectorised over the whole array: loops run over series
terms or recurrence steps, never over elements. The methods, all standard:

- lgamma: Taylor series about 1 and 2 (coefficients zeta(k), so the zeros at 1 and 2
  keep full relative accuracy), the recurrence down to [1.5, 2.5) below 10, Stirling's
  series from 10, and the reflection formula below 0.
- digamma: the recurrence up to 10, then the asymptotic series; reflection below 0.
- zeta(s, q): Euler-Maclaurin (the direct sum up to q + n >= max(12, s), then the
  integral, half-term and Bernoulli corrections); negative non-integer q through
  zeta(s, q) = zeta(s, q + m) + (-1)^s (zeta(s, r) - zeta(s, r + m)), r = 1 - frac(q).
  polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x).
- igamma/igammac: Numerical Recipes' choice, the series for P where x < a + 1 and the
  continued fraction (modified Lentz) for Q elsewhere, with the prefactor
  x^a e^-x / Gamma(a + 1) taken from Stirling's form for a >= 10 (no large cancelling
  logarithms).
- betainc: the continued fraction with the symmetry I_x(a, b) = 1 - I_(1-x)(b, a).
- erfinv/erfcinv/ndtri: a closed-form start (Winitzki's, or the Maclaurin series near
  0) refined by three Halley steps on erf or erfc; the erfc residual uses e^(y^2)
  erfc(y) (continued fraction) so it keeps its relative accuracy far in the tail.
- Bessel I0, I1 and their scaled forms: Chebyshev expansions on [0, 8] and [8, inf)
  as Cephes arranges them, with coefficients fitted by tools/special_coefficients.py.

The constant tables below are printed by `python tools/special_coefficients.py`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import ShapeError
from .common import infer_elementwise, infer_same
from .elementwise import erf as _erf, fp_errors_quiet
from .registry import define

_FLOATS = ("float16", "bfloat16", "float32", "float64")

_ZETA_M1 = (
    0.0, 0.0, 0.6449340668482264, 0.2020569031595943, 0.08232323371113819,
    0.03692775514336993, 0.01734306198444914, 0.008349277381922827, 0.00407735619794434,
    0.0020083928260822143, 0.0009945751278180853, 0.0004941886041194645,
    0.0002460865533080483, 0.00012271334757848915, 6.124813505870483e-05,
    3.058823630702049e-05, 1.528225940865187e-05, 7.637197637899763e-06,
    3.81729326499984e-06, 1.908212716553939e-06, 9.539620338727962e-07,
    4.769329867878064e-07, 2.38450502727733e-07, 1.1921992596531106e-07,
    5.960818905125948e-08, 2.980350351465228e-08, 1.4901554828365043e-08,
    7.45071178983543e-09, 3.725334024788457e-09, 1.862659723513049e-09,
    9.313274324196682e-10, 4.656629065033784e-10, 2.3283118336765053e-10,
    1.164155017270052e-10, 5.820772087902701e-11, 2.9103850444971e-11,
    1.4551921891041985e-11, 7.275959835057482e-12, 3.637979547378651e-12,
    1.818989650307066e-12, 9.094947840263888e-13, 4.547473783042154e-13,
    2.2737368458246524e-13, 1.136868407680228e-13, 5.684341987627585e-14,
    2.842170976889302e-14, 1.4210854828031608e-14, 7.105427395210853e-15,
    3.552713691337114e-15, 1.7763568435791204e-15, 8.881784210930816e-16,
    4.440892103143813e-16, 2.220446050798042e-16, 1.1102230251410661e-16,
    5.551115124845481e-17, 2.775557562136124e-17, 1.3877787809725232e-17,
    6.938893904544153e-18, 3.4694469521659225e-18, 1.7347234760475765e-18,
    8.673617380119933e-19, 4.336808690020651e-19, 2.16840434499722e-19,
    1.0842021724942414e-19,
)
_I0E_SMALL = (
    0.6767952744094761, -0.3046826723431984, 0.17162090152220877, -0.09490109704804764,
    0.04930528423967071, -0.02373741480589947, 0.010546460394594998, -0.004324309995050576,
    0.0016394756169413357, -0.0005763755745385824, 0.00018850288509584165,
    -5.754195010082104e-05, 1.6448448070728896e-05, -4.4167383584587505e-06,
    1.1173875391201037e-06, -2.670793853940612e-07, 6.046995022541919e-08,
    -1.300025009986248e-08, 2.6598237246823866e-09, -5.189795601635263e-10,
    9.675809035373237e-11, -1.726826291441556e-11, 2.95505266312964e-12,
    -4.856446783111929e-13, 7.676185498604936e-14, -1.1685332877993451e-14,
    1.715391285555133e-15, -2.431279846547955e-16, 3.3307945188222384e-17,
    -4.4153416464793395e-18, 5.669178006921496e-19, -7.057100692457294e-20,
)
_I1E_SMALL = (
    0.25258718644363365, -0.17641651835783406, 0.1026436586898471, -0.05294598120809499,
    0.024726449030626516, -0.010564084894626197, 0.004156422944312888,
    -0.0015135724506312532, 0.0005122859561685758, -0.00016176081582589674,
    4.781565107550054e-05, -1.3273163656039436e-05, 3.4702513081376785e-06,
    -8.568720264695455e-07, 2.0032947535521353e-07, -4.445059128796328e-08,
    9.381537386495773e-09, -1.8872497517228294e-09, 3.625590281552117e-10,
    -6.663489723502027e-11, 1.1736186298890901e-11, -1.9839743977649436e-12,
    3.223793365945575e-13, -5.042185504727912e-14, 7.600684294735408e-15,
    -1.1055969477353862e-15, 1.5536319577362005e-16, -2.111421214358166e-17,
    2.7779141127610464e-18, -3.541581772542136e-19, 4.379302756655071e-20,
)
_I0E_LARGE = (
    0.8044904110141088, 0.0033691164782556943, 6.889758346916825e-05,
    2.8913705208347567e-06, 2.0489185894690638e-07, 2.266668990498178e-08,
    3.3962320257083865e-09, 4.94060238822497e-10, 1.1889147107846439e-11,
    -3.1499165279632416e-11, -1.3215811840447713e-11, -1.7941785315068062e-12,
    7.180124451383666e-13, 3.8527783827421426e-13, 1.54008621752141e-14,
    -4.150569347287222e-14, -9.554846698828307e-15, 3.8116806693526224e-15,
    1.7725601330565263e-15, -3.425485619677219e-16, -2.8276239805165836e-16,
    3.461222867697461e-17, 4.46562142029676e-17, -4.830504485944182e-18,
    -7.233180487874754e-18, 9.921475412173699e-19, 1.193650890845982e-18,
    -2.4887098371508075e-19, -1.938426454160906e-19,
)
_I1E_LARGE = (
    0.7785762350182801, -0.009761097491361469, -0.00011058893876262371,
    -3.882564808877691e-06, -2.512236237870209e-07, -2.6314688468895196e-08,
    -3.835380385964237e-09, -5.589743462196584e-10, -1.8974958123505413e-11,
    3.2526035830154884e-11, 1.4125807436613782e-11, 2.0356285441470896e-12,
    -7.198551776245908e-13, -4.0835511110921974e-13, -2.1015418427726643e-14,
    4.272440016711951e-14, 1.0420276984128802e-14, -3.8144030724370075e-15,
    -1.8803547755107825e-15, 3.3082023109209285e-16, 2.96262899764595e-16,
    -3.209525921993424e-17, -4.6503053684893586e-17, 4.414348323071708e-18,
    7.517296310842105e-18, -9.314178867326884e-19, -1.242193275194891e-18,
    2.4142767194548486e-19, 2.0269443840532852e-19,
)


def _bernoulli_even(count: int) -> tuple[float, ...]:
    """B_2, B_4, ..., B_2count (exact rationals rounded once)."""
    b = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return tuple(float(b[2 * j]) for j in range(1, count + 1))


_B2K = _bernoulli_even(16)
_EULER = 0.5772156649015329  # Euler-Mascheroni constant
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_PI = math.sqrt(math.pi)
# sqrt(2) as a sum of two doubles: y * sqrt 2 within an ulp
_SQRT2_HI = 1.4142135623730951
_SQRT2_LO = -9.667293313452913e-17
# Stirling's series: lgamma(x) - ((x - 0.5) log x - x + log(2 pi) / 2) =
# sum_k B_2k / (2k (2k - 1) x^(2k - 1)); 8 terms are below 2e-18 from x = 10.
_STIRLING = tuple(_B2K[k - 1] / (2 * k * (2 * k - 1)) for k in range(1, 9))
# digamma(x) - (log x - 1 / 2x) = -sum_k B_2k / (2k x^2k); 8 terms below 3e-18 from 10.
_DIGAMMA_ASYM = tuple(_B2K[k - 1] / (2 * k) for k in range(1, 9))
# lgamma(1 + z) = -gamma z + sum_k (-1)^k zeta(k) z^k / k, |z| <= 1/2: 56 terms
# reach 1e-17 of the result; lgamma(2 + z) the same with zeta(k) - 1 (and 1 - gamma),
# 30 terms.
_LGAMMA1 = (0.0, -_EULER) + tuple((-1) ** k * (1.0 + _ZETA_M1[k]) / k for k in range(2, 57))
_LGAMMA2 = (0.0, 1.0 - _EULER) + tuple((-1) ** k * _ZETA_M1[k] / k for k in range(2, 31))
_FACTORIALS = np.array([float(math.factorial(k)) for k in range(171)])
_SERIES_CAP = 5000    # iterations of the incomplete gamma/beta series and fractions
_TINY = 1e-300        # Lentz's guard against a zero denominator
_EPS = 2.0 ** -53


def _horner(z, coeffs):
    """sum coeffs[k] z^k (coefficients from the constant term up)."""
    out = np.full_like(z, coeffs[-1])
    for c in coeffs[-2::-1]:
        out = out * z + c
    return out


def _chebyshev(t, coeffs):
    """c0 / 2 + sum_k c_k T_k(t) by Clenshaw's recurrence."""
    b0 = np.zeros_like(t)
    b1 = np.zeros_like(t)
    two_t = 2.0 * t
    for c in coeffs[:0:-1]:
        b0, b1 = two_t * b0 - b1 + c, b0
    return t * b0 - b1 + 0.5 * coeffs[0]


def _sinpi_abs(x):
    """|sin(pi x)| with the argument reduced exactly (x - round(x) is exact)."""
    return np.abs(np.sin(math.pi * (x - np.round(x))))


def _is_int(x):
    return np.isfinite(x) & (x == np.floor(x)) | np.isinf(x)


# ------------------------------------------------------------------------------- lgamma

def _stirling_corr(x):
    """lgamma(x) minus Stirling's leading terms, x >= 10."""
    r = 1.0 / x
    return r * _horner(r * r, _STIRLING)


def _lgamma_positive(x):
    """lgamma of an array of x > 0 (inf and NaN pass through)."""
    out = np.full_like(x, np.nan)
    big = x >= 10.0
    xb = x[big]
    out[big] = np.where(np.isinf(xb), np.inf, (xb - 0.5) * (np.log(xb) - 1.0) - 0.5
                        + _HALF_LOG_2PI + _stirling_corr(xb))
    mid = (x >= 1.5) & (x < 10.0)
    if mid.any():
        z = x[mid]
        prod = np.ones_like(z)
        for _ in range(8):      # down into [1.5, 2.5): exact subtractions, small product
            step = z >= 2.5
            z = np.where(step, z - 1.0, z)
            prod = np.where(step, prod * z, prod)
        out[mid] = np.log(prod) + _horner(z - 2.0, _LGAMMA2)
    near1 = (x >= 0.5) & (x < 1.5)
    out[near1] = _horner(x[near1] - 1.0, _LGAMMA1)
    small = (x > 0.0) & (x < 0.5)
    xs = x[small]
    out[small] = _horner(xs, _LGAMMA1) - np.log(xs)    # lgamma(1 + x) - log x
    return out


def lgamma(x):
    """log|Gamma(x)| (float64): +inf at 0, the negative integers and +-inf."""
    x = np.asarray(x, np.float64)
    out = np.full_like(x, np.nan)
    pos = x > 0.0
    out[pos] = _lgamma_positive(x[pos])
    neg = x <= 0.0
    xn = x[neg]
    pole = xn == np.floor(xn)
    # Gamma(x) Gamma(-x) = -pi / (x sin(pi x)); -x is exact
    with np.errstate(all="ignore"):
        refl = (math.log(math.pi) - np.log(np.abs(xn)) - np.log(_sinpi_abs(xn))
                - _lgamma_positive(np.where(pole, 1.0, -xn)))
    out[neg] = np.where(pole, np.inf, refl)
    return out


def gamma_small(y):
    """Gamma(y) for y in [1, 11] to a few ulp (the product recurrence down to
    [1.5, 2.5), where exp of the series about 2 is accurate); used by igamma."""
    z = y.copy()
    prod = np.ones_like(z)
    for _ in range(9):
        step = z >= 2.5
        z = np.where(step, z - 1.0, z)
        prod = np.where(step, prod * z, prod)
    low = z < 1.5   # y in [1, 1.5): Gamma(y) = Gamma(y + 1) / y
    zz = np.where(low, z + 1.0, z)
    g = np.exp(_horner(zz - 2.0, _LGAMMA2)) * prod
    return np.where(low, g / z, g)


# ------------------------------------------------------------------------------ digamma

def _digamma_positive(x):
    acc = np.zeros_like(x)
    z = x.copy()
    for _ in range(10):
        step = z < 10.0
        acc = np.where(step, acc + 1.0 / z, acc)
        z = np.where(step, z + 1.0, z)
    r2 = 1.0 / (z * z)
    asym = np.log(z) - 0.5 / z - r2 * _horner(r2, _DIGAMMA_ASYM)
    return np.where(np.isinf(x), np.inf, asym - acc)


def digamma(x):
    """psi(x) (float64): NaN at 0, the negative integers and -inf (as TF)."""
    x = np.asarray(x, np.float64)
    out = np.full_like(x, np.nan)
    pos = x > 0.0
    out[pos] = _digamma_positive(x[pos])
    neg = (x <= 0.0) & ~_is_int(x)
    xn = x[neg]
    # psi(x) = psi(-x) - 1/x - pi cot(pi x), from the reflection and psi(1 + y) =
    # psi(y) + 1/y; cot(pi x) of the exactly reduced x - round(x)
    out[neg] = _digamma_positive(-xn) - 1.0 / xn - math.pi / np.tan(math.pi * (xn - np.round(xn)))
    return out


# --------------------------------------------------------------------------------- zeta

_EM_TERMS = 16      # Bernoulli corrections, stopped where they start to grow
_ZETA_SHIFT_CAP = 64


def _zeta_positive(s, q):
    """Hurwitz zeta for finite s > 1 and 0 < q <= inf (arrays of one shape)."""
    target = np.maximum(12.0, s)
    n = np.clip(np.ceil(target - q), 0, _ZETA_SHIFT_CAP)
    n = np.where(np.isfinite(n), n, 0.0)
    w = q + n
    base = np.power(w, -s)
    # integral, half term and Bernoulli corrections at w, as multiples of w^-s
    tail = w / (s - 1.0) + 0.5
    fac = s / w
    prev = np.full_like(s, np.inf)
    live = np.ones(s.shape, bool)
    for j in range(1, _EM_TERMS + 1):
        term = _B2K[j - 1] / math.factorial(2 * j) * fac
        live &= np.abs(term) < np.abs(prev)
        tail = np.where(live, tail + term, tail)
        prev = term
        fac = fac * (s + 2 * j - 1) * (s + 2 * j) / (w * w)
    total = np.where(np.isinf(w), 0.0, base * tail)
    for k in range(_ZETA_SHIFT_CAP - 1, -1, -1):   # smallest terms first
        take = k < n
        if take.any():
            total = np.where(take, total + np.power(q + k, -s), total)
    return total


def zeta(s, q):
    """Hurwitz zeta(s, q) = sum_k (q + k)^-s (float64) with TF's conventions: inf at
    s = 1, NaN for s < 1; q <= 0 an integer: inf for even s (and s = inf), else NaN;
    q < 0 not an integer: NaN unless s is an integer."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    out = np.full(s.shape, np.nan)
    ok = (s > 1.0) & ~np.isnan(q)
    s_int = _is_int(s)
    s_even = np.isinf(s) | (s_int & (np.fmod(np.where(np.isinf(s), 0.0, s), 2.0) == 0.0))
    q_int = _is_int(q)
    # s = inf: pow(q, -inf) (1 at q = 1), inf wherever some |q + k| < 1
    inf_s = ok & np.isinf(s)
    out[inf_s] = np.where(q[inf_s] > 0, np.power(q[inf_s], -np.inf), np.inf)
    fin = ok & ~np.isinf(s)
    pos = fin & (q > 0)
    out[pos] = _zeta_positive(s[pos], q[pos])
    nonpos_int = fin & (q <= 0) & q_int
    out[nonpos_int] = np.where(s_even[nonpos_int], np.inf, np.nan)
    neg = fin & (q < 0) & ~q_int & s_int
    if neg.any():
        sn, qn = s[neg], q[neg]
        m = -np.floor(qn)
        frac = qn + m                    # exact, in (0, 1)
        r = 1.0 - frac
        sign = np.where(np.fmod(sn, 2.0) == 0.0, 1.0, -1.0)
        out[neg] = (sign * (_zeta_positive(sn, r) - _zeta_positive(sn, r + m))
                    + _zeta_positive(sn, frac))
    out[s == 1.0] = np.inf
    return out


def polygamma(n, x):
    """psi^(n)(x) (float64): digamma for n = 0, (-1)^(n+1) n! zeta(n + 1, x) for
    n = 1, 2, ...; NaN for other n."""
    n, x = np.broadcast_arrays(np.asarray(n, np.float64), np.asarray(x, np.float64))
    out = np.full(n.shape, np.nan)
    valid = np.isfinite(n) & (n >= 0) & (n == np.floor(n))
    zero = valid & (n == 0)
    out[zero] = digamma(x[zero])
    higher = valid & (n > 0)
    nh = n[higher]
    fact = np.where(nh <= 170, _FACTORIALS[np.minimum(nh, 170).astype(np.int64)], np.inf)
    sign = np.where(np.fmod(nh, 2.0) == 1.0, 1.0, -1.0)
    out[higher] = sign * fact * zeta(nh + 1.0, x[higher])
    return out


# ----------------------------------------------------------------- incomplete gamma

def _log1pmx_neg(u):
    """u - log(1 + u) (>= 0), accurate for small |u| by its series."""
    small = np.abs(u) < 0.25
    us = np.where(small, u, 0.0)
    series = np.zeros_like(u)
    for k in range(30, 1, -1):
        series = series * us + ((-1) ** k) / k
    series = series * us * us
    with np.errstate(all="ignore"):
        direct = u - np.log1p(u)
    return np.where(small, series, direct)


def _power_prefactor(a, x):
    """x^a e^-x / Gamma(a + 1) for a > 0, x > 0 (finite)."""
    out = np.empty_like(a)
    big = a >= 10.0
    ab, xb = a[big], x[big]
    # Stirling: log = -a (t - 1 - log t) - log(2 pi a) / 2 - corr(a), t = x / a
    out[big] = np.exp(-ab * _log1pmx_neg((xb - ab) / ab) - 0.5 * np.log(2 * math.pi * ab)
                      - _stirling_corr(ab))
    sm = ~big
    asm, xsm = a[sm], x[sm]
    direct = np.power(xsm, asm) * np.exp(-xsm) / gamma_small(asm + 1.0)
    far = np.exp(asm * np.log(xsm) - xsm - _lgamma_positive(asm + 1.0))
    out[sm] = np.where(xsm <= 700.0, direct, far)
    return out


def _until_converged(state, step, cap=_SERIES_CAP):
    """Run `step(state, active) -> converged mask` at most `cap` times, shrinking to
    the unconverged elements every 16 steps (all arrays in `state` are 1-d)."""
    idx = np.arange(state[0].size)
    final = [v.copy() for v in state]
    work = state
    for i in range(cap):
        done = step(work)
        if (i & 15) == 15 or i == cap - 1:
            if done.all():
                break
            for f, v in zip(final, work):
                f[idx] = v
            keep = ~done
            idx = idx[keep]
            work = [v[keep] for v in work]
            if not idx.size:
                break
    for f, v in zip(final, work):
        f[idx] = v
    return final


def _gamma_series(a, x):
    """sum_n x^n / ((a+1)...(a+n)) (P = prefactor * this)."""
    term = np.ones_like(a)
    total = np.ones_like(a)
    ap = a.copy()

    def step(st):
        term, total, ap, x = st
        ap += 1.0
        term *= x / ap
        total += term
        return np.abs(term) <= np.abs(total) * _EPS

    term, total, ap, _ = _until_converged([term, total, ap, x.copy()], step)
    return total


def _gamma_cf(a, x):
    """The continued fraction for Q (Q = a * prefactor * this), modified Lentz."""
    b = x + 1.0 - a
    c = np.full_like(a, 1.0 / _TINY)
    d = 1.0 / b
    h = d.copy()
    i = np.zeros_like(a)

    def step(st):
        a, b, c, d, h, i = st
        i += 1.0
        an = -i * (i - a)
        b += 2.0
        d[:] = an * d + b
        d[np.abs(d) < _TINY] = _TINY
        c[:] = b + an / c
        c[np.abs(c) < _TINY] = _TINY
        d[:] = 1.0 / d
        delta = d * c
        h *= delta
        return np.abs(delta - 1.0) <= _EPS

    st = _until_converged([a.copy(), b, c, d, h, i], step)
    return st[4]


def _igamma_pq(a, x):
    """(P, Q) for finite a > 0, x > 0 (1-d arrays)."""
    p = np.empty_like(a)
    q = np.empty_like(a)
    pre = _power_prefactor(a, x)
    ser = x < a + 1.0
    if ser.any():
        ps = pre[ser] * _gamma_series(a[ser], x[ser])
        p[ser] = np.minimum(ps, 1.0)
        q[ser] = np.maximum(1.0 - ps, 0.0)
    cf = ~ser
    if cf.any():
        qs = a[cf] * pre[cf] * _gamma_cf(a[cf], x[cf])
        q[cf] = np.minimum(qs, 1.0)
        p[cf] = np.maximum(1.0 - qs, 0.0)
    return p, q


def _igamma(a, x, upper: bool):
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    shape = a.shape
    a, x = a.reshape(-1), x.reshape(-1)
    out = np.full(a.shape, np.nan)
    valid = (a > 0) & (x >= 0)                 # excludes NaN
    core = valid & (x > 0) & np.isfinite(a) & np.isfinite(x)
    if core.any():
        p, q = _igamma_pq(a[core], x[core])
        out[core] = q if upper else p
    if upper:
        out[valid & (x == 0)] = 1.0
        out[valid & np.isinf(x)] = 0.0
        out[valid & np.isinf(a) & (x > 0) & np.isfinite(x)] = 1.0
    else:
        out[x == 0] = 0.0                        # any a, even NaN (as TF)
        out[valid & np.isinf(x)] = np.where(np.isinf(a[valid & np.isinf(x)]), 0.0, 1.0)
        out[valid & np.isinf(a) & (x > 0) & np.isfinite(x)] = 0.0
    return out.reshape(shape)


def igamma(a, x):
    """P(a, x), the regularized lower incomplete gamma function (float64)."""
    return _igamma(a, x, upper=False)


def igammac(a, x):
    """Q(a, x) = 1 - P(a, x) (float64)."""
    return _igamma(a, x, upper=True)


# ------------------------------------------------------------------ incomplete beta

def _beta_cf(a, b, x):
    """Numerical Recipes' betacf by the modified Lentz method."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(a)
    d = 1.0 - qab * x / qap
    d[np.abs(d) < _TINY] = _TINY
    d = 1.0 / d
    h = d.copy()
    m = np.zeros_like(a)

    def lentz(aa, c, d):
        d[:] = 1.0 + aa * d
        d[np.abs(d) < _TINY] = _TINY
        c[:] = 1.0 + aa / c
        c[np.abs(c) < _TINY] = _TINY
        d[:] = 1.0 / d
        return d * c

    def step(st):
        a, b, x, c, d, h, m = st
        m += 1.0
        m2 = 2.0 * m
        h *= lentz(m * (b - m) * x / ((a - 1.0 + m2) * (a + m2)), c, d)
        delta = lentz(-(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2)), c, d)
        h *= delta
        return np.abs(delta - 1.0) <= _EPS

    del qam, qap, qab
    st = _until_converged([a.copy(), b.copy(), x.copy(), c, d, h, m], step)
    return st[5]


def betainc(a, b, x):
    """I_x(a, b), the regularized incomplete beta function (float64): NaN unless
    a > 0 and b > 0; then 0 at x = 0, 1 at x = 1 and NaN outside [0, 1]."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    shape = a.shape
    a, b, x = a.reshape(-1), b.reshape(-1), x.reshape(-1)
    out = np.full(a.shape, np.nan)
    bad = (a <= 0) | (b <= 0)
    out[~bad & (x == 0)] = 0.0
    out[~bad & (x == 1)] = 1.0
    core = ~bad & (x > 0) & (x < 1) & np.isfinite(a) & np.isfinite(b)
    if core.any():
        ac, bc, xc = a[core], b[core], x[core]
        swap = xc > (ac + 1.0) / (ac + bc + 2.0)
        a1, b1 = np.where(swap, bc, ac), np.where(swap, ac, bc)
        x1 = np.where(swap, 1.0 - xc, xc)
        # x^a (1 - x)^b / (a1 B(a, b)), a1 B(a, b) = Gamma(a1 + 1) Gamma(b1) / Gamma(a + b)
        log_front = (ac * np.log(xc) + bc * np.log1p(-xc)
                     - (_lgamma_positive(a1 + 1.0) + _lgamma_positive(b1)
                        - _lgamma_positive(ac + bc)))
        part = np.exp(log_front) * _beta_cf(a1, b1, x1)
        out[core] = np.clip(np.where(swap, 1.0 - part, part), 0.0, 1.0)
    return out.reshape(shape)


# ------------------------------------------------------------- inverse error functions

_WINITZKI = 0.147


def _erfcx(y):
    """e^(y^2) erfc(y) for y >= 0: 1 - erf below 1, the continued fraction above."""
    out = np.empty_like(y)
    low = y < 1.0
    yl = y[low]
    out[low] = np.exp(yl * yl) * (1.0 - _erf(yl))
    yh = y[~low]
    f = yh.copy()
    deep = yh < 2.5
    for k in range(200, 0, -1):
        if k <= 50:
            f = yh + (0.5 * k) / f
        else:
            f = np.where(deep, yh + (0.5 * k) / f, f)
    out[~low] = 1.0 / (_SQRT_PI * f)
    return out


def _erfcinv_tail(q):
    """erfcinv(q) for 0 < q <= 1/2 (result >= 0.4769)."""
    ln = np.log(q) + np.log(2.0 - q)               # log((1 - z)(1 + z)), z = 1 - q
    t = 2.0 / (math.pi * _WINITZKI) + 0.5 * ln
    y = np.sqrt(np.sqrt(t * t - ln / _WINITZKI) - t)
    lq = np.log(q)
    for _ in range(4):   # Halley on erfc(y) = q: 2e-3 -> 1e-7 -> 1e-19 -> rounding
        r = -(_erfcx(y) - np.exp(lq + y * y)) * (_SQRT_PI / 2.0)
        y = y - r / (1.0 + y * r)
    return y


def _erfinv_central(z):
    """erfinv(z) for |z| < 1/2: the Maclaurin series start, then Halley on erf."""
    w = (_SQRT_PI / 2.0) * z
    w2 = w * w
    y = w * (1.0 + w2 * (1.0 / 3.0 + w2 * (7.0 / 30.0 + w2 * (127.0 / 630.0))))
    for _ in range(3):
        r = (_erf(y) - z) * (_SQRT_PI / 2.0) * np.exp(y * y)
        y = y - r / (1.0 + y * r)
    return y


def erfinv(x):
    """Inverse error function (float64): +-inf at +-1, NaN outside [-1, 1]."""
    x = np.asarray(x, np.float64)
    out = np.full_like(x, np.nan)
    ax = np.abs(x)
    central = ax < 0.5
    out[central] = _erfinv_central(x[central])
    tail = (ax >= 0.5) & (ax < 1.0)
    out[tail] = np.sign(x[tail]) * _erfcinv_tail(1.0 - ax[tail])
    out[ax == 1.0] = np.sign(x[ax == 1.0]) * np.inf
    return out


def erfcinv(x):
    """Inverse complementary error function (float64): inf at 0, -inf at 2, NaN
    outside [0, 2]."""
    x = np.asarray(x, np.float64)
    out = np.full_like(x, np.nan)
    lo = (x > 0) & (x <= 0.5)
    out[lo] = _erfcinv_tail(x[lo])
    mid = (x > 0.5) & (x < 1.5)
    out[mid] = _erfinv_central(1.0 - x[mid])
    hi = (x >= 1.5) & (x < 2.0)
    out[hi] = -_erfcinv_tail(2.0 - x[hi])
    out[x == 0] = np.inf
    out[x == 2] = -np.inf
    return out


def _times_sqrt2(y):
    return y * _SQRT2_HI + y * _SQRT2_LO


def ndtri(x):
    """Inverse of the standard normal CDF (float64): -inf at 0, inf at 1, NaN outside
    [0, 1]."""
    x = np.asarray(x, np.float64)
    out = np.full_like(x, np.nan)
    lo = (x > 0) & (x <= 0.25)
    out[lo] = -_times_sqrt2(_erfcinv_tail(2.0 * x[lo]))
    mid = (x > 0.25) & (x < 0.75)
    out[mid] = _times_sqrt2(_erfinv_central(2.0 * x[mid] - 1.0))
    hi = (x >= 0.75) & (x < 1.0)
    out[hi] = _times_sqrt2(_erfcinv_tail(2.0 * (1.0 - x[hi])))
    out[x == 0] = -np.inf
    out[x == 1] = np.inf
    return out


# ------------------------------------------------------------------------------ Bessel

def bessel_i0e(x):
    """e^-|x| I0(x) (float64)."""
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    small = ax <= 8.0
    with np.errstate(all="ignore"):
        big = _chebyshev(16.0 / ax - 1.0, _I0E_LARGE) / np.sqrt(ax)
    return np.where(small, _chebyshev(ax / 4.0 - 1.0, _I0E_SMALL), big)


def bessel_i1e(x):
    """e^-|x| I1(x) (float64, odd)."""
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    small = ax <= 8.0
    with np.errstate(all="ignore"):
        big = np.sign(x) * _chebyshev(16.0 / ax - 1.0, _I1E_LARGE) / np.sqrt(ax)
    return np.where(small, x * _chebyshev(ax / 4.0 - 1.0, _I1E_SMALL), big)


def bessel_i0(x):
    """I0(x) = e^|x| i0e(x) (float64; NaN at +-inf, as TF's product gives)."""
    x = np.asarray(x, np.float64)
    return np.exp(np.abs(x)) * bessel_i0e(x)


def bessel_i1(x):
    """I1(x) = e^|x| i1e(x) (float64; NaN at +-inf, as TF's product gives)."""
    x = np.asarray(x, np.float64)
    return np.exp(np.abs(x)) * bessel_i1e(x)


def xlog1py(x, y):
    """x log(1 + y), x where x is 0 (even for y = -1 or NaN)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return np.where(x == 0, x * np.ones_like(y), x * np.log1p(y))


# --------------------------------------------------------------------------- definitions

def _is_float_dtype(dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def _kernel(fn, op: str):
    def kernel(inputs, attrs, ctx):
        """Apply the special function in float64, returning input 0's dtype.

        Raises:
            ShapeError: an input is not a float tensor or the shapes do not broadcast.
        """
        arrays = [np.asarray(v) for v in inputs]
        for pos, v in enumerate(arrays):
            if not _is_float_dtype(v.dtype):
                raise ShapeError(f"{op}: input {pos} must be float, got {v.dtype}")
        dtype = arrays[0].dtype
        try:
            wide = np.broadcast_arrays(*(v.astype(np.float64) for v in arrays))
        except ValueError:
            raise ShapeError(f"{op}: input shapes {[list(v.shape) for v in arrays]} do not "
                             "broadcast") from None
        shape = wide[0].shape
        flat = [np.array(v.reshape(-1)) for v in wide]
        if fp_errors_quiet():
            y = fn(*flat)
        else:
            with np.errstate(all="ignore"):
                y = fn(*flat)
        return (np.asarray(y).reshape(shape).astype(dtype),)
    return kernel


def _infer_float(attrs, inputs):
    """Broadcast shape, input 0's dtype; all inputs of one float dtype where known.

    Raises:
        ShapeError: a known dtype is not float, or the dtypes differ.
    """
    dtypes = [t.dtype for t in inputs if t is not None and t.dtype is not None]
    for d in dtypes:
        if not _is_float_dtype(np.dtype(d)):
            raise ShapeError(f"expected float inputs, got {np.dtype(d)}")
    if len({np.dtype(d) for d in dtypes}) > 1:
        raise ShapeError(f"inputs must have one dtype, got {[str(np.dtype(d)) for d in dtypes]}")
    return infer_elementwise(attrs, inputs) if len(inputs) > 1 else infer_same(attrs, inputs)


_UNARY_OPS = {
    "Lgamma": lgamma, "Digamma": digamma, "Erfinv": erfinv, "Erfcinv": erfcinv,
    "Ndtri": ndtri, "BesselI0": bessel_i0, "BesselI0e": bessel_i0e, "BesselI1": bessel_i1,
    "BesselI1e": bessel_i1e,
}
_BINARY_OPS = {   # TF's input names
    "Polygamma": (polygamma, ("a", "x")), "Zeta": (zeta, ("x", "q")),
    "Igamma": (igamma, ("a", "x")), "Igammac": (igammac, ("a", "x")),
    "Xlog1py": (xlog1py, ("x", "y")),
}


def _build():
    ops = [define(name, ["x"], ["y"], _kernel(fn, name), infer=_infer_float,
                  domain="onegraph", dtypes=_FLOATS, doc=fn.__doc__ or "")
           for name, fn in _UNARY_OPS.items()]
    ops += [define(name, list(names), ["z"], _kernel(fn, name), infer=_infer_float,
                   domain="onegraph", dtypes=_FLOATS, doc=fn.__doc__ or "")
            for name, (fn, names) in _BINARY_OPS.items()]
    ops.append(define("Betainc", ["a", "b", "x"], ["z"], _kernel(betainc, "Betainc"),
                      infer=_infer_float, domain="onegraph", dtypes=_FLOATS,
                      doc=betainc.__doc__ or ""))
    return tuple(sorted(ops, key=lambda op: op.name))


OPS = _build()
