"""CIFAR-100: the extracted ``cifar-100-python`` (or its ``.tar.gz``) in Keras's cache."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from flowmesh.keras.datasets._common import cached, channels_last, load_cifar_batch


def load_data(label_mode: str = "fine", cache_dir: str | None = None) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    if label_mode not in ("fine", "coarse"):
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode={label_mode}.')
    path = cached("cifar-100-python", "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz", cache_dir,
                  untar=True)
    key = label_mode + "_labels"
    x_train, y_train = load_cifar_batch(os.path.join(path, "train"), key)
    x_test, y_test = load_cifar_batch(os.path.join(path, "test"), key)
    return (channels_last(x_train), np.reshape(y_train, (-1, 1))), (channels_last(x_test), np.reshape(y_test, (-1, 1)))
