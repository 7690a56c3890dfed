"""Reuters newswire topics: ``reuters.npz`` and ``reuters_word_index.json`` in Keras's cache."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from flowmesh.keras.datasets._common import ORIGIN, cached, object_array, shuffled, word_sequences


def load_data(path: str = "reuters.npz", num_words: int | None = None, skip_top: int = 0, maxlen: int | None = None,
              test_split: float = 0.2, seed: int = 113, start_char: int | None = 1, oov_char: int | None = 2,
              index_from: int = 3, cache_dir: str | None = None, **kwargs: Any) -> tuple[tuple[Any, Any],
                                                                                        tuple[Any, Any]]:
    num_words = kwargs.pop("nb_words", num_words)
    if kwargs:
        raise TypeError(f"Unrecognized keyword arguments: {kwargs}")
    with np.load(cached(path, ORIGIN + "reuters.npz", cache_dir), allow_pickle=True) as f:
        xs, labels = shuffled(seed, f["x"], f["y"])
    xs, labels = word_sequences(list(xs), labels, num_words, skip_top, maxlen, start_char, oov_char, index_from)
    at = int(len(xs) * (1 - test_split))
    return (object_array(xs[:at]), np.array(labels[:at])), (object_array(xs[at:]), np.array(labels[at:]))


def get_word_index(path: str = "reuters_word_index.json") -> dict[str, int]:
    with open(cached(path, ORIGIN + "reuters_word_index.json")) as f:
        return json.load(f)


_LABEL_NAMES = (
    "cocoa grain veg-oil earn acq wheat copper housing money-supply coffee sugar trade reserves ship cotton "
    "carcass crude nat-gas cpi money-fx interest gnp meal-feed alum oilseed gold tin strategic-metal livestock "
    "retail ipi iron-steel rubber heat jobs lei bop zinc orange pet-chem dlr gas silver wpi hog lead")


def get_label_names() -> tuple[str, ...]:
    """The 46 topic names, indexed as the labels of :func:`load_data`."""
    return tuple(_LABEL_NAMES.split())
