"""``tf.keras.preprocessing.sequence``: ``pad_sequences``, ``TimeseriesGenerator``,
``make_sampling_table``, ``skipgrams`` (Keras's sequence utilities, NumPy)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from flowmesh.keras.utils.data_utils import Sequence


def pad_sequences(sequences: Any, maxlen: int | None = None, dtype: Any = "int32", padding: str = "pre",
                  truncating: str = "pre", value: Any = 0.0) -> np.ndarray:
    """Sequences as one ``[count, maxlen, ...]`` array: cut (``truncating`` ``pre``: keep
    the end) and padded with ``value`` (``padding`` ``pre``: before)."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths = [len(s) for s in sequences]
    sample_shape = next((np.asarray(s).shape[1:] for s in sequences if len(s)), ())
    maxlen = int(np.max(lengths)) if maxlen is None and lengths else (maxlen or 0)
    is_text = np.issubdtype(np.dtype(dtype), np.str_) if dtype is not object else False
    if isinstance(value, str) and dtype is not object and not is_text:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\nYou should set "
                         "`dtype=object` for variable length strings.")
    x = np.full((len(sequences), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for row, sequence in enumerate(sequences):
        if not len(sequence):
            continue
        if truncating not in ("pre", "post"):
            raise ValueError(f'Truncating type "{truncating}" not understood')
        kept = np.asarray(sequence[-maxlen:] if truncating == "pre" else sequence[:maxlen], dtype=dtype)
        if kept.shape[1:] != tuple(sample_shape):
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {row} is different from "
                             f"expected shape {sample_shape}")
        if padding == "post":
            x[row, :len(kept)] = kept
        elif padding == "pre":
            x[row, -len(kept):] = kept
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return x


def make_sampling_table(size: int, sampling_factor: float = 1e-5) -> np.ndarray:
    """The probability of keeping the ``i``-th most frequent word (Zipf's law), for
    :func:`skipgrams`."""
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + 0.577) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence: Any, vocabulary_size: int, window_size: int = 4, negative_samples: float = 1.0,
              shuffle: bool = True, categorical: bool = False, sampling_table: Any = None,
              seed: int | None = None) -> tuple[list[list[int]], list[Any]]:
    """``(couples, labels)``: word pairs within ``window_size`` (label 1) and random
    negative pairs (label 0); index 0 is skipped."""
    couples: list[list[int]] = []
    labels: list[Any] = []
    for i, wi in enumerate(sequence):
        if not wi or (sampling_table is not None and sampling_table[wi] < random.random()):
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        count = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)] for i in range(count)]
        labels += [[1, 0] if categorical else 0] * count
    if shuffle:
        seed = random.randint(0, int(10e6)) if seed is None else seed
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels


class TimeseriesGenerator(Sequence):
    """Batches of ``length``-step windows of ``data`` (every ``sampling_rate``-th step) with
    the target at the step after each window."""

    def __init__(self, data: Any, targets: Any, length: int, sampling_rate: int = 1, stride: int = 1,
                 start_index: int = 0, end_index: int | None = None, shuffle: bool = False, reverse: bool = False,
                 batch_size: int = 128):
        super().__init__()
        if len(data) != len(targets):
            raise ValueError(f"Data and targets have to be of same length. Data length is {len(data)} while "
                             f"target length is {len(targets)}")
        self.data, self.targets, self.length = data, targets, length
        self.sampling_rate, self.stride = sampling_rate, stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse, self.batch_size = shuffle, reverse, batch_size
        if self.start_index > self.end_index:
            raise ValueError(f"`start_index+length={self.start_index} > end_index={self.end_index}` is disallowed, "
                             "as no part of the sequence would be left to be used as current step.")

    def __len__(self) -> int:
        step = self.batch_size * self.stride
        return (self.end_index - self.start_index + step) // step

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        if self.shuffle:
            rows = np.random.randint(self.start_index, self.end_index + 1, size=self.batch_size)
        else:
            first = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(first, min(first + self.batch_size * self.stride, self.end_index + 1), self.stride)
        samples = np.array([self.data[row - self.length:row:self.sampling_rate] for row in rows])
        targets = np.array([self.targets[row] for row in rows])
        return (samples[:, ::-1, ...], targets) if self.reverse else (samples, targets)
