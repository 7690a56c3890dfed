"""``LinearOperatorIdentity`` (``A = I``, optionally batched) and
``LinearOperatorScaledIdentity`` (``A = c I`` with a batch of scalars ``c``)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, cast_ops, math_ops
from flowmesh.ops.complex_ops import conj
from flowmesh.ops.linalg_ops import eye
from flowmesh.ops.linear_operator.base import LinearOperator, adjoint_if, static_dims


def _num_rows(name: str, num_rows: Any) -> tuple[Tensor, int | None]:
    t = convert_to_tensor(num_rows, dtype=dtypes.int32, name="num_rows")
    (static,) = static_dims(t)
    if static is not None and static < 0:
        raise ValueError(f"{name}: num_rows must be non-negative, got {static}")
    return t, static


class LinearOperatorIdentity(LinearOperator):
    """``A = I`` of order ``num_rows``, with ``batch_shape`` leading dimensions."""

    def __init__(self, num_rows: Any, batch_shape: Any = None, dtype: Any = None, is_non_singular: bool = True,
                 is_self_adjoint: bool = True, is_positive_definite: bool = True, is_square: bool = True,
                 assert_proper_shapes: bool = False, name: str = "LinearOperatorIdentity"):
        if not (is_non_singular and is_self_adjoint and is_positive_definite and is_square):
            raise ValueError(f"{name}: an identity operator is non-singular, self-adjoint, positive definite "
                             "and square")
        self._rows, self._static_rows = _num_rows(name, num_rows)
        self._batch = None if batch_shape is None else [int(d) for d in batch_shape]
        super().__init__(dtypes.as_dtype(dtype or dtypes.float32), None, True, True, True, True, name,
                         {"num_rows": num_rows, "batch_shape": batch_shape, "dtype": dtype})

    def _shape(self) -> TensorShape:
        return TensorShape(list(self._batch or []) + [self._static_rows, self._static_rows])

    def _shape_tensor(self) -> Tensor:
        return array_ops.concat([convert_to_tensor(self._batch or [], dtype=dtypes.int32), [self._rows, self._rows]], 0)

    def _to_dense(self) -> Tensor:
        return eye(self._rows, batch_shape=self._batch, dtype=self.dtype)

    def _broadcast(self, x: Tensor) -> Tensor:
        if not self._batch:
            return x
        return x + array_ops.zeros(self._batch + [1, 1], dtype=x.dtype)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._broadcast(adjoint_if(x, adjoint_arg))

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._matmul(rhs, adjoint, adjoint_arg)

    def _diag_part(self) -> Tensor:
        return array_ops.ones(array_ops.concat([convert_to_tensor(self._batch or [], dtype=dtypes.int32),
                                                [self._rows]], 0), dtype=self.dtype)

    def _eigvals(self) -> Tensor:
        return self._diag_part()

    def _determinant(self) -> Tensor:
        return array_ops.ones(self._batch or [], dtype=self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        return array_ops.zeros(self._batch or [], dtype=self.dtype.real_dtype)


class LinearOperatorScaledIdentity(LinearOperator):
    """``A = multiplier * I`` of order ``num_rows``; ``multiplier``'s shape is the batch shape."""

    def __init__(self, num_rows: Any, multiplier: Any, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool = True, assert_proper_shapes: bool = False,
                 name: str = "LinearOperatorScaledIdentity"):
        if not is_square:
            raise ValueError(f"{name}: a scaled identity operator is always square")
        self._multiplier = convert_to_tensor(multiplier, name="multiplier")
        self._rows, self._static_rows = _num_rows(name, num_rows)
        if not self._multiplier.dtype.is_complex:
            is_self_adjoint = True if is_self_adjoint is None else is_self_adjoint
        super().__init__(self._multiplier.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         True, name, {"num_rows": num_rows, "multiplier": multiplier})

    @property
    def multiplier(self) -> Tensor:
        return self._multiplier

    def _shape(self) -> TensorShape:
        return self._multiplier.shape.concatenate([self._static_rows, self._static_rows])

    def _shape_tensor(self) -> Tensor:
        return array_ops.concat([array_ops.shape(self._multiplier), [self._rows, self._rows]], 0)

    def _scale(self, adjoint: bool) -> Tensor:
        m = conj(self._multiplier) if adjoint and self.dtype.is_complex else self._multiplier
        return m[..., None, None]

    def _to_dense(self) -> Tensor:
        return self._scale(False) * eye(self._rows, dtype=self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._scale(adjoint) * adjoint_if(x, adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return adjoint_if(rhs, adjoint_arg) / self._scale(adjoint)

    def _diag_part(self) -> Tensor:
        return self._multiplier[..., None] * array_ops.ones(array_ops.expand_dims(self._rows, 0), dtype=self.dtype)

    def _eigvals(self) -> Tensor:
        return self._diag_part()

    def _determinant(self) -> Tensor:
        return math_ops.pow(self._multiplier, cast_ops.cast(self._rows, self.dtype))

    def _log_abs_determinant(self) -> Tensor:
        rows = cast_ops.cast(self._rows, self.dtype.real_dtype)
        return rows * math_ops.log(math_ops.abs(self._multiplier))
