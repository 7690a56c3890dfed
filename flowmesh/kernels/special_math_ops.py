"""Kernels of ``flowmesh/ops/special_math_ops.py`` (``torch.special``).

``Erfinv``/``Ndtri``/``Igamma``/``Igammac``/``Zeta``/``NextAfter`` are ``torch.special``/``torch``
functions. torch has no incomplete beta function and no derivative of ``P(a, x)`` in ``a``, so
``Betainc`` evaluates the continued fraction of Numerical Recipes (``betacf``, modified Lentz)
and ``IgammaGradA`` differentiates ``P(a, x)`` (series for ``x < a + 1``, continued fraction
of ``Q`` otherwise) with torch autograd; both in float64, iterating until every element
converged.
"""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.kernels.contract.registry import simple_kernel

simple_kernel("Erfinv", torch.special.erfinv)
simple_kernel("Ndtri", torch.special.ndtri)


_TINY = 1e-300
_EPS = 1e-15
_MAX_ITERATIONS = 2000


def _guard(v: Any) -> Any:
    return torch.where(v.abs() < _TINY, torch.full_like(v, _TINY), v)


def _in_float64(fn: Any) -> Any:
    def run(*args: Any) -> Any:
        out_dtype = args[-1].dtype
        wide = torch.broadcast_tensors(*[a.to(torch.float64) for a in args])
        return fn(*wide).to(out_dtype)

    return run


def _beta_fraction(a: Any, b: Any, x: Any) -> Any:
    """The continued fraction of ``I_x(a, b)`` (converges fast for ``x < (a+1)/(a+b+2)``)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = torch.ones_like(x)
    d = 1.0 / _guard(1.0 - qab * x / qap)
    h = d
    for m in range(1, _MAX_ITERATIONS + 1):
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 / _guard(1.0 + aa * d)
        c = _guard(1.0 + aa / c)
        h = h * d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 / _guard(1.0 + aa * d)
        c = _guard(1.0 + aa / c)
        delta = d * c
        h = h * delta
        if bool(((delta - 1.0).abs() < _EPS).logical_or(~torch.isfinite(delta)).all()):
            break
    return h


def _betainc(a: Any, b: Any, x: Any) -> Any:
    swap = x >= (a + 1.0) / (a + b + 2.0)
    aa, bb = torch.where(swap, b, a), torch.where(swap, a, b)
    xx = torch.where(swap, 1.0 - x, x)
    inner = xx.clamp(1e-300, 1.0 - 1e-16)
    log_front = (torch.lgamma(aa + bb) - torch.lgamma(aa) - torch.lgamma(bb)
                 + aa * torch.log(inner) + bb * torch.log1p(-inner))
    part = torch.exp(log_front) * _beta_fraction(aa, bb, inner) / aa
    out = torch.where(swap, 1.0 - part, part)
    out = torch.where(x <= 0.0, torch.zeros_like(out), out)
    out = torch.where(x >= 1.0, torch.ones_like(out), out)
    bad = (a <= 0.0) | (b <= 0.0) | (x < 0.0) | (x > 1.0) | a.isnan() | b.isnan() | x.isnan()
    return torch.where(bad, torch.full_like(out, float("nan")), out)


def _lower_series(a: Any, x: Any) -> Any:
    """``P(a, x)`` by its power series (for ``x < a + 1``), differentiable in ``a``."""
    term = 1.0 / a
    total = term
    for n in range(1, _MAX_ITERATIONS + 1):
        term = term * x / (a + n)
        total = total + term
        if bool((term.abs() <= _EPS * total.abs()).all()):
            break
    return total * torch.exp(-x + a * torch.log(x) - torch.lgamma(a))


def _upper_fraction(a: Any, x: Any) -> Any:
    """``Q(a, x)`` by its continued fraction (for ``x >= a + 1``), differentiable in ``a``."""
    b = x + 1.0 - a
    c = torch.full_like(b, 1.0 / _TINY)
    d = 1.0 / _guard(b)
    h = d
    for i in range(1, _MAX_ITERATIONS + 1):
        an = -i * (i - a)
        b = b + 2.0
        d = 1.0 / _guard(an * d + b)
        c = _guard(b + an / c)
        delta = d * c
        h = h * delta
        if bool(((delta - 1.0).abs() < _EPS).all()):
            break
    return torch.exp(-x + a * torch.log(x) - torch.lgamma(a)) * h


def _igamma_grad_a(a: Any, x: Any) -> Any:
    """``dP(a, x)/da`` by autograd through the series / continued fraction."""
    series = x < a + 1.0
    safe_x = x.clamp_min(1e-300)
    with torch.enable_grad():
        var = a.detach().clone().requires_grad_(True)
        low = _lower_series(var, torch.where(series, safe_x, torch.minimum(safe_x, var.detach())))
        high = -_upper_fraction(var, torch.where(series, var.detach() + 1.0, safe_x))
        (d_low,) = torch.autograd.grad(low.sum(), var, retain_graph=True)
        (d_high,) = torch.autograd.grad(high.sum(), var)
    out = torch.where(series, d_low, d_high)
    return torch.where(x <= 0.0, torch.zeros_like(out), out)


simple_kernel("Igamma", lambda a, x: torch.special.gammainc(a, x))
simple_kernel("Igammac", lambda a, x: torch.special.gammaincc(a, x))
simple_kernel("IgammaGradA", _in_float64(_igamma_grad_a))
simple_kernel("Betainc", _in_float64(_betainc))
simple_kernel("Zeta", lambda x, q: torch.special.zeta(x, q))
simple_kernel("NextAfter", torch.nextafter)
