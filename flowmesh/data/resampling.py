"""``rejection_resample``: a dataset resampled towards a target class distribution, by
TensorFlow's method: the classes' initial distribution (given, or estimated on the fly
from the counts seen so far, smoothed), per-class acceptance probabilities
``(ratio - min ratio) / (max ratio - min ratio)`` with ``ratio = target / initial``, and a
mix of the original stream (with probability ``min ratio``) and the accepted elements
(``sample_from_datasets``). Elements come out as ``(class, element)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.data.dataset import Dataset
from flowmesh.ops._builders import constant_value

Transform = Callable[[Dataset], Dataset]
_ESTIMATION_BATCH = 32
_SMOOTHING = 10


def _acceptance(initial: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """Per-class acceptance probabilities and the probability of taking an original element."""
    from flowmesh.ops.reduction_ops import reduce_max, reduce_min

    ratio = target / (initial + np.finfo(np.float32).tiny)
    low, high = reduce_min(ratio), reduce_max(ratio)
    return (ratio - low) / (high - low), low


def _estimated_initial(target: Tensor, classes: Dataset) -> Dataset:
    """The running class distribution of ``classes`` (counts start at a smoothing value),
    one estimate per element."""
    from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops
    from flowmesh.ops.reduction_ops import reduce_sum

    count = target.shape.as_list()[0] if target.shape.rank == 1 and target.shape.as_list()[0] is not None \
        else array_ops.shape(target)[0]
    seen = array_ops.fill([count], np.int64(_SMOOTHING))

    def update(counts: Tensor, batch: Tensor) -> tuple[Tensor, Tensor]:
        counts = counts + reduce_sum(manip_ops.one_hot(batch, count, dtype=dtypes.int64), 0)
        dist = cast_ops.cast(math_ops.truediv(counts, reduce_sum(counts)), dtypes.float32)
        return counts, manip_ops.tile(array_ops.expand_dims(dist, 0), [_ESTIMATION_BATCH, 1])

    from flowmesh.data.stateful_transforms import scan

    return classes.batch(_ESTIMATION_BATCH).apply(scan(seen, update)).unbatch()


def _accepted(dataset: Dataset, acceptance: Dataset, class_func: Callable[..., Any], seed: int | None) -> Dataset:
    from flowmesh.ops.gather_ops import gather
    from flowmesh.ops.random_ops import random_uniform

    def with_probability(probabilities: Tensor, element: Any) -> tuple:
        label = class_func(*element) if isinstance(element, tuple) else class_func(element)
        return label, gather(probabilities, label), element

    def keep(label: Tensor, probability: Tensor, element: Any) -> Tensor:
        return random_uniform([], seed=seed, dtype=probability.dtype) < probability

    return Dataset.zip((acceptance, dataset)).map(with_probability).filter(keep).map(
        lambda label, probability, element: (label, element))


def rejection_resample(class_func: Callable[..., Any], target_dist: Any, initial_dist: Any = None,
                       seed: int | None = None) -> Transform:
    """Resamples a dataset so that ``class_func(element)`` (an int32/int64 scalar class)
    follows ``target_dist``; yields ``(class, element)`` pairs.

    Args:
        class_func: maps an element to its class.
        target_dist: the wanted probability of each class.
        initial_dist: the dataset's class distribution, estimated on the fly when ``None``.
        seed: the seed of the sampling.
    """
    from flowmesh.data.selection import sample_from_datasets
    from flowmesh.ops import cast_ops

    def apply(dataset: Dataset) -> Dataset:
        target = cast_ops.cast(convert_to_tensor(target_dist, name="target_dist"), dtypes.float32)
        if initial_dist is not None:
            initial = cast_ops.cast(convert_to_tensor(initial_dist, name="initial_dist"), dtypes.float32)
            accept, original = _acceptance(initial, target)
            acceptance = Dataset.from_tensors(accept).repeat()
            originals = Dataset.from_tensors(original).repeat()
            static_initial, static_target = constant_value(initial), constant_value(target)
        else:
            estimates = _estimated_initial(target, dataset.map(class_func))
            acceptance = estimates.map(lambda initial: _acceptance(initial, target)[0])
            originals = estimates.map(lambda initial: _acceptance(initial, target)[1])
            static_initial = static_target = None
        accepted = _accepted(dataset, acceptance, class_func, seed).prefetch(3)

        def labelled(*element: Any) -> tuple:
            return (class_func(*element), element[0] if len(element) == 1 else element)

        static_original = None if static_initial is None or static_target is None else \
            float(np.min(np.asarray(static_target) / np.asarray(static_initial)))
        if static_original == 1:
            return dataset.map(labelled)
        if static_original == 0:
            return accepted
        weights = originals.map(lambda p: convert_to_tensor([1.0, 0.0]) * p + convert_to_tensor([0.0, 1.0]) * (1 - p))
        return sample_from_datasets([dataset.map(labelled), accepted], weights=weights, seed=seed,
                                    stop_on_empty_dataset=True)

    return apply
