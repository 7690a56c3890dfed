"""Kernels of ``flowmesh/ops/special_integral_ops.py``: Dawson's integral, the exponential
integral Ei, the Fresnel integrals and Spence's function, in float64 torch arithmetic
(narrower inputs are widened and rounded back).

Each function joins a convergent series where it has no cancellation with an asymptotic
expansion or continued fraction where the series would lose digits:

* dawsn: ``exp(-x^2) sum x^(2n+1) / (n! (2n+1))`` (positive terms) for ``|x| < 6``, the
  asymptotic ``1/(2x) sum (2k-1)!! / (2x^2)^k`` beyond;
* Ei: ``gamma + log x + sum x^k / (k k!)`` for ``0 < x <= 40``, ``e^x/x sum k!/x^k`` beyond
  (NaN for ``x < 0``, as TensorFlow's kernel);
* Fresnel: the power series for ``|x| < 1.5``, the continued fraction of the complex
  error function beyond;
* Spence: ``Li2(1 - x)`` from the Bernoulli series in ``u = -log(1 - z)`` after the
  reflections ``z -> 1 - z`` and ``z -> 1/z``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import torch

from flowmesh.kernels.contract.registry import simple_kernel

_EULER_GAMMA = 0.57721566490153286061


def _in_float64(fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[Any], Any]:
    def run(x: torch.Tensor) -> torch.Tensor:
        return fn(x.to(torch.float64)).to(x.dtype)

    return run


# --- Dawson's integral ------------------------------------------------------------------------
def _dawsn(x: torch.Tensor) -> torch.Tensor:
    ax = x.abs()
    small = ax < 6.0
    xs = torch.where(small, ax, torch.zeros_like(ax))
    x2 = xs * xs
    term, total = xs.clone(), xs.clone()
    for n in range(1, 130):
        term = term * x2 / n
        total = total + term / (2 * n + 1)
    series = torch.exp(-x2) * total
    xl = torch.where(small, torch.full_like(ax, 6.0), ax)
    inv = 1.0 / (2.0 * xl * xl)
    term, total = torch.ones_like(xl), torch.ones_like(xl)
    for k in range(1, 36):
        term = term * (2 * k - 1) * inv
        total = total + term
    asymptotic = total / (2.0 * xl)
    return torch.sign(x) * torch.where(small, series, asymptotic)


# --- the exponential integral Ei -----------------------------------------------------------
def _ei_positive(x: torch.Tensor) -> torch.Tensor:
    series_part = x <= 40.0
    xs = torch.where(series_part, x, torch.ones_like(x))
    term, total = torch.ones_like(xs), torch.zeros_like(xs)
    for k in range(1, 160):
        term = term * xs / k
        total = total + term / k
    series = _EULER_GAMMA + torch.log(xs) + total
    xl = torch.where(series_part, torch.full_like(x, 41.0), x)
    term, total = torch.ones_like(xl), torch.ones_like(xl)
    for k in range(1, 41):
        term = term * k / xl
        total = total + term
    asymptotic = torch.exp(xl) / xl * total
    return torch.where(series_part, series, asymptotic)


def _expint(x: torch.Tensor) -> torch.Tensor:
    """Ei(x) for x > 0, -inf at 0 and NaN for x < 0 (as TensorFlow's kernel)."""
    positive = x > 0
    out = _ei_positive(torch.where(positive, x, torch.ones_like(x)))
    out = torch.where(x == 0, torch.full_like(x, -math.inf), out)
    return torch.where(positive | (x == 0), out, torch.full_like(x, math.nan))


# --- Fresnel integrals --------------------------------------------------------------------------
def _fresnel(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    ax = x.abs()
    small = ax < 1.5
    xs = torch.where(small, ax, torch.zeros_like(ax))
    half_pi = math.pi / 2.0
    # C = sum (-1)^n (pi/2)^(2n) x^(4n+1) / ((2n)! (4n+1)); S likewise with odd powers.
    t = xs.clone()  # (pi/2 x^2)^k x / k!, k = 0, 1, 2, ...
    c_sum, s_sum = torch.zeros_like(xs), torch.zeros_like(xs)
    u = half_pi * xs * xs
    for k in range(0, 60):
        if k:
            t = t * u / k
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2 == 0:
            c_sum = c_sum + sign * t / (2 * k + 1)
        else:
            s_sum = s_sum + sign * t / (2 * k + 1)
    xl = torch.where(small, torch.full_like(ax, 2.0), ax)
    c_big, s_big = _fresnel_fraction(xl)
    c = torch.where(small, c_sum, c_big)
    s = torch.where(small, s_sum, s_big)
    sign = torch.sign(x)
    return sign * c, sign * s


def _fresnel_fraction(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """C and S for ``x >= 1.5`` from the continued fraction of ``erfc`` at the complex point
    ``sqrt(pi)/2 (1 - i) x`` (modified Lentz iteration, in complex128)."""
    pix2 = math.pi * x * x
    tiny = 1e-300
    b = torch.complex(torch.ones_like(x), -pix2)
    cc = torch.full_like(b, 1.0 / tiny)
    d = 1.0 / b
    h = d
    n = -1
    for _ in range(2, 200):
        n += 2
        a = -float(n * (n + 1))
        b = b + 4.0
        d = 1.0 / (a * d + b)
        cc = b + a / cc
        h = h * (cc * d)
    h = torch.complex(x, -x) * h
    phase = torch.complex(torch.cos(0.5 * pix2), torch.sin(0.5 * pix2))
    cs = torch.complex(torch.full_like(x, 0.5), torch.full_like(x, 0.5)) * (1.0 - phase * h)
    return cs.real, cs.imag


# --- Spence's function --------------------------------------------------------------------------
def _bernoulli(count: int) -> list[float]:
    """``B_0 .. B_{count-1}`` (``B_1 = -1/2``), exactly by the defining recurrence."""
    numbers: list[Fraction] = []
    for m in range(count):
        value = Fraction(1) if m == 0 else -sum(
            Fraction(math.comb(m + 1, k)) * numbers[k] for k in range(m)) / (m + 1)
        numbers.append(value)
    return [float(b) for b in numbers]


# Li2(z) = sum_n B_n u^(n+1) / (n+1)!, u = -log(1 - z): the coefficients B_n / (n+1)!.
_LI2_COEFFS = [b / math.factorial(n + 1) for n, b in enumerate(_bernoulli(40))]


def _li2_core(z: torch.Tensor) -> torch.Tensor:
    """``Li2(z)`` for ``-1 <= z <= 1/2`` (``|u| <= log 2``)."""
    u = -torch.log1p(-z)
    total = torch.zeros_like(z)
    for coeff in reversed(_LI2_COEFFS):
        total = total * u + coeff
    return total * u


def _spence(x: torch.Tensor) -> torch.Tensor:
    z = 1.0 - x
    pi2_6 = math.pi ** 2 / 6.0
    # z < -1 (x > 2): Li2(z) = -pi^2/6 - log(-z)^2 / 2 - Li2(1/z).
    far = z < -1.0
    zf = torch.where(far, z, torch.full_like(z, -2.0))
    far_value = -pi2_6 - 0.5 * torch.log(-zf) ** 2 - _li2_core(1.0 / zf)
    # 1/2 < z < 1 (0 < x < 1/2): Li2(z) = pi^2/6 - log(z) log(1 - z) - Li2(1 - z).
    high = (z > 0.5) & (z < 1.0)
    zh = torch.where(high, z, torch.full_like(z, 0.75))
    high_value = pi2_6 - torch.log(zh) * torch.log1p(-zh) - _li2_core(1.0 - zh)
    zm = torch.where(far | high, torch.zeros_like(z), z)
    out = torch.where(far, far_value, torch.where(high, high_value, _li2_core(zm)))
    out = torch.where(x == 0, torch.full_like(x, pi2_6), out)
    return torch.where((x < 0) | torch.isnan(x), torch.full_like(x, math.nan), out)


def _fresnel_cos(x: torch.Tensor) -> torch.Tensor:
    return _fresnel(x)[0]


def _fresnel_sin(x: torch.Tensor) -> torch.Tensor:
    return _fresnel(x)[1]


simple_kernel("Dawsn", _in_float64(_dawsn))
simple_kernel("Expint", _in_float64(_expint))
simple_kernel("FresnelCos", _in_float64(_fresnel_cos))
simple_kernel("FresnelSin", _in_float64(_fresnel_sin))
simple_kernel("Spence", _in_float64(_spence))
