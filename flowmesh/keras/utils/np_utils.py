"""NumPy helpers of ``tf.keras.utils``."""

from __future__ import annotations

from typing import Any

import numpy as np


def to_categorical(y: Any, num_classes: int | None = None, dtype: str = "float32") -> np.ndarray:
    """One-hot rows for integer class vectors (``num_classes`` default ``max(y) + 1``)."""
    y = np.asarray(y, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    num_classes = int(num_classes or y.max() + 1)
    out = np.zeros((y.shape[0], num_classes), dtype=dtype)
    out[np.arange(y.shape[0]), y] = 1
    return out.reshape(shape + (num_classes,))
