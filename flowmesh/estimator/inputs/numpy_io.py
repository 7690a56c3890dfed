"""``tf.estimator.inputs.numpy_input_fn``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def _length(values: Any, what: str) -> int:
    arrays = list(values.values()) if isinstance(values, dict) else [values]
    lengths = {len(np.asarray(a)) for a in arrays}
    if len(lengths) != 1:
        raise ValueError(f"Length of tensors in {what} dict must match, got lengths {sorted(lengths)}")
    return lengths.pop()


def numpy_input_fn(x: Any, y: Any = None, batch_size: int = 128, num_epochs: int | None = 1,
                   shuffle: bool | None = None, queue_capacity: int = 1000, num_threads: int = 1) -> Callable:
    """An input function yielding ``(features, labels)`` batches of NumPy data.

    Args:
        x: an array (the features tensor) or a dict of arrays (the features dict).
        y: an array, a dict of arrays, or None (the function then yields features only).
        num_epochs: passes over the data; None repeats forever.
        shuffle: required: whether to shuffle (with a buffer of ``queue_capacity``).

    Raises:
        ValueError: ``shuffle`` not given, mismatched lengths, or keys in both ``x`` and ``y``.
    """
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided explicitly as a bool, it is {shuffle}")
    if not isinstance(x, dict) and not isinstance(x, np.ndarray):
        x = np.asarray(x)
    length = _length(x, "x")
    if y is not None:
        if isinstance(x, dict) and isinstance(y, dict) and set(x) & set(y):
            raise ValueError(f"{sorted(set(x) & set(y))} duplicate keys are found in both x and y: keys of x and "
                             "y can not overlap.")
        if _length(y, "y") != length:
            raise ValueError(f"Length of tensors in x and y is mismatched. All elements in x and y must have the "
                             f"same length.\nLengths of x: {length}\nLengths of y: {_length(y, 'y')}")

    def input_fn() -> Any:
        from flowmesh.data.dataset import Dataset

        features = {k: np.asarray(v) for k, v in x.items()} if isinstance(x, dict) else np.asarray(x)
        labels = None if y is None else ({k: np.asarray(v) for k, v in y.items()} if isinstance(y, dict)
                                         else np.asarray(y))
        dataset = Dataset.from_tensor_slices(features if labels is None else (features, labels))
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        return dataset.make_one_shot_iterator().get_next()

    return input_fn
