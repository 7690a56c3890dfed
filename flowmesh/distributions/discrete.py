"""Discrete and simplex distributions of ``tf.distributions``: ``Bernoulli Categorical
Multinomial Dirichlet DirichletMultinomial`` with TensorFlow's formulas (logits and
probabilities both accepted; samples from flowmesh's random ops)."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh import math as fmath
from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.distributions.base import NOT_REPARAMETERIZED, Distribution, RegisterKL
from flowmesh.ops import array_ops, nn_ops, random_ops, range_ops
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.manip_ops import one_hot
from flowmesh.ops.random_dist_ops import random_gamma


def _logits_and_probs(logits: Any, probs: Any, multidimensional: bool, dtype: Any = None) -> tuple[Tensor, Tensor]:
    """Both parameterizations from one (TensorFlow's ``get_logits_and_probs``).

    Raises:
        ValueError: both or neither given.
    """
    if (logits is None) == (probs is None):
        raise ValueError("Must pass probs or logits, but not both.")
    if probs is None:
        logits = convert_to_tensor(logits, dtype=dtype, name="logits")
        probs = nn_ops.softmax(logits) if multidimensional else fmath.sigmoid(logits)
        return logits, probs
    probs = convert_to_tensor(probs, dtype=dtype, name="probs")
    logits = fmath.log(probs) if multidimensional else fmath.log(probs) - fmath.log1p(-probs)
    return logits, probs


def _reduce_sum(x: Tensor, axis: int = -1) -> Tensor:
    return fmath.reduce_sum(x, axis=axis)


def _lbeta(x: Tensor) -> Tensor:
    """``log Beta(x)`` over the last axis."""
    return _reduce_sum(fmath.lgamma(x)) - fmath.lgamma(_reduce_sum(x))


class Bernoulli(Distribution):
    """Bernoulli with ``logits`` or ``probs`` of 1 (samples and values of ``dtype``)."""

    def __init__(self, logits: Any = None, probs: Any = None, dtype: Any = dtypes.int32, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Bernoulli"):
        parameters = dict(locals())
        with name_scope(name):
            self._logits, self._probs = _logits_and_probs(logits, probs, False)
        super().__init__(dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._logits, self._probs], name)

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _batch_shape_like(self) -> Tensor:
        return self._logits

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        shape = array_ops.concat([array_ops.reshape(cast(n, dtypes.int32), [1]), array_ops.shape(self._probs)], 0)
        u = random_ops.random_uniform(shape, dtype=self._probs.dtype, seed=seed)
        return cast(u < self._probs, self._dtype)

    def _log_prob(self, event: Tensor) -> Tensor:
        event = cast(event, self._logits.dtype)
        logits = self._logits * array_ops.ones_like(event)
        event = event * array_ops.ones_like(logits)
        return -nn_ops.sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self) -> Tensor:
        return -self._logits * (fmath.sigmoid(self._logits) - 1.0) + fmath.softplus(-self._logits)

    def _mean(self) -> Tensor:
        return array_ops.identity(self._probs)

    def _variance(self) -> Tensor:
        return self._probs * (1.0 - self._probs)

    def _mode(self) -> Tensor:
        return cast(self._probs > 0.5, self._dtype)


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a: Bernoulli, b: Bernoulli, name: str | None = None) -> Tensor:
    delta0 = fmath.softplus(-b.logits) - fmath.softplus(-a.logits)
    delta1 = fmath.softplus(b.logits) - fmath.softplus(a.logits)
    return fmath.sigmoid(a.logits) * delta0 + fmath.sigmoid(-a.logits) * delta1


class Categorical(Distribution):
    """One of ``K`` classes with ``logits`` or ``probs`` over the last axis."""

    def __init__(self, logits: Any = None, probs: Any = None, dtype: Any = dtypes.int32, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Categorical"):
        parameters = dict(locals())
        with name_scope(name):
            self._logits, self._probs = _logits_and_probs(logits, probs, True)
        super().__init__(dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._logits, self._probs], name)

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    @property
    def event_size(self) -> Tensor:
        return array_ops.shape(self._logits)[-1]

    def _batch_shape_like(self) -> Tensor:
        return self._logits[..., 0]

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        k = array_ops.shape(self._logits)[-1]
        flat = array_ops.reshape(self._logits, [-1, k])
        draws = random_ops.multinomial(flat, n, seed=seed, output_dtype=self._dtype)  # [batch, n]
        draws = array_ops.transpose(draws)
        return array_ops.reshape(draws, array_ops.concat([array_ops.reshape(cast(n, dtypes.int32), [1]),
                                                          array_ops.shape(self._logits)[:-1]], 0))

    def _log_prob(self, k: Tensor) -> Tensor:
        k = cast(k, dtypes.int32)
        logits = self._logits * array_ops.expand_dims(array_ops.ones_like(k, dtype=self._logits.dtype), -1)
        k = k * cast(array_ops.ones_like(logits[..., 0]), dtypes.int32)
        return -nn_ops.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _entropy(self) -> Tensor:
        return -_reduce_sum(nn_ops.log_softmax(self._logits) * self._probs)

    def _cdf(self, k: Tensor) -> Tensor:
        """``P(X < k)``, as TensorFlow's (the probabilities of the classes below ``k``)."""
        from flowmesh.ops.manip_ops import sequence_mask
        from flowmesh.ops.select_ops import where

        k = cast(k, dtypes.int32)
        probs = self._probs * array_ops.expand_dims(array_ops.ones_like(k, dtype=self._probs.dtype), -1)
        k = k * cast(array_ops.ones_like(probs[..., 0]), dtypes.int32)
        size = array_ops.shape(probs)[-1]
        flat_probs, flat_k = array_ops.reshape(probs, [-1, size]), array_ops.reshape(k, [-1])
        below = where(sequence_mask(flat_k, size), flat_probs, array_ops.zeros_like(flat_probs))
        return array_ops.reshape(_reduce_sum(below), array_ops.shape(k))

    def _mode(self) -> Tensor:
        return cast(fmath.argmax(self._logits, axis=-1), self._dtype)


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a: Categorical, b: Categorical, name: str | None = None) -> Tensor:
    delta = nn_ops.log_softmax(a.logits) - nn_ops.log_softmax(b.logits)
    return _reduce_sum(nn_ops.softmax(a.logits) * delta)


def _log_combinations(n: Tensor, counts: Tensor) -> Tensor:
    return fmath.lgamma(n + 1.0) - _reduce_sum(fmath.lgamma(counts + 1.0))


def _multinomial_counts(logits: Tensor, total_count: Tensor, n: Tensor, seed: Any, dtype: Any) -> Tensor:
    """``n`` vectors of class counts per batch member: ``total_count`` categorical draws
    each (the largest count drawn everywhere, the extra draws masked)."""
    k = array_ops.shape(logits)[-1]
    batch = array_ops.shape(logits)[:-1]
    flat = array_ops.reshape(logits, [-1, k])
    counts = array_ops.reshape(total_count * array_ops.ones_like(logits[..., 0]), [-1])
    n_draws = cast(fmath.reduce_max(counts), dtypes.int32)
    n = cast(n, dtypes.int32)
    draws = random_ops.multinomial(flat, n * n_draws, seed=seed, output_dtype=dtypes.int32)
    draws = array_ops.reshape(draws, [-1, n, n_draws])
    keep = cast(fmath.less(cast(range_ops.range(n_draws), counts.dtype), counts[:, None, None]), dtype)
    x = _reduce_sum(one_hot(draws, k, dtype=dtype) * keep[..., None], axis=-2)  # [B, n, k]
    x = array_ops.transpose(x, [1, 0, 2])
    return array_ops.reshape(x, array_ops.concat([array_ops.reshape(n, [1]), batch, array_ops.reshape(k, [1])], 0))


class Multinomial(Distribution):
    """Counts of ``K`` classes in ``total_count`` draws with ``logits`` or ``probs``."""

    def __init__(self, total_count: Any, logits: Any = None, probs: Any = None, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Multinomial"):
        parameters = dict(locals())
        with name_scope(name):
            self._total_count = convert_to_tensor(total_count, name="total_count")
            self._logits, self._probs = _logits_and_probs(logits, probs, True, self._total_count.dtype)
        super().__init__(self._probs.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats, parameters,
                         [self._total_count, self._logits, self._probs], name)

    total_count = property(lambda self: self._total_count)
    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _batch_shape_like(self) -> Tensor:
        return self._total_count * self._logits[..., 0]

    def _event_shape(self) -> Any:
        return self._logits.shape[-1:]

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        return _multinomial_counts(self._logits, self._total_count, n, seed, self.dtype)

    def _log_prob(self, counts: Tensor) -> Tensor:
        return _reduce_sum(counts * nn_ops.log_softmax(self._logits)) + \
            _log_combinations(self._total_count, counts)

    def _mean(self) -> Tensor:
        return self._total_count[..., None] * self._probs

    def _variance(self) -> Tensor:
        p = self._probs * array_ops.ones_like(self._total_count)[..., None]
        return self._total_count[..., None] * p * (1.0 - p)


class Dirichlet(Distribution):
    """Distribution over the probability simplex with ``concentration`` over the last axis."""

    def __init__(self, concentration: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Dirichlet"):
        parameters = dict(locals())
        with name_scope(name):
            self._concentration = convert_to_tensor(concentration, name="concentration")
            self._total = _reduce_sum(self._concentration)
        super().__init__(self._concentration.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._concentration], name)

    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total)

    def _batch_shape_like(self) -> Tensor:
        return self._total

    def _event_shape(self) -> Any:
        return self._concentration.shape[-1:]

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        gamma = random_gamma(array_ops.reshape(cast(n, dtypes.int32), [1]), self._concentration, dtype=self.dtype,
                             seed=seed)
        return gamma / _reduce_sum(gamma)[..., None]

    def _log_prob(self, x: Tensor) -> Tensor:
        return _reduce_sum(fmath.xlogy(self._concentration - 1.0, x)) - _lbeta(self._concentration)

    def _entropy(self) -> Tensor:
        c = self._concentration
        k = cast(array_ops.shape(c)[-1], c.dtype)
        return (_lbeta(c) + (self._total - k) * fmath.digamma(self._total)
                - _reduce_sum((c - 1.0) * fmath.digamma(c)))

    def _mean(self) -> Tensor:
        return self._concentration / self._total[..., None]

    def _variance(self) -> Tensor:
        mean = self._mean()
        return mean * (1.0 - mean) / (1.0 + self._total[..., None])

    def _mode(self) -> Tensor:
        from flowmesh.ops.select_ops import where

        k = cast(array_ops.shape(self._concentration)[-1], self.dtype)
        mode = (self._concentration - 1.0) / (self._total[..., None] - k)
        if not self._allow_nan_stats:
            raise ValueError("mode undefined when any concentration <= 1 (allow_nan_stats=False)")
        undefined = fmath.reduce_any(self._concentration <= 1.0, axis=-1, keepdims=True)
        undefined = fmath.logical_and(undefined, array_ops.ones_like(mode, dtype=dtypes.bool))
        return where(undefined, array_ops.fill(array_ops.shape(mode), np.nan) * array_ops.ones_like(mode), mode)


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(a: Dirichlet, b: Dirichlet, name: str | None = None) -> Tensor:
    digamma_diff = fmath.digamma(a.concentration) - fmath.digamma(a.total_concentration)[..., None]
    return _reduce_sum((a.concentration - b.concentration) * digamma_diff) + _lbeta(b.concentration) - \
        _lbeta(a.concentration)


class DirichletMultinomial(Distribution):
    """Counts of ``total_count`` draws with class probabilities drawn from a Dirichlet."""

    def __init__(self, total_count: Any, concentration: Any, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "DirichletMultinomial"):
        parameters = dict(locals())
        with name_scope(name):
            self._total_count = convert_to_tensor(total_count, name="total_count")
            self._concentration = convert_to_tensor(concentration, dtype=self._total_count.dtype,
                                                    name="concentration")
            self._total = _reduce_sum(self._concentration)
        super().__init__(self._concentration.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._total_count, self._concentration], name)

    total_count = property(lambda self: self._total_count)
    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total)

    def _batch_shape_like(self) -> Tensor:
        return self._total_count * self._total

    def _event_shape(self) -> Any:
        return self._concentration.shape[-1:]

    def _sample_n(self, n: Tensor, seed: Any = None) -> Tensor:
        gamma = random_gamma(array_ops.reshape(cast(n, dtypes.int32), [1]), self._concentration, dtype=self.dtype,
                             seed=seed)  # [n, batch..., k]: one probability vector per sample
        logits = fmath.log(gamma) - fmath.log(_reduce_sum(gamma))[..., None]
        counts = _multinomial_counts(logits, self._total_count * array_ops.ones_like(logits[..., 0]), 1,
                                     None if seed is None else seed + 1, self.dtype)
        return counts[0]

    def _log_prob(self, counts: Tensor) -> Tensor:
        return (_log_combinations(self._total_count, counts) + _lbeta(self._concentration + counts)
                - _lbeta(self._concentration))

    def _mean(self) -> Tensor:
        return self._total_count[..., None] * self._concentration / self._total[..., None]

    def _variance(self) -> Tensor:
        n = self._total_count[..., None]
        p = self._concentration / self._total[..., None]
        return n * p * (1.0 - p) * (n + self._total[..., None]) / (1.0 + self._total[..., None])
