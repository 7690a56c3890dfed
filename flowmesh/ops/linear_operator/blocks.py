"""Block operators: ``LinearOperatorBlockDiag`` (square blocks on the diagonal),
``LinearOperatorBlockLowerTriangular`` (rows of blocks ``[[A00], [A10, A11], ...]``) and
``LinearOperatorKronecker`` (``A1 (x) A2 (x) ...``). Block sizes must be known statically
(they fix how right-hand sides are split)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape, broadcast_shapes
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops, reduction_ops
from flowmesh.ops.linear_operator.base import LinearOperator, adjoint_if


def _sizes(kind: str, operators: Sequence[LinearOperator]) -> tuple[list[int], list[int], TensorShape]:
    if not operators:
        raise ValueError(f"{kind}: expected a non-empty list of operators")
    if len({op.dtype for op in operators}) != 1:
        raise TypeError(f"{kind}: operators must share one dtype, got {[op.dtype.name for op in operators]}")
    rows, cols, batch = [], [], TensorShape([])
    for op in operators:
        if op.shape.rank is None or None in op.shape.as_list()[-2:]:
            raise ValueError(f"{kind}: the matrix dimensions of {op.name} must be static, got {op.shape}")
        rows.append(op.shape.as_list()[-2])
        cols.append(op.shape.as_list()[-1])
        batch = broadcast_shapes(batch, op.shape[:-2])
    return rows, cols, batch


def _broadcast_dense(op: LinearOperator, batch: TensorShape) -> Tensor:
    dense = op.to_dense()
    if batch.rank and batch.is_fully_defined() and op.shape[:-2] != batch:
        dense = dense + array_ops.zeros(batch.as_list() + [1, 1], dtype=dense.dtype)
    return dense


class LinearOperatorBlockDiag(LinearOperator):
    """``A = diag(A1, A2, ...)`` for square operators ``Ai``."""

    def __init__(self, operators: Sequence[LinearOperator], is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool = True, name: str | None = None):
        self._operators = list(operators)
        self._rows, self._cols, self._batch = _sizes("LinearOperatorBlockDiag", self._operators)
        if all(op.is_non_singular for op in self._operators):
            is_non_singular = True if is_non_singular is None else is_non_singular
        super().__init__(self._operators[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or "_".join(op.name for op in self._operators), {"operators": operators})

    operators = property(lambda self: list(self._operators))

    def _shape(self) -> TensorShape:
        return self._batch.concatenate([sum(self._rows), sum(self._cols)])

    def _to_dense(self) -> Tensor:
        rank = self._batch.rank
        total, before, rows = sum(self._cols), 0, []
        for op, n in zip(self._operators, self._cols):
            dense = _broadcast_dense(op, self._batch)
            rows.append(manip_ops.pad(dense, [[0, 0]] * rank + [[0, 0], [before, total - before - n]]))
            before += n
        return array_ops.concat(rows, axis=-2)

    def _blockwise(self, x: Tensor, sizes: list[int], apply) -> Tensor:
        parts = array_ops.split(x, sizes, axis=-2)
        return array_ops.concat([apply(op, part) for op, part in zip(self._operators, parts)], axis=-2)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        sizes = self._rows if adjoint else self._cols
        return self._blockwise(adjoint_if(x, adjoint_arg), sizes, lambda op, p: op.matmul(p, adjoint=adjoint))

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        sizes = self._cols if adjoint else self._rows
        return self._blockwise(adjoint_if(rhs, adjoint_arg), sizes, lambda op, p: op.solve(p, adjoint=adjoint))

    def _diag_part(self) -> Tensor:
        return array_ops.concat([_broadcast_diag(op, self._batch) for op in self._operators], axis=-1)

    def _determinant(self) -> Tensor:
        result = self._operators[0].determinant()
        for op in self._operators[1:]:
            result = result * op.determinant()
        return result

    def _log_abs_determinant(self) -> Tensor:
        return math_ops.add_n([op.log_abs_determinant() for op in self._operators])


def _broadcast_diag(op: LinearOperator, batch: TensorShape) -> Tensor:
    diag = op.diag_part()
    if batch.rank and batch.is_fully_defined() and op.shape[:-2] != batch:
        diag = diag + array_ops.zeros(batch.as_list() + [1], dtype=diag.dtype)
    return diag


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """``A = [[A00, 0, ...], [A10, A11, 0, ...], ...]``; ``operators[i]`` lists row ``i``'s
    ``i + 1`` blocks, the last one square (on the diagonal)."""

    def __init__(self, operators: Sequence[Sequence[LinearOperator]], is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str = "LinearOperatorBlockLowerTriangular"):
        self._operators = [list(row) for row in operators]
        for i, row in enumerate(self._operators):
            if len(row) != i + 1:
                raise ValueError(f"{name}: row {i} of operators must hold {i + 1} operators, got {len(row)}")
        self._diagonal = [row[-1] for row in self._operators]
        flat = [op for row in self._operators for op in row]
        self._rows, self._cols, self._batch = _sizes(name, flat)
        self._sizes = [op.shape.as_list()[-1] for op in self._diagonal]
        if all(op.is_non_singular for op in self._diagonal):
            is_non_singular = True if is_non_singular is None else is_non_singular
        super().__init__(flat[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name,
                         {"operators": operators})

    operators = property(lambda self: [list(row) for row in self._operators])

    def _shape(self) -> TensorShape:
        return self._batch.concatenate([sum(self._sizes), sum(self._sizes)])

    def _to_dense(self) -> Tensor:
        rows = []
        for i, row in enumerate(self._operators):
            blocks = [_broadcast_dense(op, self._batch) for op in row]
            pad = sum(self._sizes[i + 1:])
            dense = array_ops.concat(blocks, axis=-1)
            rows.append(manip_ops.pad(dense, [[0, 0]] * self._batch.rank + [[0, 0], [0, pad]]))
        return array_ops.concat(rows, axis=-2)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        if adjoint:
            return super()._solve(rhs, adjoint, adjoint_arg)
        parts = array_ops.split(adjoint_if(rhs, adjoint_arg), self._sizes, axis=-2)
        solved: list[Tensor] = []
        for i, row in enumerate(self._operators):  # forward substitution
            residual = parts[i]
            for j, op in enumerate(row[:-1]):
                residual = residual - op.matmul(solved[j])
            solved.append(row[-1].solve(residual))
        return array_ops.concat(solved, axis=-2)

    def _determinant(self) -> Tensor:
        result = self._diagonal[0].determinant()
        for op in self._diagonal[1:]:
            result = result * op.determinant()
        return result

    def _log_abs_determinant(self) -> Tensor:
        return math_ops.add_n([op.log_abs_determinant() for op in self._diagonal])


class LinearOperatorKronecker(LinearOperator):
    """``A = A1 (x) A2 (x) ...`` (Kronecker product; square factors for determinants)."""

    def __init__(self, operators: Sequence[LinearOperator], is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str | None = None):
        self._operators = list(operators)
        self._rows, self._cols, self._batch = _sizes("LinearOperatorKronecker", self._operators)
        if all(op.is_non_singular for op in self._operators):
            is_non_singular = True if is_non_singular is None else is_non_singular
        super().__init__(self._operators[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or "_x_".join(op.name for op in self._operators), {"operators": operators})

    operators = property(lambda self: list(self._operators))

    def _shape(self) -> TensorShape:
        return self._batch.concatenate([math.prod(self._rows), math.prod(self._cols)])

    def _to_dense(self) -> Tensor:
        result, rows, cols = _broadcast_dense(self._operators[0], self._batch), self._rows[0], self._cols[0]
        for op, m, n in zip(self._operators[1:], self._rows[1:], self._cols[1:]):
            other = _broadcast_dense(op, self._batch)
            outer = result[..., :, None, :, None] * other[..., None, :, None, :]
            rows, cols = rows * m, cols * n
            result = array_ops.reshape(outer, self._batch.as_list() + [rows, cols])
        return result

    def _determinant(self) -> Tensor:
        total = math.prod(self._cols)
        parts = [math_ops.pow(op.determinant(), cast_ops.cast(total // n, op.dtype))
                 for op, n in zip(self._operators, self._cols)]
        return reduction_ops.reduce_prod(array_ops.stack(parts), axis=0)

    def _log_abs_determinant(self) -> Tensor:
        total = math.prod(self._cols)
        return math_ops.add_n([float(total // n) * op.log_abs_determinant()
                               for op, n in zip(self._operators, self._cols)])
