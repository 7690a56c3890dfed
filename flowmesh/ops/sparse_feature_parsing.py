"""``SparseFeature`` in the Example parsers: the spec becomes ``VarLenFeature``s for its index
and value keys, and after parsing their SparseTensors are merged into one whose last
dimensions are the indices' values (TensorFlow's ``_construct_tensors_for_composite_features``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.ops import array_ops, cast_ops
from flowmesh.ops.constant_op import constant
from flowmesh.ops.parsing_config import SparseFeature, VarLenFeature
from flowmesh.ops.sparse_manip_ops import reorder


def _index_keys(spec: SparseFeature) -> list[str]:
    return [spec.index_key] if isinstance(spec.index_key, str) else list(spec.index_key)


def expand(features: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, SparseFeature]]:
    """``features`` without SparseFeatures but with the VarLenFeatures they read, and the
    SparseFeatures by key.

    Raises:
        ValueError: a key read with two different specs, or index keys that do not match ``size``.
    """
    plain = {k: v for k, v in features.items() if not isinstance(v, SparseFeature)}
    sparse = {k: v for k, v in features.items() if isinstance(v, SparseFeature)}
    for key, spec in sparse.items():
        sizes = [spec.size] if isinstance(spec.index_key, str) else list(spec.size)
        if len(sizes) != len(_index_keys(spec)):
            raise ValueError(f"SparseFeature '{key}': {len(_index_keys(spec))} index keys but size "
                             f"{spec.size}")
        wanted = [(k, VarLenFeature(dtypes.int64)) for k in _index_keys(spec)]
        wanted.append((spec.value_key, VarLenFeature(spec.dtype)))
        for name, var in wanted:
            if name in plain and plain[name] != var:
                raise ValueError(f"SparseFeature '{key}': feature '{name}' is also parsed as "
                                 f"{plain[name]}, which conflicts with {var}")
            plain[name] = var
    return plain, sparse


def construct(parsed: dict[str, Any], sparse: Mapping[str, SparseFeature],
              requested: Mapping[str, Any]) -> dict[str, Any]:
    """Builds each SparseFeature's SparseTensor from the parsed index/value tensors and drops
    the helper keys that were not requested."""
    for key, spec in sparse.items():
        ids = [parsed[k] for k in _index_keys(spec)]
        values = parsed[spec.value_key]
        sizes = [spec.size] if isinstance(spec.index_key, str) else list(spec.size)
        columns = [array_ops.expand_dims(cast_ops.cast(i.values, dtypes.int64), 1) for i in ids]
        indices = array_ops.concat([ids[0].indices[:, :-1]] + columns, 1)
        shape = array_ops.concat([ids[0].dense_shape[:-1],
                                  constant([int(s) for s in sizes], dtype=dtypes.int64)], 0)
        merged = SparseTensor(indices, values.values, shape)
        parsed[key] = merged if spec.already_sorted else reorder(merged)
    return {k: v for k, v in parsed.items() if k in requested}
