"""``tf.keras.backend`` random tensors and randomly initialized variables
(``K.random_normal``, ``K.random_bernoulli``...; a seed is drawn when none is given);
re-exported by :mod:`flowmesh.keras.backend`."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.keras import backend_state
from flowmesh.ops import cast_ops, math_ops


def _seed(seed: int | None) -> int:
    return np.random.randint(10_000_000) if seed is None else seed


def random_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                  seed: int | None = None) -> Any:
    from flowmesh.ops.random_ops import random_normal as normal

    return normal(shape, mean, stddev, dtype=dtype or backend_state.floatx(), seed=_seed(seed))


def random_uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None,
                   seed: int | None = None) -> Any:
    from flowmesh.ops.random_ops import random_uniform as uniform

    return uniform(shape, minval, maxval, dtype=dtype or backend_state.floatx(), seed=_seed(seed))


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: int | None = None) -> Any:
    from flowmesh.ops.random_ops import truncated_normal as truncated

    return truncated(shape, mean, stddev, dtype=dtype or backend_state.floatx(), seed=_seed(seed))


def random_bernoulli(shape: Any, p: float = 0.0, dtype: Any = None, seed: int | None = None) -> Any:
    """Ones with probability ``p``, zeros otherwise."""
    dtype = dtype or backend_state.floatx()
    draws = random_uniform(shape, dtype=dtype, seed=seed)
    return cast_ops.cast(math_ops.less_equal(draws, p), dtype)


random_binomial = random_bernoulli


def random_normal_variable(shape: Any, mean: float, scale: float, dtype: Any = None, name: str | None = None,
                           seed: int | None = None) -> Any:
    rng = np.random.default_rng(_seed(seed))
    return backend_state.variable(rng.normal(mean, scale, shape), dtype=dtype, name=name)


def random_uniform_variable(shape: Any, low: float, high: float, dtype: Any = None, name: str | None = None,
                            seed: int | None = None) -> Any:
    rng = np.random.default_rng(_seed(seed))
    return backend_state.variable(rng.uniform(low, high, shape), dtype=dtype, name=name)


__all__ = [
    "random_bernoulli",
    "random_binomial",
    "random_normal",
    "random_normal_variable",
    "random_uniform",
    "random_uniform_variable",
    "truncated_normal",
]
