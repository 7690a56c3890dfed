"""Sequence columns (``sequence_categorical_column_with_*``, ``sequence_numeric_column``) and
their input layer, and ``shared_embedding_columns``.

A sequence feature is a SparseTensor ``[batch, steps]`` (one value per step; a dense tensor
works too, ``''``/``-1`` marking absent steps). ``embedding_column``/``indicator_column`` of
a sequence categorical column give ``[batch, steps, width]`` through
:func:`sequence_input_layer` (TensorFlow 1.x's ``tf.contrib.feature_column`` function; the
sequence columns are refused by ``input_layer``, as in TensorFlow), with each row's
sequence length.

Shared embedding columns use one ``embedding_weights`` variable, made by the first of them
(in name order) under the scope ``<collection name>`` and kept in the graph collection of
that name, as TensorFlow's v1 columns do: ``input_layer/a_b_shared_embedding/embedding_weights``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor, add_to_collection, control_dependencies, get_collection
from flowmesh.errors import InvalidArgumentError
from flowmesh.feature_column._base import Builder, CategoricalColumn, CategoricalIds, FeatureColumn
from flowmesh.feature_column.categorical import (
    WeightedColumn,
    categorical_column_with_hash_bucket,
    categorical_column_with_identity,
    categorical_column_with_vocabulary_file,
    categorical_column_with_vocabulary_list,
)
from flowmesh.feature_column.dense_columns import EmbeddingColumn, sequence_length
from flowmesh.ops import array_ops, cast_ops, check_ops, select_ops
from flowmesh.ops.init_ops import truncated_normal_initializer
from flowmesh.ops.parsing_config import VarLenFeature
from flowmesh.ops.variable_scope import variable_scope


@dataclass(frozen=True)
class SequenceCategoricalColumn(CategoricalColumn):
    """A categorical column read as a sequence: one id per step."""

    categorical_column: CategoricalColumn

    @property
    def name(self) -> str:
        return self.categorical_column.name

    @property
    def is_sequence(self) -> bool:
        return True

    @property
    def num_buckets(self) -> int:
        return self.categorical_column.num_buckets

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        return self.categorical_column.parse_example_spec

    @property
    def parents(self) -> list[Any]:
        return [self.categorical_column]

    def get_ids(self, builder: Builder) -> CategoricalIds:
        return self.categorical_column.get_ids(builder)


def sequence_categorical_column_with_identity(key: str, num_buckets: int,
                                              default_value: int | None = None) -> SequenceCategoricalColumn:
    """A sequence of integer ids in ``[0, num_buckets)``."""
    return SequenceCategoricalColumn(categorical_column_with_identity(key, num_buckets, default_value))


def sequence_categorical_column_with_hash_bucket(key: str, hash_bucket_size: int,
                                                 dtype: Any = dtypes.string) -> SequenceCategoricalColumn:
    """A sequence of values hashed into ``hash_bucket_size`` buckets."""
    return SequenceCategoricalColumn(categorical_column_with_hash_bucket(key, hash_bucket_size, dtype))


def sequence_categorical_column_with_vocabulary_file(key: str, vocabulary_file: str, vocabulary_size: int | None = None,
                                                     num_oov_buckets: int = 0, default_value: int | None = None,
                                                     dtype: Any = dtypes.string) -> SequenceCategoricalColumn:
    """A sequence of values looked up in a vocabulary file."""
    return SequenceCategoricalColumn(categorical_column_with_vocabulary_file(
        key, vocabulary_file, vocabulary_size, num_oov_buckets, default_value, dtype))


def sequence_categorical_column_with_vocabulary_list(key: str, vocabulary_list: Sequence[Any], dtype: Any = None,
                                                     default_value: int = -1,
                                                     num_oov_buckets: int = 0) -> SequenceCategoricalColumn:
    """A sequence of values looked up in ``vocabulary_list``."""
    return SequenceCategoricalColumn(categorical_column_with_vocabulary_list(
        key, vocabulary_list, dtype, default_value, num_oov_buckets))


@dataclass(frozen=True)
class SequenceNumericColumn(FeatureColumn):
    """A sequence of float values of ``shape`` per step."""

    key: str
    shape: tuple[int, ...] = (1,)
    default_value: float = 0.0
    dtype: Any = dtypes.float32
    normalizer_fn: Callable[[Tensor], Tensor] | None = None

    @property
    def name(self) -> str:
        return self.key

    @property
    def is_sequence(self) -> bool:
        return True

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        return {self.key: VarLenFeature(self.dtype)}

    @property
    def variable_shape(self) -> tuple[int, ...]:
        return self.shape

    def get_sequence_dense_tensor(self, builder: Builder, trainable: bool = True) -> tuple[Tensor, Tensor]:
        """``([batch, steps, prod(shape)], sequence_length)``; absent steps hold
        ``default_value``."""
        values = builder.raw(self.key, self.name)
        values = array_ops.reshape(values, array_ops.stack([array_ops.shape(values)[0], -1]))
        mask = builder.sparse_mask(self.key, self.name)
        mask = array_ops.ones_like(values, dtype=dtypes.bool) if mask is None else array_ops.reshape(
            mask, array_ops.shape(values))
        values = cast_ops.cast(values, dtypes.float32)
        if self.normalizer_fn is not None:
            values = self.normalizer_fn(values)
        values = select_ops.where(mask, values, array_ops.fill(array_ops.shape(values), float(self.default_value)))
        width = 1
        for d in self.shape:
            width *= int(d)
        dense = array_ops.reshape(values, array_ops.stack([array_ops.shape(values)[0], -1, width]))
        return dense, sequence_length(mask, width)


def sequence_numeric_column(key: str, shape: Any = (1,), default_value: float = 0.0, dtype: Any = dtypes.float32,
                            normalizer_fn: Callable[[Tensor], Tensor] | None = None) -> SequenceNumericColumn:
    """A sequence of numbers (``shape`` values per step).

    Raises:
        ValueError: a non-numeric dtype. TypeError: a ``normalizer_fn`` that is not callable.
    """
    dtype = dtypes.as_dtype(dtype)
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype!r}, key: {key}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return SequenceNumericColumn(key, shape, default_value, dtype, normalizer_fn)


def sequence_input_layer(features: dict[str, Any], feature_columns: Any, weight_collections: Any = None,
                         trainable: bool = True) -> tuple[Tensor, Tensor]:
    """``(input_layer [batch, steps, sum of widths], sequence_length [batch])`` of sequence
    columns (sequence numeric columns, embedding/indicator columns of sequence categorical
    columns); variables under ``sequence_input_layer/<column>/``. *(flowmesh: TensorFlow 1.x
    has it as ``tf.contrib.feature_column.sequence_input_layer``.)*

    Raises:
        InvalidArgumentError: a column that is not a sequence column.
    """
    from flowmesh.feature_column.input_layer import _add_vars, _columns, _scope_vars

    columns = _columns(feature_columns, "sequence_input_layer")
    for c in columns:
        if not (c.is_sequence and hasattr(c, "get_sequence_dense_tensor")):
            raise InvalidArgumentError(
                f"sequence_input_layer: all feature_columns must be sequence dense columns (sequence_numeric_column "
                f"or an embedding/indicator column of a sequence_categorical_column_with_*); got '{c.name}'")
    builder = Builder(features)
    outputs, lengths = [], []
    with variable_scope(None, default_name="sequence_input_layer", values=list(features.values())):
        for column in columns:
            with variable_scope(None, default_name=column.var_scope_name) as scope:
                before = set(_scope_vars(scope.name))
                dense, length = column.get_sequence_dense_tensor(builder, trainable)
                _add_vars(weight_collections, None, column, [v for v in _scope_vars(scope.name) if v not in before])
                outputs.append(dense)
                lengths.append(length)
        checks = [check_ops.assert_equal(lengths[0], other, message="Column dependencies must have the same "
                                                                    "sequence_length") for other in lengths[1:]]
        with control_dependencies(checks):
            length = array_ops.identity(lengths[0])
        return array_ops.concat(outputs, -1), length


@dataclass(frozen=True)
class SharedEmbeddingColumn(EmbeddingColumn):
    """An embedding column whose ``embedding_weights`` are shared with the other columns of
    ``shared_embedding_collection_name``."""

    shared_embedding_collection_name: str = ""

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def var_scope_name(self) -> str:
        return self.shared_embedding_collection_name

    def embedding_weights(self, trainable: bool) -> Any:
        shape = [self.categorical_column.num_buckets, self.dimension]
        found = get_collection(self.shared_embedding_collection_name)
        if len(found) > 1:
            raise ValueError(f"Collection {self.shared_embedding_collection_name} can only contain one variable; "
                             "choose a unique shared_embedding_collection_name")
        if found:
            if found[0].shape.as_list() != shape:
                raise ValueError(f"Shared embedding collection {self.shared_embedding_collection_name} contains "
                                 f"variable {found[0].name} of shape {found[0].shape}, expected {shape}")
            return found[0]
        params = super().embedding_weights(trainable)
        add_to_collection(self.shared_embedding_collection_name, params)
        return params


def _base_column(column: CategoricalColumn) -> CategoricalColumn:
    while isinstance(column, (WeightedColumn, SequenceCategoricalColumn)):
        column = column.categorical_column
    return column


def shared_embedding_columns(categorical_columns: Sequence[CategoricalColumn], dimension: int,
                             combiner: str = "mean", initializer: Any = None,
                             shared_embedding_collection_name: str | None = None, ckpt_to_load_from: str | None = None,
                             tensor_name_in_ckpt: str | None = None, max_norm: float | None = None,
                             trainable: bool = True, use_safe_embedding_lookup: bool = True) -> list[Any]:
    """Embedding columns of ``categorical_columns`` sharing one embedding table (in the
    given order).

    Raises:
        ValueError: a bad dimension or initializer, one of the checkpoint arguments without
            the other, or columns of different types or bucket counts.
    """
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified.")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be 'mean', 'sqrtn' or 'sum', got {combiner!r}")
    initializer = initializer or truncated_normal_initializer(mean=0.0, stddev=1.0 / math.sqrt(dimension))
    ordered = sorted(categorical_columns, key=lambda c: c.name)
    first = _base_column(ordered[0])
    for column in ordered:
        if not isinstance(column, CategoricalColumn):
            raise ValueError(f"All categorical_columns must be categorical columns. Given: {column}")
        base = _base_column(column)
        if type(base) is not type(first):
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must have the same type; "
                             f"{column} does not match {ordered[0]}")
        if column.num_buckets != ordered[0].num_buckets:
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must have the same number "
                             f"of buckets: {column} has {column.num_buckets}, {ordered[0]} has {ordered[0].num_buckets}")
    collection = shared_embedding_collection_name or "_".join(c.name for c in ordered) + "_shared_embedding"
    return [SharedEmbeddingColumn(column, int(dimension), combiner, initializer, ckpt_to_load_from,
                                  tensor_name_in_ckpt, max_norm, trainable, collection)
            for column in categorical_columns]
