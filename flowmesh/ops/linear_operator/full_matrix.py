"""``LinearOperatorFullMatrix``: an operator backed by a dense ``[..., M, N]`` matrix."""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops
from flowmesh.ops.linear_operator.base import LinearOperator


class LinearOperatorFullMatrix(LinearOperator):
    """``A = matrix``; every method uses the dense ``tf.linalg`` ops."""

    def __init__(self, matrix: Any, is_non_singular: bool | None = None, is_self_adjoint: bool | None = None,
                 is_positive_definite: bool | None = None, is_square: bool | None = None,
                 name: str = "LinearOperatorFullMatrix"):
        self._matrix = convert_to_tensor(matrix, name="matrix")
        if self._matrix.shape.rank is not None and self._matrix.shape.rank < 2:
            raise ValueError(f"{name}: matrix must have rank >= 2, got shape {self._matrix.shape}")
        super().__init__(self._matrix.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name, {"matrix": matrix})

    matrix = property(lambda self: self._matrix)

    def _shape(self) -> TensorShape:
        return self._matrix.shape

    def _shape_tensor(self) -> Tensor:
        return array_ops.shape(self._matrix)

    def _to_dense(self) -> Tensor:
        return self._matrix
