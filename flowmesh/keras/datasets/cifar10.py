"""CIFAR-10: the extracted ``cifar-10-batches-py`` (or its ``.tar.gz``) in Keras's cache."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from flowmesh.keras.datasets._common import cached, channels_last, load_cifar_batch


def load_data(cache_dir: str | None = None) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """uint8 ``[n, 32, 32, 3]`` images (channels first with that image data format) and
    ``[n, 1]`` labels."""
    path = cached("cifar-10-batches-py", "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz", cache_dir,
                  untar=True)
    parts = [load_cifar_batch(os.path.join(path, f"data_batch_{i}")) for i in range(1, 6)]
    x_train = np.concatenate([p[0] for p in parts]).astype("uint8")
    y_train = np.concatenate([np.asarray(p[1]) for p in parts]).astype("uint8").reshape(-1, 1)
    x_test, y_test = load_cifar_batch(os.path.join(path, "test_batch"))
    return (channels_last(x_train), y_train), (channels_last(x_test.astype("uint8")),
                                              np.asarray(y_test, "uint8").reshape(-1, 1))
