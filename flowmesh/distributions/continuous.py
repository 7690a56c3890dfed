"""Continuous distributions of ``tf.distributions``: ``Normal Uniform Laplace Gamma
Exponential Beta StudentT``, with TensorFlow's formulas (samples come from flowmesh's
random ops: the same distributions, not TensorFlow's random streams)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from flowmesh import math as fmath
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.distributions.base import FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED, Distribution, RegisterKL
from flowmesh.ops import array_ops, random_ops
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.random_dist_ops import random_gamma
from flowmesh.ops.select_ops import where


def _params(name: str, values: dict[str, Any], dtype: Any = None) -> dict[str, Tensor]:
    """The parameters as tensors of one float dtype (the first tensor's, else float32)."""
    out: dict[str, Tensor] = {}
    for key, value in values.items():
        out[key] = convert_to_tensor(value, dtype=dtype, name=key)
        if dtype is None and out[key].dtype.is_floating:
            dtype = out[key].dtype
    if dtype is not None:
        out = {k: v if v.dtype == dtype else cast(v, dtype) for k, v in out.items()}
    return out


def _ones_like_all(*tensors: Tensor) -> Tensor:
    out = array_ops.ones_like(tensors[0])
    for t in tensors[1:]:
        out = out * array_ops.ones_like(t)
    return out


def _sample_shape(n: Tensor, batch: Tensor) -> Tensor:
    """``[n] + shape(batch)``."""
    return array_ops.concat([array_ops.reshape(cast(n, "int32"), [1]), array_ops.shape(batch)], 0)


def _nan_where(condition: Tensor, value: Tensor, allow_nan: bool, message: str) -> Tensor:
    if not allow_nan:
        raise ValueError(f"{message} (allow_nan_stats=False)")
    return where(condition, array_ops.fill(array_ops.shape(value), np.nan) * array_ops.ones_like(value), value)


class _LocationScale(Distribution):
    """A distribution of a location ``loc`` and a scale ``scale`` (``Normal``, ``Laplace``):
    their parameters, batch shape, mean and mode (``loc``)."""

    def __init__(self, loc: Any, scale: Any, validate_args: bool, allow_nan_stats: bool, name: str):
        parameters = dict(locals())
        with name_scope(name) as scope:
            p = _params(scope, {"loc": loc, "scale": scale})
            self._loc, self._scale = p["loc"], p["scale"]
        super().__init__(self._loc.dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._loc, self._scale], name)

    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _batch_shape_like(self) -> Tensor:
        return self._loc * self._scale

    def _mean(self) -> Tensor:
        return self._loc * array_ops.ones_like(self._scale)

    _mode = _mean


class Normal(_LocationScale):
    """``N(loc, scale)``."""

    def __init__(self, loc: Any, scale: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Normal"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name)

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        batch = self._batch_shape_like()
        z = random_ops.random_normal(_sample_shape(n, batch), dtype=self._loc.dtype, seed=seed)
        return z * self._scale + self._loc

    def _z(self, x: Tensor) -> Tensor:
        return (x - self._loc) / self._scale

    def _log_prob(self, x: Tensor) -> Tensor:
        return -0.5 * fmath.square(self._z(x)) - (0.5 * math.log(2.0 * math.pi) + fmath.log(self._scale))

    def _cdf(self, x: Tensor) -> Tensor:
        return 0.5 * fmath.erfc(-self._z(x) * (1.0 / math.sqrt(2.0)))

    def _quantile(self, p: Tensor) -> Tensor:
        return self._loc + self._scale * fmath.ndtri(p)

    def _entropy(self) -> Tensor:
        return (0.5 * math.log(2.0 * math.pi * math.e) + fmath.log(self._scale)) * array_ops.ones_like(self._loc)

    def _stddev(self) -> Tensor:
        return self._scale * array_ops.ones_like(self._loc)


@RegisterKL(Normal, Normal)
def _kl_normal_normal(a: Normal, b: Normal, name: str | None = None) -> Tensor:
    ratio = fmath.square(a.scale) / fmath.square(b.scale)
    return fmath.square(a.loc - b.loc) / (2.0 * fmath.square(b.scale)) + 0.5 * (ratio - 1.0 - fmath.log(ratio))


class Uniform(Distribution):
    """Uniform on ``[low, high)``."""

    def __init__(self, low: Any = 0.0, high: Any = 1.0, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Uniform"):
        parameters = dict(locals())
        with name_scope(name) as scope:
            p = _params(scope, {"low": low, "high": high})
            self._low, self._high = p["low"], p["high"]
        super().__init__(self._low.dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._low, self._high], name)

    low = property(lambda self: self._low)
    high = property(lambda self: self._high)

    def range(self, name: str = "range") -> Tensor:
        with name_scope(f"{self._name}/{name}"):
            return self._high - self._low

    def _batch_shape_like(self) -> Tensor:
        return self._low + self._high

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        batch = self._batch_shape_like()
        u = random_ops.random_uniform(_sample_shape(n, batch), dtype=self._low.dtype, seed=seed)
        return self._low + (self._high - self._low) * u

    def _prob(self, x: Tensor) -> Tensor:
        broadcast_x = x * _ones_like_all(self._low, self._high)
        inside = 1.0 / (self._high - self._low) * array_ops.ones_like(broadcast_x)
        outside = fmath.logical_or(broadcast_x < self._low, broadcast_x >= self._high)
        return where(fmath.is_nan(broadcast_x), broadcast_x,
                     where(outside, array_ops.zeros_like(broadcast_x), inside))

    def _cdf(self, x: Tensor) -> Tensor:
        broadcast_x = x * _ones_like_all(self._low, self._high)
        result = (broadcast_x - self._low) / (self._high - self._low)
        zeros, ones = array_ops.zeros_like(result), array_ops.ones_like(result)
        return where(broadcast_x < self._low, zeros, where(broadcast_x >= self._high, ones, result))

    def _entropy(self) -> Tensor:
        return fmath.log(self._high - self._low)

    def _mean(self) -> Tensor:
        return (self._low + self._high) / 2.0

    def _variance(self) -> Tensor:
        return fmath.square(self._high - self._low) / 12.0

    def _stddev(self) -> Tensor:
        return (self._high - self._low) / math.sqrt(12.0)


class Laplace(_LocationScale):
    """``Laplace(loc, scale)``: density ``exp(-|x - loc| / scale) / (2 scale)``."""

    def __init__(self, loc: Any, scale: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Laplace"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name)

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        batch = self._batch_shape_like()
        low = float(np.nextafter(np.float32(-1.0), np.float32(0.0)))
        u = random_ops.random_uniform(_sample_shape(n, batch), minval=low, maxval=1.0, dtype=self._loc.dtype,
                                      seed=seed)
        return self._loc - self._scale * fmath.sign(u) * fmath.log1p(-fmath.abs(u))

    def _log_prob(self, x: Tensor) -> Tensor:
        return -fmath.abs(x - self._loc) / self._scale - (math.log(2.0) + fmath.log(self._scale))

    def _cdf(self, x: Tensor) -> Tensor:
        z = (x - self._loc) / self._scale
        return 0.5 - 0.5 * fmath.sign(z) * fmath.expm1(-fmath.abs(z))

    def _entropy(self) -> Tensor:
        return (math.log(2.0) + 1.0 + fmath.log(self._scale)) * array_ops.ones_like(self._loc)

    def _stddev(self) -> Tensor:
        return math.sqrt(2.0) * self._scale * array_ops.ones_like(self._loc)


class Gamma(Distribution):
    """``Gamma(concentration, rate)``: density ``rate^c x^(c-1) exp(-rate x) / Gamma(c)``."""

    def __init__(self, concentration: Any, rate: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Gamma"):
        parameters = dict(locals())
        with name_scope(name) as scope:
            p = _params(scope, {"concentration": concentration, "rate": rate})
            self._concentration, self._rate = p["concentration"], p["rate"]
        super().__init__(self._concentration.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._concentration, self._rate], name)

    concentration = property(lambda self: self._concentration)
    rate = property(lambda self: self._rate)

    def _batch_shape_like(self) -> Tensor:
        return self._concentration * self._rate

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        shape = array_ops.reshape(cast(n, "int32"), [1])
        return random_gamma(shape, self._concentration, self._rate, dtype=self.dtype, seed=seed)

    def _log_prob(self, x: Tensor) -> Tensor:
        c, r = self._concentration, self._rate
        return fmath.xlogy(c - 1.0, x) - r * x - (fmath.lgamma(c) - c * fmath.log(r))

    def _cdf(self, x: Tensor) -> Tensor:
        return fmath.igamma(self._concentration, self._rate * x)

    def _entropy(self) -> Tensor:
        c = self._concentration
        return c - fmath.log(self._rate) + fmath.lgamma(c) + (1.0 - c) * fmath.digamma(c)

    def _mean(self) -> Tensor:
        return self._concentration / self._rate

    def _variance(self) -> Tensor:
        return self._concentration / fmath.square(self._rate)

    def _stddev(self) -> Tensor:
        return fmath.sqrt(self._concentration) / self._rate

    def _mode(self) -> Tensor:
        mode = (self._concentration - 1.0) / self._rate
        return _nan_where(self._concentration <= 1.0, mode, self._allow_nan_stats,
                          "mode undefined when any concentration <= 1")


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(a: Gamma, b: Gamma, name: str | None = None) -> Tensor:
    ca, cb, ra, rb = a.concentration, b.concentration, a.rate, b.rate
    return ((ca - cb) * fmath.digamma(ca) + fmath.lgamma(cb) - fmath.lgamma(ca)
            + cb * fmath.log(ra) - cb * fmath.log(rb) + ca * (rb / ra - 1.0))


class Exponential(Gamma):
    """``Exponential(rate)``: ``Gamma(1, rate)``."""

    def __init__(self, rate: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Exponential"):
        parameters = dict(locals())
        with name_scope(name):
            rate_t = convert_to_tensor(rate, name="rate")
        super().__init__(array_ops.ones_like(rate_t), rate_t, validate_args, allow_nan_stats, name)
        self._parameters = {k: v for k, v in parameters.items() if k not in ("self", "__class__")}

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        batch = self._batch_shape_like()
        tiny = float(np.finfo(self.dtype.as_numpy_dtype).tiny)
        u = random_ops.random_uniform(_sample_shape(n, batch), minval=tiny, maxval=1.0, dtype=self.dtype, seed=seed)
        return -fmath.log(u) / self._rate

    def _log_prob(self, x: Tensor) -> Tensor:
        return fmath.log(self._rate) - self._rate * x

    def _cdf(self, x: Tensor) -> Tensor:
        return -fmath.expm1(-self._rate * x)


class Beta(Distribution):
    """``Beta(concentration1, concentration0)`` on ``[0, 1]``."""

    def __init__(self, concentration1: Any = None, concentration0: Any = None, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Beta"):
        parameters = dict(locals())
        with name_scope(name) as scope:
            p = _params(scope, {"concentration1": concentration1, "concentration0": concentration0})
            self._c1, self._c0 = p["concentration1"], p["concentration0"]
            self._total = self._c1 + self._c0
        super().__init__(self._c1.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._c1, self._c0], name)

    concentration1 = property(lambda self: self._c1)
    concentration0 = property(lambda self: self._c0)
    total_concentration = property(lambda self: self._total)

    def _batch_shape_like(self) -> Tensor:
        return self._total

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        shape = array_ops.reshape(cast(n, "int32"), [1])
        ones = array_ops.ones_like(self._total)
        g1 = random_gamma(shape, self._c1 * ones, dtype=self.dtype, seed=seed)
        g0 = random_gamma(shape, self._c0 * ones, dtype=self.dtype,
                                     seed=None if seed is None else seed + 1)
        return g1 / (g1 + g0)

    def _lbeta(self) -> Tensor:
        return fmath.lgamma(self._c1) + fmath.lgamma(self._c0) - fmath.lgamma(self._total)

    def _log_prob(self, x: Tensor) -> Tensor:
        return fmath.xlogy(self._c1 - 1.0, x) + fmath.xlog1py(self._c0 - 1.0, -x) - self._lbeta()

    def _cdf(self, x: Tensor) -> Tensor:
        return fmath.betainc(self._c1, self._c0, x)

    def _entropy(self) -> Tensor:
        return (self._lbeta() - (self._c1 - 1.0) * fmath.digamma(self._c1)
                - (self._c0 - 1.0) * fmath.digamma(self._c0)
                + (self._total - 2.0) * fmath.digamma(self._total))

    def _mean(self) -> Tensor:
        return self._c1 / self._total

    def _variance(self) -> Tensor:
        mean = self._mean()
        return mean * (1.0 - mean) / (1.0 + self._total)

    def _mode(self) -> Tensor:
        mode = (self._c1 - 1.0) / (self._total - 2.0)
        undefined = fmath.logical_or(self._c1 <= 1.0, self._c0 <= 1.0)
        return _nan_where(undefined, mode, self._allow_nan_stats, "mode undefined for concentration <= 1")


@RegisterKL(Beta, Beta)
def _kl_beta_beta(a: Beta, b: Beta, name: str | None = None) -> Tensor:
    return ((b._lbeta() - a._lbeta())
            + (a.concentration1 - b.concentration1) * fmath.digamma(a.concentration1)
            + (a.concentration0 - b.concentration0) * fmath.digamma(a.concentration0)
            + (b.total_concentration - a.total_concentration) * fmath.digamma(a.total_concentration))


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``."""

    def __init__(self, df: Any, loc: Any, scale: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "StudentT"):
        parameters = dict(locals())
        with name_scope(name) as scope:
            p = _params(scope, {"df": df, "loc": loc, "scale": scale})
            self._df, self._loc, self._scale = p["df"], p["loc"], p["scale"]
        super().__init__(self._df.dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._df, self._loc, self._scale], name)

    df = property(lambda self: self._df)
    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _batch_shape_like(self) -> Tensor:
        return self._df * self._loc * self._scale

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        batch = self._batch_shape_like()
        normal = random_ops.random_normal(_sample_shape(n, batch), dtype=self.dtype, seed=seed)
        df = self._df * array_ops.ones_like(batch)
        gamma = random_gamma(array_ops.reshape(cast(n, "int32"), [1]), 0.5 * df, beta=0.5,
                                        dtype=self.dtype, seed=None if seed is None else seed + 1)
        return normal * fmath.rsqrt(gamma / df) * self._scale + self._loc

    def _log_prob(self, x: Tensor) -> Tensor:
        y = (x - self._loc) / self._scale
        df = self._df
        unnormalized = -0.5 * (df + 1.0) * fmath.log1p(fmath.square(y) / df)
        normalization = (fmath.log(fmath.abs(self._scale)) + 0.5 * fmath.log(df) + 0.5 * math.log(math.pi)
                         + fmath.lgamma(0.5 * df) - fmath.lgamma(0.5 * (df + 1.0)))
        return unnormalized - normalization

    def _cdf(self, x: Tensor) -> Tensor:
        y = (x - self._loc) / self._scale
        x_t = self._df / (fmath.square(y) + self._df)
        neg_cdf = 0.5 * fmath.betainc(0.5 * self._df * array_ops.ones_like(x_t), 0.5 * array_ops.ones_like(x_t),
                                         x_t)
        return where(y < 0.0, neg_cdf, 1.0 - neg_cdf)

    def _entropy(self) -> Tensor:
        df = self._df * array_ops.ones_like(self._batch_shape_like())
        half = 0.5 * df
        lbeta = fmath.lgamma(half) + math.lgamma(0.5) - fmath.lgamma(half + 0.5)
        return (0.5 * (df + 1.0) * (fmath.digamma(0.5 * (df + 1.0)) - fmath.digamma(half))
                + 0.5 * fmath.log(df) + lbeta + fmath.log(fmath.abs(self._scale)))

    def _mean(self) -> Tensor:
        mean = self._loc * array_ops.ones_like(self._batch_shape_like())
        return _nan_where(self._df * array_ops.ones_like(mean) <= 1.0, mean, self._allow_nan_stats,
                          "mean not defined for components of df <= 1")

    def _mode(self) -> Tensor:
        return self._loc * array_ops.ones_like(self._batch_shape_like())

    def _variance(self) -> Tensor:
        ones = array_ops.ones_like(self._batch_shape_like())
        df = self._df * ones
        denom = where(df > 2.0, df - 2.0, ones)
        var = ones * fmath.square(self._scale) * df / denom
        inf = array_ops.fill(array_ops.shape(var), np.inf) * ones
        var = where(df > 2.0, var, inf)
        return _nan_where(df <= 1.0, var, self._allow_nan_stats, "variance not defined for components of df <= 1")
