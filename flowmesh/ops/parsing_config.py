"""Parsing specs for ``tf.train.Example`` features: ``FixedLenFeature``, ``VarLenFeature`` and
``SparseFeature``
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
