"""``embedding_column`` and ``indicator_column``: dense views of a categorical column."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.errors import InvalidArgumentError, UnimplementedError
from flowmesh.feature_column._base import Builder, CategoricalColumn, CategoricalIds, DenseColumn
from flowmesh.ops import array_ops, cast_ops, math_ops
from flowmesh.ops.clip_ops import clip_by_norm
from flowmesh.ops.embedding_ops import embedding_lookup
from flowmesh.ops.init_ops import truncated_normal_initializer
from flowmesh.ops.manip_ops import one_hot
from flowmesh.ops.reduction_ops import reduce_sum
from flowmesh.ops.variable_scope import get_variable


def _weights(ids: CategoricalIds) -> Tensor:
    """Per-entry weights with missing entries and invalid (negative) ids zeroed, as
    TensorFlow's lookups prune them."""
    valid = math_ops.logical_and(ids.mask, math_ops.greater_equal(ids.ids, cast_ops.cast(0, ids.ids.dtype)))
    mask = cast_ops.cast(valid, dtypes.float32)
    return mask if ids.weights is None else mask * ids.weights


def combine_embeddings(params: Any, ids: CategoricalIds, combiner: str,
                       max_norm: float | None = None) -> Tensor:
    """``sum``/``mean``/``sqrtn`` of the (weighted) embeddings of each row's present ids;
    rows without ids give zeros (TensorFlow's ``safe_embedding_lookup_sparse``)."""
    safe = math_ops.maximum(ids.ids, cast_ops.cast(0, ids.ids.dtype))
    rows = embedding_lookup(params, safe)   # plain or partitioned variables
    if max_norm is not None:
        rows = clip_by_norm(rows, max_norm, axes=[-1])
    w = _weights(ids)
    total = reduce_sum(rows * array_ops.expand_dims(w, -1), 1)
    if combiner == "sum":
        return total
    denom = reduce_sum(w, 1, keepdims=True)
    if combiner == "sqrtn":
        denom = math_ops.sqrt(reduce_sum(w * w, 1, keepdims=True))
    return math_ops.div_no_nan(total, denom)


@dataclass(frozen=True)
class EmbeddingColumn(DenseColumn):
    """Learned ``dimension``-wide embeddings of a categorical column's ids."""

    categorical_column: CategoricalColumn
    dimension: int
    combiner: str = "mean"
    initializer: Any = None
    ckpt_to_load_from: str | None = None
    tensor_name_in_ckpt: str | None = None
    max_norm: float | None = None
    trainable: bool = True

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_embedding"

    @property
    def parents(self) -> list[Any]:
        return [self.categorical_column]

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        return self.categorical_column.parse_example_spec

    @property
    def variable_shape(self) -> tuple[int, ...]:
        return (self.dimension,)

    @property
    def is_sequence(self) -> bool:
        return self.categorical_column.is_sequence

    def embedding_weights(self, trainable: bool) -> Any:
        """The ``[num_buckets, dimension]`` variable ``embedding_weights`` of the current scope
        (restored from ``ckpt_to_load_from`` when given)."""
        init = self.initializer or truncated_normal_initializer(
            mean=0.0, stddev=1.0 / math.sqrt(self.dimension))
        params = get_variable("embedding_weights", [self.categorical_column.num_buckets, self.dimension],
                              dtype=dtypes.float32, initializer=init,
                              trainable=self.trainable and trainable)
        if self.ckpt_to_load_from is not None:
            from flowmesh import train

            if not hasattr(train, "init_from_checkpoint"):
                raise UnimplementedError(None, None, "embedding_column(ckpt_to_load_from=...) needs "
                                         "tf.train.init_from_checkpoint, which this flowmesh lacks")
            train.init_from_checkpoint(self.ckpt_to_load_from, {self.tensor_name_in_ckpt: params})
        return params

    def get_dense_tensor(self, builder: Builder, trainable: bool = True) -> Tensor:
        if self.is_sequence:
            raise InvalidArgumentError(
                f"In embedding_column: {self.name}. categorical_column must not be a sequence column; "
                "use a non-sequence categorical_column_with_* with input_layer, or sequence_input_layer "
                "for sequence input")
        ids = self.categorical_column.get_ids(builder)
        return combine_embeddings(self.embedding_weights(trainable), ids, self.combiner, self.max_norm)

    def get_sequence_dense_tensor(self, builder: Builder, trainable: bool = True) -> tuple[Tensor, Tensor]:
        """``([batch, steps, dimension], sequence_length)`` of a sequence categorical column
        (one id per step)."""
        if not self.is_sequence:
            raise InvalidArgumentError(f"In embedding_column: {self.name}. categorical_column must be a sequence "
                                       "column (sequence_categorical_column_with_*) to use sequence_input_layer")
        ids = self.categorical_column.get_ids(builder)
        steps = per_step(ids)
        dense = combine_embeddings(self.embedding_weights(trainable), steps, self.combiner, self.max_norm)
        return (array_ops.reshape(dense, array_ops.stack([array_ops.shape(ids.ids)[0], -1, self.dimension])),
                sequence_length(ids.mask))


def per_step(ids: CategoricalIds) -> CategoricalIds:
    """``[batch, steps]`` ids as ``[batch * steps, 1]`` rows of one id each."""
    def flat(t: Tensor | None) -> Tensor | None:
        return None if t is None else array_ops.reshape(t, [-1, 1])
    return CategoricalIds(flat(ids.ids), flat(ids.mask), flat(ids.weights))


def sequence_length(mask: Tensor, num_elements: int = 1) -> Tensor:
    """Steps of each row (int64): the last present position + 1 (over ``num_elements``
    values per step), as TensorFlow's ``sequence_length_from_sparse_tensor``."""
    from flowmesh.ops.range_ops import range as range_op

    width = array_ops.shape(mask)[1]
    positions = cast_ops.cast(range_op(1, width + 1), dtypes.int64)
    last = reduce_max_or_zero(cast_ops.cast(mask, dtypes.int64) * array_ops.expand_dims(positions, 0))
    if num_elements == 1:
        return last
    return cast_ops.cast(math_ops.ceil(cast_ops.cast(last, dtypes.float64) / num_elements), dtypes.int64)


def reduce_max_or_zero(values: Tensor) -> Tensor:
    from flowmesh.ops.reduction_ops import reduce_max

    return math_ops.maximum(reduce_max(values, 1), cast_ops.cast(0, values.dtype))


def embedding_column(categorical_column: CategoricalColumn, dimension: int, combiner: str = "mean",
                     initializer: Any = None, ckpt_to_load_from: str | None = None,
                     tensor_name_in_ckpt: str | None = None, max_norm: float | None = None,
                     trainable: bool = True) -> EmbeddingColumn:
    """A dense column of learned embeddings (variable ``<scope>/<name>/embedding_weights``)."""
    if not isinstance(categorical_column, CategoricalColumn):
        raise InvalidArgumentError(f"embedding_column needs a categorical column, got {categorical_column!r}")
    if dimension is None or dimension < 1:
        raise InvalidArgumentError(f"embedding_column '{categorical_column.name}': invalid dimension {dimension}")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise InvalidArgumentError(f"embedding_column: combiner must be 'mean', 'sqrtn' or 'sum', got {combiner!r}")
    if initializer is not None and not callable(initializer):
        raise InvalidArgumentError("embedding_column: initializer must be callable")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise InvalidArgumentError("embedding_column: give both ckpt_to_load_from and tensor_name_in_ckpt")
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer,
                           ckpt_to_load_from, tensor_name_in_ckpt, max_norm, trainable)


@dataclass(frozen=True)
class IndicatorColumn(DenseColumn):
    """Multi-hot counts (or summed weights) of a categorical column's ids."""

    categorical_column: CategoricalColumn

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_indicator"

    @property
    def parents(self) -> list[Any]:
        return [self.categorical_column]

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        return self.categorical_column.parse_example_spec

    @property
    def variable_shape(self) -> tuple[int, ...]:
        return (self.categorical_column.num_buckets,)

    @property
    def is_sequence(self) -> bool:
        return self.categorical_column.is_sequence

    def get_dense_tensor(self, builder: Builder, trainable: bool = True) -> Tensor:
        if self.is_sequence:
            raise InvalidArgumentError(f"In indicator_column: {self.name}. categorical_column must not be a "
                                       "sequence column; use sequence_input_layer for sequence input")
        return self._multi_hot(self.categorical_column.get_ids(builder))

    def _multi_hot(self, ids: CategoricalIds) -> Tensor:
        hot = one_hot(math_ops.maximum(ids.ids, cast_ops.cast(0, ids.ids.dtype)),
                      self.categorical_column.num_buckets, dtype=dtypes.float32)
        return reduce_sum(hot * array_ops.expand_dims(_weights(ids), -1), 1)

    def get_sequence_dense_tensor(self, builder: Builder, trainable: bool = True) -> tuple[Tensor, Tensor]:
        """``([batch, steps, num_buckets], sequence_length)`` of a sequence categorical column."""
        if not self.is_sequence:
            raise InvalidArgumentError(f"In indicator_column: {self.name}. categorical_column must be a sequence "
                                       "column to use sequence_input_layer")
        ids = self.categorical_column.get_ids(builder)
        dense = self._multi_hot(per_step(ids))
        return (array_ops.reshape(dense, array_ops.stack([array_ops.shape(ids.ids)[0], -1,
                                                          self.categorical_column.num_buckets])),
                sequence_length(ids.mask))


def indicator_column(categorical_column: CategoricalColumn) -> IndicatorColumn:
    """A dense multi-hot view of ``categorical_column``."""
    if not isinstance(categorical_column, CategoricalColumn):
        raise InvalidArgumentError(f"indicator_column needs a categorical column, got {categorical_column!r}")
    return IndicatorColumn(categorical_column)
