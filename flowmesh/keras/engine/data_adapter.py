"""Turning ``fit``/``evaluate``/``predict`` arguments into lists of NumPy arrays and batches.

``x`` / ``y`` may be an array, a list of arrays (one per model input / output) or a dict
by input / output layer name; a ``tf.data`` dataset yields ``(x, y)`` or
``(x, y, sample_weight)`` batches (see :class:`DatasetBatches`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np


def to_list(data: Any, names: list[str], what: str) -> list[np.ndarray] | None:
    """Arrays in the order of ``names`` (model input or output names).

    Raises:
        ValueError: wrong number of arrays, or a dict missing a name (listing the expected ones).
    """
    if data is None:
        return None
    if isinstance(data, dict):
        missing = [n for n in names if n not in data]
        if missing:
            raise ValueError(f"No data provided for {missing} in {what}. Need data for each key in: {names}")
        return [np.asarray(data[n]) for n in names]
    if isinstance(data, (list, tuple)) and data and not np.isscalar(data[0]) and \
            isinstance(data[0], (np.ndarray, list, tuple)) and len(names) > 1:
        arrays = [np.asarray(a) for a in data]
    elif isinstance(data, (list, tuple)) and len(data) == 1 and isinstance(data[0], np.ndarray):
        arrays = [data[0]]  # a list of one array for a model with one input (or output), as Keras takes
    else:
        arrays = [np.asarray(data)]
    if len(arrays) != len(names):
        raise ValueError(f"The model expects {len(names)} {what} array(s) ({names}), but received "
                         f"{len(arrays)}.")
    return arrays


def check_lengths(xs: list[np.ndarray], ys: list[np.ndarray] | None, sample_weights: Any = None) -> int:
    """The number of samples, checked equal across inputs, targets and weights.

    Raises:
        ValueError: the arrays disagree (the message gives every count).
    """
    counts = {len(a) for a in xs}
    if len(counts) > 1:
        raise ValueError(f"All input arrays (x) should have the same number of samples. Got array sizes: "
                         f"{[len(a) for a in xs]}")
    n = counts.pop()
    if ys is not None:
        target_counts = [len(a) for a in ys]
        if any(c != n for c in target_counts):
            raise ValueError(f"Input arrays should have the same number of samples as target arrays. Found "
                             f"{n} input samples and {target_counts[0] if len(target_counts) == 1 else target_counts} "
                             "target samples.")
    if sample_weights is not None:
        for w in sample_weights:
            if w is not None and len(w) != n:
                raise ValueError(f"Found a sample_weight array with {len(w)} samples for {n} input samples.")
    return n


def class_weights_to_sample_weights(y: np.ndarray, class_weight: dict[int, float]) -> np.ndarray:
    """Per-sample weights from a ``{class: weight}`` dict (classes from one-hot or integer ``y``).

    Raises:
        ValueError: ``y`` holds a class missing from ``class_weight``.
    """
    if y.ndim >= 2 and y.shape[-1] > 1:
        classes = np.argmax(y, axis=-1)
    else:
        classes = y.reshape(len(y)).astype(np.int64) if y.ndim <= 2 else np.argmax(y, -1)
    missing = sorted(set(np.unique(classes).tolist()) - set(class_weight))
    if missing:
        raise ValueError(f"`class_weight` must contain all classes in the data. The classes {missing} exist "
                         f"in the data but not in `class_weight` {class_weight}.")
    return np.array([class_weight[int(c)] for c in classes], dtype=np.float32)


def split_validation(arrays: list[Any], split: float) -> tuple[list[Any], list[Any]]:
    """The last ``split`` fraction of every array is validation data (Keras takes it before
    shuffling)."""
    if not 0.0 < split < 1.0:
        raise ValueError(f"validation_split must be in (0, 1), got {split}")
    n = len(next(a for a in arrays if a is not None))
    at = int(n * (1.0 - split))
    if at == 0 or at == n:
        raise ValueError(f"validation_split={split} leaves no training or no validation samples of {n}")
    train = [a[:at] if a is not None else None for a in arrays]
    val = [a[at:] if a is not None else None for a in arrays]
    return train, val


def batch_slices(n: int, batch_size: int, shuffle: bool | str, rng: Any) -> Iterator[np.ndarray | slice]:
    """Indices of consecutive batches over a (shuffled) permutation of ``range(n)``: index
    arrays, or ``slice`` objects without shuffling (``a[s]`` is then a view, not a copy)."""
    if not shuffle:
        for start in range(0, n, batch_size):
            yield slice(start, min(start + batch_size, n))
        return
    if shuffle == "batch":
        starts = np.arange(0, n, batch_size)
        rng.shuffle(starts)
        for s in starts:
            yield np.arange(s, min(s + batch_size, n))
        return
    order = rng.permutation(n)
    for start in range(0, n, batch_size):
        yield order[start:start + batch_size]


def batch_size_of(index: np.ndarray | slice) -> int:
    """The number of samples a :func:`batch_slices` index selects."""
    return index.stop - index.start if isinstance(index, slice) else len(index)


def is_dataset(x: Any) -> bool:
    """A ``tf.data`` dataset, a ``keras.utils.Sequence`` or a generator: data that comes in
    batches (read through :func:`batches_for`)."""
    from flowmesh.keras.utils.data_utils import is_python_batches

    return is_python_batches(x) or hasattr(x, "make_one_shot_iterator") and hasattr(x, "element_spec") or \
        type(x).__name__ in ("Dataset", "DatasetV1", "DatasetV2") and hasattr(x, "make_one_shot_iterator")


def batches_for(x: Any, session: Any) -> Any:
    """The batch source (``next()``/``restart()``) of a dataset, Sequence or generator."""
    from flowmesh.keras.utils.data_utils import PythonBatches, is_python_batches

    return PythonBatches(x) if is_python_batches(x) else DatasetBatches(x, session)


class DatasetBatches:
    """Pulls NumPy batches from a ``tf.data`` dataset through the Keras session (one
    ``get_next`` run per batch; an exhausted dataset ends the epoch, or is re-initialized
    when ``steps`` is given and the dataset ran out)."""

    def __init__(self, dataset: Any, session: Any):
        from flowmesh.core.graph import get_default_graph

        with get_default_graph().name_scope(None):
            self._iterator = dataset.make_initializable_iterator()
            self._next = self._iterator.get_next()
        self._session = session
        self._initialized = False

    def restart(self) -> None:
        self._session.run(self._iterator.initializer)
        self._initialized = True

    def next(self) -> tuple[list[np.ndarray], list[np.ndarray] | None, np.ndarray | None] | None:
        """``(xs, ys, sample_weight)`` of the next batch, or None at the end of the data."""
        from flowmesh.errors import OutOfRangeError

        if not self._initialized:
            self.restart()
        try:
            element = self._session.run(self._next)
        except OutOfRangeError:
            return None
        if isinstance(element, tuple) and len(element) in (2, 3):
            x, y = element[0], element[1]
            weight = element[2] if len(element) == 3 else None
        else:
            x, y, weight = element, None, None
        xs = [np.asarray(v) for v in (x if isinstance(x, (list, tuple)) else [x])] if not isinstance(x, dict) else x
        ys = None if y is None else [np.asarray(v) for v in (y if isinstance(y, (list, tuple)) else [y])]
        return xs, ys, weight
