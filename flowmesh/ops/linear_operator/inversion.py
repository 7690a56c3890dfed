"""``LinearOperatorInversion``: ``A^-1`` of another (non-singular, square) operator:
products are its solves and solves its products."""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops.linear_operator.base import DERIVED, LinearOperator


class LinearOperatorInversion(LinearOperator):
    """``A = operator^-1``.

    Raises:
        ValueError: when ``operator`` is hinted singular or non-square.
    """

    def __init__(self, operator: LinearOperator, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str | None = None):
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(f"LinearOperatorInversion: {operator.name} is singular; it has no inverse")
        if operator.is_square is False or is_square is False:
            raise ValueError(f"LinearOperatorInversion: {operator.name} is not square; it has no inverse")
        self._operator = operator

        def hint(given: Any, inherited: Any) -> Any:
            return inherited if given is None else given

        super().__init__(operator.dtype, None, hint(is_non_singular, operator.is_non_singular),
                         hint(is_self_adjoint, operator.is_self_adjoint),
                         hint(is_positive_definite, operator.is_positive_definite), True,
                         name or f"{operator.name}_inverse", {"operator": operator})

    @property
    def operator(self) -> LinearOperator:
        return self._operator

    def _shape(self) -> TensorShape:
        return self._operator.shape

    def _shape_tensor(self) -> Tensor:
        return self._operator.shape_tensor()

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self) -> Tensor:
        return 1.0 / self._operator.determinant()

    def _log_abs_determinant(self) -> Tensor:
        return -self._operator.log_abs_determinant()


DERIVED["inversion"] = LinearOperatorInversion
