"""``LinearOperatorZeros``: the ``[..., M, N]`` zero matrix (singular: no solve/inverse)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops
from flowmesh.ops.linear_operator.base import LinearOperator, adjoint_if, static_dims


class LinearOperatorZeros(LinearOperator):
    """``A = 0`` with ``num_rows`` rows, ``num_columns`` (default ``num_rows``) columns and
    ``batch_shape`` leading dimensions."""

    def __init__(self, num_rows: Any, num_columns: Any = None, batch_shape: Any = None, dtype: Any = None,
                 is_non_singular: bool = False, is_self_adjoint: bool = True, is_positive_definite: bool = False,
                 is_square: bool = True, assert_proper_shapes: bool = False, name: str = "LinearOperatorZeros"):
        if is_non_singular or is_positive_definite:
            raise ValueError(f"{name}: a zero operator is singular and not positive definite")
        rows, cols = static_dims(num_rows, num_rows if num_columns is None else num_columns)
        if num_columns is not None and rows != cols:
            is_square = False
        self._rows, self._cols = rows, cols
        self._batch = [] if batch_shape is None else [int(d) for d in batch_shape]
        super().__init__(dtypes.as_dtype(dtype or dtypes.float32), None, False, is_self_adjoint, False, is_square, name,
                         {"num_rows": num_rows, "num_columns": num_columns, "batch_shape": batch_shape})

    def _shape(self) -> TensorShape:
        return TensorShape(self._batch + [self._rows, self._cols])

    def _to_dense(self) -> Tensor:
        return array_ops.zeros(self._batch + [self._rows, self._cols], dtype=self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = adjoint_if(x, adjoint_arg)
        rows = self._cols if adjoint else self._rows
        out_shape = array_ops.concat([array_ops.shape(x)[:-2], [rows], array_ops.shape(x)[-1:]], 0)
        zeros = array_ops.zeros(out_shape, dtype=self.dtype)
        return zeros + array_ops.zeros(self._batch + [1, 1], dtype=self.dtype) if self._batch else zeros

    def _diag_part(self) -> Tensor:
        return array_ops.zeros(self._batch + [min(self._rows, self._cols)], dtype=self.dtype)

    def _determinant(self) -> Tensor:
        return array_ops.zeros(self._batch, dtype=self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        return convert_to_tensor(float("-inf"), dtype=self.dtype.real_dtype) + array_ops.zeros(
            self._batch, dtype=self.dtype.real_dtype)
