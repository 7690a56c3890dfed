"""Parsing specs for ``tf.train.Example`` features: ``FixedLenFeature``, ``VarLenFeature``,
``SparseFeature`` and ``RaggedFeature``
(TensorFlow's ``parsing_config``). ``make_parse_example_spec`` of the feature columns returns
them; the Example parsers of ``tf.io`` read them."""

from __future__ import annotations

import collections
from typing import Any

from flowmesh.core import dtypes


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A dense feature of a fixed ``shape`` and ``dtype``; ``default_value`` fills missing ones."""

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None) -> FixedLenFeature:
        return super().__new__(cls, tuple(shape), dtypes.as_dtype(dtype), default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature with a variable number of values (parsed as a ``SparseTensor``)."""

    def __new__(cls, dtype: Any) -> VarLenFeature:
        return super().__new__(cls, dtypes.as_dtype(dtype))


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A sequence of values of ``shape`` each (``tf.io.FixedLenSequenceFeature``): in
    ``parse_example`` a variable number per example, padded with ``default_value``; in a
    ``SequenceExample``'s feature lists one value per time step."""

    def __new__(cls, shape: Any, dtype: Any, allow_missing: bool = False,
                default_value: Any = None) -> FixedLenSequenceFeature:
        return super().__new__(cls, tuple(shape), dtypes.as_dtype(dtype), allow_missing,
                               default_value)


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A sparse feature from an index feature (or a list of them) and a value feature
    (``tf.io.SparseFeature``): the parsers read both as ``VarLenFeature``s and place each value
    at its index in a ``SparseTensor`` of dense shape ``size`` (a list for several indices)."""

    def __new__(cls, index_key: Any, value_key: str, dtype: Any, size: Any,
                already_sorted: bool = False) -> SparseFeature:
        return super().__new__(cls, index_key, value_key, dtypes.as_dtype(dtype), size, already_sorted)


_RaggedFeatureBase = collections.namedtuple(
    "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])


class RaggedFeature(_RaggedFeatureBase):
    """A ragged feature (``tf.io.RaggedFeature``): the values of ``value_key`` (default: the
    feature's own key), split by ``partitions`` (outermost first), parsed as a ``RaggedTensor``.

    The partition kinds are the nested classes (``RowLengths(key)``, ``RowSplits(key)``, ...,
    ``UniformRowLength(length)``), as in TensorFlow; see
    ``flowmesh/ops/ragged_feature_parsing.py`` for the ones the parsers build.

    Raises:
        ValueError: a dtype other than ``int64``, ``float32``, ``string``; an empty
            ``value_key``; a partition of another type; a ``row_splits_dtype`` other than
            ``int32`` or ``int64``.
    """

    RowSplits = collections.namedtuple("RowSplits", ["key"])
    RowLengths = collections.namedtuple("RowLengths", ["key"])
    RowStarts = collections.namedtuple("RowStarts", ["key"])
    RowLimits = collections.namedtuple("RowLimits", ["key"])
    ValueRowIds = collections.namedtuple("ValueRowIds", ["key"])
    UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])

    _PARTITION_TYPES = (RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds, UniformRowLength)

    def __new__(cls, dtype: Any, value_key: str | None = None, partitions: Any = (),
                row_splits_dtype: Any = dtypes.int32, validate: bool = False) -> RaggedFeature:
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.int64, dtypes.float32, dtypes.string):
            raise ValueError(f"dtype must be int64, float32 or string; got {dtype.name}")
        if value_key is not None and (not isinstance(value_key, str) or not value_key):
            raise ValueError(f"value_key must be a non-empty string; got {value_key!r}")
        partitions = tuple(partitions)
        for partition in partitions:
            if not isinstance(partition, cls._PARTITION_TYPES):
                raise ValueError(f"partitions must be a list of partition objects (RaggedFeature.RowLengths "
                                 f"...); got {partition!r}")
        row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if row_splits_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"row_splits_dtype must be int32 or int64; got {row_splits_dtype.name}")
        return super().__new__(cls, dtype, value_key, partitions, row_splits_dtype, bool(validate))
