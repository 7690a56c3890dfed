"""``numeric_column`` and ``bucketized_column``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.feature_column._base import (
    Builder,
    CategoricalColumn,
    CategoricalIds,
    DenseColumn,
    num_elements,
)
from flowmesh.ops import array_ops, cast_ops, math_ops
from flowmesh.ops.constant_op import constant
from flowmesh.ops.manip_ops import one_hot
from flowmesh.ops.parsing_config import FixedLenFeature
from flowmesh.ops.range_ops import range as range_op
from flowmesh.ops.reduction_ops import reduce_sum


@dataclass(frozen=True)
class NumericColumn(DenseColumn):
    """A float feature of a fixed ``shape`` per example."""

    key: str
    shape: tuple[int, ...] = (1,)
    default_value: Any = None
    dtype: Any = dtypes.float32
    normalizer_fn: Callable[[Tensor], Tensor] | None = None

    @property
    def name(self) -> str:
        return self.key

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    @property
    def variable_shape(self) -> tuple[int, ...]:
        return self.shape

    def transform(self, builder: Builder) -> Tensor:
        def make() -> Tensor:
            x = builder.raw(self.key, self.name)
            if builder.sparse_mask(self.key, self.name) is not None:
                raise InvalidArgumentError(
                    f"numeric_column '{self.key}' got a SparseTensor; parse it as a "
                    "FixedLenFeature (make_parse_example_spec does) or densify it")
            if x.dtype == dtypes.string:
                raise InvalidArgumentError(
                    f"numeric_column '{self.key}' got a string feature; parse it to numbers first")
            if self.normalizer_fn is not None:
                x = self.normalizer_fn(x)
            x = cast_ops.cast(x, dtypes.float32)
            width = num_elements(self.shape)
            tail = x.shape.as_list()[1:] if x.shape.ndims else None
            if tail is not None and None not in tail and num_elements(tuple(tail)) != width:
                raise InvalidArgumentError(
                    f"numeric_column '{self.key}' has shape {self.shape} ({width} values per "
                    f"example) but the feature has shape {x.shape}")
            return x
        return builder.get(self, make)

    def get_dense_tensor(self, builder: Builder, trainable: bool = True) -> Tensor:
        return self.transform(builder)


def numeric_column(key: str, shape: Any = (1,), default_value: Any = None,
                   dtype: Any = dtypes.float32, normalizer_fn: Any = None) -> NumericColumn:
    """A dense numeric feature ``key`` of ``shape`` per example (``tf.feature_column``)."""
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise InvalidArgumentError(f"numeric_column '{key}': dtype must be numeric, got {dtype.name}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"numeric_column '{key}': normalizer_fn must be callable")
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def bucketize(x: Tensor, boundaries: tuple[float, ...]) -> Tensor:
    """The bucket of each value: the number of boundaries ``<= x`` (TensorFlow's Bucketize)."""
    b = constant(list(boundaries), dtype=dtypes.float32)
    ge = cast_ops.cast(math_ops.greater_equal(array_ops.expand_dims(x, -1), b), dtypes.int64)
    return reduce_sum(ge, -1)


@dataclass(frozen=True)
class BucketizedColumn(DenseColumn, CategoricalColumn):
    """A numeric column discretized by ``boundaries``; dense as one-hot, or categorical."""

    source_column: NumericColumn
    boundaries: tuple[float, ...]

    @property
    def name(self) -> str:
        return f"{self.source_column.name}_bucketized"

    @property
    def parents(self) -> list[Any]:
        return [self.source_column]

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        return self.source_column.parse_example_spec

    @property
    def variable_shape(self) -> tuple[int, ...]:
        return tuple(self.source_column.shape) + (len(self.boundaries) + 1,)

    @property
    def num_buckets(self) -> int:
        return num_elements(self.source_column.shape) * (len(self.boundaries) + 1)

    def _buckets(self, builder: Builder) -> Tensor:
        def make() -> Tensor:
            x = self.source_column.transform(builder)
            flat = array_ops.reshape(x, [-1, num_elements(self.source_column.shape)])
            return bucketize(flat, self.boundaries)
        return builder.get(self, make)

    def get_dense_tensor(self, builder: Builder, trainable: bool = True) -> Tensor:
        hot = one_hot(self._buckets(builder), len(self.boundaries) + 1, dtype=dtypes.float32)
        return array_ops.reshape(hot, [-1, num_elements(self.variable_shape)])

    def get_ids(self, builder: Builder) -> CategoricalIds:
        buckets = self._buckets(builder)
        width = num_elements(self.source_column.shape)
        offsets = range_op(0, width, dtype=dtypes.int64) * (len(self.boundaries) + 1)
        ids = buckets + offsets
        return CategoricalIds(ids, math_ops.greater_equal(ids, 0))


def bucketized_column(source_column: NumericColumn, boundaries: Any) -> BucketizedColumn:
    """Buckets of ``source_column`` split at the sorted ``boundaries``."""
    if not isinstance(source_column, NumericColumn):
        raise InvalidArgumentError(
            f"bucketized_column: source_column must be a numeric_column, got {source_column!r}")
    bounds = tuple(float(b) for b in boundaries)
    if not bounds or any(a >= b for a, b in zip(bounds, bounds[1:])):
        raise InvalidArgumentError(
            f"bucketized_column '{source_column.name}': boundaries must be a non-empty sorted list "
            f"of distinct numbers, got {list(boundaries)}")
    return BucketizedColumn(source_column, bounds)
