"""``crossed_column``: hashed crosses of raw string/integer features and categorical columns,
with TensorFlow's ``SparseCrossHashed`` hashing (so the same bucket ids).

As in TensorFlow, a raw feature key enters the cross with every value (a dense input is not
converted to sparse, so ``''`` and ``-1`` are crossed too), and the sparse inputs
(categorical columns, SparseTensor features) come first in the cross, dense raw keys after.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError
from flowmesh.feature_column._base import Builder, CategoricalColumn, CategoricalIds
from flowmesh.feature_column.categorical import HashedColumn
from flowmesh.ops import array_ops, cast_ops
from flowmesh.ops.cross_ops import feature_cross_hashed
from flowmesh.ops.parsing_config import VarLenFeature


def _key_name(key: Any) -> str:
    return key if isinstance(key, str) else key.name


@dataclass(frozen=True)
class CrossedColumn(CategoricalColumn):
    """The cross of ``keys`` hashed into ``hash_bucket_size`` buckets."""

    keys: tuple[Any, ...]
    hash_bucket_size: int
    hash_key: int | None = None

    @property
    def name(self) -> str:
        return "_X_".join(sorted(_key_name(k) for k in self.keys))

    @property
    def parents(self) -> list[Any]:
        return [k for k in self.keys if not isinstance(k, str)]

    @property
    def num_buckets(self) -> int:
        return self.hash_bucket_size

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {}
        for key in self.keys:
            if isinstance(key, str):
                spec[key] = VarLenFeature(dtypes.string)
            else:
                spec.update(key.parse_example_spec)
        return spec

    def _leaf(self, key: Any, builder: Builder) -> tuple[Any, Any]:
        if isinstance(key, str):
            x = builder.raw(key, self.name)
            if x.shape.ndims != 2:
                x = array_ops.reshape(x, [array_ops.shape(x)[0], -1])
            if x.dtype != dtypes.string:
                x = cast_ops.cast(x, dtypes.int64)
            mask = builder.sparse_mask(key, self.name)
            if mask is not None:
                return x, array_ops.reshape(mask, array_ops.shape(x))
            return x, array_ops.fill(array_ops.shape(x), True)
        ids = key.get_ids(builder)
        return ids.ids, ids.mask

    def get_ids(self, builder: Builder) -> CategoricalIds:
        def make() -> CategoricalIds:
            # TensorFlow's sparse_cross takes its sparse inputs (categorical ids, SparseTensor
            # features) first, then the dense features, each group in the given order.
            def dense(k: Any) -> bool:
                return isinstance(k, str) and builder.sparse_mask(k, self.name) is None

            ordered = [k for k in self.keys if not dense(k)] + [k for k in self.keys if dense(k)]
            leaves = [self._leaf(k, builder) for k in ordered]
            ids, mask = feature_cross_hashed([v for v, _ in leaves], [m for _, m in leaves],
                                             self.hash_bucket_size, self.hash_key)
            return CategoricalIds(ids, mask)
        return builder.get(self, make)


def crossed_column(keys: Any, hash_bucket_size: int, hash_key: int | None = None) -> CrossedColumn:
    """Crosses ``keys`` (feature names or categorical columns, at least two) into
    ``hash_bucket_size`` buckets."""
    keys = tuple(keys)
    if len(keys) < 2:
        raise InvalidArgumentError(f"crossed_column needs at least 2 keys, got {len(keys)}: {keys}")
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise InvalidArgumentError(f"crossed_column: hash_bucket_size must be > 1, got {hash_bucket_size}")
    for key in keys:
        if isinstance(key, HashedColumn):
            raise InvalidArgumentError(
                f"crossed_column does not take categorical_column_with_hash_bucket ('{key.name}'); "
                "cross the raw feature key instead")
        if not isinstance(key, (str, CategoricalColumn)):
            raise InvalidArgumentError(
                f"crossed_column keys must be strings or categorical columns, got {key!r}")
    return CrossedColumn(keys, int(hash_bucket_size), hash_key)
