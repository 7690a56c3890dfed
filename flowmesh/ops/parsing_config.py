"""Parsing specs for ``tf.train.Example`` features: ``FixedLenFeature`` and ``VarLenFeature``
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
