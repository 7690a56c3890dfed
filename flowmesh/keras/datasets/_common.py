"""Reading Keras's cached dataset files (the same parsing as tf-keras's loaders)."""

from __future__ import annotations

import os
import pickle
from typing import Any

import numpy as np

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def cached(fname: str, origin: str, cache_dir: str | None = None, cache_subdir: str = "datasets",
           untar: bool = False) -> str:
    from flowmesh.keras.utils.generic_utils import get_file

    return get_file(fname, origin=origin, cache_dir=cache_dir, cache_subdir=cache_subdir, untar=untar)


def load_cifar_batch(path: str, label_key: str = "labels") -> tuple[np.ndarray, Any]:
    with open(path, "rb") as f:
        batch = {k.decode("utf8"): v for k, v in pickle.load(f, encoding="bytes").items()}
    data = batch["data"]
    return data.reshape(data.shape[0], 3, 32, 32), batch[label_key]


def channels_last(x: np.ndarray) -> np.ndarray:
    from flowmesh.keras import backend

    return x.transpose(0, 2, 3, 1) if backend.image_data_format() == "channels_last" else x


def word_sequences(xs: list[Any], labels: Any, num_words: int | None, skip_top: int, maxlen: int | None,
                   start_char: int | None, oov_char: int | None, index_from: int) -> tuple[list[Any], Any]:
    """tf-keras's IMDB/Reuters processing: start character, index offset, length filter,
    vocabulary cut (out-of-vocabulary words -> ``oov_char`` or dropped)."""
    if start_char is not None:
        xs = [[start_char] + [w + index_from for w in x] for x in xs]
    elif index_from:
        xs = [[w + index_from for w in x] for x in xs]
    if maxlen:
        kept = [(x, y) for x, y in zip(xs, labels) if len(x) < maxlen]
        xs, labels = [x for x, _ in kept], np.array([y for _, y in kept])
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        xs = [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    else:
        xs = [[w for w in x if skip_top <= w < num_words] for x in xs]
    return xs, labels


def shuffled(seed: int, *arrays: Any) -> list[Any]:
    indices = np.arange(len(arrays[0]))
    np.random.RandomState(seed).shuffle(indices)
    return [a[indices] for a in arrays]


def object_array(rows: list[Any]) -> np.ndarray:
    out = np.empty(len(rows), dtype=object)
    out[:] = rows
    return out


def join(*parts: str) -> str:
    return os.path.join(*parts)
