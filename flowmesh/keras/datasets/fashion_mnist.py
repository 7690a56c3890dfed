"""Fashion-MNIST: the four IDX files in ``~/.keras/datasets/fashion-mnist``."""

from __future__ import annotations

import gzip
import os
from typing import Any

import numpy as np

from flowmesh.keras.datasets._common import ORIGIN, cached

FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
         "t10k-images-idx3-ubyte.gz")


def load_data(cache_dir: str | None = None) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    paths = [cached(name, ORIGIN + name, cache_dir, os.path.join("datasets", "fashion-mnist")) for name in FILES]
    arrays = []
    for i in (0, 2):
        with gzip.open(paths[i], "rb") as f:
            labels = np.frombuffer(f.read(), np.uint8, offset=8)
        with gzip.open(paths[i + 1], "rb") as f:
            images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(labels), 28, 28)
        arrays.append((images, labels))
    return arrays[0], arrays[1]
