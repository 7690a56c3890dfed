"""The transformation functions of ``tf.data.experimental`` (each returns a function of a
dataset, for ``Dataset.apply``) and ``Counter``, on the ``Dataset`` methods they became."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes

Transform = Callable[[Any], Any]


def enumerate_dataset(start: int = 0) -> Transform:
    """``(index, element)`` pairs from ``start``: ``dataset.apply(enumerate_dataset())``."""
    return lambda dataset: dataset.enumerate(start)


def unbatch() -> Transform:
    """Splits each element's first dimension into elements."""
    return lambda dataset: dataset.unbatch()


def map_and_batch(map_func: Callable[..., Any], batch_size: Any, num_parallel_batches: int | None = None,
                  drop_remainder: bool = False, num_parallel_calls: int | None = None) -> Transform:
    """``map(map_func)`` then ``batch(batch_size, drop_remainder)``, fused in TensorFlow.

    Raises:
        ValueError: both ``num_parallel_batches`` and ``num_parallel_calls``.
    """
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("`map_and_batch_with_legacy_function` and `map_and_batch` accept at most one of "
                         "`num_parallel_batches` and `num_parallel_calls`")
    calls = num_parallel_calls if num_parallel_calls is not None else num_parallel_batches
    return lambda dataset: dataset.map(map_func, num_parallel_calls=calls).batch(batch_size, drop_remainder)


def parallel_interleave(map_func: Callable[..., Any], cycle_length: int, block_length: int = 1,
                        sloppy: bool | None = False, buffer_output_elements: int | None = None,
                        prefetch_input_elements: int | None = None) -> Transform:
    """``interleave`` of the datasets ``map_func`` makes; ``sloppy=True`` allows any order
    (flowmesh keeps the deterministic one)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length=cycle_length, block_length=block_length,
                                              num_parallel_calls=cycle_length, deterministic=not sloppy)


def shuffle_and_repeat(buffer_size: Any, count: Any = None, seed: int | None = None) -> Transform:
    """``shuffle(buffer_size, seed)`` then ``repeat(count)`` (a new order each epoch)."""
    return lambda dataset: dataset.shuffle(buffer_size, seed=seed).repeat(count)


def Counter(start: Any = 0, step: Any = 1, dtype: Any = dtypes.int64) -> Any:  # noqa: N802 - TensorFlow's name
    """The numbers ``start, start + step, ...`` without end, as ``dtype``."""
    from flowmesh.data.dataset import Dataset

    stop = sys.maxsize if step > 0 else -sys.maxsize
    return Dataset.range(start, stop, step, output_type=dtypes.as_dtype(dtype))
