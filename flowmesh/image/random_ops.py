"""Random augmentations of ``tf.image`` (crops, flips, brightness, contrast). Each draws from
``random_uniform`` and so follows flowmesh's graph/op seed rules (``tf.set_random_seed``
plus the ``seed`` argument: reproducible sequences across sessions)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.image.adjust import adjust_brightness, adjust_contrast
from flowmesh.image.geometry import image_rank
from flowmesh.ops import (
    array_ops,
    cond,
    logging_ops,
    manip_ops,
    math_ops,
    random_ops,
    reduction_ops,
    select_ops,
)


def random_crop(value: Any, size: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """A random ``size`` slice of ``value`` (every dimension; ``size <= value.shape``)."""
    value = convert_to_tensor(value, name="value")
    size_t = convert_to_tensor(size, dtype=dtypes.int32, name="size")
    static = value.shape.as_list() if value.shape.rank is not None else None
    if static is not None and isinstance(size, (list, tuple)):
        if len(size) != len(static) or any(d is not None and s > d for s, d in zip(size, static)):
            raise InvalidArgumentError(f"random_crop: need value.shape >= size, got value shape "
                                       f"{value.shape} and size {list(size)}")
    with name_scope(name or "random_crop"):
        shape = array_ops.shape(value)
        check = logging_ops.Assert(reduction_ops.reduce_all(math_ops.greater_equal(shape, size_t)),
                                   ["Need value.shape >= size, got ", shape, size_t], summarize=1000)
        with control_dependencies([check]):
            limit = math_ops.add(math_ops.subtract(shape, size_t), 1)
        offset = math_ops.mod(random_ops.random_uniform(array_ops.shape(shape), dtype=dtypes.int32,
                                                        maxval=2**31 - 1, seed=seed), limit)
        return manip_ops.slice(value, offset, size_t)


def _random_flip(image: Any, axis: int, seed: int | None, fn: str) -> Tensor:
    image = convert_to_tensor(image, name="image")
    rank = image_rank(image, fn)
    with name_scope(fn):
        if rank == 3:
            mirror = math_ops.less(random_ops.random_uniform([], 0, 1.0, seed=seed), 0.5)
            return cond.cond(mirror, lambda: manip_ops.reverse(image, [axis]), lambda: image)
        batch = array_ops.shape(image)[:1]
        draws = random_ops.random_uniform(batch, 0, 1.0, seed=seed)
        flips = array_ops.reshape(math_ops.less(draws, 0.5), [-1, 1, 1, 1])  # one per image
        return select_ops.where_v2(flips, manip_ops.reverse(image, [axis + 1]), image)


def random_flip_left_right(image: Any, seed: int | None = None) -> Tensor:
    """Mirrors ``image`` (each image of a batch independently) along its width with
    probability 1/2."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: int | None = None) -> Tensor:
    """Mirrors ``image`` (each image of a batch independently) along its height with
    probability 1/2."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def random_brightness(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """:func:`adjust_brightness` by a delta uniform in ``[-max_delta, max_delta)``."""
    if max_delta < 0:
        raise InvalidArgumentError(f"random_brightness: max_delta must be non-negative, got {max_delta}")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """:func:`adjust_contrast` by a factor uniform in ``[lower, upper)``."""
    if upper <= lower:
        raise InvalidArgumentError(f"random_contrast: upper ({upper}) must be > lower ({lower})")
    if lower < 0:
        raise InvalidArgumentError(f"random_contrast: lower must be non-negative, got {lower}")
    factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_contrast(image, factor)
