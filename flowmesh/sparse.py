# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.sparse`` (``tf.compat.v1.sparse``): SparseTensor construction, structure and math."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "sparse")

__all__ = [
    "SparseConditionalAccumulator", "SparseTensor", "SparseTensorValue", "add", "bincount", "concat", "cross", "cross_hashed", "expand_dims", "eye", "fill_empty_rows",
    "from_dense", "mask", "matmul", "maximum", "merge", "minimum", "placeholder", "reduce_max",
    "reduce_max_sparse", "reduce_sum", "reduce_sum_sparse", "reorder", "reset_shape", "reshape", "retain",
    "segment_mean", "segment_sqrt_n", "segment_sum", "slice", "softmax", "sparse_dense_matmul",
    "sparse_to_dense", "split", "to_dense", "to_indicator", "transpose",
]
