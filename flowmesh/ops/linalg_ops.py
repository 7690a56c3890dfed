"""Linear algebra: ``matmul``, ``tensordot``, matrix transpose/diagonals/band parts,
``eye``, ``trace`` and ``norm`` (``tf.linalg``). ``einsum`` lives in ``einsum_ops``.

``matmul`` batches over leading dimensions with NumPy broadcasting (TensorFlow's
``BatchMatMulV2``); ``tensordot`` is built from transpose, reshape and matmul as in
TensorFlow, so its gradient comes for free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, broadcast_shapes, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, gather_ops, math_ops, range_ops, reduction_ops
from flowmesh.ops._builders import (
    FLOATS_COMPLEX,
    check_dtype,
    convert_same_dtype,
    make_tensor,
)
from flowmesh.ops.reduction_ops import reduce_sum


# --- MatMul --------------------------------------------------------------------------------
def _matmul_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    a, b = inputs
    if a.dtype != b.dtype:
        raise TypeError(f"MatMul inputs must share a dtype: {a.dtype.name} vs {b.dtype.name}")
    if a.shape.rank is None or b.shape.rank is None:
        return [(a.dtype, unknown_shape())]
    if a.shape.rank < 2 or b.shape.rank < 2:
        raise InvalidArgumentError(
            f"Shape must be rank >= 2 but is rank {min(a.shape.rank, b.shape.rank)}")
    ad, bd = a.shape.as_list(), b.shape.as_list()
    m, k1 = (ad[-1], ad[-2]) if attrs["transpose_a"] else (ad[-2], ad[-1])
    k2, n = (bd[-1], bd[-2]) if attrs["transpose_b"] else (bd[-2], bd[-1])
    if k1 is not None and k2 is not None and k1 != k2:
        raise InvalidArgumentError(f"Dimensions must be equal, but are {k1} and {k2}")
    batch = broadcast_shapes(TensorShape(ad[:-2]), TensorShape(bd[:-2]))
    return [(a.dtype, batch.concatenate([m, n]))]


def _matmul_grad(op: Any, grad: Tensor) -> list:
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        ga, gb = matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)
    elif not ta and tb:
        ga, gb = matmul(grad, b), matmul(grad, a, transpose_a=True)
    elif ta and not tb:
        ga, gb = matmul(b, grad, transpose_b=True), matmul(a, grad)
    else:
        ga = matmul(b, grad, transpose_a=True, transpose_b=True)
        gb = matmul(grad, a, transpose_a=True, transpose_b=True)
    if a.shape.rank == 2 and b.shape.rank == 2:
        return [ga, gb]
    return [reduction_ops.reduce_to_shape_of(ga, a), reduction_ops.reduce_to_shape_of(gb, b)]


register_op("MatMul", _matmul_shape, grad=_matmul_grad)


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
           adjoint_a: bool = False, adjoint_b: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, name: str | None = None) -> Tensor:
    """Matrix product ``a @ b``, batched over leading dimensions (with broadcasting).

    Args:
        a, b: tensors of rank >= 2 and one dtype.
        transpose_a, transpose_b: transpose the last two dimensions first.
        adjoint_a, adjoint_b: conjugate transpose (same as transpose for real dtypes).
        a_is_sparse, b_is_sparse: hints, ignored.
        name: op name.

    Returns:
        ``[..., M, N]``.

    Raises:
        InvalidArgumentError: inner dimensions differ, e.g. ``[2,3] @ [4,2]``.
        TypeError: dtypes differ or are not float/complex/int32/int64.
    """
    x, y = convert_same_dtype("MatMul", [a, b], ["a", "b"])
    check_dtype("MatMul", x, FLOATS_COMPLEX + (dtypes.int32, dtypes.int64), "a")
    if x.dtype.is_complex and (adjoint_a or adjoint_b):  # "Conj" is defined in complex_ops
        x = make_tensor("Conj", [x]) if adjoint_a else x
        y = make_tensor("Conj", [y]) if adjoint_b else y
    attrs = {"transpose_a": bool(transpose_a or adjoint_a), "transpose_b": bool(transpose_b or adjoint_b)}
    return make_tensor("MatMul", [x, y], attrs, name=name or "MatMul")


# --- tensordot -----------------------------------------------------------------------------
def _tensordot_axes(axes: Any, rank_a: int, rank_b: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if not 0 <= n <= min(rank_a, rank_b):
            raise InvalidArgumentError(f"tensordot axes={n} must be in [0, {min(rank_a, rank_b)}]")
        return list(range(rank_a - n, rank_a)), list(range(n))
    if isinstance(axes, Tensor):
        raise TypeError("tensordot axes must be a Python int or a pair of lists, not a Tensor")
    a_axes, b_axes = axes
    a_axes = [int(a_axes)] if np.ndim(a_axes) == 0 else [int(v) for v in a_axes]
    b_axes = [int(b_axes)] if np.ndim(b_axes) == 0 else [int(v) for v in b_axes]
    if len(a_axes) != len(b_axes):
        raise InvalidArgumentError(f"tensordot axes {a_axes} and {b_axes} differ in length")
    return [v % rank_a for v in a_axes], [v % rank_b for v in b_axes]


def _folded(x: Tensor, free: list[int], contracted: list[int], free_first: bool) -> tuple[Tensor, Any]:
    """``x`` transposed and reshaped to a matrix; also returns its free dimensions."""
    perm = free + contracted if free_first else contracted + free
    moved = array_ops.transpose(x, perm) if perm != list(range(len(perm))) else x
    dims = x.shape.as_list()
    if x.shape.is_fully_defined():
        free_dims: Any = [dims[i] for i in free]
        size = [int(np.prod(free_dims, dtype=np.int64)), int(np.prod([dims[i] for i in contracted], dtype=np.int64))]
    else:
        from flowmesh.ops.reduction_ops import reduce_prod

        shape = array_ops.shape(x)
        free_dims = gather_ops.gather(shape, free) if free else convert_to_tensor([], dtype=dtypes.int32)
        size = [reduce_prod(free_dims), reduce_prod(gather_ops.gather(shape, contracted))
                if contracted else 1]
    matrix = array_ops.reshape(moved, size if free_first else size[::-1])
    return matrix, free_dims


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sums products of ``a`` and ``b`` over ``axes`` (``tf.tensordot``).

    Args:
        a, b: tensors of known rank and one dtype.
        axes: ``N`` (last N dims of ``a`` with first N of ``b``) or ``[a_axes, b_axes]``.
        name: op name.

    Returns:
        ``a``'s free dimensions followed by ``b``'s.

    Raises:
        InvalidArgumentError: bad axes or contracted dimensions of different sizes.
    """
    with name_scope(name, "Tensordot", [a, b]) as scope:
        x, y = convert_same_dtype("MatMul", [a, b], ["a", "b"])
        if x.shape.rank is None or y.shape.rank is None:
            raise InvalidArgumentError("tensordot needs operands of known rank")
        a_axes, b_axes = _tensordot_axes(axes, x.shape.rank, y.shape.rank)
        for i, j in zip(a_axes, b_axes):
            da, db = x.shape.as_list()[i], y.shape.as_list()[j]
            if da is not None and db is not None and da != db:
                raise InvalidArgumentError(
                    f"tensordot: dimension {i} of a ({da}) and {j} of b ({db}) must be equal")
        a_free = [i for i in range(x.shape.rank) if i not in a_axes]
        b_free = [i for i in range(y.shape.rank) if i not in b_axes]
        ma, a_dims = _folded(x, a_free, a_axes, True)
        mb, b_dims = _folded(y, b_free, b_axes, False)
        product = matmul(ma, mb)
        if isinstance(a_dims, list) and isinstance(b_dims, list):
            return array_ops.reshape(product, a_dims + b_dims, name=scope)
        return array_ops.reshape(product, array_ops.concat([a_dims, b_dims], 0), name=scope)


# --- transposes, diagonals and bands -------------------------------------------------------
def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Transposes the last two dimensions of ``a`` (rank >= 2)."""
    with name_scope(name, "matrix_transpose", [a]) as scope:
        x = convert_to_tensor(a, name="a")
        rank = x.shape.rank
        if rank is not None:
            if rank < 2:
                raise InvalidArgumentError(f"matrix_transpose needs rank >= 2, got shape {x.shape}")
            perm: Any = list(range(rank - 2)) + [rank - 1, rank - 2]
        else:
            r = array_ops.rank(x)
            perm = array_ops.concat([range_ops.range(r - 2), array_ops.stack([r - 1, r - 2])], 0)
        if conjugate and x.dtype.is_complex:
            x = make_tensor("Conj", [x])  # defined in complex_ops
        return array_ops.transpose(x, perm, name=scope)


def _matrix_shape(x: Tensor, what: str) -> list[int | None] | None:
    if x.shape.rank is None:
        return None
    if x.shape.rank < 2:
        raise InvalidArgumentError(f"{what} needs rank >= 2, got shape {x.shape}")
    return x.shape.as_list()


def _diag_part_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    dims = _matrix_shape(inputs[0], "MatrixDiagPart")
    if dims is None:
        return [(inputs[0].dtype, unknown_shape())]
    m, n = dims[-2:]
    size = None if m is None or n is None else min(m, n)
    return [(inputs[0].dtype, TensorShape(dims[:-2] + [size]))]


def _diag_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    if x.shape.rank is None:
        return [(x.dtype, unknown_shape())]
    if x.shape.rank < 1:
        raise InvalidArgumentError(f"MatrixDiag needs rank >= 1, got shape {x.shape}")
    dims = x.shape.as_list()
    return [(x.dtype, TensorShape(dims + dims[-1:]))]


def _set_diag_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, diag = inputs
    if x.dtype != diag.dtype:
        raise TypeError(f"MatrixSetDiag inputs must share a dtype: {x.dtype.name} vs {diag.dtype.name}")
    expected = _diag_part_shape([x], attrs)[0][1]
    if not expected.is_compatible_with(diag.shape):
        raise InvalidArgumentError(f"MatrixSetDiag diagonal of shape {diag.shape} does not fit "
                                   f"input of shape {x.shape} (expected {expected})")
    return [(x.dtype, x.shape)]


register_op("MatrixDiagPart", _diag_part_shape,
            grad=lambda op, g: [matrix_set_diag(array_ops.zeros_like(op.inputs[0]), g)])
register_op("MatrixDiag", _diag_shape, grad=lambda op, g: [matrix_diag_part(g)])
register_op("MatrixSetDiag", _set_diag_shape, grad=lambda op, g: [
    matrix_set_diag(g, array_ops.zeros_like(op.inputs[1])), matrix_diag_part(g)])


def matrix_diag_part(input: Any, name: str = "diag_part") -> Tensor:  # noqa: A002
    """The main diagonals ``[..., min(M, N)]`` of matrices ``[..., M, N]``."""
    return make_tensor("MatrixDiagPart", [convert_to_tensor(input)], name=name)


def matrix_diag(diagonal: Any, name: str = "diag") -> Tensor:
    """Square matrices ``[..., N, N]`` with ``diagonal`` ``[..., N]`` on the main diagonal."""
    return make_tensor("MatrixDiag", [convert_to_tensor(diagonal)], name=name)


def matrix_set_diag(input: Any, diagonal: Any, name: str = "set_diag") -> Tensor:  # noqa: A002
    """``input`` with its main diagonals replaced by ``diagonal``."""
    x, d = convert_same_dtype("MatrixSetDiag", [input, diagonal], ["input", "diagonal"])
    return make_tensor("MatrixSetDiag", [x, d], name=name)


def _band_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _matrix_shape(inputs[0], "MatrixBandPart")
    return [(inputs[0].dtype, inputs[0].shape)]


register_op("MatrixBandPart", _band_shape,
            grad=lambda op, g: [matrix_band_part(g, op.inputs[1], op.inputs[2]), None, None])


def matrix_band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Keeps the band ``-num_lower <= j - i <= num_upper`` of each matrix (negative: all)."""
    x = convert_to_tensor(input)
    lower = convert_to_tensor(num_lower, dtype=dtypes.int64) if not isinstance(num_lower, Tensor) else num_lower
    upper = convert_to_tensor(num_upper, dtype=lower.dtype) if not isinstance(num_upper, Tensor) else num_upper
    return make_tensor("MatrixBandPart", [x, lower, upper], name=name or "MatrixBandPart")


def diag(diagonal: Any, name: str | None = None) -> Tensor:
    """``tf.diag``: a rank-2k tensor with ``diagonal`` (rank k) on its diagonal."""
    with name_scope(name, "Diag", [diagonal]) as scope:
        d = convert_to_tensor(diagonal)
        if d.shape.rank is None:
            raise InvalidArgumentError("tf.diag needs an input of known rank")
        shape = array_ops.shape(d)
        square = matrix_diag(array_ops.reshape(d, [-1]))
        return array_ops.reshape(square, array_ops.concat([shape, shape], 0), name=scope)


def diag_part(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``tf.diag_part``: the inverse of :func:`diag` (input rank 2k, shape ``S + S``)."""
    with name_scope(name, "DiagPart", [input]) as scope:
        x = convert_to_tensor(input)
        if x.shape.rank is None or x.shape.rank % 2:
            raise InvalidArgumentError(f"tf.diag_part needs an even, known rank; got {x.shape}")
        k = x.shape.rank // 2
        half = array_ops.shape(x)[:k]
        from flowmesh.ops.reduction_ops import reduce_prod

        n = reduce_prod(half)
        flat = matrix_diag_part(array_ops.reshape(x, array_ops.stack([n, n])))
        return array_ops.reshape(flat, half, name=scope)


def trace(x: Any, name: str | None = None) -> Tensor:
    """Sum of the main diagonal of each matrix ``[..., M, N]``."""

    with name_scope(name, "Trace", [x]) as scope:
        return reduce_sum(matrix_diag_part(convert_to_tensor(x)), -1, name=scope)


def eye(num_rows: Any, num_columns: Any = None, batch_shape: Any = None, dtype: Any = dtypes.float32,
        name: str | None = None) -> Tensor:
    """Identity matrices ``batch_shape + [num_rows, num_columns]``."""
    with name_scope(name, "eye") as scope:
        dtype = dtypes.as_dtype(dtype)
        cols = num_rows if num_columns is None else num_columns
        static = all(isinstance(v, (int, np.integer)) for v in (num_rows, cols))
        if static and (batch_shape is None or all(isinstance(b, (int, np.integer)) for b in batch_shape)):
            matrix = np.eye(int(num_rows), int(cols), dtype=dtype.as_numpy_dtype)
            value = np.broadcast_to(matrix, list(batch_shape or []) + list(matrix.shape))
            from flowmesh.ops.constant_op import constant

            return constant(np.ascontiguousarray(value), dtype=dtype, name=scope)
        rows_t = range_ops.range(num_rows)
        cols_t = range_ops.range(cols)
        matrix = cast_ops.cast(math_ops.equal(array_ops.expand_dims(rows_t, 1), cols_t), dtype)
        if batch_shape is None:
            return array_ops.identity(matrix, name=scope)
        from flowmesh.ops.reduction_ops import broadcast_to

        full = array_ops.concat([batch_shape, array_ops.shape(matrix)], 0)
        return broadcast_to(matrix, full, name=scope)


# --- norm ------------------------------------------------------------------------------------
def _norm_axes(axis: Any) -> tuple[Any, bool]:
    if axis is None:
        return None, False
    if isinstance(axis, (list, tuple)):
        if len(axis) == 2 and int(axis[0]) != int(axis[1]):
            return [int(a) for a in axis], True
        if len(axis) == 1:
            return int(axis[0]), False
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
    return int(axis), False


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: Any = None,  # noqa: A002
         name: str | None = None, keep_dims: Any = None) -> Tensor:
    """Vector or matrix norm (``tf.norm``).

    Args:
        tensor: a float tensor.
        ord: vector norms: ``'euclidean'`` (= 2), 1, ``np.inf`` or any ``p > 0``; matrix norms
            (``axis`` a pair): ``'euclidean'``/``'fro'``, 1 (max column sum), ``np.inf``
            (max row sum).
        axis: None (all elements as one vector), an int, or a pair of ints (matrix norm).
        keepdims: keep the reduced dimensions with size 1.
        name: op name.
        keep_dims: deprecated alias of ``keepdims``.

    Returns:
        The norms.

    Raises:
        ValueError: an unsupported ``ord``/``axis`` combination (e.g. the matrix 2-norm).
    """

    keep = bool(keepdims if keepdims is not None else keep_dims)
    axes, is_matrix = _norm_axes(axis)
    vector_ok = ord in ("euclidean", 1, 2, np.inf) or (isinstance(ord, (int, float)) and ord > 0)
    if (is_matrix and ord not in ("euclidean", "fro", 1, np.inf)) or (not is_matrix and not vector_ok):
        raise ValueError(f"'ord' must be a supported {'matrix' if is_matrix else 'vector'} norm, "
                         f"got {ord!r} (matrix: 'euclidean', 'fro', 1, np.inf; vector: "
                         "'euclidean', 1, 2, np.inf or p > 0)")
    with name_scope(name, "norm", [tensor]) as scope:
        x = convert_to_tensor(tensor)
        check_dtype("norm", x, FLOATS_COMPLEX, "tensor")
        magnitude = math_ops.abs(x)
        if ord in ("euclidean", "fro", 2):
            result = math_ops.sqrt(reduction_ops.reduce_sum(x * x, axes, keepdims=True))
        elif is_matrix:
            inner, outer = (axes[0], axes[1]) if ord == 1 else (axes[1], axes[0])
            sums = reduction_ops.reduce_sum(magnitude, inner, keepdims=True)
            result = reduction_ops.reduce_max(sums, outer, keepdims=True)
        elif ord == np.inf:
            result = reduction_ops.reduce_max(magnitude, axes, keepdims=True)
        elif ord == 1:
            result = reduction_ops.reduce_sum(magnitude, axes, keepdims=True)
        else:
            p = convert_to_tensor(float(ord), dtype=x.dtype)
            total = reduction_ops.reduce_sum(math_ops.pow(magnitude, p), axes, keepdims=True)
            result = math_ops.pow(total, math_ops.reciprocal(p))
        if keep:
            return array_ops.identity(result, name=scope)
        if axes is None:
            return array_ops.reshape(result, [], name=scope)
        return array_ops.squeeze(result, axes, name=scope)
