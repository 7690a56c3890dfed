"""``tf.sparse`` arithmetic: add, sparse x dense matmul, reduce_sum/max (+ ``_sparse``),
maximum/minimum, softmax and the sparse segment reductions.

Graph ops with TensorFlow's names and gradients (``SparseAdd``/``SparseAddGrad``,
``SparseTensorDenseAdd``, ``SparseTensorDenseMatMul``, ``SparseReduceSum``, ``SparseSoftmax``);
kernels in ``kernels/sparse_math_ops.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, gather_ops, math_ops, reduction_ops, segment_ops
from flowmesh.ops._builders import constant_value, make_op, make_tensor, shape_from_tensor
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.nd_index_ops import gather_nd
from flowmesh.ops.range_ops import range as tf_range
from flowmesh.ops.select_ops import where
from flowmesh.ops.sparse_ops import as_sparse


def _sparse_out(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    rank = inputs[2].shape.as_list()[0] if inputs[2].shape.rank else None
    return [(dtypes.int64, TensorShape([None, rank])), (inputs[1].dtype, unknown_shape(1)),
            (dtypes.int64, inputs[2].shape)]


# --- add -------------------------------------------------------------------------------------
def _add_grad(op: Operation, _gi: Any, grad: Tensor, _gs: Any) -> list[Any]:
    a_grad, b_grad = make_op("SparseAddGrad", [grad, op.inputs[0], op.inputs[3], op.outputs[0]]).outputs
    return [None, a_grad, None, None, b_grad, None, None]


register_op("SparseAdd", _sparse_out, grad=_add_grad)
register_op("SparseAddGrad", lambda i, a: [(i[0].dtype, TensorShape([i[1].shape.as_list()[0] if i[1].shape.rank else None])),
                                           (i[0].dtype, TensorShape([i[2].shape.as_list()[0] if i[2].shape.rank else None]))],
            not_differentiable=True)
register_op("SparseTensorDenseAdd", lambda i, a: [(i[3].dtype, i[3].shape)],
            grad=lambda op, g: [None, gather_nd(g, op.inputs[0]), None, g])


def add(a: Any, b: Any, threshold: Any = None, thresh: Any = None) -> Any:
    """``tf.sparse.add``: sparse + sparse (a SparseTensor; summed entries with magnitude below
    ``threshold`` dropped) or sparse + dense (a dense tensor)."""
    from flowmesh.core.sparse_tensor import SparseTensor

    a_sparse, b_sparse = _is_sparse(a), _is_sparse(b)
    if not (a_sparse or b_sparse):
        raise TypeError("sparse.add: at least one operand must be a SparseTensor")
    if a_sparse and b_sparse:
        a, b = as_sparse(a, "sparse.add"), as_sparse(b, "sparse.add")
        limit = threshold if threshold is not None else (thresh if thresh is not None else 0)
        limit = convert_to_tensor(limit, dtype=a.dtype.real_dtype if hasattr(a.dtype, "real_dtype") else a.dtype)
        op = make_op("SparseAdd", [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape, limit],
                     name="SparseAdd")
        return SparseTensor(*op.outputs)
    sp, dense = (as_sparse(a, "sparse.add"), b) if a_sparse else (as_sparse(b, "sparse.add"), a)
    dense = convert_to_tensor(dense, dtype=sp.dtype, name="b")
    return make_tensor("SparseTensorDenseAdd", [sp.indices, sp.values, sp.dense_shape, dense],
                       name="SparseTensorDenseAdd")


def _is_sparse(x: Any) -> bool:
    return all(hasattr(x, n) for n in ("indices", "values", "dense_shape")) and not hasattr(x, "device_spec")


# --- sparse x dense matmul -------------------------------------------------------------------
def _matmul_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    a_dims = shape_from_tensor(inputs[2])
    a = a_dims.as_list() if a_dims.rank == 2 else [None, None]
    b = inputs[3].shape.as_list() if inputs[3].shape.rank == 2 else [None, None]
    if inputs[3].shape.rank not in (None, 2):
        raise InvalidArgumentError(f"SparseTensorDenseMatMul: B must be a matrix, got shape {inputs[3].shape}")
    m, k = (a[1], a[0]) if attrs.get("adjoint_a") else (a[0], a[1])
    kb, n = (b[1], b[0]) if attrs.get("adjoint_b") else (b[0], b[1])
    if k is not None and kb is not None and k != kb:
        raise InvalidArgumentError(f"SparseTensorDenseMatMul: cannot multiply A of dense shape {a} "
                                   f"(adjoint_a={attrs.get('adjoint_a')}) by B of shape {b} "
                                   f"(adjoint_b={attrs.get('adjoint_b')}): inner dimensions {k} != {kb}")
    return [(inputs[3].dtype, TensorShape([m, n]))]


def _matmul_grad(op: Operation, grad: Tensor) -> list[Any]:
    ind, _, shape, b = op.inputs
    adj_a, adj_b = bool(op.attrs.get("adjoint_a")), bool(op.attrs.get("adjoint_b"))
    b_grad = make_tensor("SparseTensorDenseMatMul", [ind, op.inputs[1], shape, grad],
                         {"adjoint_a": not adj_a, "adjoint_b": False})
    if adj_b:
        b_grad = array_ops.transpose(b_grad)
    rows, cols = (ind[:, 1], ind[:, 0]) if adj_a else (ind[:, 0], ind[:, 1])
    right = array_ops.transpose(b) if adj_b else b
    a_grad = reduction_ops.reduce_sum(gather_ops.gather(grad, rows) * gather_ops.gather(right, cols), axis=1)
    return [None, a_grad, None, b_grad]


register_op("SparseTensorDenseMatMul", _matmul_shape, grad=_matmul_grad)


def sparse_dense_matmul(sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False,
                        name: str | None = None) -> Tensor:
    """``tf.sparse.sparse_dense_matmul``: SparseTensor (rank 2) times a dense matrix."""
    sp = as_sparse(sp_a, "sparse.sparse_dense_matmul")
    b = convert_to_tensor(b, dtype=sp.dtype, name="b")
    return make_tensor("SparseTensorDenseMatMul", [sp.indices, sp.values, sp.dense_shape, b],
                       {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)},
                       name=name or "SparseTensorDenseMatMul")


# --- reductions ------------------------------------------------------------------------------
def _reduce_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    dims, axes = constant_value(inputs[2]), constant_value(inputs[3])
    if dims is None or axes is None:
        return [(inputs[1].dtype, unknown_shape())]
    rank = len(dims)
    ax = {int(a) % rank for a in axes.reshape(-1)} if axes.size else set(range(rank))
    keep = attrs.get("keep_dims", False)
    out = [1 if d in ax else int(dims[d]) for d in range(rank)] if keep else \
        [int(dims[d]) for d in range(rank) if d not in ax]
    return [(inputs[1].dtype, TensorShape(out))]


def _reduce_sum_grad(op: Operation, grad: Tensor) -> list[Any]:
    ind, _, shape, axes = op.inputs
    kept_shape = _kept(shape, axes)
    scale = shape // kept_shape
    return [None, gather_nd(array_ops.reshape(grad, kept_shape), ind // scale), None, None]


def _kept(shape: Tensor, axes: Tensor) -> Tensor:
    """``shape`` with the reduced ``axes`` set to 1 (int64)."""

    rank = array_ops.shape(shape, out_type=dtypes.int64)[0]
    axes = (cast(axes, dtypes.int64) + rank) % rank
    hit = math_ops.equal(array_ops.expand_dims(_iota(rank), 1), array_ops.expand_dims(axes, 0))
    return where(reduction_ops.reduce_any(hit, axis=1), array_ops.ones_like(shape), shape)


def _iota(n: Tensor) -> Tensor:
    return tf_range(n, dtype=dtypes.int64)


register_op("SparseReduceSum", _reduce_shape, grad=_reduce_sum_grad)
register_op("SparseReduceMax", _reduce_shape, not_differentiable=True)
register_op("SparseReduceSumSparse", _sparse_out, not_differentiable=True)
register_op("SparseReduceMaxSparse", _sparse_out, not_differentiable=True)


def _reduce(op_type: str, sparse_out: bool, default_name: str):
    def reduce_fn(sp_input: Any, axis: Any = None, keepdims: Any = None, reduction_axes: Any = None,
                  keep_dims: Any = None, output_is_sparse: bool = False, name: str | None = None) -> Any:
        sp = as_sparse(sp_input, default_name)
        axes = axis if axis is not None else reduction_axes
        keep = bool(keepdims if keepdims is not None else keep_dims)
        axes_t = convert_to_tensor([] if axes is None else axes, dtype=dtypes.int32, name="reduction_axes")
        if axes is None:
            axes_t = cast(_iota(array_ops.shape(sp.dense_shape, out_type=dtypes.int64)[0]), dtypes.int32)
        op = make_op(op_type, [sp.indices, sp.values, sp.dense_shape, axes_t], {"keep_dims": keep},
                     name=name or op_type)
        if sparse_out:
            return type(sp)(*op.outputs)
        return op.outputs[0]

    reduce_fn.__name__ = default_name.rsplit(".", 1)[-1]
    reduce_fn.__doc__ = f"``tf.{default_name}`` over the SparseTensor's present values."
    return reduce_fn


reduce_sum = _reduce("SparseReduceSum", False, "sparse.reduce_sum")
reduce_max = _reduce("SparseReduceMax", False, "sparse.reduce_max")
reduce_sum_sparse = _reduce("SparseReduceSumSparse", True, "sparse.reduce_sum_sparse")
reduce_max_sparse = _reduce("SparseReduceMaxSparse", True, "sparse.reduce_max_sparse")


# --- elementwise maximum / minimum, softmax ---------------------------------------------------
def _pair_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return _sparse_out(inputs, attrs)[:2]


register_op("SparseSparseMaximum", _pair_shape, not_differentiable=True)
register_op("SparseSparseMinimum", _pair_shape, not_differentiable=True)


def _pairwise(op_type: str, doc: str):
    def fn(sp_a: Any, sp_b: Any, name: str | None = None) -> Any:
        a, b = as_sparse(sp_a, doc), as_sparse(sp_b, doc)
        op = make_op(op_type, [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape],
                     name=name or op_type)
        return type(a)(op.outputs[0], op.outputs[1], a.dense_shape)

    fn.__doc__ = f"``tf.{doc}``: elementwise over the union of entries (absent entries are 0)."
    return fn


maximum = _pairwise("SparseSparseMaximum", "sparse.maximum")
minimum = _pairwise("SparseSparseMinimum", "sparse.minimum")


def _softmax_grad(op: Operation, grad: Tensor) -> list[Any]:
    ind, _, shape = op.inputs
    out = op.outputs[0]
    prod = make_tensor("SparseReduceSum", [ind, out * grad, shape, convert_to_tensor([-1])], {"keep_dims": False})
    return [None, (grad - gather_nd(prod, ind[:, :-1])) * out, None]


register_op("SparseSoftmax", lambda i, a: [(i[1].dtype, i[1].shape)], grad=_softmax_grad)


def softmax(sp_input: Any, name: str | None = None) -> Any:
    """``tf.sparse.softmax``: softmax over the present entries of each innermost row."""
    sp = as_sparse(sp_input, "sparse.softmax")
    values = make_tensor("SparseSoftmax", [sp.indices, sp.values, sp.dense_shape], name=name or "SparseSoftmax")
    return type(sp)(sp.indices, values, sp.dense_shape)


# --- sparse segment reductions ----------------------------------------------------------------
def _segment(kind: str):
    def fn(data: Any, indices: Any, segment_ids: Any, name: str | None = None, num_segments: Any = None,
           sparse_gradient: bool = False) -> Tensor:
        rows = gather_ops.gather(convert_to_tensor(data, name="data"), indices)
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        if num_segments is None:
            num_segments = reduction_ops.reduce_max(ids) + 1
        total = segment_ops.unsorted_segment_sum(rows, ids, num_segments)
        if kind == "sum":
            return array_ops.identity(total, name=name)
        ones = array_ops.ones_like(ids, dtype=rows.dtype)
        count = math_ops.maximum(segment_ops.unsorted_segment_sum(ones, ids, num_segments), 1)
        count = math_ops.sqrt(count) if kind == "sqrt_n" else count
        shape = array_ops.concat([array_ops.shape(count), array_ops.ones_like(array_ops.shape(rows)[1:])], 0)
        return math_ops.divide(total, array_ops.reshape(count, shape), name=name)

    fn.__doc__ = f"``tf.sparse.segment_{kind}``: segment {kind} of ``data[indices]``."
    return fn


segment_sum = _segment("sum")
segment_mean = _segment("mean")
segment_sqrt_n = _segment("sqrt_n")
