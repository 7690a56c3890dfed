"""``tf.nn.experimental.stateless_dropout`` and ``general_dropout``: dropout whose keep mask
comes from a stateless seed or from any uniform sampler (the body is ``nn_impl``'s)."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops.nn_impl import dropout_with_sampler
from flowmesh.ops.random_dist_ops import stateless_random_uniform


def _check(rate: Any) -> None:
    if isinstance(rate, numbers.Real) and not 0 <= rate < 1:
        raise InvalidArgumentError(f"`rate` must be a scalar tensor or a float in the range [0, 1). "
                                   f"Received: rate={rate}")


def stateless_dropout(x: Any, rate: Any, seed: Any, rng_alg: Any = None, noise_shape: Any = None,
                      name: str | None = None) -> Tensor:
    """Dropout with a mask that is a deterministic function of ``seed`` (shape ``[2]``): the
    same seed drops the same elements in every run. Kept elements are scaled by
    ``1 / (1 - rate)``.

    flowmesh's stateless generator is not TensorFlow's Philox, so the dropped positions
    differ from TensorFlow's for the same seed (the distribution and determinism are the same).

    Raises:
        InvalidArgumentError: ``rate`` outside ``[0, 1)``.
        ValueError: ``x`` is not floating.
    """
    _check(rate)

    def sampler(shape: Any, dtype: Any) -> Tensor:
        return stateless_random_uniform(shape, seed=seed, dtype=dtype, alg=rng_alg or "auto_select")

    return dropout_with_sampler(x, rate, noise_shape, sampler, name)


def general_dropout(x: Any, rate: Any, uniform_sampler: Callable[..., Any], noise_shape: Any = None,
                    name: str | None = None) -> Tensor:
    """Dropout with the keep mask ``uniform_sampler(shape=..., dtype=...) >= rate``.

    Raises:
        InvalidArgumentError: ``rate`` outside ``[0, 1)``.
        ValueError: ``x`` is not floating.
    """
    _check(rate)
    return dropout_with_sampler(x, rate, noise_shape, uniform_sampler, name)
