"""Categorical columns: ``categorical_column_with_vocabulary_list`` / ``_vocabulary_file`` /
``_identity`` / ``_hash_bucket`` and ``weighted_categorical_column``.

Out-of-vocabulary values hash into ``num_oov_buckets`` (integers through their decimal
string, as TensorFlow's lookup tables) or get ``default_value`` (-1: dropped); hash buckets
use FarmHash's ``Fingerprint64`` like TensorFlow's ``string_to_hash_bucket_fast``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor, control_dependencies
from flowmesh.errors import InvalidArgumentError
from flowmesh.feature_column._base import (
    Builder,
    CategoricalColumn,
    CategoricalIds,
    categorical_input,
    expand_last,
)
from flowmesh.ops import array_ops, cast_ops, math_ops, select_ops
from flowmesh.ops.constant_op import constant
from flowmesh.ops.logging_ops import Assert
from flowmesh.ops.parsing_config import VarLenFeature
from flowmesh.ops.reduction_ops import argmax, reduce_all, reduce_any
from flowmesh.ops.string_ops import as_string, string_to_hash_bucket_fast


def _hash(values: Tensor, buckets: int) -> Tensor:
    strings = values if values.dtype == dtypes.string else as_string(values)
    return string_to_hash_bucket_fast(strings, buckets)


@dataclass(frozen=True)
class VocabularyColumn(CategoricalColumn):
    """Ids by position in ``vocabulary`` (from a list or a file)."""

    key: str
    vocabulary: tuple[Any, ...]
    dtype: Any
    default_value: int
    num_oov_buckets: int
    vocabulary_file: str | None = None

    @property
    def name(self) -> str:
        return self.key

    @property
    def num_buckets(self) -> int:
        return len(self.vocabulary) + self.num_oov_buckets

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        return {self.key: VarLenFeature(self.dtype)}

    def get_ids(self, builder: Builder) -> CategoricalIds:
        def make() -> CategoricalIds:
            x, present = categorical_input(builder, self.key, self.name, self.dtype)
            vocab = constant(list(self.vocabulary), dtype=x.dtype)
            eq = math_ops.equal(expand_last(x), vocab)
            found = reduce_any(eq, -1)
            index = argmax(cast_ops.cast(eq, dtypes.int32), -1, output_type=dtypes.int64)
            if self.num_oov_buckets:
                missing = _hash(x, self.num_oov_buckets) + len(self.vocabulary)
            else:
                missing = array_ops.fill(array_ops.shape(x), constant(self.default_value, dtypes.int64))
            ids = select_ops.where(found, index, missing)
            return CategoricalIds(ids, present)
        return builder.get(self, make)


def _vocab_dtype(values: list[Any], dtype: Any) -> Any:
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    return dtypes.string if isinstance(values[0], (str, bytes)) else dtypes.int64


def _check_vocab(key: str, values: list[Any], default_value: int, num_oov: int) -> None:
    if not values:
        raise InvalidArgumentError(f"vocabulary of column '{key}' is empty")
    if len(set(values)) != len(values):
        dup = sorted({v for v in values if values.count(v) > 1}, key=str)
        raise InvalidArgumentError(f"vocabulary of column '{key}' has duplicates: {dup}")
    if num_oov < 0:
        raise InvalidArgumentError(f"column '{key}': num_oov_buckets must be >= 0, got {num_oov}")
    if num_oov and default_value != -1:
        raise InvalidArgumentError(f"column '{key}': give default_value or num_oov_buckets, not both")


def categorical_column_with_vocabulary_list(key: str, vocabulary_list: Any, dtype: Any = None,
                                            default_value: int = -1,
                                            num_oov_buckets: int = 0) -> VocabularyColumn:
    """Ids of ``key``'s values by their position in ``vocabulary_list``."""
    values = list(vocabulary_list)
    _check_vocab(key, values, default_value, num_oov_buckets)
    dtype = _vocab_dtype(values, dtype)
    return VocabularyColumn(key, tuple(values), dtype, int(default_value), int(num_oov_buckets))


def categorical_column_with_vocabulary_file(key: str, vocabulary_file: str,
                                            vocabulary_size: int | None = None,
                                            num_oov_buckets: int = 0, default_value: int | None = None,
                                            dtype: Any = dtypes.string) -> VocabularyColumn:
    """Ids of ``key``'s values by line number in ``vocabulary_file`` (first
    ``vocabulary_size`` lines)."""
    from flowmesh import gfile

    if not vocabulary_file:
        raise InvalidArgumentError(f"column '{key}': vocabulary_file must be a path")
    with gfile.GFile(vocabulary_file, "r") as f:
        lines = [line.rstrip("\n").rstrip("\r") for line in f]
    if vocabulary_size is not None:
        if vocabulary_size > len(lines):
            raise InvalidArgumentError(
                f"column '{key}': vocabulary_size {vocabulary_size} is larger than the "
                f"{len(lines)} lines of {vocabulary_file}")
        lines = lines[:vocabulary_size]
    dtype = dtypes.as_dtype(dtype)
    values: list[Any] = [int(v) for v in lines] if dtype.is_integer else lines
    default = -1 if default_value is None else int(default_value)
    _check_vocab(key, values, default, num_oov_buckets)
    return VocabularyColumn(key, tuple(values), dtype, default, int(num_oov_buckets),
                            vocabulary_file)


@dataclass(frozen=True)
class IdentityColumn(CategoricalColumn):
    """Integer values used as ids in ``[0, num_buckets)``."""

    key: str
    buckets: int
    default_value: int | None

    @property
    def name(self) -> str:
        return self.key

    @property
    def num_buckets(self) -> int:
        return self.buckets

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        return {self.key: VarLenFeature(dtypes.int64)}

    def get_ids(self, builder: Builder) -> CategoricalIds:
        def make() -> CategoricalIds:
            x, present = categorical_input(builder, self.key, self.name, dtypes.int64)
            inside = math_ops.logical_and(math_ops.greater_equal(x, 0), math_ops.less(x, self.buckets))
            if self.default_value is not None:
                ids = select_ops.where(inside, x, array_ops.fill(
                    array_ops.shape(x), constant(self.default_value, dtypes.int64)))
                return CategoricalIds(ids, present)
            ok = reduce_all(math_ops.logical_or(inside, math_ops.logical_not(present)))
            check = Assert(ok, [f"categorical_column_with_identity '{self.key}': ids must be in "
                                f"[0, {self.buckets}); give default_value to map others", x])
            with control_dependencies([check]):
                return CategoricalIds(array_ops.identity(x), present)
        return builder.get(self, make)


def categorical_column_with_identity(key: str, num_buckets: int,
                                    default_value: int | None = None) -> IdentityColumn:
    """Integer feature ``key`` used directly as ids in ``[0, num_buckets)``."""
    if num_buckets < 1:
        raise InvalidArgumentError(f"column '{key}': num_buckets must be >= 1, got {num_buckets}")
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise InvalidArgumentError(
            f"column '{key}': default_value {default_value} not in [0, {num_buckets})")
    return IdentityColumn(key, int(num_buckets), default_value)


@dataclass(frozen=True)
class HashedColumn(CategoricalColumn):
    """Ids ``Fingerprint64(value) % hash_bucket_size`` (integers through their string)."""

    key: str
    hash_bucket_size: int
    dtype: Any = dtypes.string

    @property
    def name(self) -> str:
        return self.key

    @property
    def num_buckets(self) -> int:
        return self.hash_bucket_size

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        return {self.key: VarLenFeature(self.dtype)}

    def get_ids(self, builder: Builder) -> CategoricalIds:
        def make() -> CategoricalIds:
            x, present = categorical_input(builder, self.key, self.name, self.dtype)
            return CategoricalIds(_hash(x, self.hash_bucket_size), present)
        return builder.get(self, make)


def categorical_column_with_hash_bucket(key: str, hash_bucket_size: int,
                                        dtype: Any = dtypes.string) -> HashedColumn:
    """Ids of ``key``'s values hashed into ``hash_bucket_size`` buckets."""
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise InvalidArgumentError(f"column '{key}': hash_bucket_size must be > 1, got {hash_bucket_size}")
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.string and not dtype.is_integer:
        raise InvalidArgumentError(f"column '{key}': dtype must be string or integer, got {dtype.name}")
    return HashedColumn(key, int(hash_bucket_size), dtype)


@dataclass(frozen=True)
class WeightedColumn(CategoricalColumn):
    """A categorical column whose ids carry the weights of feature ``weight_feature_key``."""

    categorical_column: CategoricalColumn
    weight_feature_key: str
    dtype: Any = dtypes.float32

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def parents(self) -> list[Any]:
        return [self.categorical_column]

    @property
    def num_buckets(self) -> int:
        return self.categorical_column.num_buckets

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        spec = dict(self.categorical_column.parse_example_spec)
        spec[self.weight_feature_key] = VarLenFeature(self.dtype)
        return spec

    def get_ids(self, builder: Builder) -> CategoricalIds:
        def make() -> CategoricalIds:
            inner = self.categorical_column.get_ids(builder)
            w = cast_ops.cast(builder.raw(self.weight_feature_key, self.name), dtypes.float32)
            if w.shape.ndims is not None and inner.ids.shape.ndims is not None \
                    and not w.shape.is_compatible_with(inner.ids.shape):
                raise InvalidArgumentError(
                    f"weighted_categorical_column '{self.name}': weights '{self.weight_feature_key}' "
                    f"of shape {w.shape} must match the ids of shape {inner.ids.shape}")
            mask = math_ops.logical_and(inner.mask, math_ops.not_equal(w, 0.0))
            return CategoricalIds(inner.ids, mask, w)
        return builder.get(self, make)


def weighted_categorical_column(categorical_column: CategoricalColumn, weight_feature_key: str,
                                dtype: Any = dtypes.float32) -> WeightedColumn:
    """Weights ``categorical_column``'s ids by feature ``weight_feature_key``."""
    if not isinstance(categorical_column, CategoricalColumn):
        raise InvalidArgumentError(
            f"weighted_categorical_column needs a categorical column, got {categorical_column!r}")
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating and not dtype.is_integer:
        raise InvalidArgumentError(f"weighted_categorical_column: dtype must be numeric, got {dtype.name}")
    return WeightedColumn(categorical_column, weight_feature_key, dtype)
