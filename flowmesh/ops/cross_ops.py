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
