"""``tf.type_spec_from_value`` (the spec classes are in :mod:`flowmesh.core.type_spec`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import infer_dtype
from flowmesh.core.graph import Tensor
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.core.type_spec import (
    IndexedSlicesSpec,
    NoneTensorSpec,
    SparseTensorSpec,
    TensorSpec,
    TypeSpec,
)


def type_spec_from_value(value: Any) -> Any:
    """The spec of ``value``: ``TensorSpec`` for a Tensor or array-like, ``SparseTensorSpec``,
    ``IndexedSlicesSpec``, ``NoneTensorSpec`` for ``None``, or a value's own ``_type_spec``.

    Raises:
        TypeError: a value that has no spec (not convertible to a tensor).
    """
    if value is None:
        return NoneTensorSpec()
    if isinstance(value, TypeSpec):
        return value
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value.shape, value.dtype)
    if isinstance(value, IndexedSlices):
        return IndexedSlicesSpec(getattr(value, "shape", None), value.dtype, value.indices.dtype)
    if hasattr(value, "_type_spec"):
        return value._type_spec
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return TensorSpec(value.shape, value.dtype)
    try:
        array = np.asarray(value)
        dtype = infer_dtype(value) if array.dtype == object or array.dtype.kind in "SU" else dtypes.as_dtype(array.dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Could not build a TypeSpec for {value!r} with type {type(value).__name__}") from exc
    return TensorSpec(array.shape, dtype)
