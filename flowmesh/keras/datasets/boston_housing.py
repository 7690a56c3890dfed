"""Boston housing prices: ``boston_housing.npz`` in Keras's cache."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.keras.datasets._common import ORIGIN, cached, shuffled


def load_data(path: str = "boston_housing.npz", test_split: float = 0.2, seed: int = 113,
              cache_dir: str | None = None) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    if not 0 <= test_split < 1:
        raise ValueError(f"test_split must be in [0, 1), got {test_split}")
    with np.load(cached(path, ORIGIN + "boston_housing.npz", cache_dir), allow_pickle=True) as f:
        x, y = shuffled(seed, f["x"], f["y"])
    at = int(len(x) * (1 - test_split))
    return (np.array(x[:at]), np.array(y[:at])), (np.array(x[at:]), np.array(y[at:]))
