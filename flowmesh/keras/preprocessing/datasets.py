"""``image_dataset_from_directory``, ``text_dataset_from_directory``,
``timeseries_dataset_from_array``: ``tf.data`` datasets of batches, built from files (read
in Python when the function is called) or arrays."""

from __future__ import annotations

import os
from typing import Any

import numpy as np


def _labelled_files(directory: str, labels: Any, class_names: Any, extensions: tuple[str, ...],
                    follow_links: bool) -> tuple[list[str], list[int] | None, list[str]]:
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError(f"`labels` argument should be a list/tuple of integer labels, of length equal to the number "
                         f"of files in the target directory; or 'inferred'; or None. Received: labels={labels}")
    if labels == "inferred":
        names = list(class_names or sorted(d for d in os.listdir(directory)
                                           if os.path.isdir(os.path.join(directory, d))))
        files, found = [], []
        for index, name in enumerate(names):
            for root, _, entries in sorted(os.walk(os.path.join(directory, name), followlinks=follow_links)):
                chosen = [os.path.join(root, f) for f in sorted(entries) if f.lower().endswith(extensions)]
                files += chosen
                found += [index] * len(chosen)
        return files, found, names
    files = []
    for root, _, entries in sorted(os.walk(directory, followlinks=follow_links)):
        files += [os.path.join(root, f) for f in sorted(entries) if f.lower().endswith(extensions)]
    return files, (list(labels) if labels is not None else None), []


def _split(items: list[Any], validation_split: float | None, subset: str | None, seed: int | None,
           shuffle: bool) -> list[int]:
    order = np.arange(len(items))
    if shuffle:
        np.random.RandomState(seed if seed is not None else np.random.randint(1_000_000)).shuffle(order)
    if validation_split and subset:
        at = len(order) - int(validation_split * len(order))
        order = order[at:] if subset == "validation" else order[:at]
    return list(order)


def _encode(labels: list[int], label_mode: str | None, count: int) -> Any:
    if label_mode == "int":
        return np.asarray(labels, np.int32)
    if label_mode == "binary":
        return np.asarray(labels, np.float32)[:, None]
    if label_mode == "categorical":
        return np.eye(count, dtype=np.float32)[labels]
    raise ValueError(f'`label_mode` argument must be one of "int", "categorical", "binary", or None. Received: '
                     f"label_mode={label_mode}")


def _dataset(inputs: Any, labels: Any, batch_size: int | None) -> Any:
    from flowmesh.data.dataset import Dataset

    dataset = Dataset.from_tensor_slices(inputs if labels is None else (inputs, labels))
    return dataset.batch(batch_size) if batch_size is not None else dataset


def image_dataset_from_directory(directory: str, labels: Any = "inferred", label_mode: str | None = "int",
                                 class_names: Any = None, color_mode: str = "rgb", batch_size: int | None = 32,
                                 image_size: Any = (256, 256), shuffle: bool = True, seed: int | None = None,
                                 validation_split: float | None = None, subset: str | None = None,
                                 interpolation: str = "bilinear", follow_links: bool = False,
                                 crop_to_aspect_ratio: bool = False, **kwargs: Any) -> Any:
    """A dataset of ``(images [batch, h, w, c] float32, labels)`` batches from
    ``directory/<class>/*.png|jpg|...`` (``class_names`` is set on the dataset)."""
    from flowmesh.keras.preprocessing.image_utils import EXTENSIONS, img_to_array, load_img

    files, found, names = _labelled_files(directory, labels, class_names, EXTENSIONS, follow_links)
    order = _split(files, validation_split, subset, seed, shuffle)
    images = np.stack([img_to_array(load_img(files[i], color_mode=color_mode, target_size=image_size,
                                             interpolation=interpolation, keep_aspect_ratio=crop_to_aspect_ratio))
                       for i in order]) if order else np.zeros((0, *image_size, 3), np.float32)
    encoded = None if label_mode is None or found is None else _encode([found[i] for i in order], label_mode,
                                                                        max(len(names), 2))
    dataset = _dataset(images, encoded, batch_size)
    dataset.class_names = names
    dataset.file_paths = [files[i] for i in order]
    print(f"Found {len(files)} files belonging to {len(names)} classes.")
    return dataset


def text_dataset_from_directory(directory: str, labels: Any = "inferred", label_mode: str | None = "int",
                                class_names: Any = None, batch_size: int | None = 32, max_length: int | None = None,
                                shuffle: bool = True, seed: int | None = None, validation_split: float | None = None,
                                subset: str | None = None, follow_links: bool = False) -> Any:
    """A dataset of ``(texts [batch] string, labels)`` batches from ``directory/<class>/*.txt``."""
    files, found, names = _labelled_files(directory, labels, class_names, (".txt",), follow_links)
    order = _split(files, validation_split, subset, seed, shuffle)
    texts = []
    for i in order:
        with open(files[i], encoding="utf-8") as f:
            text = f.read()
        texts.append(text[:max_length] if max_length else text)
    encoded = None if label_mode is None or found is None else _encode([found[i] for i in order], label_mode,
                                                                        max(len(names), 2))
    dataset = _dataset(np.array(texts, dtype=object), encoded, batch_size)
    dataset.class_names = names
    print(f"Found {len(files)} files belonging to {len(names)} classes.")
    return dataset


def timeseries_dataset_from_array(data: Any, targets: Any, sequence_length: int, sequence_stride: int = 1,
                                  sampling_rate: int = 1, batch_size: int | None = 128, shuffle: bool = False,
                                  seed: int | None = None, start_index: int | None = None,
                                  end_index: int | None = None) -> Any:
    """A dataset of windows ``data[i : i + sequence_length * sampling_rate : sampling_rate]``
    (``i`` every ``sequence_stride``) with ``targets[i]`` when targets are given."""
    data = np.asarray(data)
    start = start_index or 0
    end = len(data) if end_index is None else end_index
    span = (sequence_length - 1) * sampling_rate
    starts = np.arange(start, end - span, sequence_stride)
    if targets is not None:
        starts = starts[starts < len(targets)]
    if shuffle:
        np.random.RandomState(seed if seed is not None else np.random.randint(1_000_000)).shuffle(starts)
    windows = np.stack([data[s:s + span + 1:sampling_rate] for s in starts]) if len(starts) else \
        np.zeros((0, sequence_length) + data.shape[1:], data.dtype)
    labels = None if targets is None else np.asarray(targets)[starts]
    return _dataset(windows, labels, batch_size)
