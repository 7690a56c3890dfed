"""``tf.sparse`` (``tf.compat.v1.sparse``): SparseTensor construction, structure and math."""

from flowmesh.core.sparse_tensor import SparseTensor, SparseTensorValue
from flowmesh.ops.conditional_accumulator import SparseConditionalAccumulator
from flowmesh.ops.cross_ops import sparse_cross as cross
from flowmesh.ops.cross_ops import sparse_cross_hashed as cross_hashed
from flowmesh.ops.sparse_count_ops import bincount
from flowmesh.ops.sparse_manip_ops import (
    concat,
    expand_dims,
    eye,
    fill_empty_rows,
    from_dense,
    mask,
    merge,
    reorder,
    reset_shape,
    reshape,
    retain,
    slice,
    split,
    to_indicator,
    transpose,
)
from flowmesh.ops.sparse_math_ops import (
    add,
    maximum,
    minimum,
    reduce_max,
    reduce_max_sparse,
    reduce_sum,
    reduce_sum_sparse,
    segment_mean,
    segment_sqrt_n,
    segment_sum,
    softmax,
    sparse_dense_matmul,
)
from flowmesh.ops.sparse_ops import sparse_to_dense, to_dense
from flowmesh.ops.sparse_placeholder import placeholder

matmul = sparse_dense_matmul

__all__ = [
    "SparseConditionalAccumulator", "SparseTensor", "SparseTensorValue", "add", "bincount", "concat", "cross", "cross_hashed", "expand_dims", "eye", "fill_empty_rows",
    "from_dense", "mask", "matmul", "maximum", "merge", "minimum", "placeholder", "reduce_max",
    "reduce_max_sparse", "reduce_sum", "reduce_sum_sparse", "reorder", "reset_shape", "reshape", "retain",
    "segment_mean", "segment_sqrt_n", "segment_sum", "slice", "softmax", "sparse_dense_matmul",
    "sparse_to_dense", "split", "to_dense", "to_indicator", "transpose",
]
