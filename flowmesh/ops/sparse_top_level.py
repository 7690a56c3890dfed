"""TensorFlow 1.x's top-level ``tf.sparse_*`` spellings of the ``tf.sparse`` functions, with
``tf.convert_to_tensor_or_sparse_tensor`` and ``tf.sparse_matmul``."""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.ops import sparse_manip_ops as _manip
from flowmesh.ops import sparse_math_ops as _math
from flowmesh.ops import sparse_placeholder as _placeholder
from flowmesh.ops.linalg_ops import matmul

sparse_add = _math.add
sparse_placeholder = _placeholder.placeholder
sparse_concat = _manip.concat
sparse_fill_empty_rows = _manip.fill_empty_rows
sparse_mask = _manip.mask
sparse_maximum = _math.maximum
sparse_merge = _manip.merge
sparse_minimum = _math.minimum
sparse_reduce_max = _math.reduce_max
sparse_reduce_max_sparse = _math.reduce_max_sparse
sparse_reduce_sum = _math.reduce_sum
sparse_reduce_sum_sparse = _math.reduce_sum_sparse
sparse_reorder = _manip.reorder
sparse_reset_shape = _manip.reset_shape
sparse_reshape = _manip.reshape
sparse_retain = _manip.retain
sparse_segment_mean = _math.segment_mean
sparse_segment_sqrt_n = _math.segment_sqrt_n
sparse_segment_sum = _math.segment_sum
sparse_slice = _manip.slice
sparse_softmax = _math.softmax
sparse_split = _manip.split
sparse_tensor_dense_matmul = _math.sparse_dense_matmul
sparse_to_indicator = _manip.to_indicator
sparse_transpose = _manip.transpose

def convert_to_tensor_or_sparse_tensor(value: Any, dtype: Any = None, name: str | None = None) -> Any:
    """``tf.convert_to_tensor_or_sparse_tensor``: SparseTensors (and values) as SparseTensors,
    anything else through ``convert_to_tensor``."""
    from flowmesh.core.convert import convert_to_tensor
    from flowmesh.core.sparse_tensor import SparseTensor

    if isinstance(value, SparseTensor) or hasattr(value, "dense_shape") and hasattr(value, "indices") \
            and not hasattr(value, "device_spec") and type(value).__name__ == "SparseTensorValue":
        sp = SparseTensor.from_value(value)
        if dtype is not None and sp.dtype != dtype:
            raise TypeError(f"convert_to_tensor_or_sparse_tensor: SparseTensor of {sp.dtype.name} "
                            f"requested as {dtype}")
        return sp
    return convert_to_tensor(value, dtype=dtype, name=name)


def sparse_matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
                  a_is_sparse: bool = False, b_is_sparse: bool = False, name: str | None = None) -> Tensor:
    """``tf.sparse_matmul``: a dense matmul (the sparsity flags are TensorFlow's CPU hints)."""

    return matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b, name=name)


__all__ = [n for n in dir() if n.startswith("sparse_")] + ["convert_to_tensor_or_sparse_tensor"]
