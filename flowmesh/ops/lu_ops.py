"""The LU decomposition with partial pivoting ``Lu`` (TensorFlow's op type: ``lu, p`` with
``input[..., p, :] = L @ U``, ``L`` unit lower and ``U`` upper triangular packed into ``lu``)
and what TensorFlow builds on it: ``lu_solve``, ``lu_reconstruct``, ``lu_matrix_inverse``.

``Lu`` itself has no gradient in TensorFlow and none here; the three compositions are
differentiable in ``lower_upper`` and ``rhs`` (their gradients come from triangular solves).
Row permutations are applied as one-hot permutation matrices, which broadcast over batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, manip_ops
from flowmesh.ops._builders import FLOATS_COMPLEX, check_dtype, make_op
from flowmesh.ops.linalg_decomp_ops import matrix_triangular_solve
from flowmesh.ops.linalg_ops import eye, matmul, matrix_band_part, matrix_set_diag
from flowmesh.ops.linalg_solve_ops import _square


def _lu_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    dims = _square("Lu", x)
    return [(x.dtype, x.shape), (attrs["output_idx_type"], TensorShape(None if dims is None else dims[:-1]))]


register_op("Lu", _lu_shape, not_differentiable=True)


def lu(input: Any, output_idx_type: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``(lower_upper, perm)`` of each square matrix (``perm`` of ``output_idx_type``)."""
    x = convert_to_tensor(input, name="input")
    check_dtype("Lu", x, FLOATS_COMPLEX, "input")
    idx = dtypes.as_dtype(output_idx_type)
    if idx not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Lu: output_idx_type must be int32 or int64, got {idx.name}")
    return tuple(make_op("Lu", [x], {"output_idx_type": idx}, name=name or "Lu").outputs)


def _permute_rows(perm: Tensor, x: Tensor) -> Tensor:
    """``x[..., perm, :]`` (batch-broadcast) as a permutation-matrix product."""
    depth = array_ops.shape(perm)[-1]
    return matmul(manip_ops.one_hot(perm, depth, dtype=x.dtype), x)


def _unit_lower(lower_upper: Tensor) -> Tensor:
    ones = array_ops.ones(array_ops.shape(lower_upper)[:-1], dtype=lower_upper.dtype)
    return matrix_set_diag(matrix_band_part(lower_upper, -1, 0), ones)


def _inputs(lower_upper: Any, perm: Any) -> tuple[Tensor, Tensor]:
    lu_t = convert_to_tensor(lower_upper, name="lower_upper")
    check_dtype("lu_solve", lu_t, FLOATS_COMPLEX, "lower_upper")
    perm_t = convert_to_tensor(perm, name="perm")
    if perm_t.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"perm must be int32 or int64 (the second output of tf.linalg.lu), got {perm_t.dtype.name}")
    return lu_t, perm_t


def lu_solve(lower_upper: Any, perm: Any, rhs: Any, validate_args: bool = False, name: str | None = None) -> Tensor:
    """Solves ``A X = rhs`` given ``lower_upper, perm = lu(A)``."""
    with name_scope(name or "lu_solve"):
        lu_t, perm_t = _inputs(lower_upper, perm)
        b = convert_to_tensor(rhs, dtype=lu_t.dtype, name="rhs")
        y = matrix_triangular_solve(_unit_lower(lu_t), _permute_rows(perm_t, b), lower=True)
        return matrix_triangular_solve(lu_t, y, lower=False)


def lu_matrix_inverse(lower_upper: Any, perm: Any, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The inverse of ``A`` given ``lower_upper, perm = lu(A)``."""
    with name_scope(name or "lu_matrix_inverse"):
        lu_t, perm_t = _inputs(lower_upper, perm)
        shape = array_ops.shape(lu_t)
        identity = array_ops.zeros(shape, dtype=lu_t.dtype) + eye(shape[-1], dtype=lu_t.dtype)
        return lu_solve(lu_t, perm_t, identity)


def lu_reconstruct(lower_upper: Any, perm: Any, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The matrix ``A`` whose ``lu(A)`` is ``lower_upper, perm``."""
    with name_scope(name or "lu_reconstruct"):
        lu_t, perm_t = _inputs(lower_upper, perm)
        product = matmul(_unit_lower(lu_t), matrix_band_part(lu_t, 0, -1))
        inverse = manip_ops.one_hot(perm_t, array_ops.shape(perm_t)[-1], dtype=lu_t.dtype)
        return matmul(inverse, product, transpose_a=True)
