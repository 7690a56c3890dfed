"""MNIST digits: ``mnist.npz`` in Keras's cache."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.keras.datasets._common import ORIGIN, cached


def load_data(path: str = "mnist.npz") -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """``(x_train, y_train), (x_test, y_test)``: uint8 ``[n, 28, 28]`` images and labels."""
    with np.load(cached(path, ORIGIN + "mnist.npz"), allow_pickle=True) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
