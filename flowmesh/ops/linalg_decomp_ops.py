"""Determinants and decompositions: ``MatrixDeterminant``, ``LogMatrixDeterminant``,
``Cholesky``, ``MatrixTriangularSolve``, ``SelfAdjointEigV2`` (TensorFlow's op types), and
compositions of them (``logdet``, ``cholesky_solve``, ``lstsq``, ``matvec``, ``cross`` ...).

Gradients are TensorFlow's formulas built from graph ops (``linalg_grad.py``)::

    d det(A)      = g . det(A) . inv(A)^T          d log|det A| = g . inv(A)^T
    L = chol(A):    P = Phi(L^T g), dA = sym(L^-T P L^-1) / 2   (Phi: lower half, diagonal / 2)
    X = tri(A, B):  dB = tri(A^T, g), dA = -band(dB X^T)
    A = V E V^T:    dA = V (diag(dE) + F o V^T dV) V^T, symmetrized into the lower half
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, math_ops, reduction_ops
from flowmesh.ops._builders import FLOATS, check_dtype, make_op, make_tensor
from flowmesh.ops.linalg_ops import (
    eye,
    matmul,
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
    matrix_transpose,
)
from flowmesh.ops.linalg_solve_ops import _square, matrix_inverse


def _batch_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    dims = _square("MatrixDeterminant", x)
    return [(x.dtype, TensorShape(None if dims is None else dims[:-2]))]


def _det_grad(op: Any, grad: Tensor) -> list:
    scale = array_ops.expand_dims(array_ops.expand_dims(grad * op.outputs[0], -1), -1)
    return [scale * matrix_inverse(op.inputs[0], adjoint=True)]


register_op("MatrixDeterminant", _batch_shape, grad=_det_grad)


def _slogdet_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    spec = _batch_shape(inputs, attrs)[0]
    return [spec, spec]


def _slogdet_grad(op: Any, _grad_sign: Any, grad: Tensor) -> list:
    scale = array_ops.expand_dims(array_ops.expand_dims(grad, -1), -1)
    return [scale * matrix_inverse(op.inputs[0], adjoint=True)]


register_op("LogMatrixDeterminant", _slogdet_shape, grad=_slogdet_grad)


def _same(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _square("Cholesky", inputs[0])
    return [(inputs[0].dtype, inputs[0].shape)]


def _cholesky_grad(op: Any, grad: Tensor) -> list:
    low = op.outputs[0]
    low_inv = matrix_inverse(low)
    middle = matmul(low, grad, transpose_a=True)
    middle = matrix_band_part(matrix_set_diag(middle, 0.5 * matrix_diag_part(middle)), -1, 0)
    grad_a = matmul(matmul(low_inv, middle, transpose_a=True), low_inv)
    return [0.5 * (grad_a + matrix_transpose(grad_a))]


register_op("Cholesky", _same, grad=_cholesky_grad)


def _triangular_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    a, b = inputs
    if a.dtype != b.dtype:
        raise TypeError(f"MatrixTriangularSolve: matrix is {a.dtype.name} but rhs is {b.dtype.name}")
    _square("MatrixTriangularSolve", a)
    return [(b.dtype, b.shape)]


def _triangular_grad(op: Any, grad: Tensor) -> list:
    a, lower, adjoint = op.inputs[0], op.attrs["lower"], op.attrs["adjoint"]
    c = op.outputs[0]
    grad_b = matrix_triangular_solve(a, grad, lower=lower, adjoint=not adjoint)
    grad_a = -matmul(c, grad_b, transpose_b=True) if adjoint else -matmul(grad_b, c, transpose_b=True)
    return [matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1), grad_b]


register_op("MatrixTriangularSolve", _triangular_shape, grad=_triangular_grad)


def _eig_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    dims = _square("SelfAdjointEigV2", x)
    values = TensorShape(None if dims is None else dims[:-1])
    vectors = x.shape if attrs["compute_v"] else TensorShape([0])
    return [(x.dtype, values), (x.dtype, vectors)]


def _eig_grad(op: Any, grad_e: Any, grad_v: Any) -> list:
    e = op.outputs[0]
    grad_e = array_ops.zeros_like(e) if grad_e is None else grad_e
    if op.attrs["compute_v"]:
        v = op.outputs[1]
        diff = array_ops.expand_dims(e, -2) - array_ops.expand_dims(e, -1)
        f = matrix_set_diag(math_ops.div_no_nan(array_ops.ones_like(diff), diff), array_ops.zeros_like(e))
        inner = matrix_diag(grad_e)
        if grad_v is not None:
            inner = inner + f * matmul(v, grad_v, transpose_a=True)
    else:
        v = self_adjoint_eig(op.inputs[0])[1]
        inner = matrix_diag(grad_e)
    grad_a = matmul(v, matmul(inner, v, transpose_b=True))
    grad_a = matrix_band_part(grad_a + matrix_transpose(grad_a), -1, 0)
    return [matrix_set_diag(grad_a, 0.5 * matrix_diag_part(grad_a))]


register_op("SelfAdjointEigV2", _eig_shape, grad=_eig_grad)


def _float_matrix(op_type: str, x: Any) -> Tensor:
    t = convert_to_tensor(x)
    check_dtype(op_type, t, FLOATS)
    return t


def det(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The determinant of each square matrix ``[..., M, M]``."""
    return make_tensor("MatrixDeterminant", [_float_matrix("MatrixDeterminant", input)], name=name or "MatrixDeterminant")


def slogdet(input: Any, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``(sign, log|det|)`` of each square matrix."""
    x = _float_matrix("LogMatrixDeterminant", input)
    return tuple(make_op("LogMatrixDeterminant", [x], name=name or "LogMatrixDeterminant").outputs)


def cholesky(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The lower Cholesky factor ``L`` (``A = L L^T``) of each symmetric positive definite
    matrix (only the lower triangle of ``input`` is read)."""
    return make_tensor("Cholesky", [_float_matrix("Cholesky", input)], name=name or "Cholesky")


def matrix_triangular_solve(matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                            name: str | None = None) -> Tensor:
    """Solves ``matrix @ X = rhs`` for a lower (or upper) triangular ``matrix``."""
    a = _float_matrix("MatrixTriangularSolve", matrix)
    b = convert_to_tensor(rhs, dtype=a.dtype)
    return make_tensor("MatrixTriangularSolve", [a, b], {"lower": bool(lower), "adjoint": bool(adjoint)},
                       name=name or "MatrixTriangularSolve")


def self_adjoint_eig(tensor: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix (lower
    triangle read)."""
    x = _float_matrix("SelfAdjointEigV2", tensor)
    return tuple(make_op("SelfAdjointEigV2", [x], {"compute_v": True}, name=name or "SelfAdjointEigV2").outputs)


def self_adjoint_eigvals(tensor: Any, name: str | None = None) -> Tensor:
    """Eigenvalues (ascending) of each symmetric matrix."""
    x = _float_matrix("SelfAdjointEigV2", tensor)
    return make_op("SelfAdjointEigV2", [x], {"compute_v": False}, name=name or "SelfAdjointEigV2").outputs[0]


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """``log(det(matrix))`` of Hermitian positive definite matrices, via Cholesky."""
    with name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return 2.0 * reduction_ops.reduce_sum(math_ops.log(matrix_diag_part(chol)), axis=-1)


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Tensor:
    """Solves ``A X = rhs`` given ``chol``, the Cholesky factor of ``A``."""
    with name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


def matrix_solve_ls(matrix: Any, rhs: Any, l2_regularizer: float = 0.0, fast: bool = True,
                    name: str | None = None) -> Tensor:
    """Least squares ``min ||A X - B||^2 + l2 ||X||^2`` through the normal equations (TensorFlow's
    ``fast`` path) for ``A`` with at least as many rows as columns."""
    with name_scope(name, "matrix_solve_ls", [matrix, rhs]):
        a = _float_matrix("MatrixSolveLs", matrix)
        b = convert_to_tensor(rhs, dtype=a.dtype)
        gram = matmul(a, a, transpose_a=True)
        if l2_regularizer:
            gram = gram + l2_regularizer * eye(array_ops.shape(a)[-1], dtype=a.dtype)
        return cholesky_solve(cholesky(gram), matmul(a, b, transpose_a=True))


def adjoint(matrix: Any, name: str | None = None) -> Tensor:
    """The conjugate transpose of the last two dimensions."""
    return matrix_transpose(matrix, name=name or "adjoint", conjugate=True)


def matvec(a: Any, b: Any, transpose_a: bool = False, adjoint_a: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, name: str | None = None) -> Tensor:
    """``a @ b`` for matrices ``a`` ``[..., M, N]`` and vectors ``b`` ``[..., N]``."""
    with name_scope(name, "MatVec", [a, b]):
        product = matmul(a, array_ops.expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
        return array_ops.squeeze(product, axis=[-1])


def cross(a: Any, b: Any, name: str | None = None) -> Tensor:
    """The cross product of 3-vectors along the last dimension."""
    with name_scope(name, "Cross", [a, b]):
        x = convert_to_tensor(a)
        y = convert_to_tensor(b, dtype=x.dtype)
        x0, x1, x2 = array_ops.unstack(x, 3, axis=-1)
        y0, y1, y2 = array_ops.unstack(y, 3, axis=-1)
        return array_ops.stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], axis=-1)
