"""Derive the constant tables of ops/special.py (run by hand; prints Python source).

    python tools/special_coefficients.py

Everything is computed here from first principles with Python's `decimal` (45
significant digits) and `fractions`, then rounded once to float64:

- ``_ZETA_M1[k]`` = zeta(k) - 1 for k = 0..63 (entries 0 and 1 unused): the direct sum
  of n^-k for n = 2..39 plus the Euler-Maclaurin tail at N = 40 (Bernoulli numbers
  from `fractions`), so each value is correct to far beyond double precision.
- The Chebyshev coefficients of the modified Bessel functions, as Cephes arranges
  them (but fitted here, not copied): on [0, 8]
  e^-x I0(x) and e^-x I1(x) / x in u = x / 4 - 1; on [8, inf)
  sqrt(x) e^-x I0(x) and sqrt(x) e^-x I1(x) in t = 16 / x - 1. The reference values
  are the all-positive power series sum (x^2/4)^k / (k! (k+nu)!) for x <= 60 and the
  Hankel asymptotic expansion (whose neglected part is below e^-2x) beyond. The
  coefficients are the discrete Chebyshev transform of these values at 64 Chebyshev
  nodes, kept while above 1e-19 of the function's scale.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction

getcontext().prec = 45
NODES = 64


def bernoulli(count: int) -> list[Fraction]:
    """B_0 .. B_{count-1} (B_1 = -1/2), by the recurrence sum_k C(m+1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, count):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


def zeta_minus_one(k: int, n_terms: int = 40) -> Decimal:
    """zeta(k) - 1 by Euler-Maclaurin: sum_{n=2}^{N-1} n^-k + tail at N."""
    big_n = Decimal(n_terms)
    total = sum(Decimal(n) ** -k for n in range(2, n_terms))
    total += big_n ** (1 - k) / (k - 1) + big_n ** -k / 2
    bern = bernoulli(40)
    rising = Decimal(k)  # k (k+1) ... (k+2j-2)
    for j in range(1, 18):
        term = Decimal(bern[2 * j].numerator) / Decimal(bern[2 * j].denominator) \
            / math.factorial(2 * j) * rising * big_n ** (-k - 2 * j + 1)
        total += term
        rising *= (k + 2 * j - 1) * (k + 2 * j)
    return total


def bessel_scaled(nu: int, x: Decimal) -> Decimal:
    """e^-x I_nu(x) for nu in (0, 1), x > 0."""
    if x <= 60:
        q = x * x / 4
        term = (x / 2) ** nu / math.factorial(nu)
        total, k = Decimal(0), 0
        while term > total * Decimal("1e-44") or k < 5:
            total += term
            k += 1
            term = term * q / (k * (k + nu))
        return total * (-x).exp()
    mu = 4 * nu * nu
    term, total, k = Decimal(1), Decimal(0), 0
    while abs(term) > Decimal("1e-44"):
        total += term
        k += 1
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8 * x)
    return total / (2 * _PI * x).sqrt()


_PI = Decimal("3.14159265358979323846264338327950288419716939937511")


def chebyshev(f, nodes: int = NODES) -> list[float]:
    """Coefficients c_k of f(t) ~ sum' c_k T_k(t) on [-1, 1] (c_0 not halved here:
    the evaluation halves it), from f at the Chebyshev nodes."""
    values = []
    for j in range(nodes):
        theta = _PI * (2 * j + 1) / (2 * nodes)
        values.append((theta, f(_cos(theta))))
    coeffs = []
    for k in range(nodes):
        s = sum(v * _cos(k * theta) for theta, v in values)
        coeffs.append(2 * s / nodes)
    scale = max(abs(c) for c in coeffs)
    keep = max(i for i, c in enumerate(coeffs) if abs(c) > scale * Decimal("1e-19")) + 1
    return [float(c) for c in coeffs[:keep]]


def _cos(x: Decimal) -> Decimal:
    """cos by its Taylor series (x reduced to [-pi, pi])."""
    two_pi = 2 * _PI
    x = x - two_pi * (x / two_pi).to_integral_value()
    term, total, k = Decimal(1), Decimal(0), 0
    while abs(term) > Decimal("1e-46"):
        total += term
        term = -term * x * x / ((2 * k + 1) * (2 * k + 2))
        k += 1
    return total


def _fmt(name: str, values) -> str:
    lines = [f"{name} = ("]
    row = "    "
    for v in values:
        item = repr(float(v)) + ", "
        if len(row) + len(item) > 92:
            lines.append(row.rstrip())
            row = "    "
        row += item
    lines.append(row.rstrip())
    lines.append(")")
    return "\n".join(lines)


def main() -> None:
    print(_fmt("_ZETA_M1", [0.0, 0.0] + [zeta_minus_one(k) for k in range(2, 64)]))
    small = lambda u: 4 * (u + 1)  # noqa: E731 - u in [-1, 1] -> x in [0, 8]
    large = lambda t: 16 / (t + 1)  # noqa: E731 - t in (-1, 1] -> x in [8, inf)
    print(_fmt("_I0E_SMALL", chebyshev(lambda u: bessel_scaled(0, small(u)))))
    print(_fmt("_I1E_SMALL", chebyshev(lambda u: bessel_scaled(1, small(u)) / small(u))))
    print(_fmt("_I0E_LARGE", chebyshev(lambda t: bessel_scaled(0, large(t))
                                       * large(t).sqrt())))
    print(_fmt("_I1E_LARGE", chebyshev(lambda t: bessel_scaled(1, large(t))
                                       * large(t).sqrt())))


if __name__ == "__main__":
    main()
