"""IMDB movie reviews: ``imdb.npz`` and ``imdb_word_index.json`` in Keras's cache."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from flowmesh.keras.datasets._common import ORIGIN, cached, object_array, word_sequences


def load_data(path: str = "imdb.npz", num_words: int | None = None, skip_top: int = 0, maxlen: int | None = None,
              seed: int = 113, start_char: int | None = 1, oov_char: int | None = 2, index_from: int = 3,
              cache_dir: str | None = None, **kwargs: Any) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """Reviews as lists of word indices (shuffled with ``seed``) and 0/1 sentiment labels."""
    num_words = kwargs.pop("nb_words", num_words)
    if kwargs:
        raise TypeError(f"Unrecognized keyword arguments: {kwargs}.")
    with np.load(cached(path, ORIGIN + "imdb.npz", cache_dir), allow_pickle=True) as f:
        rng = np.random.RandomState(seed)
        parts = []
        for x_key, y_key in (("x_train", "y_train"), ("x_test", "y_test")):
            x, y = f[x_key], f[y_key]
            indices = np.arange(len(x))
            rng.shuffle(indices)
            parts.append((list(x[indices]), y[indices]))
    (x_train, y_train), (x_test, y_test) = parts
    x_train, y_train = word_sequences(x_train, y_train, 10**12, 0, maxlen, start_char, None, index_from)
    x_test, y_test = word_sequences(x_test, y_test, 10**12, 0, maxlen, start_char, None, index_from)
    if maxlen and (not x_train or not x_test):
        raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no sequence was kept. "
                         "Increase maxlen.")
    xs, labels = word_sequences(x_train + x_test, np.concatenate([y_train, y_test]), num_words, skip_top, None,
                                None, oov_char, 0)
    at = len(x_train)
    return (object_array(xs[:at]), labels[:at]), (object_array(xs[at:]), labels[at:])


def get_word_index(path: str = "imdb_word_index.json") -> dict[str, int]:
    with open(cached(path, ORIGIN + "imdb_word_index.json")) as f:
        return json.load(f)


