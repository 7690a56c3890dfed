"""``LinearOperatorLowerTriangular``: the lower triangle of a ``[..., N, N]`` matrix
(entries above the diagonal are ignored); solves are triangular solves and the determinant
is the product of the diagonal."""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, math_ops, reduction_ops
from flowmesh.ops.linalg_decomp_ops import matrix_triangular_solve
from flowmesh.ops.linalg_ops import matrix_band_part, matrix_diag_part
from flowmesh.ops.linear_operator.base import DERIVED, LinearOperator, adjoint_if, broadcast_batch


class LinearOperatorLowerTriangular(LinearOperator):
    """``A = band_part(tril, -1, 0)``."""

    def __init__(self, tril: Any, is_non_singular: bool | None = None, is_self_adjoint: bool | None = None,
                 is_positive_definite: bool | None = None, is_square: bool | None = None,
                 name: str = "LinearOperatorLowerTriangular"):
        if is_square is False:
            raise ValueError(f"{name}: only square lower triangular operators are supported")
        self._tril = convert_to_tensor(tril, name="tril")
        super().__init__(self._tril.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         True, name, {"tril": tril})

    tril = property(lambda self: self._tril)

    def _shape(self) -> TensorShape:
        return self._tril.shape

    def _shape_tensor(self) -> Tensor:
        return array_ops.shape(self._tril)

    def _to_dense(self) -> Tensor:
        return matrix_band_part(self._tril, -1, 0)

    def _diag_part(self) -> Tensor:
        return matrix_diag_part(self._tril)

    def _determinant(self) -> Tensor:
        return reduction_ops.reduce_prod(self._diag_part(), axis=-1)

    def _log_abs_determinant(self) -> Tensor:
        return reduction_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag_part())), axis=-1)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        tril, rhs = broadcast_batch(self._tril, adjoint_if(rhs, adjoint_arg))
        return matrix_triangular_solve(tril, rhs, lower=True, adjoint=adjoint)


DERIVED["lower_triangular"] = LinearOperatorLowerTriangular
