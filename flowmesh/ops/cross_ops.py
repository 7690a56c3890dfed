"""``FeatureCrossHashed`` *(flowmesh)*: TensorFlow's hashed feature cross on padded inputs.

TensorFlow crosses ``SparseTensor``s with ``SparseCrossHashed``; flowmesh's feature columns
carry categorical values as a dense ``[batch, n]`` tensor plus a boolean mask of the
present entries. This op takes k such pairs and returns, per row, every combination of
present values (row-major over the inputs, as TensorFlow's permutations), hashed with
``FingerprintCat64`` chains from ``hash_key`` (strings hash with ``Fingerprint64``; int64
values enter as themselves), modulo ``num_buckets`` (>= 1): ids ``[batch, n_1*...*n_k]`` and
their mask.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import make_op

DEFAULT_HASH_KEY = 0xDECAFCAFFE


def _cross_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    k = len(inputs) // 2
    batch = inputs[0].shape.dims[0] if inputs[0].shape.ndims else None
    width: Any = 1
    for t in inputs[:k]:
        if t.shape.ndims != 2:
            raise InvalidArgumentError(f"FeatureCrossHashed: values must be [batch, n], got {t.shape}")
        n = t.shape.dims[1]
        n = getattr(n, "value", n)
        width = None if (width is None or n is None) else width * n
    shape = TensorShape([batch, width])
    return [(dtypes.int64, shape), (dtypes.bool, shape)]


register_op("FeatureCrossHashed", _cross_shape, not_differentiable=True)


def feature_cross_hashed(values: Sequence[Tensor], masks: Sequence[Tensor], num_buckets: int,
                         hash_key: int | None = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The hashed cross of ``values`` (each ``[batch, n_i]``, string or int64) whose present
    entries are ``masks``: ``(ids, mask)`` of shape ``[batch, prod(n_i)]``."""
    if len(values) != len(masks) or len(values) < 2:
        raise InvalidArgumentError("feature_cross_hashed needs at least two (values, mask) pairs")
    for v in values:
        if v.dtype not in (dtypes.string, dtypes.int64):
            raise TypeError(f"feature_cross_hashed: {v.name} must be string or int64, got {v.dtype.name}")
    if int(num_buckets) < 1:
        raise InvalidArgumentError(f"feature_cross_hashed: num_buckets must be >= 1, got {num_buckets}")
    attrs = {"num_buckets": int(num_buckets),
             "hash_key": DEFAULT_HASH_KEY if hash_key is None else int(hash_key)}
    op = make_op("FeatureCrossHashed", list(values) + list(masks), attrs,
                 name=name or "FeatureCrossHashed")
    return op.outputs[0], op.outputs[1]


# --- SparseCross (tf.sparse.cross / cross_hashed) --------------------------------------------
def _sparse_cross_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    out = dtypes.int64 if attrs["hashed_output"] else dtypes.string
    return [(dtypes.int64, TensorShape([None, 2])), (out, TensorShape([None])), (dtypes.int64, TensorShape([2]))]


register_op("SparseCross", _sparse_cross_shape, not_differentiable=True)


def _cross(inputs: Sequence[Any], hashed: bool, num_buckets: int, hash_key: int | None, name: str) -> Any:
    from flowmesh.core.convert import convert_to_tensor
    from flowmesh.core.sparse_tensor import SparseTensor

    sparse = [x for x in inputs if isinstance(x, SparseTensor) or hasattr(x, "dense_shape")]
    dense = [convert_to_tensor(x) for x in inputs if not (isinstance(x, SparseTensor) or hasattr(x, "dense_shape"))]
    sparse = [SparseTensor.from_value(s) for s in sparse]
    for t in [s.values for s in sparse] + dense:
        if t.dtype not in (dtypes.string, dtypes.int64):
            raise TypeError(f"sparse.cross: inputs must be string or int64, got {t.dtype.name} ({t.name})")
    if not sparse and not dense:
        raise InvalidArgumentError("sparse.cross: needs at least one input")
    attrs = {"N": len(sparse), "hashed_output": hashed, "num_buckets": int(num_buckets),
             "hash_key": DEFAULT_HASH_KEY if hash_key is None else int(hash_key)}
    flat = [s.indices for s in sparse] + [s.values for s in sparse] + [s.dense_shape for s in sparse] + dense
    op = make_op("SparseCross", flat, attrs, name=name)
    return SparseTensor(*op.outputs)


def sparse_cross(inputs: Sequence[Any], name: str | None = None, separator: str | None = None) -> Any:
    """``tf.sparse.cross``: per row, every combination of the inputs' values joined by ``_X_``
    (SparseTensors first, then dense ``[batch, n]`` tensors, as TensorFlow orders them)."""
    if separator not in (None, "_X_"):
        raise InvalidArgumentError(f"sparse.cross: only the separator '_X_' is supported, got {separator!r}")
    return _cross(inputs, False, 0, None, name or "SparseCross")


def sparse_cross_hashed(inputs: Sequence[Any], num_buckets: int = 0, hash_key: int | None = None,
                        name: str | None = None) -> Any:
    """``tf.sparse.cross_hashed``: the crosses as FingerprintCat64 hashes (mod ``num_buckets``
    when > 0)."""
    return _cross(inputs, True, num_buckets, hash_key, name or "SparseCrossHashed")
