"""``LinearOperatorDiag``: ``A = diag(d)`` for ``d`` ``[..., N]``: products and solves are
elementwise, the determinant is ``prod(d)``."""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, math_ops, reduction_ops
from flowmesh.ops.complex_ops import conj
from flowmesh.ops.linalg_ops import matrix_diag
from flowmesh.ops.linear_operator.base import LinearOperator, adjoint_if


class LinearOperatorDiag(LinearOperator):
    """``A = diag(diag)`` (square, ``[..., N, N]``)."""

    def __init__(self, diag: Any, is_non_singular: bool | None = None, is_self_adjoint: bool | None = None,
                 is_positive_definite: bool | None = None, is_square: bool | None = None,
                 name: str = "LinearOperatorDiag"):
        if is_square is False:
            raise ValueError(f"{name}: a diagonal operator is always square")
        self._diag = convert_to_tensor(diag, name="diag")
        if self._diag.shape.rank == 0:
            raise ValueError(f"{name}: diag must have rank >= 1, got a scalar")
        if not self._diag.dtype.is_complex and is_self_adjoint is False:
            raise ValueError(f"{name}: a real diagonal operator is always self-adjoint")
        if not self._diag.dtype.is_complex:
            is_self_adjoint = True
        super().__init__(self._diag.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         True, name, {"diag": diag})

    diag = property(lambda self: self._diag)

    def _shape(self) -> TensorShape:
        if self._diag.shape.rank is None:
            return TensorShape(None)
        return self._diag.shape.concatenate(self._diag.shape[-1:])

    def _shape_tensor(self) -> Tensor:
        shape = array_ops.shape(self._diag)
        return array_ops.concat([shape, shape[-1:]], 0)

    def _to_dense(self) -> Tensor:
        return matrix_diag(self._diag)

    def _scale(self, adjoint: bool) -> Tensor:
        d = conj(self._diag) if adjoint and self._diag.dtype.is_complex else self._diag
        return array_ops.expand_dims(d, -1)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._scale(adjoint) * adjoint_if(x, adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return adjoint_if(rhs, adjoint_arg) / self._scale(adjoint)

    def _diag_part(self) -> Tensor:
        return self._diag

    def _eigvals(self) -> Tensor:
        return self._diag

    def _determinant(self) -> Tensor:
        return reduction_ops.reduce_prod(self._diag, axis=-1)

    def _log_abs_determinant(self) -> Tensor:
        return reduction_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag)), axis=-1)
