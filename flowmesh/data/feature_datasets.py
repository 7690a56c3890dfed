"""``tf.Example`` input: ``parse_example_dataset`` (batches of serialized protos to feature
dicts) and ``make_batched_features_dataset`` (TFRecord files of ``tf.Example`` to batches of
features, TensorFlow's pipeline: list, interleave, shuffle, repeat, batch, parse,
prefetch)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data.dataset import AUTOTUNE, Dataset

Transform = Callable[[Dataset], Dataset]


def parse_example_dataset(features: Mapping[str, Any], num_parallel_calls: int = 1,
                          deterministic: bool | None = None) -> Transform:
    """Parses each element (a vector of serialized ``tf.Example``) into a dict of
    ``features`` (``FixedLenFeature``, ``VarLenFeature``, ``SparseFeature``...).

    Raises:
        ValueError: no features.
        TypeError: (when applied) elements that are not vectors of strings.
    """
    from flowmesh.ops.parsing_ops import parse_example

    if not features:
        raise ValueError("Argument `features` cannot be None.")

    def apply(dataset: Dataset) -> Dataset:
        spec = dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.string or spec.shape.rank not in (None, 1):
            raise TypeError(f"Input dataset should be a dataset of vectors of strings, got {spec!r} (batch the "
                            "serialized examples first).")
        return dataset.map(lambda serialized: parse_example(serialized, features),
                           num_parallel_calls=num_parallel_calls, deterministic=deterministic)

    return apply


def make_batched_features_dataset(file_pattern: Any, batch_size: int, features: Mapping[str, Any],
                                  reader: Callable[..., Dataset] | None = None, label_key: str | None = None,
                                  reader_args: Sequence[Any] | None = None, num_epochs: int | None = None,
                                  shuffle: bool = True, shuffle_buffer_size: int = 10000,
                                  shuffle_seed: int | None = None, prefetch_buffer_size: int | None = None,
                                  reader_num_threads: int | None = None, parser_num_threads: int | None = None,
                                  sloppy_ordering: bool = False, drop_final_batch: bool = False) -> Dataset:
    """Batches of parsed ``tf.Example`` features from the files matching ``file_pattern``
    (read with ``reader``, ``TFRecordDataset`` by default): a dict, or ``(features,
    label)`` with ``label_key``. ``num_epochs=None`` repeats forever and drops the final
    partial batch.

    Raises:
        ValueError: ``label_key`` is not one of ``features``.
    """
    from flowmesh.data.readers import TFRecordDataset

    if label_key is not None and label_key not in features:
        raise ValueError(f"The `label_key` provided ({label_key}) must be one of the `features` keys.")
    reader = reader or TFRecordDataset
    threads = reader_num_threads or 1
    dataset = Dataset.list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    dataset = dataset.interleave(lambda filename: reader(filename, *(reader_args or ())), cycle_length=threads,
                                 num_parallel_calls=None if threads == 1 else threads,
                                 deterministic=not sloppy_ordering)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    dataset = dataset.apply(parse_example_dataset(features, parser_num_threads or 2))
    if label_key is not None:
        def split_label(parsed: dict) -> tuple:
            parsed = dict(parsed)
            label = parsed.pop(label_key)
            return parsed, label

        dataset = dataset.map(split_label)
    return dataset.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)
