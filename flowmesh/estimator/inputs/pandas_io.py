"""``tf.estimator.inputs.pandas_input_fn``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.estimator.inputs.numpy_io import numpy_input_fn


def pandas_input_fn(x: Any, y: Any = None, batch_size: int = 128, num_epochs: int | None = 1,
                    shuffle: bool | None = None, queue_capacity: int = 1000, num_threads: int = 1,
                    target_column: str = "target") -> Callable:
    """An input function over a pandas DataFrame ``x`` (one feature per column) and an
    optional Series ``y`` (see :func:`numpy_input_fn`).

    Raises:
        ImportError: pandas is not installed (flowmesh does not depend on it).
        ValueError: ``target_column`` is a column of ``x``, or ``x`` and ``y`` indexes differ.
    """
    try:
        import pandas as pd  # noqa: F401 - only to say so when it is missing
    except ImportError as err:
        raise ImportError("pandas_input_fn needs pandas (pip install pandas)") from err
    if y is not None:
        if target_column in x:
            raise ValueError(f"Cannot use name {target_column} for target column: DataFrame already has a column "
                             "with that name: {list(x.columns)}")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\nIndex for y: {y.index}\n")
    features = {name: x[name].to_numpy() for name in x.columns}
    return numpy_input_fn(features, None if y is None else y.to_numpy(), batch_size, num_epochs, shuffle,
                          queue_capacity, num_threads)
