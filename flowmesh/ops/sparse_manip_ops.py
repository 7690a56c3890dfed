"""``tf.sparse`` structure ops: from_dense, reorder, reshape, transpose, concat, slice, split,
retain, reset_shape, fill_empty_rows, expand_dims, eye, to_indicator, merge, mask.

Graph ops (``SparseReorder``, ``SparseReshape``, ``SparseSlice``, ``SparseConcat``,
``SparseSplit``, ``SparseFillEmptyRows``) have kernels in ``kernels/sparse_manip_ops.py``;
the rest compose dense ops as TensorFlow's Python does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.ops import array_ops, cast_ops, gather_ops, math_ops, range_ops, reduction_ops, select_ops
from flowmesh.ops._builders import constant_value, make_op, shape_from_tensor
from flowmesh.ops.nd_index_ops import gather_nd
from flowmesh.ops.search_ops import setdiff1d
from flowmesh.ops.sparse_ops import as_sparse, to_dense


def _int64(x: Any, name: str) -> Tensor:
    return convert_to_tensor(x, dtype=dtypes.int64, name=name)


def _n(t: Tensor) -> Any:
    return t.shape.as_list()[0] if t.shape.rank else None


# --- SparseReorder ---------------------------------------------------------------------------
def _reorder_grad(op: Operation, _gi: Any, grad: Tensor) -> list[Any]:
    ind, _, shape = op.inputs
    n = array_ops.shape(ind, out_type=dtypes.int64)[0]
    perm = make_op("SparseReorder", [ind, range_ops.range(n), shape]).outputs[1]
    return [None, gather_ops.gather(grad, range_ops.invert_permutation(perm)), None]


register_op("SparseReorder", lambda i, a: [(dtypes.int64, i[0].shape), (i[1].dtype, i[1].shape)],
            grad=_reorder_grad)


def reorder(sp_input: Any, name: str | None = None) -> Any:
    """``tf.sparse.reorder``: the same SparseTensor with indices in row-major order."""
    sp = as_sparse(sp_input, "sparse.reorder")
    op = make_op("SparseReorder", [sp.indices, sp.values, sp.dense_shape], name=name or "SparseReorder")
    return type(sp)(op.outputs[0], op.outputs[1], sp.dense_shape)


# --- SparseReshape ---------------------------------------------------------------------------
def _reshape_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.int64, TensorShape([_n(inputs[0]), _n(inputs[2])])), (dtypes.int64, inputs[2].shape)]


register_op("SparseReshape", _reshape_shape, not_differentiable=True)


def reshape(sp_input: Any, shape: Any, name: str | None = None) -> Any:
    """``tf.sparse.reshape``: the same values at the positions of a dense reshape."""
    sp = as_sparse(sp_input, "sparse.reshape")
    op = make_op("SparseReshape", [sp.indices, sp.dense_shape, _int64(shape, "shape")],
                 name=name or "SparseReshape")
    return type(sp)(op.outputs[0], array_ops.identity(sp.values), op.outputs[1])


# --- SparseSlice -----------------------------------------------------------------------------
def _slice_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    rank = inputs[0].shape.as_list()[1] if inputs[0].shape.rank else None
    return [(dtypes.int64, TensorShape([None, rank])), (inputs[1].dtype, unknown_shape(1)),
            (dtypes.int64, inputs[2].shape)]


def _slice_grad(op: Operation, *grads: Any) -> list[Any]:
    ind, values, _, start, _ = op.inputs
    grad = make_op("SparseSliceGrad", [grads[1], ind, start, op.outputs[0]]).outputs[0]
    return [None, grad, None, None, None]


register_op("SparseSlice", _slice_shape, grad=_slice_grad)
register_op("SparseSliceGrad", lambda i, a: [(i[0].dtype, TensorShape([_n(i[1]) if i[1].shape.rank else None]))],
            not_differentiable=True)


def slice(sp_input: Any, start: Any, size: Any, name: str | None = None) -> Any:  # noqa: A001
    """``tf.sparse.slice``: the entries within ``[start, start + size)``."""
    sp = as_sparse(sp_input, "sparse.slice")
    op = make_op("SparseSlice", [sp.indices, sp.values, sp.dense_shape, _int64(start, "start"),
                                 _int64(size, "size")], name=name or "SparseSlice")
    return type(sp)(*op.outputs)


# --- SparseConcat ----------------------------------------------------------------------------
def _concat_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    n = attrs["N"]
    return [(dtypes.int64, TensorShape([None, _n(inputs[2 * n])])), (inputs[n].dtype, unknown_shape(1)),
            (dtypes.int64, inputs[2 * n].shape)]


register_op("SparseConcat", _concat_shape, not_differentiable=True)


def concat(axis: Any, sp_inputs: Sequence[Any], name: str | None = None, expand_nonconcat_dim: bool = False,
           concat_dim: Any = None, expand_nonconcat_dims: Any = None) -> Any:
    """``tf.sparse.concat`` (TF1 argument order): SparseTensors joined along ``axis``."""
    axis = concat_dim if concat_dim is not None else axis
    expand = expand_nonconcat_dims if expand_nonconcat_dims is not None else expand_nonconcat_dim
    sps = [as_sparse(s, "sparse.concat") for s in sp_inputs]
    shapes = [s.dense_shape for s in sps]
    if expand:  # as TensorFlow's Python: every shape becomes the max outside the concat dim
        biggest = reduction_ops.reduce_max(array_ops.stack(shapes), axis=0)
        rank = array_ops.shape(biggest, out_type=dtypes.int64)[0]
        at = math_ops.equal(range_ops.range(rank), (_int64(axis, "axis") + rank) % rank)
        shapes = [select_ops.where(at, s, biggest) for s in shapes]
    inputs = [s.indices for s in sps] + [s.values for s in sps] + shapes
    op = make_op("SparseConcat", inputs, {"N": len(sps), "concat_dim": int(axis), "T": sps[0].dtype}, name=name or "SparseConcat")
    return type(sps[0])(*op.outputs)


# --- SparseSplit -----------------------------------------------------------------------------
def _split_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    n, rank = attrs["num_split"], _n(inputs[3])
    return ([(dtypes.int64, TensorShape([None, rank]))] * n + [(inputs[2].dtype, unknown_shape(1))] * n
            + [(dtypes.int64, inputs[3].shape)] * n)


register_op("SparseSplit", _split_shape, not_differentiable=True)


def split(keyword_required: Any = None, sp_input: Any = None, num_split: Any = None, axis: Any = None,
          name: str | None = None, split_dim: Any = None) -> list:
    """``tf.sparse.split``: ``num_split`` SparseTensors along ``axis`` (keyword arguments)."""
    if keyword_required is not None:
        raise ValueError("sparse.split: pass sp_input, num_split and axis as keyword arguments")
    axis = split_dim if split_dim is not None else axis
    sp = as_sparse(sp_input, "sparse.split")
    op = make_op("SparseSplit", [_int64(axis, "split_dim"), sp.indices, sp.values, sp.dense_shape],
                 {"num_split": int(num_split)}, name=name or "SparseSplit")
    k = int(num_split)
    return [type(sp)(op.outputs[i], op.outputs[k + i], op.outputs[2 * k + i]) for i in range(k)]


# --- SparseFillEmptyRows ---------------------------------------------------------------------
def _fill_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    dims = shape_from_tensor(inputs[2])
    rows = dims.as_list()[0] if dims.rank else None
    return [(dtypes.int64, TensorShape([None, _n(inputs[2])])), (inputs[1].dtype, unknown_shape(1)),
            (dtypes.bool, TensorShape([rows])), (dtypes.int64, TensorShape([_n(inputs[0]) if
                                                                         inputs[0].shape.rank else None]))]


def _fill_grad(op: Operation, *grads: Any) -> list[Any]:
    grad = grads[1]
    d_values = gather_ops.gather(grad, op.outputs[3])
    d_default = reduction_ops.reduce_sum(grad) - reduction_ops.reduce_sum(d_values)
    return [None, d_values, None, d_default]


register_op("SparseFillEmptyRows", _fill_shape, grad=_fill_grad)


def fill_empty_rows(sp_input: Any, default_value: Any, name: str | None = None) -> tuple[Any, Tensor]:
    """``tf.sparse.fill_empty_rows``: ``(filled SparseTensor, empty_row_indicator)``."""
    sp = as_sparse(sp_input, "sparse.fill_empty_rows")
    default = convert_to_tensor(default_value, dtype=sp.dtype, name="default_value")
    op = make_op("SparseFillEmptyRows", [sp.indices, sp.values, sp.dense_shape, default],
                 name=name or "SparseFillEmptyRows")
    return type(sp)(op.outputs[0], op.outputs[1], sp.dense_shape), op.outputs[2]


# --- composed --------------------------------------------------------------------------------
def from_dense(tensor: Any, name: str | None = None) -> Any:
    """``tf.sparse.from_dense``: a SparseTensor of the non-zero (non-empty) entries."""
    from flowmesh.core.sparse_tensor import SparseTensor

    t = convert_to_tensor(tensor, name="tensor")
    zero = b"" if t.dtype == dtypes.string else array_ops.zeros([], dtype=t.dtype)
    indices = select_ops.where(math_ops.not_equal(t, zero))
    return SparseTensor(indices, _gather_nd(t, indices), array_ops.shape(t, out_type=dtypes.int64))


def _gather_nd(t: Tensor, indices: Tensor) -> Tensor:
    return gather_nd(t, indices)


def transpose(sp_input: Any, perm: Any = None, name: str | None = None) -> Any:
    """``tf.sparse.transpose``: indices permuted by ``perm`` (reversed by default), reordered."""
    sp = as_sparse(sp_input, "sparse.transpose")
    if perm is None:
        rank = array_ops.shape(sp.dense_shape)[0]
        perm = range_ops.range(rank - 1, -1, -1)
    perm = convert_to_tensor(perm, name="perm")
    indices = array_ops.transpose(gather_ops.gather(array_ops.transpose(sp.indices), perm))
    shape = gather_ops.gather(sp.dense_shape, perm)
    return reorder(type(sp)(indices, sp.values, shape), name=name)


def retain(sp_input: Any, to_retain: Any) -> Any:
    """``tf.sparse.retain``: the entries where the boolean vector ``to_retain`` is True."""
    sp = as_sparse(sp_input, "sparse.retain")
    keep = array_ops.reshape(select_ops.where(convert_to_tensor(to_retain, dtype=dtypes.bool)), [-1])
    return type(sp)(gather_ops.gather(sp.indices, keep), gather_ops.gather(sp.values, keep), sp.dense_shape)


def reset_shape(sp_input: Any, new_shape: Any = None) -> Any:
    """``tf.sparse.reset_shape``: the same entries with ``new_shape`` (or the tight bounding box)."""
    sp = as_sparse(sp_input, "sparse.reset_shape")
    if new_shape is None:
        shape = reduction_ops.reduce_max(sp.indices, axis=0) + 1
    else:
        shape = _int64(new_shape, "new_shape")
        old, wanted = constant_value(sp.dense_shape), constant_value(shape)
        if old is not None and wanted is not None and (len(old) != len(wanted) or (wanted < old).any()):
            raise ValueError(f"sparse.reset_shape: new_shape {list(wanted)} must have the rank of and be "
                             f"at least the current dense shape {list(old)}")
    return type(sp)(array_ops.identity(sp.indices), array_ops.identity(sp.values), shape)


def expand_dims(sp_input: Any, axis: Any = None, name: str | None = None) -> Any:
    """``tf.sparse.expand_dims``: a size-1 dimension inserted at ``axis``."""
    sp = as_sparse(sp_input, "sparse.expand_dims")
    rank = array_ops.shape(sp.dense_shape, out_type=dtypes.int64)[0]
    axis = _int64(-1 if axis is None else axis, "axis")
    axis = select_ops.where(axis < 0, axis + rank + 1, axis)
    n = array_ops.shape(sp.indices, out_type=dtypes.int64)[:1]
    zeros = array_ops.zeros(array_ops.concat([n, [1]], 0), dtype=dtypes.int64)
    head, tail = sp.indices[:, :axis], sp.indices[:, axis:]
    indices = array_ops.concat([head, zeros, tail], 1)
    one = array_ops.ones([1], dtype=dtypes.int64)
    shape = array_ops.concat([sp.dense_shape[:axis], one, sp.dense_shape[axis:]], 0)
    return type(sp)(indices, array_ops.identity(sp.values, name=name), shape)


def eye(num_rows: Any, num_columns: Any = None, dtype: Any = dtypes.float32, name: str | None = None) -> Any:
    """``tf.sparse.eye``: a sparse ``[num_rows, num_columns]`` identity matrix."""
    from flowmesh.core.sparse_tensor import SparseTensor

    rows = _int64(num_rows, "num_rows")
    cols = rows if num_columns is None else _int64(num_columns, "num_columns")
    diag = range_ops.range(math_ops.minimum(rows, cols), dtype=dtypes.int64)
    indices = array_ops.stack([diag, diag], axis=1)
    values = array_ops.ones(array_ops.shape(diag), dtype=dtypes.as_dtype(dtype))
    return SparseTensor(indices, values, array_ops.stack([rows, cols]))


def merge(sp_ids: Any, sp_values: Any, vocab_size: Any, name: str | None = None,
          already_sorted: bool = False) -> Any:
    """``tf.sparse.merge``: ``sp_values`` placed at column ``sp_ids`` of a new last dimension."""
    ids, vals = as_sparse(sp_ids, "sparse.merge"), as_sparse(sp_values, "sparse.merge")
    col = array_ops.expand_dims(cast_ops.cast(ids.values, dtypes.int64), 1)
    indices = array_ops.concat([ids.indices[:, :-1], col], 1)
    shape = array_ops.concat([ids.dense_shape[:-1], array_ops.reshape(_int64(vocab_size, "vocab_size"), [1])], 0)
    result = type(ids)(indices, vals.values, shape)
    return result if already_sorted else reorder(result, name=name)


def to_indicator(sp_input: Any, vocab_size: Any, name: str | None = None) -> Tensor:
    """``tf.sparse.to_indicator``: a dense bool tensor, True at ``[..., id]`` for each id."""

    sp = as_sparse(sp_input, "sparse.to_indicator")
    n = array_ops.shape(sp.indices)[:1]
    flags = type(sp)(sp.indices, array_ops.fill(n, True), sp.dense_shape)
    return to_dense(merge(sp, flags, vocab_size), default_value=False, validate_indices=False,
                    name=name or "SparseToIndicator")


def mask(a: IndexedSlices, mask_indices: Any, name: str | None = None) -> IndexedSlices:
    """``tf.sparse.mask``: the slices of ``a`` whose index is not in ``mask_indices``."""

    out_indices, keep = setdiff1d(a.indices, convert_to_tensor(mask_indices, dtype=a.indices.dtype))
    return IndexedSlices(gather_ops.gather(a.values, keep, name=name), out_indices, a.dense_shape)
