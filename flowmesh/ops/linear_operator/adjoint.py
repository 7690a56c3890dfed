"""``LinearOperatorAdjoint``: ``A^H`` of another operator, through its adjoint methods."""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops
from flowmesh.ops.complex_ops import conj
from flowmesh.ops.linear_operator.base import DERIVED, LinearOperator, adjoint_if


class LinearOperatorAdjoint(LinearOperator):
    """``A = operator^H``."""

    def __init__(self, operator: LinearOperator, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str | None = None):
        self._operator = operator

        def hint(given: Any, inherited: Any) -> Any:
            return inherited if given is None else given

        super().__init__(operator.dtype, None, hint(is_non_singular, operator.is_non_singular),
                         hint(is_self_adjoint, operator.is_self_adjoint),
                         hint(is_positive_definite, operator.is_positive_definite),
                         hint(is_square, operator.is_square), name or f"{operator.name}_adjoint",
                         {"operator": operator})

    @property
    def operator(self) -> LinearOperator:
        return self._operator

    def _shape(self) -> TensorShape:
        s = self._operator.shape
        return s if s.rank is None else s[:-2].concatenate([s.dims[-1], s.dims[-2]])

    def _shape_tensor(self) -> Tensor:
        s = self._operator.shape_tensor()
        return array_ops.concat([s[:-2], s[-1:], s[-2:-1]], 0)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _to_dense(self) -> Tensor:
        return adjoint_if(self._operator.to_dense(), True)

    def _maybe_conj(self, t: Tensor) -> Tensor:
        return conj(t) if self.dtype.is_complex else t

    def _determinant(self) -> Tensor:
        return self._maybe_conj(self._operator.determinant())

    def _log_abs_determinant(self) -> Tensor:
        return self._operator.log_abs_determinant()

    def _diag_part(self) -> Tensor:
        return self._maybe_conj(self._operator.diag_part())


DERIVED["adjoint"] = LinearOperatorAdjoint
