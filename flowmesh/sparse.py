"""``tf.sparse``: the SparseTensor basics flowmesh has."""

from flowmesh.core.sparse_tensor import SparseTensor, SparseTensorValue
from flowmesh.ops.sparse_ops import sparse_to_dense, to_dense

__all__ = ["SparseTensor", "SparseTensorValue", "sparse_to_dense", "to_dense"]
