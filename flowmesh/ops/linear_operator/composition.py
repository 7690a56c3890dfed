"""``LinearOperatorComposition``: the product ``A1 @ A2 @ ... @ An`` of operators, applied
right to left (solves left to right; the determinant is the product of determinants)."""

from __future__ import annotations

from collections.abc import Sequence

from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape, broadcast_shapes
from flowmesh.ops import array_ops, manip_ops, math_ops
from flowmesh.ops.linear_operator.base import DERIVED, LinearOperator, adjoint_if


class LinearOperatorComposition(LinearOperator):
    """``A = operators[0] @ operators[1] @ ...``.

    Raises:
        TypeError: when the operators' dtypes differ.
        ValueError: for an empty list or mismatched inner dimensions.
    """

    def __init__(self, operators: Sequence[LinearOperator], is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str | None = None):
        operators = list(operators)
        if not operators:
            raise ValueError("LinearOperatorComposition: expected a non-empty list of operators")
        if len({op.dtype for op in operators}) != 1:
            raise TypeError(f"LinearOperatorComposition: operators must share one dtype, got "
                            f"{[op.dtype.name for op in operators]}")
        for left, right in zip(operators, operators[1:]):
            if not left.domain_dimension.is_compatible_with(right.range_dimension):
                raise ValueError(f"LinearOperatorComposition: {left.name} ({left.shape}) cannot multiply "
                                 f"{right.name} ({right.shape})")
        if all(op.is_non_singular for op in operators):
            is_non_singular = True if is_non_singular is None else is_non_singular
        self._operators = operators
        super().__init__(operators[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or "_o_".join(op.name for op in operators), {"operators": operators})

    @property
    def operators(self) -> list[LinearOperator]:
        return list(self._operators)

    def _shape(self) -> TensorShape:
        first, last = self._operators[0].shape, self._operators[-1].shape
        if any(op.shape.rank is None for op in self._operators):
            return TensorShape(None)
        batch = TensorShape([])
        for op in self._operators:
            batch = broadcast_shapes(batch, op.shape[:-2])
        return batch.concatenate([first.dims[-2], last.dims[-1]])

    def _shape_tensor(self) -> Tensor:
        batch = self._operators[0].batch_shape_tensor()
        for op in self._operators[1:]:
            batch = manip_ops.broadcast_dynamic_shape(batch, op.batch_shape_tensor())
        return array_ops.concat([batch, self._operators[0].shape_tensor()[-2:-1],
                                 self._operators[-1].shape_tensor()[-1:]], 0)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        order = self._operators if adjoint else list(reversed(self._operators))
        result = order[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            result = op.matmul(result, adjoint=adjoint)
        return result

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        order = list(reversed(self._operators)) if adjoint else self._operators
        result = adjoint_if(rhs, adjoint_arg)
        for op in order:
            result = op.solve(result, adjoint=adjoint)
        return result

    def _determinant(self) -> Tensor:
        result = self._operators[0].determinant()
        for op in self._operators[1:]:
            result = result * op.determinant()
        return result

    def _log_abs_determinant(self) -> Tensor:
        return math_ops.add_n([op.log_abs_determinant() for op in self._operators])


DERIVED["composition"] = LinearOperatorComposition
